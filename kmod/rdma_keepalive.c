// SPDX-License-Identifier: GPL-2.0
/* Keep-alive: finding RDMA clients that vanished. */

/**
 * DOC: RDMA keep-alive
 *
 * After READY the server posts nothing on a connection but a live
 * channel's notes, so nothing fails when a movie client's host dies or its
 * DREQ is lost (the IB CM sends the DREQ of an id destroyed while
 * connected once, without retries). Such a connection would hold its
 * MRs, its movie and its ``rdma_max_conns`` slot until the listener stops.
 *
 * So every ``rdma_keepalive`` seconds a connection whose READY is posted
 * posts one signaled RDMA WRITE of zero bytes. It carries no data and
 * names no memory: the responder checks neither rkey nor address for a
 * zero-length WRITE (IBA C9-88; siw skips it too), and the client's QP
 * has ``REMOTE_WRITE``, which rdma_cm grants every connected QP. The
 * client's transport answers it; its software sees nothing.
 *
 * Over IB and RoCE the WRITE completes on the client's ACK. If the client
 * is gone, the WRITE fails after the retries its connect request asked
 * for (with 6 and ``KVOD_RDMA_ACK_TIMEOUT``, about 15 s), or is still
 * outstanding at the next tick (rxe retries for ever when asked for 7).
 * Either closes the connection and counts it in ``peers_lost``; a WRITE
 * flushed because its QP is already in error closes it uncounted.
 *
 * A connection with notes is not closed for one outstanding keep-alive:
 * the WRITE may wait on the send queue behind notes that wait in
 * receiver-not-ready retries, which a live client that takes no notes for
 * a while (a paused player) causes by design ("RDMA notes"). Such a wait
 * may last for ever (a client that asked for 7 RNR retries and never posts
 * a receive again), so it is bounded: a keep-alive found outstanding at
 * every tick for ``rdma_notes_stall`` seconds closes the connection too,
 * counted in ``peers_lost``.
 *
 * Over iWARP the WRITE completes once TCP took it, and a vanished peer is
 * found by TCP: its reset, or its retransmission timeout. Before READY
 * over iWARP the server may not send (MPA: the client's START comes
 * first), and with nothing outstanding TCP finds no vanished client
 * either: a client that never sends START would hold its connection for
 * ever. So over iWARP the work is armed at the accept too,
 * ``rdma_keepalive`` seconds ahead but at least ``KVOD_START_WAIT_MIN``,
 * so that a short keep-alive does not close a client slow to START on a
 * loaded host; a connection without a START by then is closed and counted
 * in ``peers_lost``.
 */

/**
 * DOC: RDMA keep-alive lifetime and locking
 *
 * kvod_rdma_keepalive_start() arms the delayed work once READY is posted
 * (conn_ready_gate(), in the ESTABLISHED handler or the CQ's work), and
 * kvod_rdma_keepalive_await_start() at the accept over iWARP (a later arm
 * while it is pending changes nothing); the work re-arms itself.
 * release_work calls kvod_rdma_keepalive_stop() after rdma_destroy_id()
 * and ib_drain_qp(), when neither can arm it again, and before the QP and
 * CQ go. A WRITE the work posted while the QP drained is flushed; its
 * completion, if it comes before ib_free_cq(), only finds the connection
 * closing.
 *
 * The keep-alive has no lock of its own. ``KVOD_RDMA_CONN_KA_OUT`` in the
 * connection's flags says a WRITE is outstanding; the work sets it and
 * the completion clears it. The connection's ``ka_behind`` is the work's
 * alone.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>

#include "rdma.h"

static unsigned int rdma_keepalive = 30;
module_param(rdma_keepalive, uint, 0644);
MODULE_PARM_DESC(rdma_keepalive,
		 "Seconds between keep-alives on an RDMA connection, 0 for none; one that fails, or (without notes) is unanswered by the next, closes it (default 30)");

static unsigned int rdma_notes_stall = 300;
module_param(rdma_notes_stall, uint, 0644);
MODULE_PARM_DESC(rdma_notes_stall,
		 "Seconds a connection with notes may leave its keep-alive waiting behind notes it does not take before it is closed, 0 for no limit (default 300)");

/* Seconds a client has to START over iWARP, at least. */
#define KVOD_START_WAIT_MIN	10U

static void keepalive_arm_min(struct kvod_rdma_conn *conn, unsigned int min)
{
	unsigned int secs = READ_ONCE(rdma_keepalive);

	if (secs)
		queue_delayed_work(kvod_rdma_wq, &conn->ka_work,
				   (unsigned long)max(secs, min) * HZ);
}

static void keepalive_arm(struct kvod_rdma_conn *conn)
{
	keepalive_arm_min(conn, 0);
}

static void keepalive_lost(struct kvod_rdma_conn *conn, const char *why)
{
	pr_warn_ratelimited("conn %pISpc: keep-alive %s: closing\n",
			    &conn->peer.addr, why);
	if (kvod_rdma_conn_close(conn))
		kvod_lc_inc(conn->rl->l, KVOD_LC_PEERS_LOST);
}

static void keepalive_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct kvod_rdma_conn *conn = cq->cq_context;

	if (wc->status == IB_WC_SUCCESS) {
		clear_bit(KVOD_RDMA_CONN_KA_OUT, &conn->flags);
		return;
	}
	if (wc->status == IB_WC_WR_FLUSH_ERR) {
		kvod_rdma_conn_close(conn);
		return;
	}
	keepalive_lost(conn, ib_wc_status_msg(wc->status));
}

static bool notes_stalled(struct kvod_rdma_conn *conn)
{
	unsigned int secs = READ_ONCE(rdma_notes_stall);
	u64 now = get_jiffies_64();

	if (!conn->ka_behind)
		conn->ka_behind = now;
	return secs && time_after_eq64(now, conn->ka_behind + (u64)secs * HZ);
}

static void keepalive_work(struct work_struct *work)
{
	struct kvod_rdma_conn *conn = container_of(to_delayed_work(work),
						   struct kvod_rdma_conn,
						   ka_work);
	/* Zero length, so remote_addr and rkey stay 0 (DOC: RDMA keep-alive). */
	struct ib_rdma_wr wr = {
		.wr = {
			.opcode = IB_WR_RDMA_WRITE,
			.send_flags = IB_SEND_SIGNALED,
			.wr_cqe = &conn->ka_cqe,
		},
	};

	if (test_bit(KVOD_RDMA_CONN_CLOSING, &conn->flags))
		return;
	if (conn->iwarp && !test_bit(KVOD_RDMA_CONN_STARTED, &conn->flags)) {
		keepalive_lost(conn, "no START");
		return;
	}
	if (test_and_set_bit(KVOD_RDMA_CONN_KA_OUT, &conn->flags)) {
		if (!conn->notify)
			keepalive_lost(conn, "unanswered");
		else if (notes_stalled(conn))
			keepalive_lost(conn, "behind untaken notes");
		else
			keepalive_arm(conn);
		return;
	}
	conn->ka_behind = 0;
	if (ib_post_send(conn->qp, &wr.wr, NULL)) {
		keepalive_lost(conn, "not posted");
		return;
	}
	keepalive_arm(conn);
}

/**
 * kvod_rdma_keepalive_init() - the keep-alive's parts, unarmed
 * @conn: a connection being created
 */
void kvod_rdma_keepalive_init(struct kvod_rdma_conn *conn)
{
	INIT_DELAYED_WORK(&conn->ka_work, keepalive_work);
	conn->ka_cqe.done = keepalive_done;
}

/**
 * kvod_rdma_keepalive_start() - READY is posted: check the client from now
 * @conn: a connected connection
 */
void kvod_rdma_keepalive_start(struct kvod_rdma_conn *conn)
{
	keepalive_arm(conn);
}

/**
 * kvod_rdma_keepalive_await_start() - accepted over iWARP: START is due
 * @conn: a connection just accepted, which the client must START
 */
void kvod_rdma_keepalive_await_start(struct kvod_rdma_conn *conn)
{
	keepalive_arm_min(conn, KVOD_START_WAIT_MIN);
}

/**
 * kvod_rdma_keepalive_stop() - no keep-alive from now on
 * @conn: a connection in release_work, where nothing can arm the work
 */
void kvod_rdma_keepalive_stop(struct kvod_rdma_conn *conn)
{
	cancel_delayed_work_sync(&conn->ka_work);
}
