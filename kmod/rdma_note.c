// SPDX-License-Identifier: GPL-2.0
/* Notes: a SEND per completed chunk of a live channel, to clients that ask. */

/**
 * DOC: RDMA notes
 *
 * The connection watches the channel from setup on, but posts nothing
 * until READY is posted (@notes_on), so the client sees READY first. From
 * then on the channel's fan-out work (live.c) posts one note per chunk
 * done and one for DEL, from process context, never the writer's. The
 * note is written into the next of ``KVOD_RDMA_NOTES`` DMA-mapped buffers
 * and SENT from there. One SEND in ``KVOD_RDMA_NOTE_SIGNAL`` is signaled;
 * as a send queue completes in order, its completion says that every note
 * up to it has left its buffer (@note_done).
 *
 * A note that would reuse a buffer still in flight, because the client is
 * not taking them (over IB and RoCE it is out of receives and the
 * server's SENDs wait in receiver-not-ready retries), is dropped and
 * counted: notes are best effort, and the client catches up from a later
 * note or the head. Either way the writer never waits for a client.
 *
 * setup_work allocates the buffers and adds the watcher; release_work
 * takes the watcher off before it drains the QP ("RDMA lifetimes and
 * locking"), so no note is posted after the drain.
 *
 * The channel calls note_notify() under its watch lock, which serialises
 * the posters and guards @note_posted; @note_done is written by the CQ's
 * work with release semantics and read by the poster with acquire.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/dma-mapping.h>
#include <linux/slab.h>

#include "rdma.h"

static_assert(KVOD_RDMA_NOTES % KVOD_RDMA_NOTE_SIGNAL == 0);

static void note_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct kvod_rdma_conn *conn = cq->cq_context;
	struct kvod_rdma_note_cqe *c = container_of(wc->wr_cqe,
						    struct kvod_rdma_note_cqe,
						    cqe);

	if (wc->status != IB_WC_SUCCESS) {
		if (wc->status != IB_WC_WR_FLUSH_ERR)
			pr_warn_ratelimited("conn %pISpc: note failed: %s\n",
					    &conn->peer.addr,
					    ib_wc_status_msg(wc->status));
		kvod_rdma_conn_close(conn);
		return;
	}
	/* Pairs with note_post(): the buffers are free once this is seen. */
	smp_store_release(&conn->note_done, c->sent_to);
}

/* Post @ev as the next note; under the channel's watch lock. */
static void note_post(struct kvod_rdma_conn *conn,
		      const struct kvod_live_event *ev)
{
	u32 n = conn->note_posted, slot = n % KVOD_RDMA_NOTES;
	struct kvod_rdma_live_note *note = &conn->notes[slot];
	struct kvod_listener *l = conn->rl->l;
	struct kvod_rdma_note_cqe *c;
	u64 dma = conn->notes_dma + slot * sizeof(*note);
	struct ib_sge sge = {
		.addr = dma,
		.length = sizeof(*note),
		.lkey = conn->pd->local_dma_lkey,
	};
	struct ib_send_wr wr = {
		.opcode = IB_WR_SEND,
		.sg_list = &sge,
		.num_sge = 1,
	};

	/*
	 * Pairs with note_done(): no buffer is rewritten while in flight.
	 * The test knob drops a chunk's note as if it were (debugfs.c).
	 */
	if (n - smp_load_acquire(&conn->note_done) >= KVOD_RDMA_NOTES ||
	    (!ev->ended &&
	     atomic_dec_if_positive(&kvod_debug_drop_notes) >= 0)) {
		kvod_lc_inc(l, KVOD_LC_NOTES_DROPPED);
		return;
	}
	note->seq = cpu_to_be64(ev->ended ? KVOD_RDMA_LIVE_NONE : ev->seq);
	note->index = cpu_to_be32(ev->index);
	note->len = cpu_to_be32(ev->len);
	note->flags = cpu_to_be32(ev->ended ? KVOD_RDMA_LIVE_ENDED : 0);
	note->reserved = 0;
	ib_dma_sync_single_for_device(conn->dev, dma, sizeof(*note),
				      DMA_TO_DEVICE);
	/*
	 * Every note names its group's cqe, for a flush completes even the
	 * unsignaled ones on some devices; the group's last is signaled.
	 * The group's previous use completed before any note of this group
	 * got a buffer.
	 */
	c = &conn->note_cqes[n / KVOD_RDMA_NOTE_SIGNAL %
			     ARRAY_SIZE(conn->note_cqes)];
	wr.wr_cqe = &c->cqe;
	if (n % KVOD_RDMA_NOTE_SIGNAL == KVOD_RDMA_NOTE_SIGNAL - 1) {
		c->sent_to = n + 1;
		wr.send_flags = IB_SEND_SIGNALED;
	}
	if (ib_post_send(conn->qp, &wr, NULL)) {
		/* The QP is going down (its release follows) or full. */
		kvod_lc_inc(l, KVOD_LC_NOTES_DROPPED);
		return;
	}
	conn->note_posted = n + 1;
	kvod_lc_inc(l, KVOD_LC_NOTES);
}

static void note_notify(struct kvod_live_watcher *w,
			const struct kvod_live_event *ev)
{
	struct kvod_rdma_conn *conn =
		container_of(w, struct kvod_rdma_conn, note_watch);

	/* Pairs with kvod_rdma_note_start(): READY is on the queue first. */
	if (!smp_load_acquire(&conn->notes_on))
		return;
	/* Chunks the channel overwrote before telling: notes not sent. */
	if (ev->lost)
		kvod_lc_add(conn->rl->l, KVOD_LC_NOTES_DROPPED, ev->lost);
	note_post(conn, ev);
}

/**
 * kvod_rdma_note_setup() - notes' buffers, and watch the channel
 * @conn: a connection to a live channel whose client asked for notes,
 *	in setup_work; its PD exists
 *
 * Return: 0 or -ENOMEM. What was built is freed by kvod_rdma_note_free().
 */
int kvod_rdma_note_setup(struct kvod_rdma_conn *conn)
{
	size_t len = KVOD_RDMA_NOTES * sizeof(*conn->notes);
	unsigned int i;

	conn->notes = kzalloc(len, GFP_KERNEL);
	if (!conn->notes)
		return -ENOMEM;
	conn->notes_dma = ib_dma_map_single(conn->dev, conn->notes, len,
					    DMA_TO_DEVICE);
	if (ib_dma_mapping_error(conn->dev, conn->notes_dma)) {
		conn->notes_dma = 0;
		return -ENOMEM;
	}
	for (i = 0; i < ARRAY_SIZE(conn->note_cqes); i++)
		conn->note_cqes[i].cqe.done = note_done;
	kvod_live_watch(conn->movie->live, &conn->note_watch, note_notify);
	conn->note_watching = true;
	return 0;
}

/**
 * kvod_rdma_note_start() - READY is posted: notes may follow it
 * @conn: a connection set up with kvod_rdma_note_setup()
 */
void kvod_rdma_note_start(struct kvod_rdma_conn *conn)
{
	/* Pairs with note_notify(). */
	smp_store_release(&conn->notes_on, true);
}

/**
 * kvod_rdma_note_stop() - post no more notes
 * @conn: a connection in release_work, after setup_work is done
 */
void kvod_rdma_note_stop(struct kvod_rdma_conn *conn)
{
	if (!conn->note_watching)
		return;
	kvod_live_unwatch(conn->movie->live, &conn->note_watch);
	conn->note_watching = false;
}

/**
 * kvod_rdma_note_free() - unmap and free the notes' buffers
 * @conn: a connection whose QP is destroyed; NULL-safe fields
 */
void kvod_rdma_note_free(struct kvod_rdma_conn *conn)
{
	if (conn->notes_dma)
		ib_dma_unmap_single(conn->dev, conn->notes_dma,
				    KVOD_RDMA_NOTES * sizeof(*conn->notes),
				    DMA_TO_DEVICE);
	kfree(conn->notes);
}
