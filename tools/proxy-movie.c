// SPDX-License-Identifier: GPL-2.0
/*
 * kvod-proxy's RDMA side: one connection to the kvod server per open
 * movie (lib/rdma.c does the protocol), shared by every player of it, so
 * that a seek or a second player costs READs, not a reconnect. READs from
 * all its players share its send queue: at most --qp-depth are in flight,
 * and a player that finds it full posts again when a completion frees a
 * place (the room event of movie_cq_event()).
 */
#include "kvod-proxy.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

static int watch(struct pmovie *m, int fd, enum proxy_ev *ev)
{
	struct epoll_event e = { .events = EPOLLIN, .data.ptr = ev };
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return -1;
	return epoll_ctl(m->p->epfd, EPOLL_CTL_ADD, fd, &e);
}

/* Stop watching the connection's channels, then close it. */
static void movie_disconnect(struct pmovie *m)
{
	if (m->c.cc)
		epoll_ctl(m->p->epfd, EPOLL_CTL_DEL, m->c.cc->fd, NULL);
	if (m->c.ec)
		epoll_ctl(m->p->epfd, EPOLL_CTL_DEL, m->c.ec->fd, NULL);
	kvod_close(&m->c);
}

/* Unlink and free; only once nothing refers to it (movie_maybe_free()). */
static void movie_free(struct pmovie *m)
{
	struct pmovie **pp;

	for (pp = &m->p->movies; *pp; pp = &(*pp)->next) {
		if (*pp == m) {
			*pp = m->next;
			break;
		}
	}
	movie_disconnect(m);
	m->p->mev->fds_freed(m->p);	/* its descriptors are free */
	m->freed = 1;
	m->next = m->p->reap_movies;
	m->p->reap_movies = m;
}

/* When the first connect step is due without an event, or INT64_MAX. */
int64_t movie_wake(const struct proxy *p)
{
	const struct pmovie *m;
	int64_t wake = INT64_MAX;

	for (m = p->movies; m; m = m->next) {
		if (m->connecting && kvod_connect_wake(&m->c) < wake)
			wake = kvod_connect_wake(&m->c);
	}
	return wake;
}

/*
 * Free @m if it is dead and nothing holds it: no player, no registered
 * buffer (a buffer must be deregistered before its PD goes) and no READ
 * in flight (its completion names a client slot).
 */
void movie_maybe_free(struct pmovie *m)
{
	if (!m->freed && m->dead && !m->users && !m->regs && !m->inflight)
		movie_free(m);
}

/* The connection failed: no new READs; tell its players; free if idle. */
static void movie_kill(struct pmovie *m, const char *why)
{
	if (!m->dead)
		proxy_log("kvod-proxy: %s: %s", m->name, why);
	m->dead = 1;
	m->p->mev->lost(m);
	movie_maybe_free(m);
}

/*
 * A post failed: stop using the connection. Its players are cut when the
 * flushed READs come back (movie_cq_event()); killing them here would
 * free clients that the caller's caller is walking.
 */
static void movie_fail(struct pmovie *m, const char *why)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_ERR };

	proxy_log("kvod-proxy: %s: %s", m->name, why);
	m->dead = 1;
	if (m->c.id->qp)
		ibv_modify_qp(m->c.id->qp, &attr, IBV_QP_STATE);
}

/* The HTTP status for a connect that failed. */
static int fail_status(const struct kvod_conn *c)
{
	if (c->fail == KVOD_FAIL_REJECTED &&
	    (c->rej_status == KVOD_RDMA_NOT_FOUND ||
	     c->rej_status == KVOD_RDMA_NOT_MOVIE ||
	     c->rej_status == KVOD_RDMA_BAD_REQUEST))
		return 404;
	/* A name longer than an IB connect request carries: unknown there. */
	if (c->fail == KVOD_FAIL_TOOLONG)
		return 404;
	if (c->fail == KVOD_FAIL_TIMEOUT)
		return 504;
	return 502;
}

/*
 * Hold @m while the loop below runs its players: finishing a response
 * drops a use, which must not free @m under us. Not a player's use, so
 * unused_since stays.
 */
static void movie_hold(struct pmovie *m)
{
	m->users++;
}

static void movie_release(struct pmovie *m)
{
	m->users--;
	movie_maybe_free(m);
}

/*
 * The connect went as far as it can for now; when it has ended, either
 * way, answer the players waiting for it (the ready event).
 */
static void movie_step(struct pmovie *m)
{
	int r = kvod_connect_step(&m->c);

	/* The completion channel exists from the route on: watch it then. */
	if (r >= 0 && m->c.cc && !m->cc_watched) {
		if (watch(m, m->c.cc->fd, &m->cq_ev)) {
			snprintf(m->c.err, sizeof(m->c.err), "epoll: %s",
				 strerror(errno));
			m->c.fail = KVOD_FAIL_LOCAL;
			r = -1;
		} else {
			m->cc_watched = 1;
		}
	}
	if (r > 0)
		return;
	m->connecting = 0;
	if (!r && ibv_req_notify_cq(m->c.cq, 0)) {
		snprintf(m->c.err, sizeof(m->c.err), "ibv_req_notify_cq failed");
		m->c.fail = KVOD_FAIL_LOCAL;
		r = -1;
	}
	if (r) {
		m->fail_status = fail_status(&m->c);
		snprintf(m->why, sizeof(m->why), "%s", m->c.err);
		if (m->fail_status != 404)
			proxy_log("kvod-proxy: %s: %s", m->name, m->c.err);
		m->dead = 1;
	}
	m->unused_since = proxy_now_ms();
	movie_hold(m);
	m->p->mev->ready(m);
	movie_release(m);
}

static struct pmovie *movie_connect(struct proxy *p, const char *name,
				    int *status, char *why, size_t wlen)
{
	char pdata[KVOD_REQ_PDATA_MAX];
	struct kvod_conn_opts o = {
		.host = p->o.host,
		.port = p->o.port,
		.pdata = pdata,
		.depth = p->o.qp_depth,
		.timeout_ms = p->o.timeout_ms,
		.read_table = 1,
	};
	struct pmovie *m = calloc(1, sizeof(*m));

	if (!m) {
		*status = 503;
		snprintf(why, wlen, "out of memory");
		return NULL;
	}
	m->cq_ev = PEV_MOVIE_CQ;
	m->cm_ev = PEV_MOVIE_CM;
	m->p = p;
	snprintf(m->name, sizeof(m->name), "%s", name);
	o.pdata_len = kvod_build_req(pdata, sizeof(pdata), name);
	if (kvod_connect_start(&m->c, &o))
		goto fail;
	if (watch(m, m->c.ec->fd, &m->cm_ev)) {
		snprintf(m->c.err, sizeof(m->c.err), "epoll: %s",
			 strerror(errno));
		m->c.fail = KVOD_FAIL_LOCAL;
		goto fail;
	}
	m->connecting = 1;
	m->next = p->movies;
	p->movies = m;
	return m;
fail:
	*status = fail_status(&m->c);
	snprintf(why, wlen, "%s", m->c.err);
	movie_disconnect(m);
	free(m);
	return NULL;
}

/**
 * movie_open() - the open movie @name, starting a connect if needed
 * @status: on failure, the HTTP status to answer: 404 (the server has no
 *	such movie), 502 (unreachable, refused, broken), 504 (timed out),
 *	503 (out of memory here)
 * @why: on failure, a sentence for the response body
 *
 * The connect does not block the loop: while m->connecting, the caller
 * waits for the ready event, where m->dead says the connect failed
 * (m->fail_status, m->why). The caller takes a use with movie_use().
 */
struct pmovie *movie_open(struct proxy *p, const char *name, int *status,
			  char *why, size_t wlen)
{
	struct pmovie *m;

	for (m = p->movies; m; m = m->next) {
		if (!m->dead && !strcmp(m->name, name))
			return m;
	}
	return movie_connect(p, name, status, why, wlen);
}

void movie_use(struct pmovie *m)
{
	m->users++;
}

void movie_unuse(struct pmovie *m)
{
	if (--m->users == 0)
		m->unused_since = proxy_now_ms();
	movie_maybe_free(m);
}

/**
 * movie_post() - post one READ for slot @s into @buf
 *
 * Return: 0 posted; 1 the send queue is full (try after a completion);
 * -1 the movie is dead or the post failed (the movie is then dead).
 */
int movie_post(struct pmovie *m, struct pslot *s, void *buf, uint32_t lkey)
{
	const struct kvod_seg *seg;
	long i;

	if (m->dead)
		return -1;
	if (m->inflight >= m->p->o.qp_depth)
		return 1;
	i = kvod_seg_find(&m->c, s->off);
	if (i < 0) {
		movie_fail(m, "READ outside the segment table");
		return -1;
	}
	seg = &m->c.segs[i];
	if (s->len > seg->offset + seg->length - s->off)
		s->len = seg->offset + seg->length - s->off;
	if (kvod_post_read(&m->c, buf, lkey, seg->addr + (s->off - seg->offset),
			   seg->rkey, s->len, (uintptr_t)s)) {
		movie_fail(m, m->c.err);
		return -1;
	}
	m->inflight++;
	return 0;
}

/*
 * Completions: hand each to its slot's client, then let players post.
 * Called for the completion channel (@event) and, once the connection is
 * lost, for the READs that will never complete (kvod_poll_cq()).
 */
static void movie_completions(struct pmovie *m, int event)
{
	struct ibv_wc wc[32];
	struct ibv_cq *cq;
	void *ctx;
	int n, i, failed = 0;

	movie_hold(m);
	if (event && !ibv_get_cq_event(m->c.cc, &cq, &ctx))
		ibv_ack_cq_events(cq, 1);
	if (event && ibv_req_notify_cq(m->c.cq, 0))
		failed = 1;
	while ((n = kvod_poll_cq(&m->c, wc, 32)) > 0) {
		for (i = 0; i < n; i++) {
			struct pslot *s = (struct pslot *)(uintptr_t)wc[i].wr_id;

			if (wc[i].wr_id == KVOD_WRID_READY)
				continue;
			m->inflight--;
			if (wc[i].status != IBV_WC_SUCCESS)
				failed = 1;
			m->p->mev->slot_done(s,
					     wc[i].status == IBV_WC_SUCCESS);
		}
	}
	if (n < 0 || failed || m->dead)
		movie_kill(m, "a READ failed: the connection is gone");
	m->p->mev->room(m);
	movie_release(m);
}

void movie_cq_event(struct pmovie *m)
{
	if (m->connecting)
		movie_step(m);
	else
		movie_completions(m, 1);
}

/*
 * rdma_cm: only endings come now. lib/rdma.c destroys the QP for them;
 * the READs in flight then come back flushed from kvod_poll_cq().
 */
void movie_cm_event(struct pmovie *m)
{
	if (m->connecting) {
		movie_step(m);
		return;
	}
	movie_hold(m);
	/*
	 * The READs that completed before the ending are delivered, not
	 * returned as flushed once the ending has destroyed the QP.
	 */
	movie_completions(m, 0);
	kvod_conn_event(&m->c);
	if (m->c.disconnected) {
		movie_kill(m, "the server closed the connection");
		movie_completions(m, 0);
	}
	movie_release(m);
}

/*
 * Step the connects that are due (a timeout, a START to send again), and
 * close the movies unused for --linger seconds. Returns when a connect
 * is due next, or INT64_MAX.
 */
int64_t movie_tick(struct proxy *p, int64_t now)
{
	struct pmovie *m, *next;

	/* A step answers players, which may free other movies: rescan. */
again:
	for (m = p->movies; m; m = m->next) {
		if (m->connecting && now >= kvod_connect_wake(&m->c)) {
			movie_step(m);
			goto again;
		}
	}
	for (m = p->movies; m; m = next) {
		next = m->next;
		if (m->connecting)
			continue;
		if (!m->dead && !m->users &&
		    now - m->unused_since >= p->o.linger_s * 1000LL)
			m->dead = 1;
		/*
		 * Also one dead of a failed post with no READ in flight,
		 * which no completion ends (movie_fail()).
		 */
		if (m->dead && !m->users) {
			p->mev->unused(m);
			movie_maybe_free(m);
		}
	}
	return movie_wake(p);
}
