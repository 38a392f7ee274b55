/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kvod RDMA server internals, shared by rdma.c (listeners, rdma_cm events,
 * devices) and rdma_conn.c (one connection's resources).
 *
 * Lifetimes:
 *
 *   struct kvod_rdma_listener: owned by its struct kvod_listener (l->priv);
 *   created by start(), freed by stop() after its cm_id is destroyed and
 *   every connection accepted through it is released.
 *
 *   struct kvod_rdma_conn: created in the CONNECT_REQUEST handler on the
 *   child cm_id, linked on its listener's list, and released exactly once
 *   by release_work (queued by kvod_rdma_conn_close() on disconnect,
 *   error, device removal, unlisten or exit). Release order: disconnect,
 *   drain the QP, deregister every MR (this invalidates the rkeys the
 *   client holds), unmap, destroy QP, CQ, cm_id, PD, then drop the movie
 *   and unlink. cm_ids are never destroyed inside their own callback.
 *
 * Locking: rl->lock (spinlock) guards rl->conns, rl->nr_conns and each
 * conn's list linkage; rl->id_lock (mutex) guards rl->id and rl->waiting.
 * Neither is held across rdma_destroy_id(), which waits for callbacks that
 * may take them.
 */
#ifndef _KVOD_RDMA_H
#define _KVOD_RDMA_H

#include <linux/scatterlist.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <rdma/ib_cm.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

#include "kvod.h"

struct kvod_rdma_listener {
	struct kvod_listener *l;
	struct mutex id_lock;		/* guards id, waiting */
	struct rdma_cm_id *id;		/* NULL while waiting for a device */
	bool waiting;
	bool stopping;			/* under id_lock and lock */
	struct work_struct retry_work;
	spinlock_t lock;		/* guards conns, nr_conns */
	struct list_head conns;
	u32 nr_conns;			/* slots taken, linked or not */
	wait_queue_head_t drained;
};

/* One memory region of a connection: a run of chunks, one rkey. */
struct kvod_rdma_seg {
	struct sg_table sgt;
	int mapped;			/* entries ib_dma_map_sg() returned */
	struct ib_mr *mr;
	u64 offset;			/* movie offset of the first byte */
	u64 length;
};

struct kvod_rdma_conn {
	struct list_head node;		/* on rl->conns, under rl->lock */
	struct kvod_rdma_listener *rl;
	struct rdma_cm_id *id;
	struct ib_device *dev;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct kvod_movie *movie;

	struct kvod_rdma_seg *segs;
	u32 nr_segs;
	struct kvod_rdma_segment *table;	/* what the client READs */
	size_t table_len;
	struct kvod_rdma_seg table_seg;
	struct kvod_rdma_ready *ready;
	u64 ready_dma;
	struct ib_cqe reg_cqe;
	struct ib_cqe ready_cqe;

	unsigned long flags;
	struct work_struct release_work;
};

#define KVOD_RDMA_CONN_CLOSING	0	/* release_work queued */
#define KVOD_RDMA_CONN_LIVE	1	/* memory registered */

/* rdma.c */
extern struct workqueue_struct *kvod_rdma_wq;
void kvod_rdma_conn_unlink(struct kvod_rdma_conn *conn);

/* rdma_conn.c */
struct kvod_rdma_conn *kvod_rdma_conn_create(struct kvod_rdma_listener *rl,
					     struct rdma_cm_id *id,
					     struct kvod_movie *movie,
					     u8 *status);
int kvod_rdma_conn_accept(struct kvod_rdma_conn *conn,
			  const struct rdma_conn_param *req);
int kvod_rdma_conn_established(struct kvod_rdma_conn *conn);
void kvod_rdma_conn_close(struct kvod_rdma_conn *conn);
void kvod_rdma_conn_destroy(struct kvod_rdma_conn *conn);

#endif /* _KVOD_RDMA_H */
