// SPDX-License-Identifier: GPL-2.0
/*
 * The number parsers of the tools: DECIMAL (tools/lib/decimal.c), RATE
 * and SIZE (rate.c), SEC and the poll() timeouts made of it (seconds.c),
 * and the tc plugin's TIME (tools/tc/tsock_time.c). The first byte of the
 * input picks the parser (and for DECIMAL the power of ten to scale by),
 * the rest is the text.
 *
 * Besides memory safety: RATE and SEC are never 0, SEC keeps to its
 * maximum and makes a poll() timeout in 1..INT_MAX, a DECIMAL scaled one
 * power of ten further is ten times as much or out of range, and a SIZE
 * without a suffix is what strtoull() reads.
 */
#include "fuzz.h"

#include <errno.h>
#include <limits.h>

#include "lib/decimal.h"
#include "lib/rate.h"
#include "lib/seconds.h"
#include "tc/tsock_time.h"

#define SECONDS_MAX	1000000		/* kvod-fetch's */

static void decimal(const char *s, unsigned int exp)
{
	uint64_t v, v10;
	int err = kvod_decimal_scale(s, exp, &v);

	FUZZ_CHECK(!err || err == -EINVAL || err == -ERANGE);
	if (!kvod_decimal_len(s))
		FUZZ_CHECK(err == -EINVAL);
	if (err)
		return;
	err = kvod_decimal_scale(s, exp + 1, &v10);
	if (v > UINT64_MAX / 10)
		FUZZ_CHECK(err == -ERANGE);
	else
		FUZZ_CHECK(!err && v10 == v * 10);
}

static void rate(const char *s)
{
	uint64_t v;
	int err = kvod_parse_rate(s, &v);

	FUZZ_CHECK(!err || err == -EINVAL || err == -ERANGE);
	if (!err)
		FUZZ_CHECK(v > 0);
}

static void size(const char *s)
{
	uint64_t v, w;

	if (kvod_parse_size(s, &v))
		return;
	FUZZ_CHECK(s[0] >= '0' && s[0] <= '9');
	if (!s[strspn(s, "0123456789")]) {
		w = strtoull(s, NULL, 10);
		FUZZ_CHECK(v == w);
	}
	FUZZ_CHECK(!kvod_parse_range(s, v, v, &w) && w == v);
}

static void seconds(const char *s)
{
	double v;
	int ms;

	if (kvod_parse_seconds(s, SECONDS_MAX, &v))
		return;
	FUZZ_CHECK(v > 0 && v <= SECONDS_MAX);
	ms = kvod_ms_until(v, 0);
	FUZZ_CHECK(ms >= 1 && ms <= INT_MAX);
	FUZZ_CHECK(kvod_ms_min(ms, -1) == ms);
}

static void tc_time(const char *s)
{
	uint64_t ns;
	int err = tsock_parse_time_ns(s, &ns);

	FUZZ_CHECK(!err || err == -EINVAL || err == -ERANGE);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	char *s;

	if (!len)
		return 0;
	s = fuzz_str(data + 1, len - 1);
	switch (data[0] % 5) {
	case 0:
		decimal(s, data[0] / 5 % 24);
		break;
	case 1:
		rate(s);
		break;
	case 2:
		size(s);
		break;
	case 3:
		seconds(s);
		break;
	default:
		tc_time(s);
		break;
	}
	free(s);
	return 0;
}
