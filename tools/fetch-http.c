// SPDX-License-Identifier: GPL-2.0
/*
 * kvod-fetch over HTTP: http://HOST[:PORT]/NAME from kvod's HTTP server,
 * kvod-proxy, or any HTTP/1.1 server that answers Range requests (nginx).
 *
 * One connection per stretch of play: a GET with a Range header from the
 * play position to the end of the range (and "Connection: close"), its
 * body received as it arrives. A player (--rate) receives no further than
 * --cache ahead of the play position, so TCP's flow control holds the
 * server back as a real player's full buffer would. A seek closes the
 * connection and opens one at the new offset, as players do; the time
 * that takes counts against the player's cache, where over RDMA a seek
 * reuses the connection.
 *
 * Chunks are the --chunk bytes of the body counted from where play
 * (re)started; a chunk is late if its last byte arrives after the consumer
 * needed its first (fetch_is_late()), as over RDMA, where a chunk is one
 * READ. The movie's size comes from the first response's Content-Range.
 */
#define _GNU_SOURCE
#include "kvod-fetch.h"
#include "lib/http_host.h"
#include "lib/http_response.h"
#include "lib/seconds.h"

#include <errno.h>
#include <inttypes.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* The most one recv() takes; a chunk may be larger. */
#define RECV_MAX	(256 * 1024)

/**
 * fetch_http_url() - split http://HOST[:PORT]/NAME into f->host, f->port
 * and f->name, PORT defaulting to 80, and write the request's Host
 * header from them. Returns 0 or -1.
 */
int fetch_http_url(struct fetch *f)
{
	const char *p = f->o->url + 7, *slash = strchr(p, '/');
	const char *colon, *bracket;

	if (!slash || !slash[1] || strchr(slash + 1, '/') ||
	    strlen(slash + 1) >= sizeof(f->name))
		return -1;
	if (kvod_parse_server(p, slash - p, f->host, sizeof(f->host),
			      f->port, sizeof(f->port)))
		return -1;
	/* kvod_parse_server() defaults to the RDMA port; HTTP's is 80. */
	colon = memrchr(p, ':', slash - p);
	bracket = memrchr(p, ']', slash - p);
	if (!colon || (bracket && colon < bracket))
		snprintf(f->port, sizeof(f->port), "80");
	snprintf(f->name, sizeof(f->name), "%s", slash + 1);
	return kvod_http_host(f->h.host_hdr, sizeof(f->h.host_hdr), f->host,
			      f->port) < 0 ? -1 : 0;
}

/*
 * Wait up to the timeout for @events on the socket: 1 ready, 0 timed
 * out, -1 failed or stopped by a signal (fetch_stop), with errno.
 */
static int poll_sock(struct fetch *f, short events)
{
	struct pollfd pfd = { .fd = f->h.sock, .events = events };
	int n;

	do {
		if (fetch_stop) {
			errno = EINTR;
			return -1;
		}
		n = poll(&pfd, 1, f->o->timeout_ms);
	} while (n < 0 && errno == EINTR);
	return n;
}

/* As poll_sock(), 0 or -1 with a message; none for a signal (main()'s). */
static int wait_sock(struct fetch *f, short events, const char *what)
{
	int n = poll_sock(f, events);

	if (n > 0)
		return 0;
	if (!fetch_stop)
		fprintf(stderr, "kvod-fetch: %s:%s: %s\n", f->host, f->port,
			n ? strerror(errno) : what);
	return -1;
}

/*
 * Connect f->h.sock to @a within the timeout; 0, or -1 with errno and no
 * socket.
 */
static int dial_one(struct fetch *f, const struct addrinfo *a)
{
	int n, soerr = 0;
	socklen_t len = sizeof(soerr);

	f->h.sock = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC |
			   SOCK_NONBLOCK, a->ai_protocol);
	if (f->h.sock < 0)
		return -1;
	if (connect(f->h.sock, a->ai_addr, a->ai_addrlen) &&
	    errno != EINPROGRESS)
		goto err_close;
	n = poll_sock(f, POLLOUT);
	if (n <= 0) {
		if (!n)
			errno = ETIMEDOUT;
		goto err_close;
	}
	if (getsockopt(f->h.sock, SOL_SOCKET, SO_ERROR, &soerr, &len))
		goto err_close;
	if (!soerr)
		return 0;
	errno = soerr;
err_close:
	soerr = errno;		/* close() may change it */
	close(f->h.sock);
	f->h.sock = -1;
	errno = soerr;
	return -1;
}

/*
 * Try HOST's addresses in getaddrinfo()'s order, each with the whole
 * timeout, until one connects: a name's first address may be one that
 * never answers (an IPv6 one, filtered) where the next one works. The
 * error is the last address's.
 */
static int dial(struct fetch *f)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM };
	struct addrinfo *ai, *a;
	int err;

	err = getaddrinfo(f->host, f->port, &hints, &ai);
	if (err) {
		fprintf(stderr, "kvod-fetch: %s: %s\n", f->host,
			gai_strerror(err));
		return -1;
	}
	for (a = ai; a && !fetch_stop; a = a->ai_next) {
		if (!dial_one(f, a))
			break;
		err = errno;
	}
	freeaddrinfo(ai);
	if (f->h.sock >= 0)
		return 0;
	if (!fetch_stop)
		fprintf(stderr, "kvod-fetch: %s:%s: %s\n", f->host, f->port,
			strerror(err));
	return -1;
}

static int send_request(struct fetch *f, uint64_t off, uint64_t last)
{
	char req[512], range[48] = "";
	int len;
	ssize_t n;

	if (last != UINT64_MAX)
		snprintf(range, sizeof(range), "%" PRIu64, last);
	/* At most 453 bytes: a 63-byte name, a 265-byte Host, 20 digits twice. */
	len = snprintf(req, sizeof(req),
		       "GET /%s HTTP/1.1\r\nHost: %s\r\nUser-Agent: kvod-fetch\r\nRange: bytes=%" PRIu64 "-%s\r\nConnection: close\r\n\r\n",
		       f->name, f->h.host_hdr, off, range);
	if (len < 0 || len >= (int)sizeof(req)) {
		fprintf(stderr, "kvod-fetch: request over %zu bytes\n",
			sizeof(req) - 1);
		return -1;
	}
	/* A fresh socket's send buffer takes a request this small whole. */
	n = send(f->h.sock, req, len, MSG_NOSIGNAL);
	if (n == len)
		return 0;
	fprintf(stderr, "kvod-fetch: %s:%s: sending the request: %s\n",
		f->host, f->port, n < 0 ? strerror(errno) : "short send");
	return -1;
}

/* Read the response header; what came after it is f->h.pend. */
static int read_head(struct fetch *f)
{
	struct fetch_http *h = &f->h;
	size_t got = 0;
	char *end;

	for (;;) {
		ssize_t n;

		if (wait_sock(f, POLLIN, "no response within the timeout"))
			return -1;
		n = recv(h->sock, h->head + got, sizeof(h->head) - 1 - got, 0);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n <= 0) {
			fprintf(stderr, "kvod-fetch: %s:%s: %s before a response\n",
				f->host, f->port,
				n ? strerror(errno) : "connection closed");
			return -1;
		}
		got += n;
		h->head[got] = '\0';
		end = strstr(h->head, "\r\n\r\n");
		if (end)
			break;
		if (got == sizeof(h->head) - 1) {
			fprintf(stderr, "kvod-fetch: %s:%s: response header over %zu bytes\n",
				f->host, f->port, sizeof(h->head) - 1);
			return -1;
		}
	}
	h->pend = end + 4;
	h->pend_len = h->head + got - h->pend;
	end[2] = '\0';		/* keep the last field's CRLF (http_response.h) */
	return 0;
}

/*
 * Check the response to a request for [@off, end of range) and learn the
 * movie's size from it (kvod_http_response()): 206 with "Content-Range:
 * bytes A-B/SIZE", or 200 for a request from 0 (a server that ignores
 * Range sends the whole).
 */
static int check_head(struct fetch *f, uint64_t off)
{
	const char *h = f->h.head;
	struct kvod_http_resp r;

	switch (kvod_http_response(h, off, &r)) {
	case KVOD_HTTP_OK:
		break;
	case KVOD_HTTP_NOT_HTTP:
		fprintf(stderr, "kvod-fetch: %s:%s: not an HTTP/1 response\n",
			f->host, f->port);
		return -1;
	case KVOD_HTTP_UNSATISFIABLE:
		fprintf(stderr, "kvod-fetch: %s: range beyond the movie's %" PRIu64 " bytes\n",
			f->name, r.size);
		return -1;
	case KVOD_HTTP_STATUS:
		fprintf(stderr, "kvod-fetch: %s: %.*s\n", f->name,
			(int)strcspn(h, "\r"), h);
		return -1;
	case KVOD_HTTP_CODING:
		fprintf(stderr, "kvod-fetch: %s: transfer codings are not supported\n",
			f->name);
		return -1;
	default:
		fprintf(stderr, "kvod-fetch: %s: the response does not answer a request for bytes %" PRIu64 "-\n",
			f->name, off);
		return -1;
	}
	if (!f->h.size) {
		f->h.size = r.size;
		if (f->o->length == UINT64_MAX)
			f->end = r.size;
		else if (f->o->length <= r.size - off)
			f->end = off + f->o->length;
	}
	if (!f->end || r.size != f->h.size ||
	    (r.status == 206 ? r.last + 1 : r.size) < f->end) {
		fprintf(stderr, "kvod-fetch: %s: range beyond the movie's %" PRIu64 " bytes\n",
			f->name, r.size);
		return -1;
	}
	return 0;
}

/* Open a connection and request [@off, end of range); 0 or -1. */
static int http_open(struct fetch *f, uint64_t off)
{
	uint64_t last = UINT64_MAX;

	if (f->end)
		last = f->end - 1;
	else if (f->o->length != UINT64_MAX)
		last = off + f->o->length - 1;
	if (dial(f) || send_request(f, off, last) || read_head(f) ||
	    check_head(f, off))
		return -1;
	return 0;
}

void fetch_http_close(struct fetch *f)
{
	if (f->h.sock >= 0)
		close(f->h.sock);
	f->h.sock = -1;
}

/* Connect, learn the movie's size and get the first response's header. */
int fetch_http_setup(struct fetch *f)
{
	size_t bytes = f->o->chunk < RECV_MAX ? f->o->chunk : RECV_MAX;

	f->buf = malloc(bytes);
	if (!f->buf) {
		fprintf(stderr, "kvod-fetch: out of memory\n");
		return -1;
	}
	return http_open(f, f->o->offset);
}

/* Count @n bytes received at @t into chunks; write them out. */
static int account(struct fetch *f, const char *p, size_t n, double t)
{
	f->next_off += n;
	f->bytes += n;
	while (f->h.chunk_off < f->end &&
	       f->next_off - f->h.chunk_off >= f->o->chunk) {
		if (fetch_is_late(f, f->h.chunk_off, t))
			f->late++;
		f->chunks++;
		f->h.chunk_off += f->o->chunk;
	}
	if (f->next_off == f->end && f->h.chunk_off < f->end) {
		if (fetch_is_late(f, f->h.chunk_off, t))
			f->late++;
		f->chunks++;
		f->h.chunk_off = f->end;
	}
	return fetch_write(f, p, n);
}

/*
 * How many bytes may be received now: the rest of the chunk being
 * received, if a player's read-ahead has reached its start (as a READ is
 * posted over RDMA), at most RECV_MAX.
 */
static size_t room(const struct fetch *f, double t)
{
	uint64_t chunk_end = f->h.chunk_off + f->o->chunk;
	uint64_t n;

	if (f->o->rate &&
	    f->h.chunk_off >= fetch_play_pos(f, t) + f->cache_bytes)
		return 0;
	if (chunk_end > f->end)
		chunk_end = f->end;
	n = chunk_end - f->next_off;
	return n < RECV_MAX ? n : RECV_MAX;
}

static int receive(struct fetch *f, size_t want, double t)
{
	struct fetch_http *h = &f->h;
	ssize_t n;

	if (h->pend_len) {
		n = h->pend_len < want ? h->pend_len : want;
		memcpy(f->buf, h->pend, n);
		h->pend += n;
		h->pend_len -= n;
		return account(f, f->buf, n, t);
	}
	n = recv(h->sock, f->buf, want, 0);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (n <= 0) {
		fprintf(stderr, "kvod-fetch: %s: %s at offset %" PRIu64 " of %" PRIu64 "\n",
			f->name, n ? strerror(errno) : "the server closed the connection",
			f->next_off, f->end);
		return -1;
	}
	return account(f, f->buf, n, t);
}

/* Poll timeout and events for this turn of fetch_http_run(). */
static int plan_wait(const struct fetch *f, double t, double t_end,
		     size_t want, int *watchdog)
{
	int wait = want ? f->o->timeout_ms : -1;

	*watchdog = !!want;
	if (!want && f->o->rate) {
		int idle = fetch_idle_ms(f, t);

		if (idle >= 0)
			wait = idle;
	}
	if (t_end) {
		int left = kvod_ms_until(t_end, t);

		if (wait < 0 || left < wait) {
			wait = left;
			*watchdog = 0;
		}
	}
	return wait;
}

/* Returns 0 done (range or --duration), -1 failed or stopped by a signal. */
int fetch_http_run(struct fetch *f, double t_end)
{
	f->h.chunk_off = f->play_start;
	for (;;) {
		struct pollfd pfd = { .fd = f->h.sock };
		double t = fetch_now();
		int n, wait, watchdog;
		size_t want;

		if (fetch_stop)
			return -1;	/* main() says so */
		if (t_end && t >= t_end)
			return 0;
		if (f->o->seek_every && t >= f->t_seek) {
			fetch_http_close(f);
			fetch_seek(f, t);
			f->h.chunk_off = f->play_start;
			if (http_open(f, f->play_start))
				return -1;
			continue;
		}
		/* All of it; a seeking player plays on until --duration. */
		if (f->next_off >= f->end && !(f->o->seek_every && t_end))
			return 0;
		want = f->next_off < f->end ? room(f, t) : 0;
		if (want && f->h.pend_len) {
			if (receive(f, want, t))
				return -1;
			continue;
		}
		wait = plan_wait(f, t, t_end, want, &watchdog);
		pfd.events = want ? POLLIN : 0;
		n = poll(&pfd, 1, wait);
		if (n < 0 && errno != EINTR) {
			fprintf(stderr, "kvod-fetch: poll: %s\n", strerror(errno));
			return -1;
		}
		if (!n && watchdog) {
			fprintf(stderr, "kvod-fetch: no data within %d ms\n",
				f->o->timeout_ms);
			return -1;
		}
		if (n > 0 && want && receive(f, want, fetch_now()))
			return -1;
	}
}
