// SPDX-License-Identifier: GPL-2.0
/* HTTP responses: building them, and the zero-copy sender. */
#include <linux/bvec.h>
#include <linux/kernel.h>
#include <linux/net.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uio.h>
#include <net/sock.h>

#include "http.h"
#include "http_proto.h"

/* Fragments and bytes per sendmsg(); the TCP send buffer usually binds first. */
#define HTTP_SEND_SEGS		16
#define HTTP_SEND_BYTES		(4U << 20)

static enum kvod_listener_counter status_counter(u16 status)
{
	switch (status) {
	case 200: return KVOD_LC_HTTP_200;
	case 206: return KVOD_LC_HTTP_206;
	case 400: return KVOD_LC_HTTP_400;
	case 404: return KVOD_LC_HTTP_404;
	case 405: return KVOD_LC_HTTP_405;
	case 408: return KVOD_LC_HTTP_408;
	case 416: return KVOD_LC_HTTP_416;
	case 431: return KVOD_LC_HTTP_431;
	case 503: return KVOD_LC_HTTP_503;
	default: return KVOD_LC_HTTP_505;
	}
}

static __printf(2, 3) void hdr_add(struct http_tx *tx, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tx->hdr_len += vscnprintf(tx->hdr + tx->hdr_len,
				  sizeof(tx->hdr) - tx->hdr_len, fmt, ap);
	va_end(ap);
}

static void hdr_start(struct http_conn *conn, u16 status, bool close)
{
	struct http_tx *tx = &conn->tx;

	memset(tx, 0, sizeof(*tx));
	tx->status = status;
	tx->close = close;
	hdr_add(tx, "HTTP/1.1 %u %s\r\nServer: kvod\r\n", status,
		kvod_http_reason(status));
	kvod_lc_inc(kvod_http_listener(conn), status_counter(status));
}

static void hdr_end(struct http_tx *tx, bool http10)
{
	if (tx->close)
		hdr_add(tx, "Connection: close\r\n\r\n");
	else if (http10)
		hdr_add(tx, "Connection: keep-alive\r\n\r\n");
	else
		hdr_add(tx, "\r\n");
}

static void respond_error(struct http_conn *conn, u16 status, bool head,
			  bool http10, bool close)
{
	struct http_tx *tx = &conn->tx;
	const char *why = kvod_http_reason(status);

	hdr_start(conn, status, close);
	if (status == 405)
		hdr_add(tx, "Allow: GET, HEAD\r\n");
	hdr_add(tx, "Content-Type: text/plain\r\nContent-Length: %zu\r\n",
		strlen(why) + 5);
	hdr_end(tx, http10);
	if (!head)
		hdr_add(tx, "%u %s\n", status, why);
}

/**
 * kvod_http_respond_error() - answer with an error and close
 * @conn: the connection
 * @status: 400, 408, 431, 503 or 505
 */
void kvod_http_respond_error(struct http_conn *conn, u16 status)
{
	respond_error(conn, status, false, false, true);
}

/*
 * A live channel: 200 whatever the Range (RFC 9110 lets a server ignore
 * it, and there is no fixed representation to take a range of), and a
 * body without end: chunked for HTTP/1.1, up to the close for HTTP/1.0.
 * Without memory for the body's bookkeeping, 503.
 */
static void respond_live(struct http_conn *conn,
			 const struct http_request *req,
			 struct kvod_movie *movie)
{
	bool head = req->method == HTTP_HEAD;
	struct http_tx *tx = &conn->tx;
	u32 *ends = NULL;

	if (!head) {
		ends = kmalloc_array(HTTP_LIVE_QUEUED, sizeof(*ends),
				     GFP_KERNEL);
		if (!ends) {
			kvod_movie_close(movie);
			respond_error(conn, 503, false, req->http10, true);
			return;
		}
	}
	hdr_start(conn, 200, req->close || req->http10);
	hdr_add(tx, "Content-Type: %s\r\nAccept-Ranges: none\r\nCache-Control: no-store\r\n",
		kvod_live_ts(movie->live) ? "video/mp2t" :
		kvod_http_content_type(movie->name));
	if (!req->http10)
		hdr_add(tx, "Transfer-Encoding: chunked\r\n");
	hdr_end(tx, req->http10);
	if (head) {
		kvod_movie_close(movie);
		return;
	}
	tx->movie = movie;
	kvod_http_live_begin(conn, req->http10, ends);
}

/* The page cache may have the body's next bytes now (DOC: Cursor waits). */
static void cursor_wake(struct kvod_cursor *c)
{
	kvod_http_conn_queue(container_of(c, struct http_conn, tx.cursor));
}

/**
 * kvod_http_respond() - build the response to a parsed request
 * @conn: the connection; conn->tx is free
 * @req: the request
 *
 * Looks the movie up; on success conn->tx holds a reference on it.
 */
void kvod_http_respond(struct http_conn *conn, const struct http_request *req)
{
	bool head = req->method == HTTP_HEAD;
	struct http_tx *tx = &conn->tx;
	struct kvod_movie *movie;
	u64 first, last;
	u16 status;

	if (req->status) {
		respond_error(conn, req->status, head, req->http10, req->close);
		return;
	}
	movie = req->name[0] ? kvod_movie_open(req->name) : NULL;
	if (!movie) {
		respond_error(conn, 404, head, req->http10, req->close);
		return;
	}
	if (movie->live) {
		respond_live(conn, req, movie);
		return;
	}

	status = kvod_http_resolve_range(req, movie->length, &first, &last);
	hdr_start(conn, status, req->close);
	if (status == 416) {
		hdr_add(tx, "Content-Range: bytes */%llu\r\nContent-Length: 0\r\n",
			movie->length);
		hdr_end(tx, req->http10);
		kvod_movie_close(movie);
		return;
	}
	hdr_add(tx, "Content-Type: %s\r\nAccept-Ranges: bytes\r\nContent-Length: %llu\r\n",
		kvod_http_content_type(movie->name), last - first + 1);
	if (status == 206)
		hdr_add(tx, "Content-Range: bytes %llu-%llu/%llu\r\n",
			first, last, movie->length);
	hdr_end(tx, req->http10);

	if (head) {
		kvod_movie_close(movie);
		return;
	}
	tx->movie = movie;
	kvod_cursor_init(&tx->cursor, movie, cursor_wake);
	tx->pos = first;
	tx->end = last + 1;
}

/**
 * kvod_http_tx_done() - let go of the response's movie, sent or not
 * @conn: the connection
 *
 * Context: the connection's work, which may sleep (kvod_movie_close()).
 */
void kvod_http_tx_done(struct http_conn *conn)
{
	struct http_tx *tx = &conn->tx;

	if (tx->movie && tx->movie->live)
		kvod_http_live_done(conn);
	else
		kvod_cursor_release(&tx->cursor);
	kvod_movie_close(tx->movie);
	tx->movie = NULL;
}

/**
 * kvod_http_send_copy() - have TCP copy the rest of a small buffer
 * @sock: the connection's socket
 * @buf: the buffer, e.g. a header or a chunk-size line
 * @len: bytes in @buf
 * @sent: bytes of @buf TCP took so far; advanced by what it takes now
 * @more: more follows at once (MSG_MORE)
 *
 * Return: 0 once all of @buf is taken, -EAGAIN if the socket is full,
 * another negative errno if it failed.
 */
int kvod_http_send_copy(struct socket *sock, const char *buf, u32 len,
			u32 *sent, bool more)
{
	struct msghdr msg = { .msg_flags = MSG_DONTWAIT };
	struct kvec iov;
	int ret;

	if (more)
		msg.msg_flags |= MSG_MORE;
	while (*sent < len) {
		iov.iov_base = (char *)buf + *sent;
		iov.iov_len = len - *sent;
		ret = kernel_sendmsg(sock, &msg, &iov, 1, iov.iov_len);
		if (ret <= 0)
			return ret ?: -EAGAIN;
		*sent += ret;
	}
	return 0;
}

static int send_head(struct http_conn *conn)
{
	struct http_tx *tx = &conn->tx;

	return kvod_http_send_copy(conn->sock, tx->hdr, tx->hdr_len,
				   &tx->hdr_sent,
				   tx->movie && tx->pos < tx->end);
}

/*
 * TCP takes page references of its own (DOC: Movie memory). A fill that
 * waits for storage waits as for a full socket, and the cursor's wake runs
 * the connection again.
 */
static int send_body(struct http_conn *conn)
{
	struct kvod_listener *l = kvod_http_listener(conn);
	struct bio_vec bv[HTTP_SEND_SEGS];
	struct http_tx *tx = &conn->tx;
	unsigned int calls, nr;

	for (calls = 0; tx->pos < tx->end; calls++) {
		struct msghdr msg = {
			.msg_flags = MSG_SPLICE_PAGES | MSG_DONTWAIT,
		};
		ssize_t len;
		int ret;

		if (calls == HTTP_SEND_CALLS)
			return -EINPROGRESS;
		len = kvod_cursor_fill(&tx->cursor, tx->pos,
				       min_t(u64, tx->end - tx->pos,
					     HTTP_SEND_BYTES),
				       bv, HTTP_SEND_SEGS, &nr, false);
		if (len < 0)
			return len == -EIOCBQUEUED ? -EAGAIN : len;
		if (tx->pos + len < tx->end)
			msg.msg_flags |= MSG_MORE;
		iov_iter_bvec(&msg.msg_iter, ITER_SOURCE, bv, nr, len);
		ret = sock_sendmsg(conn->sock, &msg);
		kvod_cursor_sent(&tx->cursor);
		if (ret <= 0)
			return ret ?: -EAGAIN;

		tx->pos += ret;
		atomic64_add(ret, &tx->movie->bytes_served);
		kvod_lc_add(l, KVOD_LC_BYTES, ret);
		if (ret < len)
			return -EAGAIN;	/* TCP set SOCK_NOSPACE */
	}
	return 0;
}

/**
 * kvod_http_send() - push the response in conn->tx on
 * @conn: the connection, from its work
 *
 * Return: 0 when all of it is with TCP; -EAGAIN when the socket is full
 * or the body's next bytes are being read (sk_write_space, or the
 * cursor's wake, will run the connection again); -EINPROGRESS when it
 * used up its share and wants to run again later; -ENODATA or -EIO when
 * the body cannot go on (its file shrank, or failed to read: DOC: The
 * cursor); another negative errno when the connection is broken.
 */
int kvod_http_send(struct http_conn *conn)
{
	int ret = send_head(conn);

	if (ret || !conn->tx.movie)
		return ret;
	if (conn->tx.movie->live)
		return kvod_http_live_send(conn);
	return send_body(conn);
}
