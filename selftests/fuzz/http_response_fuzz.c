// SPDX-License-Identifier: GPL-2.0
/*
 * kvod_http_response() and kvod_http_header() (tools/lib/http_response.c),
 * kvod-fetch's reading of an HTTP server's response head. The input is
 * the first byte asked for, as a digit string ended by a newline (none:
 * 0), then what the server sent; the head is cut after its empty line
 * and NUL-terminated as tools/fetch-http.c's read_head() does, and only
 * within the 8191 bytes that it reads.
 *
 * Besides memory safety: an answer that passes is a 200 to a request
 * from 0 or a 206 whose range starts at the byte asked for and ends
 * inside the movie.
 */
#include "fuzz.h"

#include "lib/http_response.h"

#define HEAD_MAX	8191	/* struct fetch_http.head, less its NUL */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nl = memchr(data, '\n', size < 21 ? size : 21);
	struct kvod_http_resp r;
	uint64_t off = 0;
	char *head, *end;
	const uint8_t *p;
	int v;

	if (nl) {
		for (p = data; p < nl && *p >= '0' && *p <= '9'; p++)
			off = off * 10 + (*p - '0');
		size -= nl + 1 - data;
		data = nl + 1;
	}
	head = fuzz_str(data, size < HEAD_MAX ? size : HEAD_MAX);
	end = strstr(head, "\r\n\r\n");
	if (!end)
		goto out;
	end[2] = '\0';
	/* A fresh copy: nothing may be read past the NUL either. */
	p = (const uint8_t *)head;
	end = fuzz_str(p, strlen(head));
	free(head);
	head = end;

	kvod_http_header(head, "Content-Range");
	v = kvod_http_response(head, off, &r);
	FUZZ_CHECK(v >= KVOD_HTTP_OK && v <= KVOD_HTTP_NO_ANSWER);
	if (v == KVOD_HTTP_OK) {
		FUZZ_CHECK(r.status == 200 || r.status == 206);
		if (r.status == 200)
			FUZZ_CHECK(!off);
		else
			FUZZ_CHECK(r.last >= off && r.last < r.size);
	}
out:
	free(head);
	return 0;
}
