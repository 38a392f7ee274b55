/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The HTTP request parser (http_parse.c). kvod-proxy builds it too, with
 * tools/lib/kshim.h: it may use nothing of the module but name.h.
 */
#ifndef _KVOD_HTTP_PARSE_H
#define _KVOD_HTTP_PARSE_H

#include <linux/types.h>

#include <linux/kvod.h>

#include "name.h"

/* Request line plus header fields, including the empty line; else 431. */
#define HTTP_HDR_MAX		8192
/* Header fields per request; else 431. */
#define HTTP_FIELDS_MAX		100

enum http_method {
	HTTP_GET,
	HTTP_HEAD,
	HTTP_OTHER,
};

enum http_range_kind {
	HTTP_RANGE_NONE,	/* no Range, or one we chose to ignore */
	HTTP_RANGE_FROM,	/* bytes=first-[last] */
	HTTP_RANGE_SUFFIX,	/* bytes=-count */
};

/**
 * struct http_request - what the parser makes of one request head
 * @status: 0 if the request is well formed, else the error status to send
 *	(400, 405, 431, 505)
 * @method: enum http_method
 * @http10: the request was HTTP/1.0
 * @close: the connection must be closed after the response
 * @range: enum http_range_kind
 * @first: HTTP_RANGE_FROM: first byte; HTTP_RANGE_SUFFIX: byte count.
 *	Saturates at U64_MAX instead of overflowing.
 * @last: HTTP_RANGE_FROM: last byte, U64_MAX if open ended
 * @name: the movie named by the target; empty if it names no valid movie
 */
struct http_request {
	u16 status;
	u8 method;
	bool http10;
	bool close;
	u8 range;
	u64 first;
	u64 last;
	char name[KVOD_NAME_MAX];
};

int kvod_http_parse(const char *buf, size_t len, struct http_request *req);

#endif /* _KVOD_HTTP_PARSE_H */
