/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tools/lib/rdma: the client side of kvod's RDMA wire protocol, version 1
 * (uapi/linux/kvod_rdma.h, Documentation/rdma.rst), shared by kvod-fetch,
 * kvod-proxy and the selftests' hostile client.
 *
 * One struct kvod_conn is one rdma_cm connection to a kvod server:
 *
 *	kvod_connect()		resolve, create PD/CQ/QP, post the RECV for
 *				READY, connect with the given private data,
 *				decode the accept (or the reject), over
 *				iWARP send START, wait for READY
 *	kvod_read_table()	READ the segment table into c->segs
 *	kvod_connect_start(),	the same without sleeping, for callers that
 *	kvod_connect_step(),	wait on the channels themselves (kvod-proxy):
 *	kvod_connect_wake()	start, then step whenever a channel is
 *				readable or the wake time has come
 *	kvod_post_read()	one RDMA READ
 *	kvod_post_read_flags(),	one with send flags (a fence), and
 *	kvod_fences_reads()	whether the device fences READs
 *	kvod_note_slot(),	a live channel's notes: which receive a
 *	kvod_note_repost()	completion is, and post it again
 *	kvod_poll()		completions, sleeping on the completion and
 *				the rdma_cm channels when there are none
 *	kvod_poll_cq()		completions there are, for callers that
 *				wait on the channels themselves
 *	kvod_conn_event()	an rdma_cm event, for callers that wait on
 *				the channels themselves (kvod-proxy)
 *	kvod_close()		disconnect and destroy, in order
 *
 * Nothing here prints; failures leave a sentence in c->err.
 *
 * The calls that sleep (kvod_connect(), kvod_read_table(), kvod_poll())
 * sleep on when a signal interrupts them, unless the caller gave a stop
 * flag (kvod_conn_opts.stop, which its signal handler sets): once that is
 * set they sleep no more, and fail with KVOD_FAIL_STOPPED, "interrupted".
 */
#ifndef KVOD_LIB_RDMA_H
#define KVOD_LIB_RDMA_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <linux/kvod.h>
#include <linux/kvod_rdma.h>

#include "rdma_check.h"

/*
 * REQ private data: a header and a name of up to KVOD_NAME_MAX bytes with
 * its NUL. iWARP (MPA, up to 512 bytes) carries all of it; IB CM carries
 * only 56 bytes after rdma_cm's header, so names up to 47 bytes there.
 */
#define KVOD_REQ_PDATA_MAX	((int)sizeof(struct kvod_rdma_req) + KVOD_NAME_MAX)
#define KVOD_REQ_PDATA_IB	56
#define KVOD_REQ_NAME_MAX_IB	(KVOD_REQ_PDATA_IB - \
				 (int)sizeof(struct kvod_rdma_req) - 1)

/* Over iWARP, START is sent again if READY is not in within this. */
#define KVOD_START_RESEND_MS	1000

/* Why kvod_connect() failed (also the exit text of kvod-fetch). */
enum kvod_fail {
	KVOD_FAIL_NONE,
	KVOD_FAIL_ADDR,		/* address resolution failed */
	KVOD_FAIL_ROUTE,	/* route resolution failed: unreachable */
	KVOD_FAIL_UNREACHABLE,	/* no answer from the peer */
	KVOD_FAIL_REFUSED,	/* rejected, not by kvod (nothing listens) */
	KVOD_FAIL_REJECTED,	/* rejected by kvod: c->rej_status */
	KVOD_FAIL_PROTOCOL,	/* the server broke the protocol */
	KVOD_FAIL_TIMEOUT,	/* a step took too long */
	KVOD_FAIL_TOOLONG,	/* private data too long for the transport */
	KVOD_FAIL_LOCAL,	/* a local verbs/rdma_cm call failed */
	KVOD_FAIL_STOPPED,	/* the caller's stop flag was set */
};

struct kvod_conn_opts {
	const char *host;	/* IPv4 or IPv6 literal or name */
	const char *port;	/* decimal */
	const void *pdata;	/* REQ private data */
	size_t pdata_len;
	unsigned int depth;	/* READs the caller keeps outstanding */
	int timeout_ms;		/* per step */
	int no_ready_recv;	/* hostile: do not post the RECV for READY */
	int retry_count;	/* hostile: the REQ's transport retries (0: 6) */
	const struct kvod_rdma_start *start;	/* hostile: send this as START */
	int read_table;		/* the connect ends with the segment table */
	int live_ok;		/* the caller plays live channels (fetch-live.c) */
	int notes;		/* ask for a live channel's notes
				 * (KVOD_RDMA_REQ_NOTIFY in the pdata's
				 * flags) and post receives for them;
				 * KVOD_NOTES_AUTO: not over iWARP
				 */
	/*
	 * Or NULL. Once *stop is set, the calls that sleep stop (see
	 * above); kvod_connect() copies it to c->stop.
	 */
	volatile sig_atomic_t *stop;
};

/*
 * kvod_conn_opts.notes: notes only over IB and RoCE. Over iWARP, which
 * has no receiver-not-ready retry, a note that finds no receive posted
 * ends the connection, so a caller that may stall (kvod-fetch writing to
 * a pipe) polls there instead.
 */
#define KVOD_NOTES_AUTO		2

/* Private data a connect request may carry here (MPA allows 512). */
#define KVOD_PDATA_CAP		256

/* Where a connect is (kvod_connect_step()); each step has the timeout. */
enum kvod_step {
	KVOD_STEP_ADDR,		/* waiting for ADDR_RESOLVED */
	KVOD_STEP_ROUTE,	/* waiting for ROUTE_RESOLVED */
	KVOD_STEP_CONNECT,	/* waiting for ESTABLISHED or the reject */
	KVOD_STEP_READY,	/* waiting for READY and the STARTs' completions */
	KVOD_STEP_TABLE,	/* waiting for the segment table's READ */
	KVOD_STEP_DONE,
};

struct kvod_conn {
	struct rdma_event_channel *ec;
	struct rdma_cm_id *id;
	struct ibv_pd *pd;
	struct ibv_comp_channel *cc;
	struct ibv_cq *cq;
	struct ibv_mr *ready_mr;
	struct kvod_rdma_ready ready;
	struct ibv_mr *start_mr;	/* iWARP only */
	struct kvod_rdma_start start;
	unsigned int starts_posted;
	unsigned int starts_done;
	/* wr_ids of the READs outstanding, oldest first (a ring) */
	uint64_t *out;
	unsigned int out_head, out_count, out_cap;
	unsigned int initiator_depth;	/* READs in flight on the wire */
	int connected;
	int disconnected;		/* the peer went away */

	/* the connect (kvod_connect_start()): its options and progress */
	enum kvod_step step;
	int64_t step_deadline;		/* ms, CLOCK_MONOTONIC */
	int64_t ready_since;		/* ms: KVOD_STEP_READY began */
	int ready_in;			/* READY has arrived */
	int timeout_ms;
	unsigned int depth;
	int no_ready_recv;
	int retry_count;
	int want_table;
	int live_ok;
	int want_notes;
	volatile sig_atomic_t *stop;	/* kvod_conn_opts.stop; may change */
	char host[256];
	unsigned char pdata[KVOD_PDATA_CAP];
	unsigned int pdata_len;
	struct kvod_rdma_segment *table;	/* being READ */
	struct ibv_mr *table_mr;

	/* the accept's private data, host byte order */
	uint16_t reply_flags;		/* KVOD_RDMA_LIVE, KVOD_RDMA_NOTIFY */
	uint64_t movie_size;
	uint64_t table_addr;
	uint32_t table_rkey;
	uint32_t table_len;
	uint32_t nr_segments;
	struct kvod_seg *segs;		/* after kvod_read_table() */

	/* a live channel's notes land here, one receive each */
	struct kvod_rdma_live_note notes[KVOD_RDMA_NOTES];
	struct ibv_mr *notes_mr;
	unsigned long notes_early;	/* taken and dropped during connect */

	/* why kvod_connect() failed */
	enum kvod_fail fail;
	int cm_event;			/* the rdma_cm event that ended it */
	int cm_status;			/* its status (IB CM reject reason) */
	int rej_status;			/* kvod status in a reject, or -1 */
	int rej_version;		/* server version in a reject, or -1 */
	char err[256];
};

/* wr_ids of the READY receive and the START sends; callers' must differ. */
#define KVOD_WRID_READY		UINT64_MAX
#define KVOD_WRID_START		(UINT64_MAX - 1)
#define KVOD_WRID_TABLE		(UINT64_MAX - 2)
/* Note receive i has wr_id KVOD_WRID_NOTE0 - i (kvod_note_slot()). */
#define KVOD_WRID_NOTE0		(UINT64_MAX - 3)

int kvod_opt_port(int *argc, char ***argv, const char **port);
size_t kvod_build_req(void *buf, size_t room, const char *name);
int kvod_iwarp(const struct kvod_conn *c);
const char *kvod_status_str(int status);
int kvod_parse_server(const char *s, size_t n, char *host, size_t hlen,
		      char *port, size_t plen);
int kvod_parse_url(const char *url, char *host, size_t hlen, char *port,
		   size_t plen, char *name, size_t nlen);

int kvod_connect(struct kvod_conn *c, const struct kvod_conn_opts *o);
int kvod_read_table(struct kvod_conn *c, int timeout_ms);
int kvod_connect_start(struct kvod_conn *c, const struct kvod_conn_opts *o);
int kvod_connect_step(struct kvod_conn *c);
int64_t kvod_connect_wake(const struct kvod_conn *c);
int kvod_note_slot(uint64_t wr_id);
int kvod_note_repost(struct kvod_conn *c, int i);
struct ibv_mr *kvod_reg(struct kvod_conn *c, void *buf, size_t len);
int kvod_post_read(struct kvod_conn *c, void *buf, uint32_t lkey,
		   uint64_t raddr, uint32_t rkey, uint32_t len, uint64_t wr_id);
int kvod_post_read_flags(struct kvod_conn *c, void *buf, uint32_t lkey,
			 uint64_t raddr, uint32_t rkey, uint32_t len,
			 uint64_t wr_id, unsigned int flags);
int kvod_fences_reads(const struct kvod_conn *c);
int kvod_poll(struct kvod_conn *c, struct ibv_wc *wc, int n, int timeout_ms);
int kvod_poll_cq(struct kvod_conn *c, struct ibv_wc *wc, int n);
void kvod_conn_event(struct kvod_conn *c);
long kvod_seg_find(const struct kvod_conn *c, uint64_t off);
void kvod_close(struct kvod_conn *c);

#endif /* KVOD_LIB_RDMA_H */
