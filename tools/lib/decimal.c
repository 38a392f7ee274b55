// SPDX-License-Identifier: GPL-2.0
/*
 * DECIMAL: DIGITS [ "." DIGITS ], ASCII digits only. No sign, blank,
 * exponent, hex, "inf" or "nan", and no bare point: ".5" is no DECIMAL,
 * and of "5." only the "5" is. What follows a DECIMAL (a unit, a suffix,
 * or nothing) is the caller's to read: kvod_decimal_len() says where it
 * starts.
 *
 * kvod_decimal_scale() converts with integers only, by moving the decimal
 * point right by a unit's power of ten: "1.5" scaled by 10^6 is 1 5 0 0 0
 * 0 0, exactly 1500000, where a double would round. Digits left of the
 * new point must fit in 64 bits and those right of it must all be zero.
 *
 * The callers' host tests (selftests/host/rate_test.c, seconds_test.c and
 * tsock_time_test.c) hold the cases.
 */
#include "decimal.h"

#include <errno.h>
#include <string.h>

#define DIGITS	"0123456789"

/**
 * kvod_decimal_len() - the length of the DECIMAL that @s begins with
 * @s: the text
 *
 * Return: the number of characters of the longest DECIMAL at the start
 * of @s, 0 if @s does not begin with one.
 */
size_t kvod_decimal_len(const char *s)
{
	size_t n = strspn(s, DIGITS), frac;

	if (!n || s[n] != '.')
		return n;
	frac = strspn(s + n + 1, DIGITS);
	return frac ? n + 1 + frac : n;
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
 * kvod_decimal_scale() - the DECIMAL that @s begins with, times 10^@exp
 * @s: the text; what follows the DECIMAL is not looked at
 * @exp: the power of ten to multiply by
 * @v: the product on success, untouched otherwise
 *
 * Return: 0; -EINVAL if @s does not begin with a DECIMAL, or if the
 * product is not a whole number; -ERANGE if it does not fit in 64 bits
 * (checked first, digit by digit from the left).
 */
int kvod_decimal_scale(const char *s, unsigned int exp, uint64_t *v)
{
	size_t n = kvod_decimal_len(s), nint, nfrac, i;
	const char *frac;
	uint64_t x = 0;

	if (!n)
		return -EINVAL;
	nint = strspn(s, DIGITS);
	nfrac = n > nint ? n - nint - 1 : 0;
	frac = s + n - nfrac;

	for (i = 0; i < nint; i++) {
		if (push_digit(&x, s[i]))
			return -ERANGE;
	}
	for (i = 0; i < exp; i++) {
		if (push_digit(&x, i < nfrac ? frac[i] : '0'))
			return -ERANGE;
	}
	for (; i < nfrac; i++) {
		if (frac[i] != '0')
			return -EINVAL;
	}
	*v = x;
	return 0;
}
