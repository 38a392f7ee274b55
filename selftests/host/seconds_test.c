// SPDX-License-Identifier: GPL-2.0
/*
 * kvod_parse_seconds(), kvod_ms_until() and kvod_ms_min()
 * (tools/lib/seconds.c): kvod-fetch's --duration and --seek-every, and
 * the poll() timeouts it computes from times in seconds. On the host: no
 * module, no device. One KTAP result per case.
 *
 * An accepted SEC must give the expected value. A rejected one must give
 * the expected error (-ERANGE for 0 and for more than the maximum,
 * -EINVAL for anything else, inf, nan and exponents included) and leave
 * the result untouched. A timeout must never be negative (poll()'s
 * "forever") unless asked for forever, however far or odd the time.
 *
 * selftests/kvod/http_fetch.sh checks, in the guest, that kvod-fetch
 * refuses a bad --duration with exit status 2.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <string.h>

#include "lib/seconds.h"
#include "kselftest_harness.h"

/* kvod-fetch's cap (SECONDS_MAX in tools/kvod-fetch.h) */
#define MAX	1000000.0

#define PARSED		double
#define PARSE(s, v)	kvod_parse_seconds(s, MAX, v)
#define PARSE_NAME	seconds
#define PARSED_FMT	"%g"
#define PARSED_ARG(v)	(v)
/* What a failed parse must leave in the result. */
#define UNTOUCHED	-42.0
#include "parse_test.h"

ACCEPTS(s3, "3", 3);
ACCEPTS(s0_5, "0.5", 0.5);
ACCEPTS(s30_25, "30.25", 30.25);
ACCEPTS(tiny, "0.001", 0.001);
ACCEPTS(leading_zeros, "007", 7);
ACCEPTS(the_max, "1000000", MAX);
ACCEPTS(the_max_point_zero, "1000000.000", MAX);

REJECTS(empty, "", -EINVAL);
REJECTS(inf, "inf", -EINVAL);
REJECTS(infinity, "Infinity", -EINVAL);
REJECTS(nan, "nan", -EINVAL);
REJECTS(nan_payload, "nan(1)", -EINVAL);
REJECTS(exponent, "1e300", -EINVAL);
REJECTS(small_exponent, "1e1", -EINVAL);
REJECTS(hex, "0x10", -EINVAL);
REJECTS(hex_float, "0x1p4", -EINVAL);
REJECTS(minus, "-1", -EINVAL);
REJECTS(minus_zero, "-0", -EINVAL);
REJECTS(plus, "+5", -EINVAL);
REJECTS(leading_blank, " 5", -EINVAL);
REJECTS(trailing_blank, "5 ", -EINVAL);
REJECTS(bare_point_before, ".5", -EINVAL);
REJECTS(bare_point_after, "5.", -EINVAL);
REJECTS(two_points, "1.2.3", -EINVAL);
REJECTS(unit, "5s", -EINVAL);
REJECTS(comma, "0,5", -EINVAL);
REJECTS(zero, "0", -ERANGE);
REJECTS(zero_point_zero, "0.000", -ERANGE);
REJECTS(just_over, "1000000.001", -ERANGE);
REJECTS(int_max_ms, "2147484", -ERANGE);
REJECTS(huge, "100000000000000000000000000000000000000000000", -ERANGE);

/* 400 nines: strtod() overflows to HUGE_VAL, which is over the maximum. */
TEST(overflow)
{
	char s[401];
	double v = UNTOUCHED;

	memset(s, '9', sizeof(s) - 1);
	s[sizeof(s) - 1] = '\0';
	EXPECT_EQ(-ERANGE, kvod_parse_seconds(s, MAX, &v));
	EXPECT_EQ(UNTOUCHED, v);
}

TEST(ms_until)
{
	EXPECT_EQ(1001, kvod_ms_until(101.0, 100.0));
	EXPECT_EQ(1, kvod_ms_until(100.0004, 100.0));	/* rounded up */
	EXPECT_EQ(0, kvod_ms_until(100.0, 100.0));
	EXPECT_EQ(0, kvod_ms_until(99.0, 100.0));	/* passed */
	EXPECT_EQ(0, kvod_ms_until(-1e300, 100.0));
	/* The cap, 1000000 s: well within an int. */
	EXPECT_EQ(1000000001, kvod_ms_until(MAX, 0.0));
	/* Further than INT_MAX ms (24.8 days): clamped, never negative. */
	EXPECT_EQ(INT_MAX, kvod_ms_until(2147484.0, 0.0));
	EXPECT_EQ(INT_MAX, kvod_ms_until(1e7, 0.0));
	EXPECT_EQ(INT_MAX, kvod_ms_until(1e300, 0.0));
	EXPECT_EQ(INT_MAX, kvod_ms_until(INFINITY, 0.0));
	EXPECT_EQ(0, kvod_ms_until(NAN, 0.0));
	EXPECT_EQ(0, kvod_ms_until(5.0, NAN));
}

TEST(ms_min)
{
	EXPECT_EQ(-1, kvod_ms_min(-1, -1));
	EXPECT_EQ(5, kvod_ms_min(-1, 5));
	EXPECT_EQ(5, kvod_ms_min(5, -1));
	EXPECT_EQ(0, kvod_ms_min(0, -1));
	EXPECT_EQ(3, kvod_ms_min(3, 5));
	EXPECT_EQ(3, kvod_ms_min(5, 3));
	EXPECT_EQ(0, kvod_ms_min(INT_MAX, 0));
}

TEST_HARNESS_MAIN
