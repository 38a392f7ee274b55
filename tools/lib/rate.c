// SPDX-License-Identifier: GPL-2.0
/*
 * RATE, a bit rate in bits/s: DIGITS [ "." DIGITS ] [ SUFFIX ], where the
 * suffix k or K multiplies by 10^3, m or M by 10^6, g or G by 10^9.
 *
 * It is parsed with integers only, by moving the decimal point right by
 * the suffix's exponent: "8.7M" is 8 7 0 0 0 0 0, exactly 8700000. Digits
 * left of the new point must fit in 64 bits; digits right of it must all
 * be zero, since a rate is a whole number of bits/s; and the rate must not
 * be zero. Signs, blanks, exponents ("1e6"), units ("8.7Mb"), a bare
 * point (".5", "5.") and anything else are rejected.
 *
 * SIZE, for byte counts and counts, is kvod_parse_size() below.
 *
 * selftests/host/rate_test.c holds the cases.
 */
#include "rate.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define DIGITS	"0123456789"

/* The power of ten that suffix @c stands for, -1 if none. */
static int suffix_exp(char c)
{
	switch (c) {
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

/* *v = *v * 10 + d, unless that overflows. */
static int push_digit(uint64_t *v, char d)
{
	if (__builtin_mul_overflow(*v, 10, v) ||
	    __builtin_add_overflow(*v, (unsigned int)(d - '0'), v))
		return -ERANGE;
	return 0;
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
	const char *frac = "";
	size_t nint, nfrac = 0, i;
	const char *p = s;
	uint64_t v = 0;
	int exp;

	nint = strspn(p, DIGITS);
	if (!nint)
		return -EINVAL;
	p += nint;
	if (*p == '.') {
		frac = ++p;
		nfrac = strspn(p, DIGITS);
		if (!nfrac)
			return -EINVAL;
		p += nfrac;
	}
	exp = suffix_exp(*p);
	if (exp < 0 || (*p && p[1]))
		return -EINVAL;

	for (i = 0; i < nint; i++) {
		if (push_digit(&v, s[i]))
			return -ERANGE;
	}
	for (i = 0; i < (size_t)exp; i++) {
		if (push_digit(&v, i < nfrac ? frac[i] : '0'))
			return -ERANGE;
	}
	for (; i < nfrac; i++) {
		if (frac[i] != '0')
			return -EINVAL;
	}
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
