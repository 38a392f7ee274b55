// SPDX-License-Identifier: GPL-2.0
/*
 * What kvod's HTTP server and kvod-proxy answer alike. kvod-proxy builds
 * this file too: it may use nothing of the kernel but string functions.
 */
#include <linux/kernel.h>
#include <linux/string.h>

#include "http_proto.h"

/**
 * kvod_http_reason() - the reason phrase of a status either server sends
 * @status: an HTTP status code
 *
 * Return: the phrase; "Internal Server Error" for a status neither sends.
 */
const char *kvod_http_reason(u16 status)
{
	switch (status) {
	case 200: return "OK";
	case 206: return "Partial Content";
	case 400: return "Bad Request";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 408: return "Request Timeout";
	case 416: return "Range Not Satisfiable";
	case 431: return "Request Header Fields Too Large";
	case 502: return "Bad Gateway";
	case 503: return "Service Unavailable";
	case 504: return "Gateway Timeout";
	case 505: return "HTTP Version Not Supported";
	default: return "Internal Server Error";
	}
}

/**
 * kvod_http_content_type() - a movie's media type, by its name's extension
 * @name: the movie's name
 *
 * Return: the type; "application/octet-stream" for an unknown extension.
 */
const char *kvod_http_content_type(const char *name)
{
	static const struct {
		const char *ext;
		const char *type;
	} types[] = {
		{ ".ts", "video/mp2t" },
		{ ".mp4", "video/mp4" },
		{ ".mkv", "video/x-matroska" },
		{ ".webm", "video/webm" },
	};
	const char *dot = strrchr(name, '.');
	size_t i;

	for (i = 0; dot && i < ARRAY_SIZE(types); i++) {
		if (!strcasecmp(dot, types[i].ext))
			return types[i].type;
	}
	return "application/octet-stream";
}

/**
 * kvod_http_resolve_range() - the bytes a request asks of a movie
 * @req: the parsed request
 * @length: the movie's length, at least 1
 * @first: set to the first byte to send
 * @last: set to the last byte to send
 *
 * Return: 200 (the whole movie), 206, or 416 (nothing of it).
 */
u16 kvod_http_resolve_range(const struct http_request *req, u64 length,
			    u64 *first, u64 *last)
{
	*first = 0;
	*last = length - 1;
	switch (req->range) {
	case HTTP_RANGE_FROM:
		if (req->first >= length)
			return 416;
		*first = req->first;
		if (req->last < *last)
			*last = req->last;
		return 206;
	case HTTP_RANGE_SUFFIX:
		if (!req->first)
			return 416;
		if (req->first < length)
			*first = length - req->first;
		return 206;
	default:
		return 200;
	}
}
