// SPDX-License-Identifier: GPL-2.0
/*
 * RATE, a bit rate in bits/s: a DECIMAL (decimal.c) and an optional
 * suffix, k or K for 10^3, m or M for 10^6, g or G for 10^9.
 *
 * The suffix's power of ten scales the DECIMAL with integers only: "8.7M"
 * is exactly 8700000. The product must fit in 64 bits and be a whole,
 * non-zero number of bits/s. Signs, blanks, exponents ("1e6"), units
 * ("8.7Mb"), a bare point (".5", "5.") and anything else are rejected.
 *
 * SIZE, for byte counts and counts, is kvod_parse_size() below.
 *
 * selftests/host/rate_test.c holds the cases.
 */
#include "rate.h"
#include "decimal.h"

#include <errno.h>
#include <stdlib.h>

/* The power of ten that suffix @s stands for, -1 if none. */
static int suffix_exp(const char *s)
{
	if (*s && s[1])
		return -1;
	switch (*s) {
	case '\0':
		return 0;
	case 'k':
	case 'K':
		return 3;
	case 'm':
	case 'M':
		return 6;
	case 'g':
	case 'G':
		return 9;
	}
	return -1;
}

/**
 * kvod_parse_rate() - parse a RATE
 * @s: the text
 * @rate: the rate in bits/s on success, untouched otherwise
 *
 * Returns 0, -EINVAL if @s is not a RATE or not a whole, non-zero number
 * of bits/s, or -ERANGE if it does not fit in 64 bits.
 */
int kvod_parse_rate(const char *s, uint64_t *rate)
{
	int exp = suffix_exp(s + kvod_decimal_len(s));
	uint64_t v;
	int err;

	if (exp < 0)
		return -EINVAL;
	err = kvod_decimal_scale(s, exp, &v);
	if (err)
		return err;
	if (!v)
		return -EINVAL;
	*rate = v;
	return 0;
}

/**
 * kvod_parse_size() - parse a SIZE or a count: N[k|K|m|M|g|G]
 * @s: the text
 * @v: the value; binary multiples (1k is 1024)
 *
 * Whole numbers only. Returns 0, or -1 if @s is not one or overflows.
 */
int kvod_parse_size(const char *s, uint64_t *v)
{
	char *end;
	unsigned int shift = 0;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	*v = strtoull(s, &end, 10);
	if (errno)
		return -1;
	switch (*end) {
	case '\0':
		break;
	case 'k': case 'K':
		shift = 10;
		break;
	case 'm': case 'M':
		shift = 20;
		break;
	case 'g': case 'G':
		shift = 30;
		break;
	default:
		return -1;
	}
	if (*end && end[1])
		return -1;
	if (shift && *v > (UINT64_MAX >> shift))
		return -1;
	*v <<= shift;
	return 0;
}

/**
 * kvod_parse_range() - a SIZE or count between @min and @max, inclusive
 *
 * As kvod_parse_size(). Returns 0, or -1 if @s is not one or is out of
 * the range (@v is then undefined).
 */
int kvod_parse_range(const char *s, uint64_t min, uint64_t max, uint64_t *v)
{
	if (kvod_parse_size(s, v) || *v < min || *v > max)
		return -1;
	return 0;
}
