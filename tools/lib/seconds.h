/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tools/lib/seconds: SEC, a number of seconds such as 2.5 (kvod-fetch's
 * --duration and --seek-every), and the int milliseconds that poll()
 * takes, computed from times in seconds. No output: callers print their
 * own errors.
 */
#ifndef KVOD_LIB_SECONDS_H
#define KVOD_LIB_SECONDS_H

int kvod_parse_seconds(const char *s, double max, double *v);
int kvod_ms_until(double until, double now);
int kvod_ms_min(int a, int b);

#endif /* KVOD_LIB_SECONDS_H */
