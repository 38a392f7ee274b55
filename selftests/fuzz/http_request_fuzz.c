// SPDX-License-Identifier: GPL-2.0
/*
 * kvod_http_parse() (kmod/http_parse.c), the HTTP server's request
 * parser, built against tools/lib/kshim.h as kvod-proxy builds it. The
 * input is what a client sent on one connection: requests are parsed one
 * after the other, as kmod/http.c does with pipelined requests, until one
 * is incomplete or ends the connection.
 *
 * Besides memory safety: the parser never claims more bytes than it was
 * given, an incomplete head is shorter than HTTP_HDR_MAX, a status is
 * one the server sends, a served request names a valid movie or none and
 * a range that is in order, and a complete head parses the same without
 * the bytes that follow it.
 */
#include "fuzz.h"

#include "../../kmod/http_parse.h"

static void check_request(const struct http_request *req)
{
	size_t n = strnlen(req->name, KVOD_NAME_MAX);

	FUZZ_CHECK(n < KVOD_NAME_MAX);
	FUZZ_CHECK(!n || kvod_name_valid(req->name));
	FUZZ_CHECK(req->status == 0 || req->status == 400 ||
		   req->status == 405 || req->status == 431 ||
		   req->status == 505);
	if (req->status && req->status != 405)
		FUZZ_CHECK(req->close);
	if (req->status)
		return;
	FUZZ_CHECK(req->method == HTTP_GET || req->method == HTTP_HEAD);
	FUZZ_CHECK(req->range == HTTP_RANGE_NONE ||
		   req->range == HTTP_RANGE_FROM ||
		   req->range == HTTP_RANGE_SUFFIX);
	if (req->range != HTTP_RANGE_NONE)
		FUZZ_CHECK(req->method == HTTP_GET);
	if (req->range == HTTP_RANGE_FROM)
		FUZZ_CHECK(req->first <= req->last);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = fuzz_dup(data, size), *p = buf;
	size_t len = size;

	while (len) {
		struct http_request req, again;
		int n = kvod_http_parse(p, len, &req);

		FUZZ_CHECK(n >= 0 && (size_t)n <= len);
		if (!n) {
			FUZZ_CHECK(len < HTTP_HDR_MAX);
			break;
		}
		check_request(&req);
		/* A whole head: what follows it changes nothing. */
		if ((size_t)n < len) {
			char *head = fuzz_dup((const uint8_t *)p, n);

			FUZZ_CHECK(kvod_http_parse(head, n, &again) == n);
			FUZZ_CHECK(!memcmp(&req, &again, sizeof(req)));
			free(head);
		}
		if (req.close)
			break;
		p += n;
		len -= n;
	}
	free(buf);
	return 0;
}
