/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * tsock: the timed-socket queueing discipline (tc kind "tsock"),
 * netlink ABI shared by sch_tsock.ko and the tc plugin q_tsock.so.
 *
 * Options travel in TCA_OPTIONS as a nest of TCA_TSOCK_* attributes,
 * parsed strictly: unknown attributes, wrong lengths and out-of-range
 * values are rejected with an extack message. Every attribute is optional;
 * on creation the defaults below apply, on change only what is given
 * changes. CLOCKID and OFFLOAD are fixed at creation.
 *
 * All times are in nanoseconds except HORIZON (microseconds, as sch_fq).
 */
#ifndef _UAPI_LINUX_TSOCK_H
#define _UAPI_LINUX_TSOCK_H

#include <linux/types.h>

enum {
	TCA_TSOCK_UNSPEC,
	TCA_TSOCK_CLOCKID,	/* u32: CLOCK_MONOTONIC (default) or CLOCK_TAI */
	TCA_TSOCK_HORIZON,	/* u32 us: drop what is due later (default 2 s) */
	TCA_TSOCK_LATE_POLICY,	/* u32: TSOCK_LATE_* (default SEND) */
	TCA_TSOCK_TOLERANCE,	/* u32 ns: later than this is late (1 ms) */
	TCA_TSOCK_SLACK,	/* u32 ns: timer slack (default 10 us) */
	TCA_TSOCK_FLOW_LIMIT,	/* u32 packets per flow (default 1000) */
	TCA_TSOCK_LIMIT,	/* u32 packets in all (default 10000) */
	TCA_TSOCK_OFFLOAD,	/* u8: 1 asks for launch-time offload */
	TCA_TSOCK_LEAD,		/* u32 ns: offload only: hand over this early */
	TCA_TSOCK_OFFLOADED,	/* u8, dump only: offload is in effect */
	__TCA_TSOCK_MAX
};

#define TCA_TSOCK_MAX	(__TCA_TSOCK_MAX - 1)

/* What to do with a packet later than its departure time + tolerance. */
enum {
	TSOCK_LATE_SEND,	/* send it at once, count it late */
	TSOCK_LATE_DROP,	/* drop it; SO_EE_CODE_TXTIME_MISSED if asked */
	__TSOCK_LATE_MAX
};

#define TSOCK_LATE_MAX	(__TSOCK_LATE_MAX - 1)

/**
 * struct tc_tsock_xstats - tsock's statistics (TCA_STATS_APP)
 * @flows: flows with packets queued now
 * @untimed: packets without a departure time, passed straight through
 * @on_time: timed packets released within the tolerance of their time
 * @late: timed packets released later than that (late policy SEND)
 * @drop_late: late packets dropped (late policy DROP)
 * @drop_horizon: packets due beyond the horizon, dropped at enqueue
 * @drop_clock: packets stamped in a clock other than the qdisc's
 * @drop_flow_limit: packets over the per-flow limit
 * @drop_limit: packets over the total limit, or no memory for a flow,
 *	or dropped by a change that lowered the limit
 * @wakeups: watchdog deadlines reached (timer wakeups)
 * @offloaded: packets handed to the device ahead of their time
 * @lateness_sum: sum over released timed packets of (release - due), ns,
 *	counting early releases as 0
 * @lateness_max: the largest single lateness, ns
 * @reserved: 0
 *
 * Mean lateness is @lateness_sum / (@on_time + @late).
 */
struct tc_tsock_xstats {
	__u32 flows;
	__u32 reserved;
	__u64 untimed;
	__u64 on_time;
	__u64 late;
	__u64 drop_late;
	__u64 drop_horizon;
	__u64 drop_clock;
	__u64 drop_flow_limit;
	__u64 drop_limit;
	__u64 wakeups;
	__u64 offloaded;
	__u64 lateness_sum;
	__u64 lateness_max;
};

#endif /* _UAPI_LINUX_TSOCK_H */
