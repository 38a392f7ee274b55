// SPDX-License-Identifier: GPL-2.0
/*
 * kvod_http_response() and kvod_http_header() (tools/lib/http_response.c),
 * kvod-fetch's reading of an HTTP response head, on the host: no module,
 * no network. Each head is as tools/fetch-http.c hands it over, cut after
 * the last field's CRLF.
 *
 * selftests/kvod/http_fetch.sh checks kvod-fetch against kvod's and
 * nginx's answers in the guest; selftests/fuzz/http_response_fuzz.c
 * feeds the parser anything.
 */
#include <stdint.h>

#include "lib/http_response.h"
#include "kselftest_harness.h"
#include "cases.h"

CASES(resp) {
	const char *head;
	uint64_t off;
	int verdict;
	int status;
	uint64_t last;
	uint64_t size;
};

#define RESP(name, h, o, v, st, l, sz) \
	FIXTURE_VARIANT_ADD(resp, name) { .head = h, .off = o, .verdict = v, \
		.status = st, .last = l, .size = sz }

#define CR	"Content-Range: "

RESP(kvod_206, "HTTP/1.1 206 Partial Content\r\n" CR "bytes 0-1060920/1060921\r\n"
     "Content-Length: 1060921\r\n", 0, KVOD_HTTP_OK, 206, 1060920, 1060921);
RESP(mid_206, "HTTP/1.1 206 Partial Content\r\n" CR "bytes 4096-8191/1060921\r\n",
     4096, KVOD_HTTP_OK, 206, 8191, 1060921);
RESP(field_case_and_blanks, "HTTP/1.1 206 Partial Content\r\ncontent-range:\t bytes 1-1/2\r\n",
     1, KVOD_HTTP_OK, 206, 1, 2);
RESP(ok_200, "HTTP/1.1 200 OK\r\nServer: nginx\r\nContent-Length: 77\r\n",
     0, KVOD_HTTP_OK, 200, 0, 77);
RESP(http10_200, "HTTP/1.0 200 OK\r\nContent-Length: 5\r\n", 0, KVOD_HTTP_OK,
     200, 0, 5);
RESP(ok_200_from_offset, "HTTP/1.1 200 OK\r\nContent-Length: 77\r\n", 10,
     KVOD_HTTP_NO_ANSWER, 200, 0, 0);
RESP(ok_200_no_length, "HTTP/1.1 200 OK\r\n", 0, KVOD_HTTP_NO_ANSWER, 200, 0, 0);
RESP(unsatisfiable, "HTTP/1.1 416 Range Not Satisfiable\r\n" CR "bytes */1060921\r\n",
     2000000, KVOD_HTTP_UNSATISFIABLE, 416, 0, 1060921);
RESP(unsatisfiable_bare, "HTTP/1.1 416 Range Not Satisfiable\r\n", 5,
     KVOD_HTTP_STATUS, 416, 0, 0);
RESP(not_found, "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n", 0,
     KVOD_HTTP_STATUS, 404, 0, 0);
RESP(chunked, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n", 0,
     KVOD_HTTP_CODING, 200, 0, 0);
RESP(wrong_start, "HTTP/1.1 206 Partial Content\r\n" CR "bytes 0-99/1000\r\n",
     100, KVOD_HTTP_NO_ANSWER, 206, 0, 0);
RESP(last_past_size, "HTTP/1.1 206 Partial Content\r\n" CR "bytes 0-1000/1000\r\n",
     0, KVOD_HTTP_NO_ANSWER, 206, 0, 0);
RESP(last_before_first, "HTTP/1.1 206 Partial Content\r\n" CR "bytes 5-4/1000\r\n",
     5, KVOD_HTTP_NO_ANSWER, 206, 0, 0);
RESP(no_content_range, "HTTP/1.1 206 Partial Content\r\nContent-Length: 10\r\n",
     0, KVOD_HTTP_NO_ANSWER, 206, 0, 0);
RESP(field_name_prefix, "HTTP/1.1 200 OK\r\nContent-Length-X: 5\r\nContent-Length: 6\r\n",
     0, KVOD_HTTP_OK, 200, 0, 6);
RESP(not_http, "SSH-2.0-OpenSSH_9.2\r\n", 0, KVOD_HTTP_NOT_HTTP, 0, 0, 0);
RESP(http2, "HTTP/2 200\r\n", 0, KVOD_HTTP_NOT_HTTP, 0, 0, 0);

TEST_F(resp, verdict)
{
	struct kvod_http_resp r = { 0 };
	int v = kvod_http_response(variant->head, variant->off, &r);

	ASSERT_EQ(variant->verdict, v) TH_LOG("%s", variant->head);
	if (v == KVOD_HTTP_NOT_HTTP)
		return;
	EXPECT_EQ(variant->status, r.status);
	if (v == KVOD_HTTP_OK || v == KVOD_HTTP_UNSATISFIABLE)
		EXPECT_EQ(variant->size, r.size);
	if (v == KVOD_HTTP_OK && r.status == 206)
		EXPECT_EQ(variant->last, r.last);
}

TEST(header_lookup)
{
	const char *h = "HTTP/1.1 200 OK\r\nX-A: one\r\nx-b:two\r\n";

	EXPECT_STREQ("one\r\nx-b:two\r\n", kvod_http_header(h, "X-A"));
	EXPECT_STREQ("two\r\n", kvod_http_header(h, "X-B"));
	EXPECT_EQ(NULL, kvod_http_header(h, "X"));
	/* The status line is no field. */
	EXPECT_EQ(NULL, kvod_http_header(h, "HTTP/1.1 200 OK"));
}

TEST_HARNESS_MAIN
