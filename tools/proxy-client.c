// SPDX-License-Identifier: GPL-2.0
/*
 * kvod-proxy's HTTP side: one player's connection. Requests are parsed by
 * the module's own parser (kmod/http_parse.c), so the proxy accepts,
 * refuses and frames requests exactly as kvod's HTTP server does: the
 * same limits (HTTP_HDR_MAX, HTTP_FIELDS_MAX), the same statuses for
 * malformed input, single-range GET, keep-alive and pipelining.
 *
 * A body is sent from the client's ring of --depth slots of --chunk bytes:
 * each slot is one RDMA READ of the movie at the slot's offset; slots are
 * written to the socket in order as their READs complete, and refilled
 * with the next offset once written. A Range request starts the ring at
 * its first byte: a seek costs READs at another offset, not a reconnect.
 * The socket is non-blocking and edge-triggered; can_write records
 * whether it took everything last time.
 */
#define _GNU_SOURCE
#include "kvod-proxy.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/sockios.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

/* At most one line per this long about accept4() failing. */
#define ACCEPT_LOG_MS	10000
/*
 * How long a connection whose response said "Connection: close" is still
 * read (what comes thrown away) once the player has acknowledged the
 * whole response, before the close; kvod's HTTP server lingers as long.
 */
#define LINGER_MS	2000
/* The most recv()s one call of client_drain() makes. */
#define DRAIN_READS	64
/* A paused listening socket is tried again after this long. */
#define ACCEPT_RETRY_MS	1000

static void client_run(struct client *cl);

static void __attribute__((format(printf, 2, 3)))
head_add(struct client *cl, const char *fmt, ...)
{
	size_t room = sizeof(cl->head) - cl->head_len;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(cl->head + cl->head_len, room, fmt, ap);
	va_end(ap);
	cl->head_len += n < 0 ? 0 : (size_t)n < room ? (size_t)n : room - 1;
}

static void head_start(struct client *cl, int status)
{
	cl->responding = 1;
	cl->head_len = 0;
	cl->head_sent = 0;
	head_add(cl, "HTTP/1.1 %d %s\r\nServer: kvod-proxy\r\n", status,
		 kvod_http_reason(status));
}

static void head_end(struct client *cl, int http10)
{
	if (cl->close_after)
		head_add(cl, "Connection: close\r\n\r\n");
	else if (http10)
		head_add(cl, "Connection: keep-alive\r\n\r\n");
	else
		head_add(cl, "\r\n");
}

/* An answer without a movie: "STATUS REASON[: WHY]\n" as the body. */
static void respond_error(struct client *cl, int status, int head, int http10,
			  const char *why)
{
	char body[300];

	if (status == 400 || status == 431 || status == 505)
		cl->close_after = 1;
	snprintf(body, sizeof(body), "%d %s%s%s\n", status,
		 kvod_http_reason(status),
		 why ? ": " : "", why ? why : "");
	head_start(cl, status);
	if (status == 405)
		head_add(cl, "Allow: GET, HEAD\r\n");
	head_add(cl, "Content-Type: text/plain\r\nContent-Length: %zu\r\n",
		 strlen(body));
	head_end(cl, http10);
	if (!head)
		head_add(cl, "%s", body);
}

/* Deregister the registered ring; no READ into it may be in flight. */
static void ring_unregister(struct client *cl)
{
	ibv_dereg_mr(cl->mr);
	cl->mr = NULL;
	cl->mr_movie->regs--;
	cl->mr_movie = NULL;
}

/*
 * Deregister the ring from the movie it is registered on, if any; no READ
 * into it may be in flight. Frees that movie if that was its last hold.
 */
static void ring_release(struct client *cl)
{
	struct pmovie *old = cl->mr_movie;

	if (!cl->mr)
		return;
	ring_unregister(cl);
	movie_maybe_free(old);
}

/*
 * client_rings_release() - deregister the players' rings from a dead movie
 * @m: dead (lingered out, or its connection failed)
 *
 * A player's ring stays registered on the last movie it played, for its
 * next request; so a keep-alive player that sent no other request would
 * keep a dead movie (its connection to the server, its protection domain)
 * until it closed. The rings of players done with @m (no body from it,
 * no READ in flight) are deregistered now; a player's next request
 * registers its ring again. The caller frees @m if nothing else holds it.
 */
static void client_rings_release(struct pmovie *m)
{
	struct client *cl;

	for (cl = m->p->clients; cl; cl = cl->next) {
		if (cl->mr_movie == m && cl->m != m && !cl->inflight)
			ring_unregister(cl);
	}
}

/* Register the ring on @m's protection domain, if it is not already. */
static int ring_register(struct client *cl, struct pmovie *m)
{
	struct proxy *p = cl->p;

	if (cl->mr_movie == m)
		return 0;
	ring_release(cl);
	if (!cl->buf) {
		cl->nslots = p->o.depth;
		cl->buf = malloc((size_t)cl->nslots * p->o.chunk);
		cl->slots = calloc(cl->nslots, sizeof(*cl->slots));
		if (!cl->buf || !cl->slots)
			return -1;
	}
	cl->mr = kvod_reg(&m->c, cl->buf, (size_t)cl->nslots * p->o.chunk);
	if (!cl->mr)
		return -1;
	cl->mr_movie = m;
	m->regs++;
	return 0;
}

/* The answer to @req from @m, whose connect is done. */
static void answer(struct client *cl, const struct http_request *req,
		   struct pmovie *m)
{
	int head = req->method == HTTP_HEAD;
	uint64_t first, last, size;
	int status;

	size = m->c.movie_size;
	status = kvod_http_resolve_range(req, size, &first, &last);
	if (status != 416 && !head && ring_register(cl, m)) {
		cl->close_after = 1;
		respond_error(cl, 503, head, req->http10,
			      "cannot allocate or register the player's buffers");
		return;
	}
	head_start(cl, status);
	if (status == 416) {
		head_add(cl, "Content-Range: bytes */%llu\r\nContent-Length: 0\r\n",
			 (unsigned long long)size);
		head_end(cl, req->http10);
		return;
	}

	head_add(cl, "Content-Type: %s\r\nAccept-Ranges: bytes\r\nContent-Length: %llu\r\n",
		 kvod_http_content_type(m->name),
		 (unsigned long long)(last - first + 1));
	if (status == 206)
		head_add(cl, "Content-Range: bytes %llu-%llu/%llu\r\n",
			 (unsigned long long)first, (unsigned long long)last,
			 (unsigned long long)size);
	head_end(cl, req->http10);
	if (head)
		return;
	cl->m = m;
	movie_use(m);
	cl->read_off = first;
	cl->end = last + 1;
	cl->posted = 0;
	cl->written = 0;
}

static void start_response(struct client *cl, const struct http_request *req)
{
	int head = req->method == HTTP_HEAD;
	struct pmovie *m;
	char why[256];
	int status;

	cl->close_after = req->close;
	if (req->status) {
		respond_error(cl, req->status, head, req->http10, NULL);
		return;
	}
	if (!req->name[0]) {
		respond_error(cl, 404, head, req->http10, NULL);
		return;
	}
	m = movie_open(cl->p, req->name, &status, why, sizeof(why));
	if (!m) {
		respond_error(cl, status, head, req->http10,
			      status == 404 ? NULL : why);
		return;
	}
	if (m->connecting) {
		/* Back in client_movie_ready(); no timeout but the connect's. */
		cl->pending = *req;
		cl->wait = m;
		movie_use(m);
		return;
	}
	answer(cl, req, m);
}

/*
 * client_movie_ready() - the connect @cl waits for has ended
 *
 * Answers the request it was for (or the connect's failure) and goes on
 * with the client. Called from the movie's step, which holds the movie.
 */
static void client_movie_ready(struct client *cl)
{
	const struct http_request *req = &cl->pending;
	struct pmovie *m = cl->wait;

	cl->wait = NULL;
	if (m->dead)
		respond_error(cl, m->fail_status, req->method == HTTP_HEAD,
			      req->http10,
			      m->fail_status == 404 ? NULL : m->why);
	else
		answer(cl, req, m);
	movie_unuse(m);
	cl->deadline = proxy_now_ms() + cl->p->o.send_timeout_s * 1000LL;
	client_run(cl);
}

/*
 * The send queue of cl->m is full: wait for room behind the players that
 * found it full before (movie_room() serves them first). Without
 * the queue, room freed by a completion went to the players first on the
 * client list, the newest, which took it again at each completion: with
 * the queue saturated an older player got none until they were done.
 */
static void client_room_queue(struct client *cl)
{
	struct pmovie *m = cl->m;

	if (cl->room_queued)
		return;
	cl->room_queued = 1;
	cl->room_next = NULL;
	if (m->room_last)
		m->room_last->room_next = cl;
	else
		m->room_first = cl;
	m->room_last = cl;
}

/* Off cl->m's room queue, if on it: before cl->m changes or cl goes. */
static void client_room_cancel(struct client *cl)
{
	struct pmovie *m = cl->m;
	struct client **pp, *prev = NULL;

	if (!cl->room_queued)
		return;
	for (pp = &m->room_first; *pp != cl; pp = &(*pp)->room_next)
		prev = *pp;
	*pp = cl->room_next;
	if (m->room_last == cl)
		m->room_last = prev;
	cl->room_queued = 0;
	cl->room_next = NULL;
}

/*
 * Out of descriptors (EMFILE, ENFILE) or memory, accept4() fails and
 * leaves the player in the listen backlog, so the level-triggered
 * listening socket would end every epoll_wait() at once: a busy loop.
 * Stop watching it until a descriptor is freed: a player leaves
 * (client_close()) or a movie closes (movie_free()), or, for descriptors
 * freed elsewhere (ENFILE), ACCEPT_RETRY_MS later (client_accept_retry()). The players
 * waiting meanwhile are accepted then. The other cure, a spare descriptor
 * closed to accept and answer 503, would fail players that a moment's
 * wait would serve, and under ENFILE may not get its spare back.
 */
static void accept_pause(struct proxy *p)
{
	if (p->accept_paused)
		return;
	epoll_ctl(p->epfd, EPOLL_CTL_DEL, p->lfd, NULL);
	p->accept_paused = 1;
	p->paused_at = proxy_now_ms();
}

static void accept_resume(struct proxy *p)
{
	struct epoll_event e = { .events = EPOLLIN, .data.ptr = &p->listen_ev };

	if (!p->accept_paused)
		return;
	if (epoll_ctl(p->epfd, EPOLL_CTL_ADD, p->lfd, &e)) {
		/* Out of memory too: client_accept_retry() tries again. */
		p->paused_at = proxy_now_ms();
		return;
	}
	p->accept_paused = 0;
}

static void client_free(struct client *cl)
{
	ring_release(cl);
	free(cl->buf);
	free(cl->slots);
	cl->next = cl->p->reap_clients;
	cl->p->reap_clients = cl;
}

/*
 * Close the socket now; free the client once no READ of its is in flight
 * (their completions write into its ring).
 */
static void client_close(struct client *cl)
{
	struct proxy *p = cl->p;

	if (cl->gone)
		return;
	cl->gone = 1;
	epoll_ctl(p->epfd, EPOLL_CTL_DEL, cl->fd, NULL);
	close(cl->fd);
	accept_resume(p);
	if (cl->prev)
		cl->prev->next = cl->next;
	else
		p->clients = cl->next;
	if (cl->next)
		cl->next->prev = cl->prev;
	p->nclients--;
	if (cl->wait) {
		movie_unuse(cl->wait);
		cl->wait = NULL;
	}
	if (cl->m) {
		client_room_cancel(cl);
		movie_unuse(cl->m);
		cl->m = NULL;
	}
	if (!cl->inflight)
		client_free(cl);
}

/*
 * Read and throw away what the player sends, until its end or an error
 * (then close): a close with bytes unread would reset the connection, and
 * the reset would throw away the end of the response still in the send
 * queue. At most DRAIN_READS a call, so that a player that keeps sending
 * holds up no other; client_tick() closes it at its deadline.
 */
static void client_drain(struct client *cl)
{
	unsigned int i;
	ssize_t n;

	for (i = 0; i < DRAIN_READS; i++) {
		n = recv(cl->fd, cl->in, sizeof(cl->in), 0);
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n == 0 || (n < 0 && errno != EINTR)) {
			client_close(cl);
			return;
		}
	}
}

/*
 * The response said "Connection: close" and is all in the socket: shut
 * the write side (the player reads to the end) and linger, reading, until
 * LINGER_MS after the player acknowledged all of it (client_tick()).
 */
static void client_linger(struct client *cl)
{
	shutdown(cl->fd, SHUT_WR);
	cl->lingering = 1;
	cl->unacked = -1;
	cl->in_len = 0;
	cl->deadline = proxy_now_ms() + cl->p->o.send_timeout_s * 1000LL;
	client_drain(cl);
}

/*
 * A lingering connection: while the player acknowledges the response, the
 * send timeout runs from its last progress; once it has all of it, the
 * linger of LINGER_MS.
 */
static void linger_tick(struct client *cl, int64_t now)
{
	int unacked;

	if (cl->acked)
		return;
	if (!ioctl(cl->fd, SIOCOUTQ, &unacked) && unacked > 0) {
		if (unacked != cl->unacked) {
			cl->unacked = unacked;
			cl->deadline = now + cl->p->o.send_timeout_s * 1000LL;
		}
		return;
	}
	cl->acked = 1;
	cl->deadline = now + LINGER_MS;
}

/* The movie's connection failed under this response: cut it short. */
void client_movie_lost(struct client *cl)
{
	client_close(cl);
}

static void client_slot_done(struct pslot *s, int ok)
{
	struct client *cl = s->cl;

	s->state = SLOT_READY;
	s->failed = !ok;
	cl->inflight--;
	if (cl->gone && !cl->inflight)
		client_free(cl);
}

/* Fill the free slots with READs; -1 if the movie is dead. */
static int post_reads(struct client *cl)
{
	uint32_t chunk = cl->p->o.chunk;

	while (cl->posted - cl->written < cl->nslots && cl->read_off < cl->end) {
		unsigned int i = cl->posted % cl->nslots;
		struct pslot *s = &cl->slots[i];
		int r;

		s->cl = cl;
		s->off = cl->read_off;
		s->len = cl->end - cl->read_off < chunk ? cl->end - cl->read_off : chunk;
		s->sent = 0;
		s->failed = 0;
		s->state = SLOT_POSTED;
		r = movie_post(cl->m, s, cl->buf + (size_t)i * chunk,
			       cl->mr->lkey);
		if (r) {
			s->state = SLOT_FREE;
			if (r > 0)
				client_room_queue(cl);
			return r < 0 ? -1 : 0;
		}
		cl->inflight++;
		cl->posted++;
		cl->read_off += s->len;
	}
	return 0;
}

/* send() what it takes; 1 all of it, 0 the socket is full, -1 error. */
static int send_some(struct client *cl, const char *buf, size_t len,
		     size_t *done, int more)
{
	while (*done < len) {
		ssize_t n;

		if (!cl->can_write)
			return 0;
		n = send(cl->fd, buf + *done, len - *done,
			 MSG_NOSIGNAL | (more ? MSG_MORE : 0));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			cl->can_write = 0;
			return 0;
		}
		if (n < 0)
			return -1;
		*done += n;
		cl->deadline = proxy_now_ms() + cl->p->o.send_timeout_s * 1000LL;
	}
	return 1;
}

/* Progress on the response: 1 it is all sent, 0 waiting, -1 abort. */
static int send_response(struct client *cl)
{
	uint32_t chunk = cl->p->o.chunk;
	int r;

	r = send_some(cl, cl->head, cl->head_len, &cl->head_sent, !!cl->m);
	if (r <= 0 || !cl->m)
		return r;
	if (post_reads(cl))
		return -1;
	while (cl->written < cl->posted) {
		unsigned int i = cl->written % cl->nslots;
		struct pslot *s = &cl->slots[i];
		size_t sent = s->sent;

		if (s->state != SLOT_READY)
			return 0;
		if (s->failed)
			return -1;
		r = send_some(cl, cl->buf + (size_t)i * chunk, s->len, &sent,
			      0);
		s->sent = sent;
		if (r <= 0)
			return r;
		s->state = SLOT_FREE;
		cl->written++;
		if (post_reads(cl))
			return -1;
	}
	return cl->read_off >= cl->end;
}

static void finish_response(struct client *cl)
{
	cl->responding = 0;
	if (cl->m) {
		client_room_cancel(cl);
		movie_unuse(cl->m);
		cl->m = NULL;
	}
	cl->deadline = proxy_now_ms() + cl->p->o.idle_timeout_s * 1000LL;
}

/* Read what the socket has; 1 got bytes, 0 nothing yet, -1 closed. */
static int read_some(struct client *cl)
{
	ssize_t n;

	if (cl->in_len == sizeof(cl->in))
		return 0;
	do {
		n = recv(cl->fd, cl->in + cl->in_len,
			 sizeof(cl->in) - cl->in_len, 0);
	} while (n < 0 && errno == EINTR);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return 0;
	if (n <= 0)
		return -1;
	cl->in_len += n;
	return 1;
}

/*
 * client_run() - make all the progress that is possible now
 *
 * Sends what is ready, then takes the next request: from the bytes
 * already received (pipelining), else from the socket. Requests wait in
 * the socket while a response is on.
 */
static void client_run(struct client *cl)
{
	struct http_request req;
	int r;

	while (!cl->gone && !cl->wait && !cl->lingering) {
		if (cl->responding) {
			r = send_response(cl);
			if (r < 0) {
				client_close(cl);
				return;
			}
			if (!r)
				return;
			finish_response(cl);
			if (cl->close_after) {
				client_linger(cl);
				return;
			}
			continue;
		}
		r = cl->in_len ? kvod_http_parse(cl->in, cl->in_len, &req) : 0;
		if (r > 0) {
			cl->in_len -= r;
			memmove(cl->in, cl->in + r, cl->in_len);
			start_response(cl, &req);
			continue;
		}
		r = read_some(cl);
		if (r < 0)
			client_close(cl);
		if (r <= 0)
			return;
	}
}

void client_event(struct client *cl, uint32_t events)
{
	if (cl->gone)
		return;
	if (events & EPOLLOUT)
		cl->can_write = 1;
	if (events & EPOLLERR) {
		client_close(cl);
		return;
	}
	if (cl->lingering) {
		client_drain(cl);
		return;
	}
	client_run(cl);
}

/* Over --max-clients: answer 503 and close, as kvod's server does. */
static void refuse(int fd)
{
	static const char msg[] =
		"HTTP/1.1 503 Service Unavailable\r\nServer: kvod-proxy\r\n"
		"Content-Type: text/plain\r\nContent-Length: 24\r\n"
		"Connection: close\r\n\r\n503 Service Unavailable\n";

	char junk[4096];
	int i;

	if (send(fd, msg, sizeof(msg) - 1, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
		proxy_log("kvod-proxy: 503: %s", strerror(errno));
	/*
	 * Read what came already (a few reads at most: no lingering for a
	 * player refused): a close with bytes unread resets the connection,
	 * and the reset may overtake the 503.
	 */
	shutdown(fd, SHUT_WR);
	for (i = 0; i < 16; i++) {
		if (recv(fd, junk, sizeof(junk), MSG_DONTWAIT) <= 0)
			break;
	}
	close(fd);
}

/*
 * accept4() failed for that connection alone (accept(2): Linux passes a
 * pending connection's network errors on), or was interrupted: go on
 * with the next one.
 */
static int accept_next(int err)
{
	switch (err) {
	case EINTR:
	case ECONNABORTED:
	case EPROTO:
	case ENETDOWN:
	case ENOPROTOOPT:
	case EHOSTDOWN:
	case ENONET:
	case EHOSTUNREACH:
	case EOPNOTSUPP:
	case ENETUNREACH:
		return 1;
	}
	return 0;
}

/* From the loop's tick: a paused listening socket is tried again. */
void client_accept_retry(struct proxy *p, int64_t now)
{
	if (p->accept_paused && now - p->paused_at >= ACCEPT_RETRY_MS)
		accept_resume(p);
}

/*
 * Anything else leaves the connection in the backlog (EMFILE, ENFILE,
 * ENOBUFS, ENOMEM): stop accepting until a descriptor is freed
 * (accept_pause()), and say so once per ACCEPT_LOG_MS however
 * often it recurs.
 */
static void accept_failed(struct proxy *p, int err)
{
	int64_t now = proxy_now_ms();

	accept_pause(p);
	p->accept_errors++;
	if (p->accept_logged_at && now - p->accept_logged_at < ACCEPT_LOG_MS)
		return;
	proxy_log("kvod-proxy: accept: %s: new players wait in the backlog (%u connected; %lu failure(s) since the last report)",
		  strerror(err), p->nclients, p->accept_errors);
	p->accept_logged_at = now;
	p->accept_errors = 0;
}

void client_accept(struct proxy *p)
{
	for (;;) {
		struct epoll_event e = {
			.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET,
		};
		struct client *cl;
		int fd, err;

		fd = accept4(p->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			err = errno;
			if (accept_next(err))
				continue;
			if (err != EAGAIN && err != EWOULDBLOCK)
				accept_failed(p, err);
			return;
		}
		if (p->nclients >= p->o.max_clients) {
			refuse(fd);
			continue;
		}
		cl = calloc(1, sizeof(*cl));
		if (!cl) {
			refuse(fd);
			continue;
		}
		cl->ev = PEV_CLIENT;
		cl->p = p;
		cl->fd = fd;
		cl->can_write = 1;
		cl->deadline = proxy_now_ms() + p->o.idle_timeout_s * 1000LL;
		e.data.ptr = &cl->ev;
		if (epoll_ctl(p->epfd, EPOLL_CTL_ADD, fd, &e)) {
			proxy_log("kvod-proxy: epoll: %s", strerror(errno));
			close(fd);
			free(cl);
			continue;
		}
		cl->next = p->clients;
		if (cl->next)
			cl->next->prev = cl;
		p->clients = cl;
		p->nclients++;
	}
}

/* The idle and send timeouts, and the end of a linger. */
void client_tick(struct client *cl, int64_t now)
{
	if (cl->lingering)
		linger_tick(cl, now);
	if (!cl->wait && now >= cl->deadline)
		client_close(cl);
}

/*
 * What the RDMA side reports (struct movie_events). The walks over the
 * client list take the next client first: a lost movie frees the client
 * it is given.
 */
static void movie_ready(struct pmovie *m)
{
	struct client *cl, *next;

	for (cl = m->p->clients; cl; cl = next) {
		next = cl->next;
		if (cl->wait == m)
			client_movie_ready(cl);
	}
}

static void movie_lost(struct pmovie *m)
{
	struct client *cl, *next;

	for (cl = m->p->clients; cl; cl = next) {
		next = cl->next;
		if (cl->m == m)
			client_movie_lost(cl);
	}
	client_rings_release(m);
}

/*
 * The room first to the players that found the queue full, in turn
 * (client_room_queue()); one that finds it full again queues anew. Then
 * every player of @m goes on.
 */
static void movie_room(struct pmovie *m)
{
	struct client *cl, *next;

	while ((cl = m->room_first) && !m->dead &&
	       m->inflight < m->p->o.qp_depth) {
		client_room_cancel(cl);
		client_run(cl);
	}
	for (cl = m->p->clients; cl; cl = next) {
		next = cl->next;
		if (cl->m == m)
			client_run(cl);
	}
}

const struct movie_events client_movie_events = {
	.ready = movie_ready,
	.lost = movie_lost,
	.slot_done = client_slot_done,
	.room = movie_room,
	.unused = client_rings_release,
	.fds_freed = accept_resume,
};
