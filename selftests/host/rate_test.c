// SPDX-License-Identifier: GPL-2.0
/*
 * kvod_parse_rate() (tools/lib/rate.c), the RATE parser of kvodctl's
 * --bitrate and --rate and of kvod-fetch's --rate, on the host: no
 * module, no device. One KTAP result per case.
 *
 * An accepted RATE must give exactly the expected bits/s. A rejected one
 * must give the expected error (-ERANGE for what does not fit in 64 bits,
 * -EINVAL for anything else) and leave the result untouched.
 *
 * selftests/kvod/kvodctl.sh still checks, in the guest, that kvodctl
 * refuses a bad --bitrate with exit status 2 and one line on stderr.
 */
#include <errno.h>
#include <stdint.h>

#include "lib/rate.h"
#include "kselftest_harness.h"

#define PARSE(s, v)	kvod_parse_rate(s, v)
#define PARSE_NAME	rate
#include "parse_test.h"

ACCEPTS(r8_7M, "8.7M", 8700000);
ACCEPTS(r2500k, "2500k", 2500000);
ACCEPTS(r8700000, "8700000", 8700000);
ACCEPTS(r1, "1", 1);
ACCEPTS(r1_5k, "1.5k", 1500);
ACCEPTS(r0_5M, "0.5M", 500000);
ACCEPTS(u64_max, "18446744073709551615", UINT64_MAX);

REJECTS(empty, "", -EINVAL);
REJECTS(minus, "-1", -EINVAL);
REJECTS(zero, "0", -EINVAL);
REJECTS(zero_k, "0k", -EINVAL);
REJECTS(zero_point_zero_M, "0.0M", -EINVAL);
REJECTS(unit, "8.7Mb", -EINVAL);
REJECTS(exponent, "1e6", -EINVAL);
REJECTS(bad_suffix, "12x", -EINVAL);
REJECTS(two_points, "1.2.3", -EINVAL);
REJECTS(part_of_a_bit, "1.0005k", -EINVAL);
REJECTS(under_one_bit, "0.0001k", -EINVAL);
REJECTS(u64_max_plus_1, "18446744073709551616", -ERANGE);
REJECTS(over_u64_k, "18446744073709552k", -ERANGE);
REJECTS(leading_blank, " 8M", -EINVAL);
REJECTS(trailing_blank, "8M ", -EINVAL);
REJECTS(suffix_only, "k", -EINVAL);
REJECTS(point_only, ".", -EINVAL);
REJECTS(plus, "+5", -EINVAL);
REJECTS(hex, "0x10", -EINVAL);

TEST_HARNESS_MAIN
