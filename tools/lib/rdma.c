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
 * The connect up to the table is one state machine (enum kvod_step),
 * driven by kvod_connect_step() from the events and completions that
 * are waiting; kvod_connect() and kvod_read_table() sleep on the two
 * channels between steps, kvod-proxy steps from its epoll loop.
 *
 * Teardown is the reverse: disconnect, destroy the QP (which flushes
 * what is left), the MRs, the CQ, its channel, the PD, the id, the
 * event channel.
 */
#define _GNU_SOURCE
#include "rdma.h"
#include "rdma_check.h"

#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Polls of an empty CQ before sleeping on its channel. */
#define KVOD_SPIN_POLLS		64

/* The QP's local ACK timeout, 4.096 us << 19 (2.1 s), as the server's
 * (KVOD_RDMA_ACK_TIMEOUT): a stall of a second is not a dead peer.
 */
#define KVOD_ACK_TIMEOUT	19

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
 * kvod_opt_port() - the "-p PORT" option of the selftests' RDMA helpers
 * @argc: in: main()'s; out: the arguments left after the options
 * @argv: likewise
 * @port: set to PORT if given, else left as it is
 *
 * Returns 0, or -1 for an option that is not -p (usage, then).
 */
int kvod_opt_port(int *argc, char ***argv, const char **port)
{
	int opt;

	while ((opt = getopt(*argc, *argv, "p:")) != -1) {
		if (opt != 'p')
			return -1;
		*port = optarg;
	}
	*argc -= optind;
	*argv += optind;
	return 0;
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
	case KVOD_RDMA_NOT_MOVIE:
		return "a live channel, not served over RDMA (created without --rdma)";
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

static int set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0 ? -1 : 0;
}

/* Enter @step; each step gets the caller's whole timeout. */
static void step_to(struct kvod_conn *c, enum kvod_step step)
{
	c->step = step;
	c->step_deadline = now_ms() + c->timeout_ms;
}

static int create_queues(struct kvod_conn *c, const struct ibv_device_attr *da)
{
	unsigned int sq = c->depth + 1;
	unsigned int rq = 1 + (c->want_notes ? KVOD_RDMA_NOTES : 0);
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.sq_sig_all = 1,
		.cap = {
			.max_recv_wr = rq,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
	};

	if (sq > (unsigned int)da->max_qp_wr)
		return fail(c, KVOD_FAIL_LOCAL, "--depth %u: the device allows %d",
			    c->depth, da->max_qp_wr - 1);
	c->out = calloc(sq, sizeof(*c->out));
	if (!c->out)
		return fail(c, KVOD_FAIL_LOCAL, "out of memory");
	c->out_cap = sq;
	c->pd = ibv_alloc_pd(c->id->verbs);
	if (!c->pd)
		return fail(c, KVOD_FAIL_LOCAL, "ibv_alloc_pd: %s", strerror(errno));
	c->cc = ibv_create_comp_channel(c->id->verbs);
	if (!c->cc || set_nonblock(c->cc->fd))
		return fail(c, KVOD_FAIL_LOCAL, "ibv_create_comp_channel: %s",
			    strerror(errno));
	c->cq = ibv_create_cq(c->id->verbs, sq + rq, c, c->cc, 0);
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

/**
 * kvod_note_slot() - the note receive a completion's wr_id names
 *
 * Returns its index in c->notes, or -1 for another work request.
 */
int kvod_note_slot(uint64_t wr_id)
{
	if (wr_id > KVOD_WRID_NOTE0 || wr_id <= KVOD_WRID_NOTE0 - KVOD_RDMA_NOTES)
		return -1;
	return (int)(KVOD_WRID_NOTE0 - wr_id);
}

/**
 * kvod_note_repost() - post note receive @i again, once its note is read
 *
 * Returns 0 or -1 (c->err).
 */
int kvod_note_repost(struct kvod_conn *c, int i)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)&c->notes[i],
		.length = sizeof(c->notes[i]),
		.lkey = c->notes_mr->lkey,
	};
	struct ibv_recv_wr wr = {
		.wr_id = KVOD_WRID_NOTE0 - i,
		.sg_list = &sge,
		.num_sge = 1,
	}, *bad;

	errno = ibv_post_recv(c->id->qp, &wr, &bad);
	if (errno)
		return fail(c, KVOD_FAIL_LOCAL, "ibv_post_recv of a note: %s",
			    strerror(errno));
	return 0;
}

/* The notes' receives, behind READY's, before the connect. */
static int post_note_recvs(struct kvod_conn *c)
{
	int i;

	c->notes_mr = ibv_reg_mr(c->pd, c->notes, sizeof(c->notes),
				 IBV_ACCESS_LOCAL_WRITE);
	if (!c->notes_mr)
		return fail(c, KVOD_FAIL_LOCAL, "ibv_reg_mr: %s", strerror(errno));
	for (i = 0; i < KVOD_RDMA_NOTES; i++)
		if (kvod_note_repost(c, i))
			return -1;
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
	struct kvod_accept a;
	char why[160];

	if (kvod_accept_check(ev->param.conn.private_data,
			      ev->param.conn.private_data_len, &a, why,
			      sizeof(why)))
		return fail(c, KVOD_FAIL_PROTOCOL, "%s", why);
	c->initiator_depth = granted_depth(c, ev);
	if (!c->initiator_depth)
		return fail(c, KVOD_FAIL_PROTOCOL,
			    "the server granted no READ resources");
	c->reply_flags = a.flags;
	c->movie_size = a.movie_size;
	c->table_addr = a.table_addr;
	c->table_rkey = a.table_rkey;
	c->table_len = a.table_len;
	c->nr_segments = a.nr_segments;
	/* The table's size is the server's word: bound it before table_post(). */
	if (kvod_table_check(c->movie_size, c->nr_segments, c->table_len,
			     why, sizeof(why)))
		return fail(c, KVOD_FAIL_PROTOCOL, "accept: %s", why);
	/* A live channel's mirror is no movie: only for callers that know. */
	if ((c->reply_flags & KVOD_RDMA_LIVE) && !c->live_ok) {
		c->rej_status = KVOD_RDMA_NOT_MOVIE;
		return fail(c, KVOD_FAIL_REJECTED,
			    "a live channel: this client plays movies only");
	}
	return 0;
}

/* ADDR_RESOLVED: resolve the route. */
static int on_addr(struct kvod_conn *c, const struct rdma_cm_event *ev)
{
	if (ev->event != RDMA_CM_EVENT_ADDR_RESOLVED)
		return fail(c, KVOD_FAIL_ADDR,
			    "address resolution failed: %s: %s (%s)", c->host,
			    rdma_event_str(ev->event), strerror(-ev->status));
	if (rdma_resolve_route(c->id, c->timeout_ms))
		return fail(c, KVOD_FAIL_ROUTE, "unreachable: %s: %s", c->host,
			    strerror(errno));
	step_to(c, KVOD_STEP_ROUTE);
	return 0;
}

/* ROUTE_RESOLVED: the device is known; queues, the READY RECV, connect. */
static int on_route(struct kvod_conn *c, const struct rdma_cm_event *ev)
{
	struct rdma_conn_param cp = {
		.private_data = c->pdata,
		.private_data_len = c->pdata_len,
		.responder_resources = 0,
		/* Both QPs' transport retries (the server's too: it takes
		 * the request's). Not 7, which rxe takes as "retry forever"
		 * (the IB spec as 7 retries): a server whose client vanished
		 * without its disconnect arriving would retry its notes
		 * for ever and never let the connection go.
		 */
		.retry_count = c->retry_count ? c->retry_count : 6,
		.rnr_retry_count = 7,
	};
	uint8_t ack_timeout = KVOD_ACK_TIMEOUT;
	struct ibv_device_attr da;
	unsigned int depth = c->depth;

	if (ev->event != RDMA_CM_EVENT_ROUTE_RESOLVED)
		return fail(c, KVOD_FAIL_ROUTE, "unreachable: %s: %s (%s)",
			    c->host, rdma_event_str(ev->event),
			    strerror(-ev->status));
	if (!kvod_iwarp(c) && c->pdata_len > KVOD_REQ_PDATA_IB)
		return fail(c, KVOD_FAIL_TOOLONG,
			    "%u bytes of private data; IB and RoCE connect requests carry at most %d",
			    c->pdata_len, KVOD_REQ_PDATA_IB);
	if (ibv_query_device(c->id->verbs, &da))
		return fail(c, KVOD_FAIL_LOCAL, "ibv_query_device: %s",
			    strerror(errno));
	if (c->want_notes == KVOD_NOTES_AUTO)
		c->want_notes = !kvod_iwarp(c);
	if (c->want_notes && c->pdata_len > offsetof(struct kvod_rdma_req, flags))
		c->pdata[offsetof(struct kvod_rdma_req, flags)] |=
			KVOD_RDMA_REQ_NOTIFY;
	if (create_queues(c, &da))
		return -1;
	if (!c->no_ready_recv && post_ready_recv(c))
		return -1;
	if (c->want_notes && post_note_recvs(c))
		return -1;
	if ((int)depth > da.max_qp_init_rd_atom)
		depth = da.max_qp_init_rd_atom;
	if (depth > 255)
		depth = 255;
	cp.initiator_depth = depth;
	c->initiator_depth = depth;
	if (!kvod_iwarp(c) &&
	    rdma_set_option(c->id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT,
			    &ack_timeout, sizeof(ack_timeout)))
		return fail(c, KVOD_FAIL_LOCAL, "rdma_set_option: %s",
			    strerror(errno));
	if (rdma_connect(c->id, &cp))
		return fail(c, KVOD_FAIL_LOCAL, "rdma_connect: %s", strerror(errno));
	step_to(c, KVOD_STEP_CONNECT);
	return 0;
}

static int post_start(struct kvod_conn *c);

/* ESTABLISHED (the accept) or the reject. */
static int on_connect(struct kvod_conn *c, const struct rdma_cm_event *ev)
{
	if (ev->event == RDMA_CM_EVENT_REJECTED)
		return decode_reject(c, ev);
	if (ev->event == RDMA_CM_EVENT_UNREACHABLE)
		return fail(c, KVOD_FAIL_UNREACHABLE, "unreachable: %s (%s)",
			    c->host, rdma_event_str(ev->event));
	if (ev->event != RDMA_CM_EVENT_ESTABLISHED)
		return fail(c, KVOD_FAIL_UNREACHABLE, "connect failed: %s (%d)",
			    rdma_event_str(ev->event), ev->status);
	c->connected = 1;
	if (decode_accept(c, ev))
		return -1;
	if (c->no_ready_recv) {
		step_to(c, KVOD_STEP_DONE);
		return 0;
	}
	step_to(c, KVOD_STEP_READY);
	c->ready_since = now_ms();
	return kvod_iwarp(c) ? post_start(c) : 0;
}

/*
 * One rdma_cm event, if one is waiting: 1 took one, 0 none, -1 failed.
 * Before the connection is up each is the answer to the step; after it
 * only endings come, which mark the connection lost.
 */
static int cm_step(struct kvod_conn *c)
{
	struct rdma_cm_event *ev;
	int ret = 0;

	if (rdma_get_cm_event(c->ec, &ev)) {
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return 0;
		return fail(c, KVOD_FAIL_LOCAL, "rdma_get_cm_event: %s",
			    strerror(errno));
	}
	c->cm_event = ev->event;
	c->cm_status = ev->status;
	switch (c->step) {
	case KVOD_STEP_ADDR:
		ret = on_addr(c, ev);
		break;
	case KVOD_STEP_ROUTE:
		ret = on_route(c, ev);
		break;
	case KVOD_STEP_CONNECT:
		ret = on_connect(c, ev);
		break;
	default:
		if (ev->event == RDMA_CM_EVENT_DISCONNECTED ||
		    ev->event == RDMA_CM_EVENT_DEVICE_REMOVAL ||
		    ev->event == RDMA_CM_EVENT_TIMEWAIT_EXIT)
			conn_lost(c);
		break;
	}
	rdma_ack_cm_event(ev);
	return ret < 0 ? -1 : 1;
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

/*
 * READ the segment table; its completion ends KVOD_STEP_TABLE
 * (table_done()).
 */
static int table_post(struct kvod_conn *c)
{
	c->table = calloc(1, c->table_len);
	if (!c->table)
		return fail(c, KVOD_FAIL_LOCAL, "out of memory");
	c->table_mr = kvod_reg(c, c->table, c->table_len);
	if (!c->table_mr)
		return -1;
	if (kvod_post_read(c, c->table, c->table_mr->lkey, c->table_addr,
			   c->table_rkey, c->table_len, KVOD_WRID_TABLE))
		return -1;
	step_to(c, KVOD_STEP_TABLE);
	return 0;
}

/*
 * The table READ completed: it must describe the movie contiguously
 * from offset 0 to c->movie_size.
 */
static int table_done(struct kvod_conn *c, const struct ibv_wc *wc)
{
	char why[160];

	if (wc->status != IBV_WC_SUCCESS)
		return fail(c, KVOD_FAIL_PROTOCOL, "READ of the segment table: %s",
			    ibv_wc_status_str(wc->status));
	c->segs = calloc(c->nr_segments, sizeof(*c->segs));
	if (!c->segs)
		return fail(c, KVOD_FAIL_LOCAL, "out of memory");
	if (kvod_table_parse(c->table, c->nr_segments, c->movie_size, c->segs,
			     why, sizeof(why)))
		return fail(c, KVOD_FAIL_PROTOCOL, "%s", why);
	ibv_dereg_mr(c->table_mr);
	c->table_mr = NULL;
	free(c->table);
	c->table = NULL;
	step_to(c, KVOD_STEP_DONE);
	return 0;
}

/*
 * A completion of KVOD_STEP_READY: READY, or one of the STARTs we sent
 * (all of which must be in before the step ends, so that none is left
 * for the caller); or of KVOD_STEP_TABLE.
 */
static int on_wc(struct kvod_conn *c, const struct ibv_wc *wc)
{
	int note = kvod_note_slot(wc->wr_id);

	/*
	 * A note before the connect is done: the caller starts from the
	 * head's newest chunk anyway, so it is dropped.
	 */
	if (note >= 0 && c->want_notes) {
		if (wc->status != IBV_WC_SUCCESS)
			return fail(c, KVOD_FAIL_PROTOCOL, "note: %s",
				    ibv_wc_status_str(wc->status));
		c->notes_early++;
		return kvod_note_repost(c, note);
	}
	if (c->step == KVOD_STEP_TABLE)
		return table_done(c, wc);
	if (wc->wr_id == KVOD_WRID_START) {
		if (wc->status != IBV_WC_SUCCESS)
			return fail(c, KVOD_FAIL_PROTOCOL, "START: %s",
				    ibv_wc_status_str(wc->status));
		c->starts_done++;
	} else {
		if (check_ready(c, wc))
			return -1;
		c->ready_in = 1;
	}
	if (!c->ready_in || c->starts_done < c->starts_posted)
		return 0;
	if (c->want_table)
		return table_post(c);
	step_to(c, KVOD_STEP_DONE);
	return 0;
}

/*
 * The completions there are, in KVOD_STEP_READY and KVOD_STEP_TABLE;
 * the CQ is armed again before it is found empty, so the channel's fd
 * wakes the caller for the next one.
 */
static int cq_step(struct kvod_conn *c)
{
	struct ibv_cq *cq;
	struct ibv_wc wc;
	void *ctx;
	int n, armed = 0;

	if (!ibv_get_cq_event(c->cc, &cq, &ctx))
		ibv_ack_cq_events(cq, 1);
	while (c->step == KVOD_STEP_READY || c->step == KVOD_STEP_TABLE) {
		n = kvod_poll_cq(c, &wc, 1);
		if (n < 0)
			return -1;
		if (!n && armed)
			break;
		if (!n) {
			if (ibv_req_notify_cq(c->cq, 0))
				return fail(c, KVOD_FAIL_LOCAL,
					    "ibv_req_notify_cq failed");
			armed = 1;
			continue;
		}
		armed = 0;
		if (on_wc(c, &wc))
			return -1;
	}
	return 0;
}

/*
 * Over iWARP a START that reached the server while its QP was still
 * being moved off the connection manager waits in the socket until more
 * data comes (siw_accept() hands the socket to the QP after sending the
 * MPA reply): if READY is not in within KVOD_START_RESEND_MS, START goes
 * once more, which the server takes on its second RECV.
 */
static int64_t resend_at(const struct kvod_conn *c)
{
	if (c->step != KVOD_STEP_READY || c->ready_in ||
	    c->starts_posted != 1)
		return INT64_MAX;
	return c->ready_since + KVOD_START_RESEND_MS;
}

static int step_timeout(struct kvod_conn *c)
{
	static const enum rdma_cm_event_type want[] = {
		[KVOD_STEP_ADDR] = RDMA_CM_EVENT_ADDR_RESOLVED,
		[KVOD_STEP_ROUTE] = RDMA_CM_EVENT_ROUTE_RESOLVED,
		[KVOD_STEP_CONNECT] = RDMA_CM_EVENT_ESTABLISHED,
	};

	if (c->step == KVOD_STEP_READY)
		return fail(c, KVOD_FAIL_TIMEOUT, "no %s within %d ms",
			    c->ready_in ? "START completion" : "READY",
			    c->timeout_ms);
	if (c->step == KVOD_STEP_TABLE)
		return fail(c, KVOD_FAIL_TIMEOUT,
			    "READ of the segment table: timed out");
	return fail(c, KVOD_FAIL_TIMEOUT, "waiting for %s: %s",
		    rdma_event_str(want[c->step]), strerror(ETIMEDOUT));
}

/**
 * kvod_connect_step() - make all the progress a connect can make now
 *
 * Takes the rdma_cm events and the completions that are waiting, without
 * sleeping; sends START again and ends the step on its timeout when they
 * are due. Returns 1 in progress: call again when c->ec->fd or (once it
 * exists) c->cc->fd is readable, or at kvod_connect_wake(); 0 done; -1
 * failed (c->fail, c->err).
 */
int kvod_connect_step(struct kvod_conn *c)
{
	int64_t now;
	int ret;

	if (c->fail != KVOD_FAIL_NONE)
		return -1;
	for (;;) {
		if ((c->step == KVOD_STEP_READY ||
		     c->step == KVOD_STEP_TABLE) && cq_step(c))
			return -1;
		if (c->step == KVOD_STEP_DONE)
			return 0;
		/* Lost, and the table READ (if any) came back flushed. */
		if (c->disconnected)
			return fail(c, KVOD_FAIL_UNREACHABLE,
				    "the server disconnected");
		ret = cm_step(c);
		if (ret < 0)
			return -1;
		if (!ret)
			break;
	}
	now = now_ms();
	if (now >= resend_at(c) && now < c->step_deadline && post_start(c))
		return -1;
	if (now >= c->step_deadline)
		return step_timeout(c);
	return 1;
}

/** kvod_connect_wake() - when kvod_connect_step() is due without an event */
int64_t kvod_connect_wake(const struct kvod_conn *c)
{
	int64_t r = resend_at(c);

	return r < c->step_deadline ? r : c->step_deadline;
}

/**
 * kvod_connect_start() - begin a connect that kvod_connect_step() drives
 * @c: zeroed or fresh; filled in
 * @o: where and what; copied, so it may go once this returns
 *
 * The host is resolved with getaddrinfo() here, which may block on a
 * name; a numeric address does not. Both channels' fds are non-blocking.
 * Returns 0 or -1 (c->fail, c->err); either way call kvod_close()
 * afterwards.
 */
int kvod_connect_start(struct kvod_conn *c, const struct kvod_conn_opts *o)
{
	struct addrinfo hints = {
		.ai_flags = AI_NUMERICSERV,
		.ai_socktype = SOCK_STREAM,
	}, *ai;
	int ret;

	memset(c, 0, sizeof(*c));
	c->rej_status = -1;
	c->rej_version = -1;
	c->timeout_ms = o->timeout_ms;
	c->depth = o->depth;
	c->no_ready_recv = o->no_ready_recv;
	c->retry_count = o->retry_count;
	c->want_table = o->read_table;
	c->live_ok = o->live_ok;
	c->want_notes = o->notes;
	snprintf(c->host, sizeof(c->host), "%s", o->host);
	c->start.magic = htobe32(KVOD_RDMA_MAGIC);
	c->start.version = KVOD_RDMA_VERSION;
	if (o->start)
		c->start = *o->start;
	if (o->pdata_len > sizeof(c->pdata))
		return fail(c, KVOD_FAIL_LOCAL,
			    "%zu bytes of private data; at most %zu", o->pdata_len,
			    sizeof(c->pdata));
	if (o->pdata_len)
		memcpy(c->pdata, o->pdata, o->pdata_len);
	c->pdata_len = o->pdata_len;

	c->ec = rdma_create_event_channel();
	if (!c->ec || set_nonblock(c->ec->fd))
		return fail(c, KVOD_FAIL_LOCAL, "rdma_create_event_channel: %s",
			    strerror(errno));
	if (rdma_create_id(c->ec, &c->id, c, RDMA_PS_TCP)) {
		c->id = NULL;
		return fail(c, KVOD_FAIL_LOCAL, "rdma_create_id: %s",
			    strerror(errno));
	}
	ret = getaddrinfo(o->host, o->port, &hints, &ai);
	if (ret)
		return fail(c, KVOD_FAIL_ADDR, "address resolution failed: %s: %s",
			    o->host, gai_strerror(ret));
	ret = rdma_resolve_addr(c->id, NULL, ai->ai_addr, o->timeout_ms);
	freeaddrinfo(ai);
	if (ret)
		return fail(c, KVOD_FAIL_ADDR, "address resolution failed: %s: %s",
			    o->host, strerror(errno));
	/*
	 * The step's time starts now: librdmacm's first call opens and
	 * queries every device, which takes seconds on a debug kernel.
	 */
	step_to(c, KVOD_STEP_ADDR);
	return 0;
}

/*
 * Whether the caller's stop flag is set. Checked before each sleep, and
 * again after a signal ends one: a signal that came just before the
 * check and the poll() is seen at the end of that sleep, which the step
 * or the caller's timeout bounds.
 */
static int stopped(const struct kvod_conn *c)
{
	return c->stop && *c->stop;
}

/* Sleep on the channels and step until done, failed or stopped. */
static int connect_wait(struct kvod_conn *c)
{
	int ret;

	while ((ret = kvod_connect_step(c)) == 1) {
		struct pollfd pfd[2] = {
			{ .fd = c->ec->fd, .events = POLLIN },
			{ .fd = c->cc ? c->cc->fd : -1, .events = POLLIN },
		};
		int64_t left = kvod_connect_wake(c) - now_ms();

		if (stopped(c))
			return fail(c, KVOD_FAIL_STOPPED, "interrupted");
		if (poll(pfd, 2, left < 0 ? 0 : left > INT32_MAX ?
			 INT32_MAX : (int)left) < 0 && errno != EINTR)
			return fail(c, KVOD_FAIL_LOCAL, "poll: %s",
				    strerror(errno));
	}
	return ret;
}

/**
 * kvod_connect() - connect, get the accept and READY (and, with
 * o->read_table, the segment table), sleeping until then
 *
 * Returns 0 connected and READY; -1 with c->fail and c->err set (also
 * KVOD_FAIL_STOPPED, once o->stop is set). Either way call kvod_close()
 * afterwards.
 */
int kvod_connect(struct kvod_conn *c, const struct kvod_conn_opts *o)
{
	if (kvod_connect_start(c, o))
		return -1;
	c->stop = o->stop;
	return connect_wait(c);
}

/**
 * kvod_read_table() - READ and check the segment table into c->segs
 *
 * After kvod_connect(); a no-op if it read the table already. Returns 0
 * or -1.
 */
int kvod_read_table(struct kvod_conn *c, int timeout_ms)
{
	if (c->segs)
		return 0;
	c->timeout_ms = timeout_ms;
	if (table_post(c))
		return -1;
	return connect_wait(c);
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
 * kvod_fences_reads() - whether a READ may carry IBV_SEND_FENCE here
 *
 * A fenced READ waits in the device until every READ posted before it on
 * the connection has completed (IBA 10.8.3.3), so the server's memory is
 * read for it after it was read for them. rxe, and IB and RoCE devices,
 * do so. Over iWARP a READ cannot be fenced: siw refuses a fenced READ
 * (siw_activate_tx_from_sq()) and leaves it at the head of the send
 * queue, where neither it nor a READ posted after it completes, and
 * cxgb4 drops the flag from a READ. There the caller waits for the
 * completions instead.
 */
int kvod_fences_reads(const struct kvod_conn *c)
{
	return !kvod_iwarp(c);
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
	return kvod_post_read_flags(c, buf, lkey, raddr, rkey, len, wr_id, 0);
}

/**
 * kvod_post_read_flags() - one RDMA READ with send flags
 *
 * As kvod_post_read(), with @flags in the work request's send_flags:
 * IBV_SEND_FENCE, where kvod_fences_reads() says it works, or 0.
 */
int kvod_post_read_flags(struct kvod_conn *c, void *buf, uint32_t lkey,
			 uint64_t raddr, uint32_t rkey, uint32_t len,
			 uint64_t wr_id, unsigned int flags)
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
		.send_flags = flags,
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
			    wc[i].wr_id != KVOD_WRID_START &&
			    kvod_note_slot(wc[i].wr_id) < 0 && c->out_count)
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
 * 0 on timeout, -1 on failure, or when there are none and the stop flag
 * is set (KVOD_FAIL_STOPPED; see rdma.h).
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
		if (stopped(c))
			return fail(c, KVOD_FAIL_STOPPED, "interrupted");
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
			/*
			 * Completions first: an ending taken now would destroy
			 * the QP (conn_lost()), and the READs that completed
			 * before it would be returned as flushed. The rdma_cm
			 * channel stays readable for the next turn.
			 */
			continue;
		}
		if (k > 0 && (pfd[1].revents & POLLIN)) {
			/* The same for completions whose event is not in yet. */
			k = kvod_poll_cq(c, wc, n);
			if (k)
				goto out;
			kvod_conn_event(c);
		}
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
	if (c->notes_mr)
		ibv_dereg_mr(c->notes_mr);
	c->notes_mr = NULL;
	if (c->table_mr)
		ibv_dereg_mr(c->table_mr);
	c->table_mr = NULL;
	free(c->table);
	c->table = NULL;
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
