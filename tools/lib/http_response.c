// SPDX-License-Identifier: GPL-2.0
/*
 * The head of an HTTP/1 response to kvod-fetch's "GET /NAME" with
 * "Range: bytes=OFF-[LAST]": the status line and the three header fields
 * kvod-fetch reads. A 206 must carry "Content-Range: bytes OFF-B/SIZE"
 * with OFF the offset asked for and B in OFF..SIZE-1; a 200 (a server
 * that ignores Range sends the whole movie) answers only a request from
 * 0, with the size in Content-Length; a 416 may give the size in a
 * Content-Range of "bytes *", a slash and SIZE. A body in a transfer
 * coding is not supported.
 *
 * The head is the server's, read by tools/fetch-http.c up to its empty
 * line: a NUL-terminated string that ends with the last field's CRLF.
 * selftests/fuzz/http_response_fuzz.c feeds it arbitrary bytes.
 */
#include "http_response.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/**
 * kvod_http_header() - the value of a header field in a response head
 * @head: the head, as above
 * @name: the field's name, matched without regard to case
 *
 * Return: the first such field's value, after the blanks that lead it,
 * up to the end of @head (the caller reads what it needs), or NULL.
 */
const char *kvod_http_header(const char *head, const char *name)
{
	size_t n = strlen(name);
	const char *p = strstr(head, "\r\n");

	for (; p && p[2] != '\r'; p = strstr(p + 2, "\r\n")) {
		if (!strncasecmp(p + 2, name, n) && p[2 + n] == ':')
			return p + 3 + n + strspn(p + 3 + n, " \t");
	}
	return NULL;
}

/**
 * kvod_http_response() - check a response head against the request
 * @head: the head, as above
 * @off: the first byte the request asked for
 * @r: what the head says (see struct kvod_http_resp)
 *
 * Return: enum kvod_http_verdict.
 */
int kvod_http_response(const char *head, uint64_t off,
		       struct kvod_http_resp *r)
{
	const char *cr, *cl;
	uint64_t a = 0, b = 0, size = 0;
	int status;

	if (sscanf(head, "HTTP/1.%*[01] %d", &status) != 1)
		return KVOD_HTTP_NOT_HTTP;
	r->status = status;
	cr = kvod_http_header(head, "Content-Range");
	if (status == 416 && cr && sscanf(cr, "bytes */%" SCNu64, &size) == 1) {
		r->size = size;
		return KVOD_HTTP_UNSATISFIABLE;
	}
	if (status != 200 && status != 206)
		return KVOD_HTTP_STATUS;
	if (kvod_http_header(head, "Transfer-Encoding"))
		return KVOD_HTTP_CODING;
	cl = kvod_http_header(head, "Content-Length");
	if (status == 206 ? !cr || sscanf(cr, "bytes %" SCNu64 "-%" SCNu64 "/%" SCNu64,
					  &a, &b, &size) != 3 || a != off ||
			    b < a || b >= size :
			    off || !cl || sscanf(cl, "%" SCNu64, &size) != 1)
		return KVOD_HTTP_NO_ANSWER;
	r->last = b;
	r->size = size;
	return KVOD_HTTP_OK;
}
