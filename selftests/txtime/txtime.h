/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared by txsend and txrecv: the test packet's payload header and time
 * helpers. All fields are in host byte order: both ends run on one host.
 */
#ifndef _KVOD_TXTIME_H
#define _KVOD_TXTIME_H

#include <stdint.h>
#include <time.h>

#define TXT_MAGIC	0x6b76744dU	/* "kvtM" */

/**
 * struct txt_hdr - the first bytes of every test packet
 * @magic: TXT_MAGIC
 * @flow: index of the sending socket
 * @seq: packet number across all flows, in schedule order
 * @due_real: intended departure, CLOCK_REALTIME ns
 * @stamp: the departure time put on the packet (its own clock), or 0
 */
struct txt_hdr {
	uint32_t magic;
	uint32_t flow;
	uint64_t seq;
	int64_t due_real;
	int64_t stamp;
};

static inline int64_t txt_now(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static inline struct timespec txt_ts(int64_t ns)
{
	struct timespec ts = { ns / 1000000000LL, ns % 1000000000LL };

	return ts;
}

#endif
