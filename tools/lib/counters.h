/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tools/lib: the names of a listener's counters (enum
 * kvod_listener_counter), as kvodctl prints them and the shell tests
 * read them (selftests/lib/ktap.sh).
 */
#ifndef KVOD_LIB_COUNTERS_H
#define KVOD_LIB_COUNTERS_H

#include <linux/kvod.h>

extern const char *const kvod_counter_names[KVOD_LC_NR];

#endif /* KVOD_LIB_COUNTERS_H */
