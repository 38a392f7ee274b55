/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tools/lib/decimal: DECIMAL, the unsigned decimal number that RATE
 * (rate.c), SEC (seconds.c) and the tc plugin's TIME (tc/tsock_time.c)
 * are made of, read in one place so that all three take the same text.
 * No output: callers print their own errors.
 */
#ifndef KVOD_LIB_DECIMAL_H
#define KVOD_LIB_DECIMAL_H

#include <stddef.h>
#include <stdint.h>

size_t kvod_decimal_len(const char *s);
int kvod_decimal_scale(const char *s, unsigned int exp, uint64_t *v);

#endif /* KVOD_LIB_DECIMAL_H */
