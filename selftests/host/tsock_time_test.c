// SPDX-License-Identifier: GPL-2.0
/*
 * tsock_parse_time_ns() (tools/tc/tsock_time.c), the TIME parser of the
 * tc plugin q_tsock.so, on the host: no tc, no qdisc. One KTAP result per
 * case. The parser is compiled in from its source, as the plugin links it.
 *
 * An accepted TIME must give exactly the expected nanoseconds. A rejected
 * one must give the expected error (-ERANGE for what does not fit in 64
 * bits, -EINVAL for anything else) and leave the result untouched; among
 * them the values strtod() let through before: a blank hiding a minus,
 * nan, inf, hex and exponents.
 *
 * selftests/kvod/tsock_tc.sh still checks, in the guest, that tc refuses
 * such values with the plugin's message.
 */
#include <errno.h>
#include <stdint.h>

#include "tc/tsock_time.c"
#include "kselftest_harness.h"

#define PARSE(s, v)	tsock_parse_time_ns(s, v)
#define PARSE_NAME	time
#include "parse_test.h"

ACCEPTS(bare_is_us, "250", 250000);
ACCEPTS(zero_ns, "0ns", 0);
ACCEPTS(ns, "12345ns", 12345);
ACCEPTS(us, "2500us", 2500000);
ACCEPTS(usec, "10usec", 10000);
ACCEPTS(ms, "1ms", 1000000);
ACCEPTS(msec, "5msec", 5000000);
ACCEPTS(s, "2s", 2000000000);
ACCEPTS(sec, "60sec", 60000000000ULL);
ACCEPTS(fraction_ms, "1.5ms", 1500000);
ACCEPTS(fraction_us, "0.001us", 1);
ACCEPTS(fraction_bare, "1.5", 1500);
ACCEPTS(trailing_zeros, "1.0000000000000s", 1000000000);
ACCEPTS(u64_max_ns, "18446744073709551615ns", UINT64_MAX);

REJECTS(missing, NULL, -EINVAL);
REJECTS(empty, "", -EINVAL);
REJECTS(minus, "-1ms", -EINVAL);
REJECTS(blank_minus, " -0.4ns", -EINVAL);
REJECTS(blank_minus_ms, " -1ms", -EINVAL);
REJECTS(leading_blank, " 5ms", -EINVAL);
REJECTS(trailing_blank, "5ms ", -EINVAL);
REJECTS(blank_before_unit, "5 ms", -EINVAL);
REJECTS(plus, "+5ms", -EINVAL);
REJECTS(nan, "nan", -EINVAL);
REJECTS(nan_ms, "nanms", -EINVAL);
REJECTS(inf, "inf", -EINVAL);
REJECTS(infinity_s, "infinitys", -EINVAL);
REJECTS(hex, "0x10ms", -EINVAL);
REJECTS(hex_float, "0x1p4ns", -EINVAL);
REJECTS(exponent, "1e3ns", -EINVAL);
REJECTS(unknown_unit, "5parsecs", -EINVAL);
REJECTS(unit_only, "ms", -EINVAL);
REJECTS(point_only, ".", -EINVAL);
REJECTS(no_integer_part, ".5ms", -EINVAL);
REJECTS(no_fraction, "5.ms", -EINVAL);
REJECTS(two_points, "1.2.3ms", -EINVAL);
REJECTS(part_of_a_ns, "1.5ns", -EINVAL);
REJECTS(under_one_ns, "0.0001", -EINVAL);
REJECTS(over_u64_ns, "18446744073709551616ns", -ERANGE);
REJECTS(over_u64_s, "18446744074s", -ERANGE);

TEST_HARNESS_MAIN
