/* SPDX-License-Identifier: GPL-2.0 */
/*
 * TIME for q_tsock.so's options, parsed on its own so that the host tests
 * (selftests/host/tsock_time_test.c) run it without tc.
 */
#ifndef _KVOD_TSOCK_TIME_H
#define _KVOD_TSOCK_TIME_H

#include <stdint.h>

int tsock_parse_time_ns(const char *s, uint64_t *ns);

#endif /* _KVOD_TSOCK_TIME_H */
