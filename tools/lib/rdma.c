// SPDX-License-Identifier: GPL-2.0
/*
 * The client side of kvod's RDMA wire protocol; see rdma.h.
 *
 * Order of events on a connection (Documentation/rdma.rst):
 *
 *   resolve address, resolve route, PD, CQ, QP, RECV for READY posted,
 *   CONNECT (REQ private data) -> ESTABLISHED (accept private data)
 *   or REJECTED (reject private data) -> over iWARP, SEND START (and
 *   once more if READY is late) -> READY arrives on the RECV ->
 *   READ the segment table -> READs of the movie -> DISCONNECT.
 *
 * Teardown is the reverse: disconnect, destroy the QP (which flushes
 * what is left), the MRs, the CQ, its channel, the PD, the id, the
 * event channel.
 */
#define _GNU_SOURCE
#include "rdma.h"

#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Polls of an empty CQ before sleeping on its channel. */
#define KVOD_SPIN_POLLS		64

static int fail(struct kvod_conn *c, enum kvod_fail why, const char *fmt, ...)
{
	va_list ap;

	c->fail = why;
	va_start(ap, fmt);
	vsnprintf(c->err, sizeof(c->err), fmt, ap);
	va_end(ap);
	return -1;
}

/**
 * kvod_build_req() - the REQ private data for @name
 * Returns its length, or 0 if it does not fit in @room.
 */
size_t kvod_build_req(void *buf, size_t room, const char *name)
{
	struct kvod_rdma_req req = {
		.magic = htobe32(KVOD_RDMA_MAGIC),
		.version = KVOD_RDMA_VERSION,
	};
	size_t len = sizeof(req) + strlen(name) + 1;

	if (len > room)
		return 0;
	memcpy(buf, &req, sizeof(req));
	memcpy((char *)buf + sizeof(req), name, len - sizeof(req));
	return len;
}

const char *kvod_status_str(int status)
{
	switch (status) {
	case KVOD_RDMA_OK:
		return "ok";
	case KVOD_RDMA_NOT_FOUND:
		return "movie not found";
	case KVOD_RDMA_BUSY:
		return "server busy";
	case KVOD_RDMA_BAD_VERSION:
		return "protocol version mismatch";
	case KVOD_RDMA_BAD_REQUEST:
		return "bad request";
	case KVOD_RDMA_NO_RESOURCES:
		return "server out of resources";
	case KVOD_RDMA_ADDR_BUSY:
		return "too many connections from this address";
	}
	return "unknown status";
}

/**
 * kvod_parse_server() - split the HOST[:PORT] of an rdma:// URL
 * @s: its first byte, after "rdma://"
 * @n: its length
 *
 * HOST is a name, an IPv4 literal or an IPv6 literal in brackets. PORT
 * defaults to KVOD_RDMA_PORT. Returns 0 or -1.
 */
int kvod_parse_server(const char *s, size_t n, char *host, size_t hlen,
		      char *port, size_t plen)
{
	const char *end = s + n, *hend, *p = s;
	size_t len;

	if (*p == '[') {
		hend = memchr(p, ']', n);
		if (!hend)
			return -1;
		len = hend - p - 1;
		p++;
		hend++;
	} else {
		hend = memchr(p, ':', n);
		if (!hend)
			hend = end;
		len = hend - p;
	}
	if (!len || len >= hlen)
		return -1;
	memcpy(host, p, len);
	host[len] = '\0';

	if (hend == end) {
		snprintf(port, plen, "%d", KVOD_RDMA_PORT);
		return 0;
	}
	if (*hend != ':')
		return -1;
	len = end - hend - 1;
	if (!len || len >= plen || strspn(hend + 1, "0123456789") < len)
		return -1;
	memcpy(port, hend + 1, len);
	port[len] = '\0';
	if (!atoi(port) || atoi(port) > 65535)
		return -1;
	return 0;
}

/**
 * kvod_parse_url() - split rdma://HOST[:PORT]/NAME
 *
 * As kvod_parse_server() for HOST and PORT. Returns 0 or -1.
 */
int kvod_parse_url(const char *url, char *host, size_t hlen, char *port,
		   size_t plen, char *name, size_t nlen)
{
	const char *p, *slash;

	if (strncmp(url, "rdma://", 7))
		return -1;
	p = url + 7;
	slash = strchr(p, '/');
	if (!slash || !slash[1] || strchr(slash + 1, '/'))
		return -1;
	if (kvod_parse_server(p, slash - p, host, hlen, port, plen))
		return -1;
	if (strlen(slash + 1) >= nlen)
		return -1;
	strcpy(name, slash + 1);
	return 0;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/*
 * The peer is gone: destroy the QP, so that nothing more is placed in
 * the caller's buffers, and let kvod_poll_cq() complete every READ still
 * outstanding as flushed. Erroring the QP and waiting for the flushes
 * is not enough: siw does not flush the outstanding READs of a QP that
 * the peer's close already moved to CLOSING (siw_qp_nextstate_from_close()
 * flushes the send queue only while a WR is being transmitted), and a
 * client waiting for them would also hold the device, whose removal
 * waits for every process that has it open.
 */
static void conn_lost(struct kvod_conn *c)
{
	c->disconnected = 1;
	if (c->id && c->id->qp)
		rdma_destroy_qp(c->id);
}

/*
 * Next rdma_cm event within @timeout_ms. The caller acks it. Returns 0,
 * or -1 with ETIMEDOUT or errno.
 */
static int get_event(struct kvod_conn *c, int timeout_ms,
		     struct rdma_cm_event **ev)
{
	struct pollfd pfd = { .fd = c->ec->fd, .events = POLLIN };
	int ret;

	do {
		ret = poll(&pfd, 1, timeout_ms);
	} while (ret < 0 && errno == EINTR);
	if (ret == 0)
		errno = ETIMEDOUT;
	if (ret <= 0)
		return -1;
	return rdma_get_cm_event(c->ec, ev);
}

/* Wait for @want; other connection events end the wait as failures. */
static int wait_event(struct kvod_conn *c, enum rdma_cm_event_type want,
		      int timeout_ms, struct rdma_cm_event **ev)
{
	if (get_event(c, timeout_ms, ev))
		return fail(c, errno == ETIMEDOUT ? KVOD_FAIL_TIMEOUT :
			    KVOD_FAIL_LOCAL, "waiting for %s: %s",
			    rdma_event_str(want), strerror(errno));
	c->cm_event = (*ev)->event;
	c->cm_status = (*ev)->status;
	return (*ev)->event == want ? 0 : 1;
}

static int resolve(struct kvod_conn *c, const struct kvod_conn_opts *o)
{
	struct addrinfo hints = {
		.ai_flags = AI_NUMERICSERV,
		.ai_socktype = SOCK_STREAM,
	}, *ai;
	struct rdma_cm_event *ev;
	int ret;

	ret = getaddrinfo(o->host, o->port, &hints, &ai);
	if (ret)
		return fail(c, KVOD_FAIL_ADDR, "address resolution failed: %s: %s",
			    o->host, gai_strerror(ret));
	ret = rdma_resolve_addr(c->id, NULL, ai->ai_addr, o->timeout_ms);
	freeaddrinfo(ai);
	if (ret)
		return fail(c, KVOD_FAIL_ADDR, "address resolution failed: %s: %s",
			    o->host, strerror(errno));
	ret = wait_event(c, RDMA_CM_EVENT_ADDR_RESOLVED, o->timeout_ms, &ev);
	if (ret < 0)
		return ret;
	rdma_ack_cm_event(ev);
	if (ret)
		return fail(c, KVOD_FAIL_ADDR,
			    "address resolution failed: %s: %s (%s)", o->host,
			    rdma_event_str(c->cm_event), strerror(-c->cm_status));

	if (rdma_resolve_route(c->id, o->timeout_ms))
		return fail(c, KVOD_FAIL_ROUTE, "unreachable: %s: %s", o->host,
			    strerror(errno));
	ret = wait_event(c, RDMA_CM_EVENT_ROUTE_RESOLVED, o->timeout_ms, &ev);
	if (ret < 0)
		return ret;
	rdma_ack_cm_event(ev);
	if (ret)
		return fail(c, KVOD_FAIL_ROUTE, "unreachable: %s: %s (%s)",
			    o->host, rdma_event_str(c->cm_event),
			    strerror(-c->cm_status));
	return 0;
}

static int create_queues(struct kvod_conn *c, const struct kvod_conn_opts *o,
			 const struct ibv_device_attr *da)
{
	unsigned int sq = o->depth + 1;
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.sq_sig_all = 1,
		.cap = {
			.max_recv_wr = 1,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
	};

	if (sq > (unsigned int)da->max_qp_wr)
		return fail(c, KVOD_FAIL_LOCAL, "--depth %u: the device allows %d",
			    o->depth, da->max_qp_wr - 1);
	c->out = calloc(sq, sizeof(*c->out));
	if (!c->out)
		return fail(c, KVOD_FAIL_LOCAL, "out of memory");
	c->out_cap = sq;
	c->pd = ibv_alloc_pd(c->id->verbs);
	if (!c->pd)
		return fail(c, KVOD_FAIL_LOCAL, "ibv_alloc_pd: %s", strerror(errno));
	c->cc = ibv_create_comp_channel(c->id->verbs);
	if (!c->cc)
		return fail(c, KVOD_FAIL_LOCAL, "ibv_create_comp_channel: %s",
			    strerror(errno));
	c->cq = ibv_create_cq(c->id->verbs, sq + 1, c, c->cc, 0);
	if (!c->cq)
		return fail(c, KVOD_FAIL_LOCAL, "ibv_create_cq: %s", strerror(errno));
	qa.send_cq = c->cq;
	qa.recv_cq = c->cq;
	qa.cap.max_send_wr = sq;
	if (rdma_create_qp(c->id, c->pd, &qa))
		return fail(c, KVOD_FAIL_LOCAL, "rdma_create_qp: %s", strerror(errno));
	return 0;
}

static int post_ready_recv(struct kvod_conn *c)
{
	struct ibv_sge sge;
	struct ibv_recv_wr wr = {
		.wr_id = KVOD_WRID_READY,
		.sg_list = &sge,
		.num_sge = 1,
	}, *bad;

	c->ready_mr = ibv_reg_mr(c->pd, &c->ready, sizeof(c->ready),
				 IBV_ACCESS_LOCAL_WRITE);
	if (!c->ready_mr)
		return fail(c, KVOD_FAIL_LOCAL, "ibv_reg_mr: %s", strerror(errno));
	sge.addr = (uintptr_t)&c->ready;
	sge.length = sizeof(c->ready);
	sge.lkey = c->ready_mr->lkey;
	errno = ibv_post_recv(c->id->qp, &wr, &bad);
	if (errno)
		return fail(c, KVOD_FAIL_LOCAL, "ibv_post_recv: %s", strerror(errno));
	return 0;
}

static int decode_reject(struct kvod_conn *c, const struct rdma_cm_event *ev)
{
	const struct kvod_rdma_reply *r = ev->param.conn.private_data;

	if (ev->param.conn.private_data_len >= 8 && r &&
	    be32toh(r->magic) == KVOD_RDMA_MAGIC) {
		c->rej_status = r->status;
		c->rej_version = r->version;
		if (r->status == KVOD_RDMA_BAD_VERSION)
			return fail(c, KVOD_FAIL_REJECTED,
				    "protocol version mismatch (server speaks v%u)",
				    r->version);
		return fail(c, KVOD_FAIL_REJECTED, "%s",
			    kvod_status_str(r->status));
	}
	if (ev->status == 28 /* IB_CM_REJ_CONSUMER_DEFINED */)
		return fail(c, KVOD_FAIL_REFUSED,
			    "connection refused (reject without kvod data)");
	return fail(c, KVOD_FAIL_REFUSED, "connection refused (reason %d)",
		    ev->status);
}

/* The connection's device speaks iWARP (after address resolution). */
int kvod_iwarp(const struct kvod_conn *c)
{
	return c->id->verbs->device->transport_type == IBV_TRANSPORT_IWARP;
}

/*
 * The READs the server lets us have in flight. On IB and RoCE, ib_cm
 * turns the REP around, so it is our initiator_depth. On iWARP the
 * depths are negotiated in the MPA exchange and rdma_cm reports our
 * side's result: the ORD, in responder_resources (cma_iw_handler()), while
 * initiator_depth holds our IRD, 0 since we serve no READs.
 */
static unsigned int granted_depth(const struct kvod_conn *c,
				  const struct rdma_cm_event *ev)
{
	if (kvod_iwarp(c))
		return ev->param.conn.responder_resources;
	return ev->param.conn.initiator_depth;
}

static int decode_accept(struct kvod_conn *c, const struct rdma_cm_event *ev)
{
	const struct kvod_rdma_reply *r = ev->param.conn.private_data;

	if (!r || ev->param.conn.private_data_len < sizeof(*r))
		return fail(c, KVOD_FAIL_PROTOCOL,
			    "accept carries %u bytes of private data, need %zu",
			    ev->param.conn.private_data_len, sizeof(*r));
	if (be32toh(r->magic) != KVOD_RDMA_MAGIC)
		return fail(c, KVOD_FAIL_PROTOCOL, "accept: bad magic 0x%08x",
			    be32toh(r->magic));
	if (r->version != KVOD_RDMA_VERSION || r->status != KVOD_RDMA_OK)
		return fail(c, KVOD_FAIL_PROTOCOL,
			    "accept: version %u status %u", r->version, r->status);
	c->initiator_depth = granted_depth(c, ev);
	if (!c->initiator_depth)
		return fail(c, KVOD_FAIL_PROTOCOL,
			    "the server granted no READ resources");
	c->movie_size = be64toh(r->movie_size);
	c->table_addr = be64toh(r->table_addr);
	c->table_rkey = be32toh(r->table_rkey);
	c->table_len = be32toh(r->table_len);
	c->nr_segments = be32toh(r->nr_segments);
	if (!c->nr_segments || c->table_len !=
	    c->nr_segments * sizeof(struct kvod_rdma_segment))
		return fail(c, KVOD_FAIL_PROTOCOL,
			    "accept: table of %u bytes for %u segments",
			    c->table_len, c->nr_segments);
	return 0;
}

static int do_connect(struct kvod_conn *c, const struct kvod_conn_opts *o,
		      const struct ibv_device_attr *da)
{
	struct rdma_conn_param cp = {
		.private_data = o->pdata,
		.private_data_len = o->pdata_len,
		.responder_resources = 0,
		.retry_count = 7,
		.rnr_retry_count = 7,
	};
	struct rdma_cm_event *ev;
	unsigned int depth = o->depth;
	int ret;

	if ((int)depth > da->max_qp_init_rd_atom)
		depth = da->max_qp_init_rd_atom;
	if (depth > 255)
		depth = 255;
	cp.initiator_depth = depth;
	c->initiator_depth = depth;
	if (rdma_connect(c->id, &cp))
		return fail(c, KVOD_FAIL_LOCAL, "rdma_connect: %s", strerror(errno));
	ret = wait_event(c, RDMA_CM_EVENT_ESTABLISHED, o->timeout_ms, &ev);
	if (ret < 0)
		return ret;
	if (!ret) {
		ret = decode_accept(c, ev);
		c->connected = 1;
	} else if (ev->event == RDMA_CM_EVENT_REJECTED) {
		ret = decode_reject(c, ev);
	} else if (ev->event == RDMA_CM_EVENT_UNREACHABLE) {
		ret = fail(c, KVOD_FAIL_UNREACHABLE, "unreachable: %s (%s)",
			   o->host, rdma_event_str(ev->event));
	} else {
		ret = fail(c, KVOD_FAIL_UNREACHABLE, "connect failed: %s (%d)",
			   rdma_event_str(ev->event), ev->status);
	}
	rdma_ack_cm_event(ev);
	return ret;
}

/*
 * START, over iWARP: MPA lets the server (the responder) send READY only
 * after our first FPDU. Sent from c->start (filled by kvod_connect()),
 * signaled (sq_sig_all).
 */
static int post_start(struct kvod_conn *c)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)&c->start,
		.length = sizeof(c->start),
	};
	struct ibv_send_wr wr = {
		.wr_id = KVOD_WRID_START,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_SEND,
	}, *bad;

	if (!c->start_mr) {
		c->start_mr = ibv_reg_mr(c->pd, &c->start, sizeof(c->start), 0);
		if (!c->start_mr)
			return fail(c, KVOD_FAIL_LOCAL, "ibv_reg_mr: %s",
				    strerror(errno));
	}
	sge.lkey = c->start_mr->lkey;
	errno = ibv_post_send(c->id->qp, &wr, &bad);
	if (errno)
		return fail(c, KVOD_FAIL_LOCAL, "ibv_post_send of START: %s",
			    strerror(errno));
	c->starts_posted++;
	return 0;
}

static int check_ready(struct kvod_conn *c, const struct ibv_wc *wc)
{
	if (wc->wr_id != KVOD_WRID_READY || wc->status != IBV_WC_SUCCESS)
		return fail(c, KVOD_FAIL_PROTOCOL, "READY: %s",
			    ibv_wc_status_str(wc->status));
	if (wc->byte_len != sizeof(c->ready) ||
	    be32toh(c->ready.magic) != KVOD_RDMA_MAGIC ||
	    c->ready.version != KVOD_RDMA_VERSION ||
	    c->ready.status != KVOD_RDMA_OK)
		return fail(c, KVOD_FAIL_PROTOCOL,
			    "READY: %u bytes, magic 0x%08x version %u status %u",
			    wc->byte_len, be32toh(c->ready.magic),
			    c->ready.version, c->ready.status);
	return 0;
}

/*
 * READY, and the completions of the STARTs we sent, so that none is left
 * for the caller. Over iWARP a START that reached the server while its
 * QP was still being moved off the connection manager waits in the
 * socket until more data comes (siw_accept() hands the socket to the QP
 * after sending the MPA reply): if READY is not in within
 * KVOD_START_RESEND_MS, START goes once more, which the server takes on
 * its second RECV.
 */
static int wait_ready(struct kvod_conn *c, int timeout_ms)
{
	int64_t t0 = now_ms(), deadline = t0 + timeout_ms;
	int ready = 0;

	while (!ready || c->starts_done < c->starts_posted) {
		int64_t until = deadline;
		int resend = !ready && c->starts_posted == 1;
		struct ibv_wc wc;
		int n;

		if (resend && t0 + KVOD_START_RESEND_MS < until)
			until = t0 + KVOD_START_RESEND_MS;
		n = kvod_poll(c, &wc, 1, until > now_ms() ? until - now_ms() : 0);
		if (n < 0)
			return n;
		if (n == 0 && resend && now_ms() < deadline) {
			if (post_start(c))
				return -1;
			continue;
		}
		if (n == 0)
			return fail(c, KVOD_FAIL_TIMEOUT, "no %s within %d ms",
				    ready ? "START completion" : "READY",
				    timeout_ms);
		if (wc.wr_id == KVOD_WRID_START) {
			if (wc.status != IBV_WC_SUCCESS)
				return fail(c, KVOD_FAIL_PROTOCOL, "START: %s",
					    ibv_wc_status_str(wc.status));
			c->starts_done++;
			continue;
		}
		if (check_ready(c, &wc))
			return -1;
		ready = 1;
	}
	return 0;
}

/**
 * kvod_connect() - connect, get the accept and READY
 * @c: zeroed or fresh; filled in
 * @o: where and what
 *
 * Returns 0 connected and READY; -1 with c->fail and c->err set. Either
 * way call kvod_close() afterwards.
 */
int kvod_connect(struct kvod_conn *c, const struct kvod_conn_opts *o)
{
	struct ibv_device_attr da;

	memset(c, 0, sizeof(*c));
	c->rej_status = -1;
	c->rej_version = -1;
	c->ec = rdma_create_event_channel();
	if (!c->ec)
		return fail(c, KVOD_FAIL_LOCAL, "rdma_create_event_channel: %s",
			    strerror(errno));
	if (rdma_create_id(c->ec, &c->id, c, RDMA_PS_TCP)) {
		c->id = NULL;
		return fail(c, KVOD_FAIL_LOCAL, "rdma_create_id: %s",
			    strerror(errno));
	}
	if (resolve(c, o))
		return -1;
	if (!kvod_iwarp(c) && o->pdata_len > KVOD_REQ_PDATA_IB)
		return fail(c, KVOD_FAIL_TOOLONG,
			    "%zu bytes of private data; IB and RoCE connect requests carry at most %d",
			    o->pdata_len, KVOD_REQ_PDATA_IB);
	if (ibv_query_device(c->id->verbs, &da))
		return fail(c, KVOD_FAIL_LOCAL, "ibv_query_device: %s",
			    strerror(errno));
	if (create_queues(c, o, &da))
		return -1;
	if (!o->no_ready_recv && post_ready_recv(c))
		return -1;
	if (do_connect(c, o, &da))
		return -1;
	if (o->no_ready_recv)
		return 0;
	if (kvod_iwarp(c)) {
		c->start.magic = htobe32(KVOD_RDMA_MAGIC);
		c->start.version = KVOD_RDMA_VERSION;
		if (o->start)
			c->start = *o->start;
		if (post_start(c))
			return -1;
	}
	return wait_ready(c, o->timeout_ms);
}

/*
 * A READ sink. On iWARP the READ response is placed as an RDMA WRITE
 * into it (RFC 5040), so the sink needs remote write access there.
 */
struct ibv_mr *kvod_reg(struct kvod_conn *c, void *buf, size_t len)
{
	int access = IBV_ACCESS_LOCAL_WRITE |
		     (kvod_iwarp(c) ? IBV_ACCESS_REMOTE_WRITE : 0);
	struct ibv_mr *mr = ibv_reg_mr(c->pd, buf, len, access);

	if (!mr)
		fail(c, KVOD_FAIL_LOCAL, "ibv_reg_mr of %zu bytes: %s", len,
		     strerror(errno));
	return mr;
}

/**
 * kvod_read_table() - READ and check the segment table
 *
 * The table must describe the movie contiguously from offset 0 to
 * c->movie_size. Returns 0 or -1.
 */
int kvod_read_table(struct kvod_conn *c, int timeout_ms)
{
	struct kvod_rdma_segment *t;
	struct ibv_mr *mr;
	struct ibv_wc wc;
	uint64_t off = 0;
	uint32_t i;
	int n;

	t = calloc(1, c->table_len);
	c->segs = calloc(c->nr_segments, sizeof(*c->segs));
	if (!t || !c->segs) {
		free(t);
		return fail(c, KVOD_FAIL_LOCAL, "out of memory");
	}
	mr = kvod_reg(c, t, c->table_len);
	if (!mr) {
		free(t);
		return -1;
	}
	n = kvod_post_read(c, t, mr->lkey, c->table_addr, c->table_rkey,
			   c->table_len, 0);
	if (!n)
		n = kvod_poll(c, &wc, 1, timeout_ms);
	ibv_dereg_mr(mr);
	if (n <= 0 || wc.status != IBV_WC_SUCCESS) {
		free(t);
		if (n < 0)
			return -1;
		return fail(c, n ? KVOD_FAIL_PROTOCOL : KVOD_FAIL_TIMEOUT,
			    "READ of the segment table: %s",
			    n ? ibv_wc_status_str(wc.status) : "timed out");
	}
	for (i = 0; i < c->nr_segments; i++) {
		struct kvod_seg *s = &c->segs[i];

		s->offset = be64toh(t[i].offset);
		s->addr = be64toh(t[i].addr);
		s->length = be64toh(t[i].length);
		s->rkey = be32toh(t[i].rkey);
		if (s->offset != off || !s->length ||
		    s->length > c->movie_size - off) {
			free(t);
			return fail(c, KVOD_FAIL_PROTOCOL,
				    "segment %u: offset %llu length %llu, expected offset %llu",
				    i, (unsigned long long)s->offset,
				    (unsigned long long)s->length,
				    (unsigned long long)off);
		}
		off += s->length;
	}
	free(t);
	if (off != c->movie_size)
		return fail(c, KVOD_FAIL_PROTOCOL,
			    "segments cover %llu of %llu bytes",
			    (unsigned long long)off,
			    (unsigned long long)c->movie_size);
	return 0;
}

/* The segment holding movie offset @off, by binary search; -1 if none. */
long kvod_seg_find(const struct kvod_conn *c, uint64_t off)
{
	long lo = 0, hi = (long)c->nr_segments - 1;

	while (lo <= hi) {
		long mid = (lo + hi) / 2;
		const struct kvod_seg *s = &c->segs[mid];

		if (off < s->offset)
			hi = mid - 1;
		else if (off - s->offset >= s->length)
			lo = mid + 1;
		else
			return mid;
	}
	return -1;
}

/**
 * kvod_post_read() - one RDMA READ
 *
 * Its completion comes from kvod_poll() or kvod_poll_cq(), also when the
 * connection is lost: then as IBV_WC_WR_FLUSH_ERR. Fails once the
 * connection is lost, and when the caller already has as many READs
 * outstanding as the depth it connected with.
 */
int kvod_post_read(struct kvod_conn *c, void *buf, uint32_t lkey,
		   uint64_t raddr, uint32_t rkey, uint32_t len, uint64_t wr_id)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)buf,
		.length = len,
		.lkey = lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = wr_id,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_RDMA_READ,
		.wr.rdma = { .remote_addr = raddr, .rkey = rkey },
	}, *bad;
	int ret;

	if (c->disconnected || !c->id->qp)
		return fail(c, KVOD_FAIL_UNREACHABLE, "the server disconnected");
	if (c->out_count == c->out_cap)
		return fail(c, KVOD_FAIL_LOCAL, "%u READs outstanding already",
			    c->out_count);
	ret = ibv_post_send(c->id->qp, &wr, &bad);
	if (ret)
		return fail(c, KVOD_FAIL_LOCAL, "ibv_post_send: %s",
			    strerror(ret));
	c->out[(c->out_head + c->out_count++) % c->out_cap] = wr_id;
	return 0;
}

/* The oldest outstanding READ's wr_id, off the ring. */
static uint64_t out_pop(struct kvod_conn *c)
{
	uint64_t wr_id = c->out[c->out_head];

	c->out_head = (c->out_head + 1) % c->out_cap;
	c->out_count--;
	return wr_id;
}

/**
 * kvod_poll_cq() - up to @n completions, without waiting
 *
 * ibv_poll_cq() for callers that wait on the channels themselves
 * (kvod-proxy), keeping the count of outstanding READs: a READ's
 * completion comes in the order it was posted (one send queue). Once
 * the connection is lost (its QP destroyed, see conn_lost()), the READs
 * that did not complete by then are returned as IBV_WC_WR_FLUSH_ERR with
 * their wr_ids. Returns the number of completions, or -1.
 */
int kvod_poll_cq(struct kvod_conn *c, struct ibv_wc *wc, int n)
{
	int k = 0, i;

	if (c->id && c->id->qp) {
		k = ibv_poll_cq(c->cq, n, wc);
		if (k < 0)
			return fail(c, KVOD_FAIL_LOCAL, "ibv_poll_cq failed");
		for (i = 0; i < k; i++) {
			if (wc[i].wr_id != KVOD_WRID_READY &&
			    wc[i].wr_id != KVOD_WRID_START && c->out_count)
				out_pop(c);
		}
		return k;
	}
	/* The QP is gone: no completion will come for what is left. */
	while (k < n && c->out_count) {
		memset(&wc[k], 0, sizeof(wc[k]));
		wc[k].wr_id = out_pop(c);
		wc[k].status = IBV_WC_WR_FLUSH_ERR;
		k++;
	}
	return k;
}

/**
 * kvod_conn_event() - take one rdma_cm event while connected
 *
 * Only endings are expected: DISCONNECTED, DEVICE_REMOVAL and
 * TIMEWAIT_EXIT set c->disconnected and error the QP, which flushes every
 * outstanding WR. For callers that watch c->ec->fd themselves.
 */
void kvod_conn_event(struct kvod_conn *c)
{
	struct rdma_cm_event *ev;

	if (rdma_get_cm_event(c->ec, &ev))
		return;
	switch (ev->event) {
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		c->cm_event = ev->event;
		conn_lost(c);
		break;
	default:
		break;
	}
	rdma_ack_cm_event(ev);
}

/**
 * kvod_poll() - up to @n completions
 * @timeout_ms: how long to sleep for the first one; -1 forever
 *
 * Spins a little on an empty CQ, then sleeps on the completion channel
 * and the rdma_cm channel at once: a DISCONNECTED or DEVICE_REMOVAL
 * errors the QP, which flushes every outstanding WR, so a caller waiting
 * for its READs always gets them back. Returns the number of completions,
 * 0 on timeout, -1 on failure.
 */
int kvod_poll(struct kvod_conn *c, struct ibv_wc *wc, int n, int timeout_ms)
{
	int64_t deadline = timeout_ms < 0 ? -1 : now_ms() + timeout_ms;
	int spin, k;

	for (;;) {
		struct pollfd pfd[2] = {
			{ .fd = c->cc->fd, .events = POLLIN },
			{ .fd = c->ec->fd, .events = POLLIN },
		};
		int wait = -1;

		for (spin = 0; spin < KVOD_SPIN_POLLS; spin++) {
			k = kvod_poll_cq(c, wc, n);
			if (k)
				goto out;
		}
		/* Lost, and nothing left to complete: nothing will come. */
		if (c->disconnected && !c->id->qp)
			return fail(c, KVOD_FAIL_UNREACHABLE,
				    "the server disconnected");
		if (ibv_req_notify_cq(c->cq, 0))
			return fail(c, KVOD_FAIL_LOCAL, "ibv_req_notify_cq failed");
		k = kvod_poll_cq(c, wc, n);
		if (k)
			goto out;
		if (deadline >= 0) {
			int64_t left = deadline - now_ms();

			if (left <= 0)
				return 0;
			wait = left;
		}
		k = poll(pfd, 2, wait);
		if (k < 0 && errno != EINTR)
			return fail(c, KVOD_FAIL_LOCAL, "poll: %s", strerror(errno));
		if (k > 0 && (pfd[0].revents & POLLIN)) {
			struct ibv_cq *cq;
			void *ctx;

			if (!ibv_get_cq_event(c->cc, &cq, &ctx))
				ibv_ack_cq_events(cq, 1);
		}
		if (k > 0 && (pfd[1].revents & POLLIN))
			kvod_conn_event(c);
	}
out:
	return k;
}

/**
 * kvod_close() - disconnect and free everything, in order
 *
 * The caller deregisters its own MRs first. Safe on a failed connect.
 */
void kvod_close(struct kvod_conn *c)
{
	if (c->id && c->connected && !c->disconnected)
		rdma_disconnect(c->id);
	if (c->id && c->id->qp)
		rdma_destroy_qp(c->id);
	if (c->ready_mr)
		ibv_dereg_mr(c->ready_mr);
	if (c->start_mr)
		ibv_dereg_mr(c->start_mr);
	if (c->cq)
		ibv_destroy_cq(c->cq);
	if (c->cc)
		ibv_destroy_comp_channel(c->cc);
	if (c->pd)
		ibv_dealloc_pd(c->pd);
	if (c->id)
		rdma_destroy_id(c->id);
	if (c->ec)
		rdma_destroy_event_channel(c->ec);
	free(c->segs);
	c->segs = NULL;
	free(c->out);
	c->out = NULL;
	c->id = NULL;
	c->ec = NULL;
}
