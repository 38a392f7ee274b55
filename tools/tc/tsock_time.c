// SPDX-License-Identifier: GPL-2.0
/*
 * TIME: a DECIMAL (tools/lib/decimal.c) and a UNIT: ns, us or usec, ms or
 * msec, s or sec, and microseconds without a unit (as elsewhere in tc).
 *
 * Every unit is a power of ten of nanoseconds, which scales the DECIMAL
 * with integers only, as for a RATE: "1.5ms" is exactly 1500000 ns. The
 * product must fit in 64 bits and be whole, since the qdisc takes whole
 * nanoseconds. strtod(), used before, also took leading blanks (which hid
 * a sign from the check for one), exponents, hex, "inf" and "nan", and
 * its double then went through an undefined conversion to an integer;
 * none of these is a TIME.
 *
 * selftests/host/tsock_time_test.c holds the cases.
 */
#include "tsock_time.h"
#include "../lib/decimal.h"

#include <errno.h>
#include <string.h>

/* The power of ten of nanoseconds that unit @s stands for, -1 if none. */
static int unit_exp(const char *s)
{
	static const struct {
		const char *name;
		int exp;
	} units[] = {
		{ "ns", 0 }, { "us", 3 }, { "usec", 3 }, { "", 3 },
		{ "ms", 6 }, { "msec", 6 }, { "s", 9 }, { "sec", 9 },
	};
	size_t i;

	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (!strcmp(s, units[i].name))
			return units[i].exp;
	}
	return -1;
}

/**
 * tsock_parse_time_ns() - parse a TIME
 * @s: the text, or NULL (a missing value)
 * @ns: the time in nanoseconds on success, untouched otherwise
 *
 * Return: 0, -EINVAL if @s is not a TIME or not a whole number of
 * nanoseconds, or -ERANGE if it does not fit in 64 bits.
 */
int tsock_parse_time_ns(const char *s, uint64_t *ns)
{
	int exp;

	if (!s)
		return -EINVAL;
	exp = unit_exp(s + kvod_decimal_len(s));
	if (exp < 0)
		return -EINVAL;
	return kvod_decimal_scale(s, exp, ns);
}
