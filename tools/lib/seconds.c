// SPDX-License-Identifier: GPL-2.0
/*
 * SEC, a number of seconds: a DECIMAL (decimal.c), more than 0 and at
 * most a maximum the caller gives. Signs, blanks, a bare point (".5",
 * "5."), exponents ("1e300"), hex floats ("0x1p4"), "inf", "nan" and
 * anything else are rejected.
 *
 * strtod() alone takes all of those, and a time given in seconds ends up
 * as the int milliseconds of a poll(): an infinite or huge value there is
 * an out-of-range conversion, undefined behaviour that gives INT_MIN on
 * x86-64, which poll() takes as "wait forever", switching kvod-fetch's
 * --timeout watchdog off. So the text must be plain decimal before
 * strtod() sees it (in the C locale: the tools never call setlocale()),
 * the value must fit the caller's maximum, and kvod_ms_until() clamps
 * whatever it is given.
 *
 * selftests/host/seconds_test.c holds the cases.
 */
#include "seconds.h"
#include "decimal.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>

/**
 * kvod_parse_seconds() - parse a SEC
 * @s: the text
 * @max: the largest value accepted
 * @v: the seconds on success, untouched otherwise
 *
 * Returns 0, -EINVAL if @s is not a SEC, or -ERANGE if it is 0 or more
 * than @max.
 */
int kvod_parse_seconds(const char *s, double max, double *v)
{
	size_t n = kvod_decimal_len(s);
	double x;

	if (!n || s[n])
		return -EINVAL;
	/* Digits too many for a double come back as HUGE_VAL: over @max. */
	x = strtod(s, NULL);
	if (!(x > 0 && x <= max))
		return -ERANGE;
	*v = x;
	return 0;
}

/**
 * kvod_ms_until() - milliseconds from @now until @until, for poll()
 * @until: seconds, on the clock of @now
 * @now: seconds
 *
 * Rounded up, so that a poll() of that long sleeps past @until; 0 if
 * @until has passed (or either is NaN), INT_MAX if it is further away
 * than that. Never negative: to poll() that would mean forever.
 */
int kvod_ms_until(double until, double now)
{
	double ms = (until - now) * 1000;

	if (!(ms > 0))
		return 0;
	if (ms >= INT_MAX)
		return INT_MAX;
	return (int)ms + 1;
}

/**
 * kvod_ms_min() - the shorter of two poll() timeouts
 *
 * Either may be negative, poll()'s "forever"; the result is negative
 * only if both are.
 */
int kvod_ms_min(int a, int b)
{
	if (a < 0)
		return b;
	if (b < 0)
		return a;
	return a < b ? a : b;
}
