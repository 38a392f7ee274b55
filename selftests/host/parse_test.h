/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Table-driven host tests of a parser that either returns 0 and stores a
 * value, or returns a negative errno and leaves the value alone: the
 * contract of kvod_parse_rate(), kvod_parse_seconds() and
 * tsock_parse_time_ns(). Their tests differ only in their cases.
 *
 * The test defines, then includes this after kselftest_harness.h:
 *
 *	PARSE(s, v)	the call, for text s and a PARSED *v
 *	PARSE_NAME	the name of the two tests: each case is reported as
 *			accepts.CASE.PARSE_NAME or rejects.CASE.PARSE_NAME
 *
 * and, unless the value is a uint64_t (the default below):
 *
 *	PARSED		the type of the value
 *	PARSED_FMT	a printf() format for a value, and
 *	PARSED_ARG(v)	the value as that format takes it
 *	UNTOUCHED	a value no case parses to, put in the result before
 *			each call
 *
 * and lists its cases:
 *
 *	ACCEPTS(case, text, value);	PARSE() returns 0 and gives exactly
 *					value
 *	REJECTS(case, text, error);	PARSE() returns error and leaves
 *					the result UNTOUCHED
 *
 * The text may be NULL, for parsers that take a missing value.
 */
#ifndef KVOD_HOST_PARSE_TEST_H
#define KVOD_HOST_PARSE_TEST_H

#include <stdint.h>

#include "cases.h"

#ifndef PARSED
#define PARSED		uint64_t
#define PARSED_FMT	"%llu"
#define PARSED_ARG(v)	((unsigned long long)(v))
#define UNTOUCHED	0x5a5a5a5a5a5a5a5aULL
#endif

/* The text of a case, for the log. */
#define SHOWN(s)	((s) ? (s) : "(null)")

CASES(accepts) {
	const char *s;
	PARSED want;
};

#define ACCEPTS(name, text, value) \
	FIXTURE_VARIANT_ADD(accepts, name) { .s = text, .want = value }

TEST_F(accepts, PARSE_NAME)
{
	PARSED v = UNTOUCHED;

	ASSERT_EQ(0, PARSE(variant->s, &v))
		TH_LOG("'%s' rejected", SHOWN(variant->s));
	EXPECT_EQ(variant->want, v)
		TH_LOG("'%s' parsed as " PARSED_FMT, SHOWN(variant->s),
		       PARSED_ARG(v));
}

CASES(rejects) {
	const char *s;
	int err;
};

#define REJECTS(name, text, error) \
	FIXTURE_VARIANT_ADD(rejects, name) { .s = text, .err = error }

TEST_F(rejects, PARSE_NAME)
{
	PARSED v = UNTOUCHED;

	EXPECT_EQ(variant->err, PARSE(variant->s, &v))
		TH_LOG("'%s'", SHOWN(variant->s));
	EXPECT_EQ(UNTOUCHED, v)
		TH_LOG("'%s' changed the result to " PARSED_FMT,
		       SHOWN(variant->s), PARSED_ARG(v));
}

#endif /* KVOD_HOST_PARSE_TEST_H */
