// SPDX-License-Identifier: GPL-2.0
/*
 * HTTP/1.1 request parser (RFC 9110, RFC 9112), strict on purpose
 * (Documentation/http.rst, "The parser").
 */
#include <linux/kernel.h>
#include <linux/limits.h>
#include <linux/string.h>

#include "http_parse.h"

/* RFC 9110 5.6.2 tchar */
static bool is_tchar(u8 c)
{
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9'))
		return true;
	return c && strchr("!#$%&'*+-.^_`|~", c);
}

/* field-vchar, SP or HTAB: anything but control bytes */
static bool is_field_char(u8 c)
{
	return c == '\t' || (c >= 0x20 && c != 0x7f);
}

static bool is_ows(u8 c)
{
	return c == ' ' || c == '\t';
}

static bool token_eq(const char *p, size_t n, const char *lit)
{
	return n == strlen(lit) && !strncasecmp(p, lit, n);
}

/*
 * Find the end of the head in @buf: the byte after its empty line.
 * Empty lines before the request line are skipped (RFC 9112 2.2).
 * Return: the head's length, 0 if it is not all there yet, or -EBADMSG on
 * a byte that cannot be part of a head (NUL, bare CR, bare LF).
 */
static int head_length(const char *buf, size_t len)
{
	size_t i, start = 0;

	while (start + 1 < len && buf[start] == '\r' && buf[start + 1] == '\n')
		start += 2;

	for (i = start; i < len; i++) {
		switch (buf[i]) {
		case '\0':
			return -EBADMSG;
		case '\r':
			if (i + 1 < len && buf[i + 1] != '\n')
				return -EBADMSG;
			break;
		case '\n':
			if (i == 0 || buf[i - 1] != '\r')
				return -EBADMSG;
			if (i >= start + 3 && buf[i - 2] == '\n')
				return i + 1;
			break;
		}
	}
	return 0;
}

/* Decimal digits to u64, saturating at U64_MAX. Return: digits used. */
static size_t parse_u64(const char *p, size_t n, u64 *val)
{
	size_t i;
	u64 v = 0;

	for (i = 0; i < n && p[i] >= '0' && p[i] <= '9'; i++) {
		unsigned int d = p[i] - '0';

		if (v > (U64_MAX - d) / 10)
			v = U64_MAX;
		else
			v = v * 10 + d;
	}
	*val = v;
	return i;
}

/* "bytes=a-b", "bytes=a-", "bytes=-n"; anything else leaves NONE. */
static void parse_range(const char *p, size_t n, struct http_request *req)
{
	u64 first, last = U64_MAX;
	size_t d;

	if (n < 6 || strncasecmp(p, "bytes=", 6))
		return;
	p += 6;
	n -= 6;
	if (memchr(p, ',', n))
		return;		/* several ranges: not honoured */

	if (n && *p == '-') {
		d = parse_u64(p + 1, n - 1, &first);
		if (!d || d != n - 1)
			return;
		req->range = HTTP_RANGE_SUFFIX;
		req->first = first;
		return;
	}

	d = parse_u64(p, n, &first);
	if (!d || d == n || p[d] != '-')
		return;
	p += d + 1;
	n -= d + 1;
	if (n) {
		d = parse_u64(p, n, &last);
		if (d != n || last < first)
			return;
	}
	req->range = HTTP_RANGE_FROM;
	req->first = first;
	req->last = last;
}

/* The name in an origin-form ("/NAME[?query]") or absolute-form target. */
static int parse_target(const char *p, size_t n, struct http_request *req)
{
	const char *q;

	if (n > 7 && !strncasecmp(p, "http://", 7)) {
		q = memchr(p + 7, '/', n - 7);
		if (!q)
			return -EINVAL;
		n -= q - p;
		p = q;
	}
	if (*p != '/')
		return -EINVAL;	/* "*" and authority-form: not for GET/HEAD */
	p++;
	n--;
	q = memchr(p, '?', n);
	if (q)
		n = q - p;
	if (n && n < KVOD_NAME_MAX) {
		memcpy(req->name, p, n);
		req->name[n] = '\0';
		if (!kvod_name_valid(req->name))
			req->name[0] = '\0';
	}
	return 0;
}

/* METHOD SP TARGET SP HTTP/D.D; fills @req, or returns a status. */
static u16 parse_request_line(const char *p, size_t n,
			      struct http_request *req,
			      const char **target, size_t *target_len)
{
	size_t m, t;

	for (m = 0; m < n && is_tchar(p[m]); m++)
		;
	if (!m || m == n || p[m] != ' ')
		return 400;
	/* Methods are case-sensitive (RFC 9110 9.1). */
	if (m == 3 && !memcmp(p, "GET", 3))
		req->method = HTTP_GET;
	else if (m == 4 && !memcmp(p, "HEAD", 4))
		req->method = HTTP_HEAD;
	else
		req->method = HTTP_OTHER;

	p += m + 1;
	n -= m + 1;
	for (t = 0; t < n && p[t] > ' ' && p[t] < 0x7f; t++)
		;
	if (!t || t == n || p[t] != ' ')
		return 400;
	*target = p;
	*target_len = t;

	p += t + 1;
	n -= t + 1;
	if (n != 8 || strncmp(p, "HTTP/", 5) || p[6] != '.' ||
	    p[5] < '0' || p[5] > '9' || p[7] < '0' || p[7] > '9')
		return 400;
	if (p[5] != '1')
		return 505;
	req->http10 = p[7] == '0';
	return 0;
}

struct http_fields {
	unsigned int hosts;
	unsigned int ranges;
	bool conn_close;
	bool conn_keep_alive;
	bool body;
	bool content_length;
	bool if_range;
	const char *range;
	size_t range_len;
};

static void parse_connection(const char *p, size_t n, struct http_fields *f)
{
	while (n) {
		size_t t = 0;

		while (n && (is_ows(*p) || *p == ',')) {
			p++;
			n--;
		}
		while (t < n && p[t] != ',' && !is_ows(p[t]))
			t++;
		if (token_eq(p, t, "close"))
			f->conn_close = true;
		else if (token_eq(p, t, "keep-alive"))
			f->conn_keep_alive = true;
		p += t;
		n -= t;
	}
}

/* One "name: value" line; returns 0 or a status. */
static u16 parse_field(const char *p, size_t n, struct http_fields *f)
{
	const char *v;
	size_t m, i, vn;
	u64 cl;

	for (m = 0; m < n && is_tchar(p[m]); m++)
		;
	if (!m || m == n || p[m] != ':')
		return 400;	/* also obs-fold and space before the colon */
	v = p + m + 1;
	vn = n - m - 1;
	for (i = 0; i < vn; i++) {
		if (!is_field_char(v[i]))
			return 400;
	}
	while (vn && is_ows(*v)) {
		v++;
		vn--;
	}
	while (vn && is_ows(v[vn - 1]))
		vn--;

	if (token_eq(p, m, "Host")) {
		f->hosts++;
	} else if (token_eq(p, m, "Connection")) {
		parse_connection(v, vn, f);
	} else if (token_eq(p, m, "Range")) {
		f->ranges++;
		f->range = v;
		f->range_len = vn;
	} else if (token_eq(p, m, "If-Range")) {
		f->if_range = true;
	} else if (token_eq(p, m, "Content-Length")) {
		if (f->content_length || !vn || parse_u64(v, vn, &cl) != vn)
			return 400;
		f->content_length = true;
		if (cl)
			f->body = true;
	} else if (token_eq(p, m, "Transfer-Encoding")) {
		f->body = true;
	}
	return 0;
}

/* The request line and fields of a complete head; returns 0 or a status. */
static u16 parse_head(const char *p, size_t n, struct http_request *req,
		      struct http_fields *f)
{
	const char *end = p + n, *target = NULL, *eol;
	unsigned int fields = 0;
	size_t target_len = 0;
	u16 status;

	while (p[0] == '\r' && p[1] == '\n')
		p += 2;

	eol = memchr(p, '\r', end - p);
	status = parse_request_line(p, eol - p, req, &target, &target_len);
	if (status)
		return status;

	for (p = eol + 2; p < end - 2; p = eol + 2) {
		if (++fields > HTTP_FIELDS_MAX)
			return 431;
		eol = memchr(p, '\r', end - p);
		status = parse_field(p, eol - p, f);
		if (status)
			return status;
	}

	if ((!req->http10 && f->hosts != 1) || f->hosts > 1)
		return 400;
	if (req->method == HTTP_OTHER)
		return 405;
	if (f->body)
		return 400;
	if (parse_target(target, target_len, req))
		return 400;
	/*
	 * We send no validator (ETag, Last-Modified), so an If-Range
	 * condition never holds: serve the whole representation (RFC 9110,
	 * 13.1.5), lest a resumed download join two different files.
	 */
	if (req->method == HTTP_GET && f->ranges == 1 && !f->if_range)
		parse_range(f->range, f->range_len, req);
	return 0;
}

/**
 * kvod_http_parse() - parse the request at the start of a buffer
 * @buf: received bytes
 * @len: bytes in @buf
 * @req: filled in when the return value is positive
 *
 * Return: 0 if @buf does not hold a whole head yet (keep reading), else
 * the bytes the request took, with req->status 0 (serve it) or the error
 * status to answer. After an error the connection closes (req->close) and
 * what follows in @buf is never looked at.
 */
int kvod_http_parse(const char *buf, size_t len, struct http_request *req)
{
	struct http_fields f = {};
	int n = head_length(buf, len);

	memset(req, 0, sizeof(*req));
	if (n == 0 && len < HTTP_HDR_MAX)
		return 0;
	if (n <= 0 || n > HTTP_HDR_MAX) {
		req->status = n < 0 ? 400 : 431;
		req->close = true;
		return len;
	}

	req->status = parse_head(buf, n, req, &f);
	if (req->http10)
		req->close = !f.conn_keep_alive || f.conn_close;
	else
		req->close = f.conn_close;
	if (req->status && req->status != 405)
		req->close = true;
	if (f.body)
		req->close = true;	/* its body would be read as a request */
	return n;
}
