// SPDX-License-Identifier: GPL-2.0
/* One RDMA connection: its PD, MRs, segment table, QP and READY. */

/**
 * DOC: RDMA protection
 *
 * Every connection has a protection domain of its own, with no global
 * rkey, and registers the movie and its segment table in MRs of its own,
 * for remote READ only. An rkey is therefore good only on the QP it was
 * handed to. Release deregisters every MR, which invalidates the client's
 * rkeys, whatever closed the connection ("RDMA lifetimes and locking").
 */

/**
 * DOC: RDMA READY
 *
 * The memory is registered with fast-registration work requests posted on
 * the connection's own send queue once it is connected
 * (kvod_rdma_conn_established()): one REG_MR per segment and one for the
 * table, unsignaled. The signaled SEND that carries READY follows them on
 * the same queue, so when the client sees READY the registrations took
 * effect and the rkeys are valid. This is all the work the server ever
 * posts for a connection, but for a live channel's notes if the client
 * asked for them ("RDMA notes") and a zero-length keep-alive WRITE every
 * ``rdma_keepalive`` seconds ("RDMA keep-alive").
 */

/**
 * DOC: RDMA START over iWARP
 *
 * Over iWARP, READY must wait for the client's first message: MPA lets the
 * responder send only after the initiator's first FPDU, and siw refuses an
 * MPA reply followed by data in the same read
 * (``RDMA_CM_EVENT_CONNECT_ERROR`` on the client). So the client SENDs a
 * struct kvod_rdma_start once connected, and on an iWARP device the
 * server posts ``KVOD_RDMA_STARTS`` RECVs before it accepts, for the START
 * and for one the client sends again. READY is posted once both the
 * REG_MRs are posted and the first START has arrived, in whichever order
 * (``ready_gate``). Only the first START counts; one sent again is checked
 * the same way. A START that is malformed, or not exactly the size of
 * struct kvod_rdma_start, closes the connection. Over IB and RoCE there is
 * no START, and READY follows the REG_MRs at once.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/dma-mapping.h>
#include <linux/module.h>
#include <linux/sizes.h>
#include <linux/slab.h>

#include "rdma.h"

/* The pages in the connections' MRs, for STATS (DOC: Memory accounting). */
static atomic64_t kvod_rdma_mr_pages = ATOMIC64_INIT(0);

/*
 * @iova is a multiple of @psize (DOC: RDMA segments): the device finds a
 * byte's page from its iova's high bits, its offset from the low ones.
 */
static int mr_register(struct kvod_rdma_conn *conn, struct scatterlist *sgl,
		       int mapped, u64 length, u32 psize, u64 iova,
		       struct ib_mr **mrp)
{
	u32 pages = DIV_ROUND_UP(length, psize);
	struct ib_mr *mr;
	int n;

	if (WARN_ON_ONCE(iova & (psize - 1)))
		return -EINVAL;
	mr = ib_alloc_mr(conn->pd, IB_MR_TYPE_MEM_REG, pages);
	if (IS_ERR(mr))
		return PTR_ERR(mr);
	*mrp = mr;
	conn->mr_pages += pages;
	atomic64_add(pages, &kvod_rdma_mr_pages);
	n = ib_map_mr_sg(mr, sgl, mapped, NULL, psize);
	if (n != mapped)
		return n < 0 ? n : -EINVAL;
	mr->iova = iova;
	ib_update_fast_reg_key(mr, ib_inc_rkey(mr->rkey));
	return 0;
}

static int conn_map_movie(struct kvod_rdma_conn *conn)
{
	struct kvod_rdma_map *map;
	u32 i;
	int ret;

	map = kvod_rdma_map_get(conn->movie, conn->dev);
	if (IS_ERR(map))
		return PTR_ERR(map);
	conn->map = map;
	conn->mrs = kvcalloc(map->nr_segs, sizeof(*conn->mrs), GFP_KERNEL);
	if (!conn->mrs)
		return -ENOMEM;
	conn->nr_segs = map->nr_segs;
	kvod_mem_charge(KVOD_MEM_RDMA_CONNS, map->nr_segs * sizeof(*conn->mrs));

	for (i = 0; i < map->nr_segs; i++) {
		const struct kvod_rdma_mseg *seg = &map->segs[i];

		ret = mr_register(conn, seg->sgt.sgl, seg->mapped, seg->length,
				  seg->psize, round_down(seg->offset, seg->psize),
				  &conn->mrs[i]);
		if (ret)
			return ret;
		cond_resched();
	}
	return 0;
}

/* The table the client READs first; page-aligned so its iova can be 0. */
static int conn_map_table(struct kvod_rdma_conn *conn)
{
	struct kvod_rdma_seg *ts = &conn->table_seg;
	struct page *page;
	u32 i;
	int ret;

	conn->table_len = conn->nr_segs * sizeof(*conn->table);
	page = alloc_pages(GFP_KERNEL | __GFP_ZERO, get_order(conn->table_len));
	if (!page)
		return -ENOMEM;
	conn->table = page_address(page);
	kvod_mem_charge(KVOD_MEM_RDMA_CONNS,
			PAGE_SIZE << get_order(conn->table_len));
	for (i = 0; i < conn->nr_segs; i++) {
		const struct kvod_rdma_mseg *seg = &conn->map->segs[i];

		conn->table[i].offset = cpu_to_be64(seg->offset);
		conn->table[i].addr = cpu_to_be64(conn->mrs[i]->iova);
		conn->table[i].length = cpu_to_be64(seg->length);
		conn->table[i].rkey = cpu_to_be32(conn->mrs[i]->rkey);
	}

	ts->length = conn->table_len;
	ret = sg_alloc_table(&ts->sgt, 1, GFP_KERNEL);
	if (ret)
		return ret;
	sg_set_page(ts->sgt.sgl, page, conn->table_len, 0);
	ts->mapped = ib_dma_map_sg(conn->dev, ts->sgt.sgl, 1, DMA_TO_DEVICE);
	if (!ts->mapped)
		return -ENOMEM;
	return mr_register(conn, ts->sgt.sgl, ts->mapped, ts->length,
			   PAGE_SIZE, 0, &ts->mr);
}

static int conn_map_ready(struct kvod_rdma_conn *conn)
{
	conn->ready = kzalloc(sizeof(*conn->ready), GFP_KERNEL);
	if (!conn->ready)
		return -ENOMEM;
	conn->ready->magic = cpu_to_be32(KVOD_RDMA_MAGIC);
	conn->ready->version = KVOD_RDMA_VERSION;
	conn->ready->status = KVOD_RDMA_OK;
	conn->ready_dma = ib_dma_map_single(conn->dev, conn->ready,
					    sizeof(*conn->ready), DMA_TO_DEVICE);
	if (ib_dma_mapping_error(conn->dev, conn->ready_dma)) {
		conn->ready_dma = 0;
		return -ENOMEM;
	}
	return 0;
}

static int conn_map_start(struct kvod_rdma_conn *conn)
{
	size_t len = KVOD_RDMA_STARTS * sizeof(*conn->start);

	conn->start = kzalloc(len, GFP_KERNEL);
	if (!conn->start)
		return -ENOMEM;
	conn->start_dma = ib_dma_map_single(conn->dev, conn->start, len,
					    DMA_FROM_DEVICE);
	if (ib_dma_mapping_error(conn->dev, conn->start_dma)) {
		conn->start_dma = 0;
		return -ENOMEM;
	}
	return 0;
}

static const char *conn_wr_name(struct kvod_rdma_conn *conn,
				struct ib_cqe *cqe)
{
	if (cqe == &conn->ready_cqe)
		return "READY";
	if (cqe == &conn->reg_cqe)
		return "REG_MR";
	return "START";
}

static void conn_wc_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct kvod_rdma_conn *conn = cq->cq_context;

	if (wc->status == IB_WC_SUCCESS || wc->status == IB_WC_WR_FLUSH_ERR)
		return;
	pr_warn_ratelimited("conn %pISpc: %s failed: %s\n", &conn->peer.addr,
			    conn_wr_name(conn, wc->wr_cqe),
			    ib_wc_status_msg(wc->status));
	kvod_rdma_conn_close(conn);
}

/* SEND the READY, behind the REG_MRs (DOC: RDMA READY). */
static int conn_post_ready(struct kvod_rdma_conn *conn)
{
	struct ib_sge sge = {
		.addr = conn->ready_dma,
		.length = sizeof(*conn->ready),
		.lkey = conn->pd->local_dma_lkey,
	};
	struct ib_send_wr send = {
		.opcode = IB_WR_SEND,
		.send_flags = IB_SEND_SIGNALED,
		.wr_cqe = &conn->ready_cqe,
		.sg_list = &sge,
		.num_sge = 1,
	};

	return ib_post_send(conn->qp, &send, NULL);
}

/*
 * One of READY's two conditions is met; the second one posts it. In the
 * ESTABLISHED handler or the CQ's work, never twice past the gate.
 */
static int conn_ready_gate(struct kvod_rdma_conn *conn)
{
	int ret;

	if (!atomic_dec_and_test(&conn->ready_gate))
		return 0;
	if (test_bit(KVOD_RDMA_CONN_CLOSING, &conn->flags))
		return 0;
	ret = conn_post_ready(conn);
	if (ret)
		return ret;
	if (conn->notify)
		kvod_rdma_note_start(conn);
	kvod_rdma_keepalive_start(conn);
	return 0;
}

static void conn_start_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct kvod_rdma_conn *conn = cq->cq_context;
	unsigned int i = wc->wr_cqe - conn->start_cqe;
	const struct kvod_rdma_start *start = &conn->start[i];

	if (wc->status != IB_WC_SUCCESS) {
		conn_wc_done(cq, wc);
		return;
	}
	ib_dma_sync_single_for_cpu(conn->dev, conn->start_dma +
				   i * sizeof(*start), sizeof(*start),
				   DMA_FROM_DEVICE);
	if (wc->byte_len != sizeof(*start) ||
	    be32_to_cpu(start->magic) != KVOD_RDMA_MAGIC ||
	    start->version != KVOD_RDMA_VERSION ||
	    memchr_inv(start->reserved, 0, sizeof(start->reserved))) {
		pr_warn_ratelimited("conn %pISpc: bad START (%u bytes)\n",
				    &conn->peer.addr, wc->byte_len);
		kvod_rdma_conn_close(conn);
		return;
	}
	if (test_and_set_bit(KVOD_RDMA_CONN_STARTED, &conn->flags))
		return;
	if (conn_ready_gate(conn))
		kvod_rdma_conn_close(conn);
}

/* The STARTs' RECVs, posted before the accept (DOC: RDMA START over iWARP). */
static int conn_post_starts(struct kvod_rdma_conn *conn)
{
	struct ib_sge sge[KVOD_RDMA_STARTS];
	struct ib_recv_wr wr[KVOD_RDMA_STARTS];
	unsigned int i;

	for (i = 0; i < KVOD_RDMA_STARTS; i++) {
		sge[i] = (struct ib_sge) {
			.addr = conn->start_dma + i * sizeof(*conn->start),
			.length = sizeof(*conn->start),
			.lkey = conn->pd->local_dma_lkey,
		};
		conn->start_cqe[i].done = conn_start_done;
		wr[i] = (struct ib_recv_wr) {
			.wr_cqe = &conn->start_cqe[i],
			.sg_list = &sge[i],
			.num_sge = 1,
			.next = i + 1 < KVOD_RDMA_STARTS ? &wr[i + 1] : NULL,
		};
	}
	return ib_post_recv(conn->qp, wr, NULL);
}

static int conn_create_qp(struct kvod_rdma_conn *conn)
{
	/* REG_MR per segment and the table, READY, a keep-alive and a
	 * drain WR each way; over iWARP the STARTs' RECVs too; the notes in
	 * flight.
	 */
	u32 send_wr = conn->nr_segs + 4 +
		      (conn->notify ? KVOD_RDMA_NOTES : 0);
	u32 recv_wr = conn->iwarp ? KVOD_RDMA_STARTS + 1 : 1;
	struct ib_qp_init_attr attr = {
		.qp_context = conn,
		.send_cq = conn->cq,
		.recv_cq = conn->cq,
		.qp_type = IB_QPT_RC,
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.cap = {
			.max_send_wr = send_wr,
			.max_recv_wr = recv_wr,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
	};
	int ret;

	if (send_wr > conn->dev->attrs.max_qp_wr ||
	    recv_wr > conn->dev->attrs.max_qp_wr)
		return -ENOSPC;
	ret = rdma_create_qp(conn->id, conn->pd, &attr);
	if (ret)
		return ret;
	conn->qp = conn->id->qp;
	return 0;
}

/*
 * Everything setup built, in reverse order of creation; NULL-safe. The
 * cm_id is gone already (the QP outlives it, as in nvmet-rdma), or was
 * never ours.
 */
static void conn_free_resources(struct kvod_rdma_conn *conn)
{
	struct kvod_rdma_seg *ts = &conn->table_seg;
	u32 i;

	if (conn->qp)
		ib_destroy_qp(conn->qp);
	if (conn->mrs) {
		for (i = 0; i < conn->nr_segs; i++)
			if (conn->mrs[i])
				ib_dereg_mr(conn->mrs[i]);
		kvfree(conn->mrs);
		kvod_mem_release(KVOD_MEM_RDMA_CONNS,
				 conn->nr_segs * sizeof(*conn->mrs));
	}
	kvod_rdma_map_put(conn->map);
	if (ts->mr)
		ib_dereg_mr(ts->mr);
	atomic64_sub(conn->mr_pages, &kvod_rdma_mr_pages);
	if (ts->mapped)
		ib_dma_unmap_sg(conn->dev, ts->sgt.sgl, 1, DMA_TO_DEVICE);
	sg_free_table(&ts->sgt);
	if (conn->table) {
		free_pages((unsigned long)conn->table,
			   get_order(conn->table_len));
		kvod_mem_release(KVOD_MEM_RDMA_CONNS,
				 PAGE_SIZE << get_order(conn->table_len));
	}
	if (conn->ready_dma)
		ib_dma_unmap_single(conn->dev, conn->ready_dma,
				    sizeof(*conn->ready), DMA_TO_DEVICE);
	kfree(conn->ready);
	if (conn->start_dma)
		ib_dma_unmap_single(conn->dev, conn->start_dma,
				    KVOD_RDMA_STARTS * sizeof(*conn->start),
				    DMA_FROM_DEVICE);
	kfree(conn->start);
	kvod_rdma_note_free(conn);
	if (conn->cq)
		ib_free_cq(conn->cq);
	if (conn->pd)
		ib_dealloc_pd(conn->pd);
}

/* The expensive part of a connection, in setup_work. */
static int conn_setup(struct kvod_rdma_conn *conn)
{
	struct ib_pd *pd;
	struct ib_cq *cq;
	int ret;

	pd = ib_alloc_pd(conn->dev, 0);
	if (IS_ERR(pd))
		return PTR_ERR(pd);
	conn->pd = pd;
	ret = conn_map_movie(conn) ?: conn_map_table(conn) ?:
	      conn_map_ready(conn);
	if (!ret && conn->iwarp)
		ret = conn_map_start(conn);
	if (!ret && conn->notify)
		ret = kvod_rdma_note_setup(conn);
	if (ret)
		return ret;
	cq = ib_alloc_cq(conn->dev, conn, conn->nr_segs + 6 +
			 (conn->iwarp ? KVOD_RDMA_STARTS : 0) +
			 (conn->notify ? KVOD_RDMA_NOTES : 0), 0,
			 IB_POLL_WORKQUEUE);
	if (IS_ERR(cq))
		return PTR_ERR(cq);
	conn->cq = cq;
	ret = conn_create_qp(conn);
	if (!ret && conn->iwarp)
		ret = conn_post_starts(conn);
	return ret;
}

static int conn_accept(struct kvod_rdma_conn *conn)
{
	struct kvod_rdma_reply reply = {
		.magic = cpu_to_be32(KVOD_RDMA_MAGIC),
		.version = KVOD_RDMA_VERSION,
		.status = KVOD_RDMA_OK,
		.flags = cpu_to_be16((conn->movie->live ? KVOD_RDMA_LIVE : 0) |
				     (conn->notify ? KVOD_RDMA_NOTIFY : 0)),
		.movie_size = cpu_to_be64(conn->movie->length),
		.table_addr = cpu_to_be64(conn->table_seg.mr->iova),
		.table_rkey = cpu_to_be32(conn->table_seg.mr->rkey),
		.table_len = cpu_to_be32(conn->table_len),
		.nr_segments = cpu_to_be32(conn->nr_segs),
	};
	struct rdma_conn_param param = {
		.private_data = &reply,
		.private_data_len = sizeof(reply),
		/* The request's responder_resources, as our side sees it, is
		 * the client's initiator depth (ib_cm swaps them).
		 */
		.responder_resources = min_t(u32, conn->initiator_depth,
					     conn->dev->attrs.max_qp_rd_atom),
		.initiator_depth = 0,
		.rnr_retry_count = 7,
	};
	int ret;

	/* For the QP's move to RTS, which rdma_accept() makes. */
	ret = rdma_set_ack_timeout(conn->id, KVOD_RDMA_ACK_TIMEOUT);
	if (ret)
		return ret;
	return rdma_accept(conn->id, &param);
}

/*
 * Under the id's handler lock, so no event of the id runs meanwhile and
 * ESTABLISHED comes after the accept.
 */
static void conn_answer(struct kvod_rdma_conn *conn, int err)
{
	struct kvod_listener *l = conn->rl->l;

	set_bit(KVOD_RDMA_CONN_ANSWERED, &conn->flags);
	if (err) {
		pr_warn_ratelimited("conn %pISpc: setup for %s failed: %d\n",
				    &conn->peer.addr, conn->movie->name, err);
		kvod_rdma_reject(conn->rl, conn->id, kvod_rdma_status(err));
		kvod_rdma_conn_close(conn);
		return;
	}
	err = conn_accept(conn);
	if (err) {
		pr_warn_ratelimited("conn %pISpc: accept failed: %d\n",
				    &conn->peer.addr, err);
		kvod_lc_inc(l, KVOD_LC_REFUSED);
		kvod_rdma_conn_close(conn);
		return;
	}
	set_bit(KVOD_RDMA_CONN_ACCEPTED, &conn->flags);
	kvod_lc_inc(l, KVOD_LC_ACCEPTED);
	kvod_lc_inc(l, KVOD_LC_ACTIVE);
	if (conn->iwarp)
		kvod_rdma_keepalive_await_start(conn);
}

static void conn_setup_work(struct work_struct *work)
{
	struct kvod_rdma_conn *conn =
		container_of(work, struct kvod_rdma_conn, setup_work);
	u32 delay = READ_ONCE(kvod_debug_rdma_setup_delay_ms);
	int err;

	if (delay)
		msleep(delay);
	err = conn_setup(conn);

	rdma_lock_handler(conn->id);
	if (!test_bit(KVOD_RDMA_CONN_CLOSING, &conn->flags))
		conn_answer(conn, err);
	rdma_unlock_handler(conn->id);
}

/* In the order of DOC: RDMA lifetimes and locking. */
static void conn_release_work(struct work_struct *work)
{
	struct kvod_rdma_conn *conn =
		container_of(work, struct kvod_rdma_conn, release_work);

	cancel_work_sync(&conn->setup_work);
	kvod_rdma_note_stop(conn);
	if (!test_and_set_bit(KVOD_RDMA_CONN_ANSWERED, &conn->flags)) {
		rdma_lock_handler(conn->id);
		kvod_rdma_reject(conn->rl, conn->id, KVOD_RDMA_BUSY);
		rdma_unlock_handler(conn->id);
	}
	if (test_bit(KVOD_RDMA_CONN_ACCEPTED, &conn->flags))
		rdma_disconnect(conn->id);
	if (conn->qp)
		ib_drain_qp(conn->qp);
	rdma_destroy_id(conn->id);
	kvod_rdma_keepalive_stop(conn);
	conn_free_resources(conn);
	if (test_bit(KVOD_RDMA_CONN_ACCEPTED, &conn->flags))
		kvod_lc_dec(conn->rl->l, KVOD_LC_ACTIVE);
	kvod_movie_close(conn->movie);
	kvod_rdma_conn_unlink(conn);
	kfree(conn);
}

/**
 * kvod_rdma_conn_create() - a connection for a connect request
 * @rl: the listener the request came in on
 * @id: the request's new cm_id
 * @req: the request's parameters
 * @movie: from kvod_movie_open(); the connection takes it over (also on
 *	failure)
 * @notify: the client asked for notes and @movie is a live channel
 *
 * Context: the CONNECT_REQUEST handler; only allocates. The caller admits
 * the connection or frees it with kvod_rdma_conn_free().
 *
 * Return: the connection, or ERR_PTR(-ENOMEM).
 */
struct kvod_rdma_conn *kvod_rdma_conn_create(struct kvod_rdma_listener *rl,
					     struct rdma_cm_id *id,
					     const struct rdma_conn_param *req,
					     struct kvod_movie *movie,
					     bool notify)
{
	struct kvod_rdma_conn *conn;

	conn = kzalloc(sizeof(*conn), GFP_KERNEL);
	if (!conn) {
		kvod_movie_close(movie);
		return ERR_PTR(-ENOMEM);
	}
	conn->ctx.kind = KVOD_RDMA_CTX_CONN;
	INIT_LIST_HEAD(&conn->node);
	INIT_HLIST_NODE(&conn->peer.node);
	INIT_WORK(&conn->setup_work, conn_setup_work);
	INIT_WORK(&conn->release_work, conn_release_work);
	kvod_rdma_keepalive_init(conn);
	memcpy(&conn->peer.addr, &id->route.addr.dst_addr,
	       sizeof(conn->peer.addr));
	conn->rl = rl;
	conn->id = id;
	conn->dev = id->device;
	conn->initiator_depth = req->responder_resources;
	conn->iwarp = rdma_protocol_iwarp(id->device, id->port_num);
	atomic_set(&conn->ready_gate, conn->iwarp ? 2 : 1);
	conn->movie = movie;
	conn->notify = notify;
	conn->reg_cqe.done = conn_wc_done;
	conn->ready_cqe.done = conn_wc_done;
	return conn;
}

/**
 * kvod_rdma_conn_free() - free a connection that was never admitted
 * @conn: from kvod_rdma_conn_create()
 *
 * The cm_id stays: the caller rejects and rdma_cm destroys it.
 */
void kvod_rdma_conn_free(struct kvod_rdma_conn *conn)
{
	kvod_movie_close(conn->movie);
	kfree(conn);
}

static void reg_wr_init(struct ib_reg_wr *wr, struct ib_mr *mr,
			struct ib_cqe *cqe, struct ib_send_wr *next)
{
	wr->wr.opcode = IB_WR_REG_MR;
	wr->wr.wr_cqe = cqe;
	wr->wr.next = next;
	wr->mr = mr;
	wr->key = mr->rkey;
	wr->access = IB_ACCESS_REMOTE_READ;
}

/**
 * kvod_rdma_conn_established() - register the memory, then say READY
 * @conn: a connection whose QP is now connected
 *
 * See DOC: RDMA READY and DOC: RDMA START over iWARP.
 *
 * Return: 0 or a negative errno (the caller closes the connection).
 */
int kvod_rdma_conn_established(struct kvod_rdma_conn *conn)
{
	struct ib_reg_wr *regs;
	struct ib_send_wr *next = NULL;
	u32 i;
	int ret;

	regs = kcalloc(conn->nr_segs + 1, sizeof(*regs), GFP_KERNEL);
	if (!regs)
		return -ENOMEM;
	for (i = conn->nr_segs; i > 0; i--) {
		reg_wr_init(&regs[i], conn->mrs[i - 1], &conn->reg_cqe, next);
		next = &regs[i].wr;
	}
	reg_wr_init(&regs[0], conn->table_seg.mr, &conn->reg_cqe, next);

	ret = ib_post_send(conn->qp, &regs[0].wr, NULL);
	kfree(regs);
	if (ret)
		return ret;
	kvod_lc_add(conn->rl->l, KVOD_LC_BYTES, conn->movie->length);
	return conn_ready_gate(conn);
}

/**
 * kvod_rdma_conn_close() - start tearing a connection down
 * @conn: a linked connection
 *
 * Context: any process or softirq context; idempotent.
 *
 * Return: true if this call started it, false if it was closing already.
 */
bool kvod_rdma_conn_close(struct kvod_rdma_conn *conn)
{
	if (test_and_set_bit(KVOD_RDMA_CONN_CLOSING, &conn->flags))
		return false;
	queue_work(kvod_rdma_wq, &conn->release_work);
	return true;
}

/* Module exit, once every connection is released: a WARN is a leak. */
void kvod_rdma_conns_exit(void)
{
	s64 pages = atomic64_read(&kvod_rdma_mr_pages);

	WARN(pages, "kvod: leaked %lld MR pages\n", pages);
}

/**
 * kvod_rdma_stats() - the connections' and maps' part of STATS
 * @st: its rdma_maps and rdma_mr_pages are filled (the bytes are in mem.c)
 */
void kvod_rdma_stats(struct kvod_stats *st)
{
	kvod_rdma_map_stats(st);
	st->rdma_mr_pages = atomic64_read(&kvod_rdma_mr_pages);
}
