/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tools/lib: code that kvodctl, kvod-fetch and kvod-proxy share, so that both read
 * their command lines the same way. Plain C with <stdint.h> types, no
 * kvod headers, no output: callers print their own errors.
 */
#ifndef KVOD_LIB_RATE_H
#define KVOD_LIB_RATE_H

#include <stdint.h>

/* rate.c: RATE, a bit rate such as 8.7M */

int kvod_parse_rate(const char *s, uint64_t *rate);

/* SIZE, a byte count or count such as 256k */

int kvod_parse_size(const char *s, uint64_t *v);
int kvod_parse_range(const char *s, uint64_t min, uint64_t max, uint64_t *v);

#endif /* KVOD_LIB_RATE_H */
