// SPDX-License-Identifier: GPL-2.0
/*
 * kvod_parse_size() and kvod_parse_range() (tools/lib/rate.c), the SIZE
 * and count parsers of kvod-fetch's and kvod-proxy's options, and
 * kvod_name_valid() (tools/lib/name.c), the userspace twin of the
 * module's name rule, which kvod-proxy's HTTP parser uses. On the host:
 * no module, no device.
 */
#include <stdint.h>
#include <string.h>

#include "lib/name.h"
#include "lib/rate.h"
#include "kselftest_harness.h"

static const struct {
	const char *s;
	int ok;
	uint64_t want;
} size_cases[] = {
	{ "0", 1, 0 },
	{ "4096", 1, 4096 },
	{ "4k", 1, 4096 },
	{ "256K", 1, 256 << 10 },
	{ "64m", 1, 64ULL << 20 },
	{ "2G", 1, 2ULL << 30 },
	{ "17179869183G", 1, 17179869183ULL << 30 },
	{ "17179869184G", 0, 0 },		/* 2^64: overflows */
	{ "18446744073709551616", 0, 0 },	/* strtoull's ERANGE */
	{ "", 0, 0 },
	{ "k", 0, 0 },
	{ "-1", 0, 0 },
	{ " 1", 0, 0 },
	{ "1.5k", 0, 0 },
	{ "1kb", 0, 0 },
	{ "1t", 0, 0 },
};

TEST(parse_size)
{
	size_t i;

	for (i = 0; i < sizeof(size_cases) / sizeof(size_cases[0]); i++) {
		uint64_t v = 0;
		int ret = kvod_parse_size(size_cases[i].s, &v);

		EXPECT_EQ(size_cases[i].ok ? 0 : -1, ret)
			TH_LOG("'%s'", size_cases[i].s);
		if (size_cases[i].ok)
			EXPECT_EQ(size_cases[i].want, v) TH_LOG("'%s'", size_cases[i].s);
	}
}

TEST(parse_range)
{
	uint64_t v;

	EXPECT_EQ(0, kvod_parse_range("1", 1, 256, &v));
	EXPECT_EQ(1ULL, v);
	EXPECT_EQ(0, kvod_parse_range("256", 1, 256, &v));
	EXPECT_EQ(256ULL, v);
	EXPECT_EQ(0, kvod_parse_range("4k", 4096, 64 << 20, &v));
	EXPECT_EQ(4096ULL, v);
	EXPECT_EQ(-1, kvod_parse_range("0", 1, 256, &v));
	EXPECT_EQ(-1, kvod_parse_range("257", 1, 256, &v));
	EXPECT_EQ(-1, kvod_parse_range("4095", 4096, 64 << 20, &v));
	EXPECT_EQ(-1, kvod_parse_range("65M", 4096, 64 << 20, &v));
	EXPECT_EQ(-1, kvod_parse_range("x", 0, UINT64_MAX, &v));
	EXPECT_EQ(0, kvod_parse_range("0", 0, UINT32_MAX, &v));
	EXPECT_EQ(0ULL, v);
}

static const struct {
	const char *s;
	int ok;
} name_cases[] = {
	{ "a", 1 },
	{ "movie.ts", 1 },
	{ "Big_Buck-Bunny.1080p.mp4", 1 },
	{ "...", 1 },
	{ "", 0 },
	{ ".", 0 },
	{ "..", 0 },
	{ "a/b", 0 },
	{ "a b", 0 },
	{ "caf\xc3\xa9", 0 },
	{ "a%20b", 0 },
};

TEST(name_valid)
{
	char name[KVOD_NAME_MAX];
	size_t i;

	for (i = 0; i < sizeof(name_cases) / sizeof(name_cases[0]); i++) {
		memset(name, 0, sizeof(name));
		strcpy(name, name_cases[i].s);
		EXPECT_EQ(name_cases[i].ok, kvod_name_valid(name))
			TH_LOG("'%s'", name_cases[i].s);
	}
	/* 63 bytes is the longest; 64 leaves no room for the NUL. */
	memset(name, 'a', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	EXPECT_TRUE(kvod_name_valid(name));
	memset(name, 'a', sizeof(name));
	EXPECT_FALSE(kvod_name_valid(name));
}

TEST_HARNESS_MAIN
