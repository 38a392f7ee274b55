// SPDX-License-Identifier: GPL-2.0
/*
 * What kvod's HTTP server and kvod-proxy answer alike (kmod/http_proto.c),
 * on the host: no module, no network. The request parser and the answers
 * are compiled in from the module's sources against tools/lib/kshim.h, as
 * kvod-proxy builds them; each range case is a request head parsed by
 * kvod_http_parse() and resolved against a movie's length.
 *
 * selftests/kvod/http_serve.sh checks the module's responses on the wire,
 * selftests/kvod/rdma_proxy.sh kvod-proxy's.
 */
#include "lib/kshim.h"

#include "../../kmod/http_parse.c"
#include "../../kmod/http_proto.c"
#include "kselftest_harness.h"

/* Every status either server sends, with its RFC 9110 reason phrase. */
TEST(reason_phrases)
{
	static const struct {
		u16 status;
		const char *reason;
	} want[] = {
		{ 200, "OK" },
		{ 206, "Partial Content" },
		{ 400, "Bad Request" },
		{ 404, "Not Found" },
		{ 405, "Method Not Allowed" },
		{ 408, "Request Timeout" },
		{ 416, "Range Not Satisfiable" },
		{ 431, "Request Header Fields Too Large" },
		{ 500, "Internal Server Error" },
		{ 502, "Bad Gateway" },
		{ 503, "Service Unavailable" },
		{ 504, "Gateway Timeout" },
		{ 505, "HTTP Version Not Supported" },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(want); i++) {
		EXPECT_STREQ(want[i].reason, kvod_http_reason(want[i].status)) {
			TH_LOG("status %u", want[i].status);
		}
	}
}

TEST(content_types)
{
	static const struct {
		const char *name;
		const char *type;
	} want[] = {
		{ "a.ts", "video/mp2t" },
		{ "film.MP4", "video/mp4" },
		{ "x.y.mkv", "video/x-matroska" },
		{ "clip.webm", "video/webm" },
		{ "a.ts.bak", "application/octet-stream" },
		{ "ts", "application/octet-stream" },
		{ "a.", "application/octet-stream" },
		{ "notes.txt", "application/octet-stream" },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(want); i++)
		EXPECT_STREQ(want[i].type, kvod_http_content_type(want[i].name));
}

FIXTURE(range) {};
FIXTURE_SETUP(range) {}
FIXTURE_TEARDOWN(range) {}

FIXTURE_VARIANT(range) {
	const char *range;	/* the Range field's value, NULL for none */
	u64 length;
	u16 status;
	u64 first;
	u64 last;
};

#define RANGE(name, r, len, st, f, l) \
	FIXTURE_VARIANT_ADD(range, name) { .range = r, .length = len, \
		.status = st, .first = f, .last = l }

RANGE(none, NULL, 1000, 200, 0, 999);
RANGE(from_to, "bytes=10-19", 1000, 206, 10, 19);
RANGE(open_end, "bytes=10-", 1000, 206, 10, 999);
RANGE(last_byte, "bytes=999-999", 1000, 206, 999, 999);
RANGE(last_past_end, "bytes=500-5000", 1000, 206, 500, 999);
RANGE(last_huge, "bytes=0-99999999999999999999999", 1000, 206, 0, 999);
RANGE(first_at_end, "bytes=1000-", 1000, 416, 0, 999);
RANGE(first_huge, "bytes=99999999999999999999999-", 1000, 416, 0, 999);
RANGE(suffix, "bytes=-100", 1000, 206, 900, 999);
RANGE(suffix_whole, "bytes=-1000", 1000, 206, 0, 999);
RANGE(suffix_longer, "bytes=-5000", 1000, 206, 0, 999);
RANGE(suffix_zero, "bytes=-0", 1000, 416, 0, 999);
RANGE(one_byte_movie, "bytes=0-", 1, 206, 0, 0);
RANGE(several_ignored, "bytes=0-1,5-6", 1000, 200, 0, 999);
RANGE(other_unit_ignored, "items=0-1", 1000, 200, 0, 999);
RANGE(backwards_ignored, "bytes=20-10", 1000, 200, 0, 999);

TEST_F(range, resolve)
{
	char head[256];
	struct http_request req;
	u64 first = 7, last = 7;
	int n;

	n = snprintf(head, sizeof(head),
		     "GET /m.ts HTTP/1.1\r\nHost: h\r\n%s%s%s\r\n",
		     variant->range ? "Range: " : "",
		     variant->range ? variant->range : "",
		     variant->range ? "\r\n" : "");
	ASSERT_EQ(n, kvod_http_parse(head, n, &req));
	ASSERT_EQ(0, req.status);
	EXPECT_EQ(variant->status,
		  kvod_http_resolve_range(&req, variant->length, &first, &last));
	EXPECT_EQ(variant->first, first);
	EXPECT_EQ(variant->last, last);
}

TEST_HARNESS_MAIN
