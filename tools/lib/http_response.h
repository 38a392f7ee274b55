/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tools/lib/http_response: what kvod-fetch makes of the head of an HTTP
 * response to its GET with a Range header. No output: the caller says
 * what went wrong.
 */
#ifndef KVOD_LIB_HTTP_RESPONSE_H
#define KVOD_LIB_HTTP_RESPONSE_H

#include <stdint.h>

/* What a response head says (kvod_http_response()). */
enum kvod_http_verdict {
	KVOD_HTTP_OK,		/* 200 or 206 for the bytes asked for */
	KVOD_HTTP_NOT_HTTP,	/* no HTTP/1 status line */
	KVOD_HTTP_UNSATISFIABLE, /* 416 with the movie's size */
	KVOD_HTTP_STATUS,	/* another status */
	KVOD_HTTP_CODING,	/* a Transfer-Encoding: not supported */
	KVOD_HTTP_NO_ANSWER,	/* not an answer for the bytes asked for */
};

/**
 * struct kvod_http_resp - a response head, as far as kvod-fetch reads it
 * @status: the status code, unless KVOD_HTTP_NOT_HTTP
 * @last: KVOD_HTTP_OK with status 206: the last byte of the range sent
 * @size: KVOD_HTTP_OK, KVOD_HTTP_UNSATISFIABLE: the movie's size, from
 *	Content-Range (206, 416) or Content-Length (200)
 */
struct kvod_http_resp {
	int status;
	uint64_t last;
	uint64_t size;
};

const char *kvod_http_header(const char *head, const char *name);
int kvod_http_response(const char *head, uint64_t off,
		       struct kvod_http_resp *r);

#endif /* KVOD_LIB_HTTP_RESPONSE_H */
