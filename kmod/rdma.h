/* SPDX-License-Identifier: GPL-2.0 */
/* The RDMA server's internals, shared by rdma*.c. */

/**
 * DOC: RDMA cm_id contexts
 *
 * Every rdma_cm id kvod owns has, for its whole life, a context that means
 * one thing, tagged by a struct kvod_rdma_ctx embedded in its owner. The
 * listening id's is its listener. A connection's id gets its connection
 * in the CONNECT_REQUEST handler (before that event returns, the child id
 * carries its listener's context, as rdma_cm copies it) and keeps it until
 * release destroys the id. The handler never looks at ``id->qp``: the QP
 * is built in the connection's setup work, so a ``DEVICE_REMOVAL`` can
 * reach a connection's id before it has a QP.
 */

/**
 * DOC: RDMA lifetimes and locking
 *
 * A struct kvod_rdma_listener is the ``priv`` of its struct
 * kvod_listener: created by start(), freed by stop() after its listening
 * id is destroyed and every connection admitted through it is released.
 *
 * A struct kvod_rdma_conn is created (small) and admitted in the
 * CONNECT_REQUEST handler, which links it on its listener and queues
 * setup_work. setup_work maps the movie, builds the QP and accepts or
 * rejects under the id's handler lock. Notes and the keep-alive have
 * rules of their own ("RDMA notes", "RDMA keep-alive lifetime and
 * locking"). A connection is released exactly once, by release_work,
 * which kvod_rdma_conn_close() queues on disconnect, error, device
 * removal, unlisten or exit. release_work:
 *
 * 1. waits for setup_work;
 * 2. stops the notes (kvod_rdma_note_stop());
 * 3. rejects a request not yet answered;
 * 4. disconnects and drains the QP;
 * 5. destroys the cm_id, after which no event can reach the connection;
 * 6. stops the keep-alive;
 * 7. destroys the QP, every MR (the client's rkeys die), the mappings, the
 *    CQ and the PD, and drops the movie;
 * 8. unlinks the connection, last.
 *
 * A cm_id is never destroyed inside its own callback.
 *
 * ``rl->lock``, a spinlock, guards ``rl->conns``, ``rl->peers``,
 * ``rl->nr_conns`` and each connection's linkage. ``rl->id_lock``, a
 * mutex, serialises binding and unbinding the listening id. The event
 * handler takes neither mutex: it runs under rdma_cm's handler mutexes,
 * which rdma_destroy_id() waits for. It clears ``rl->id`` only with
 * cmpxchg(). Whoever takes ``rl->id`` out (xchg() or cmpxchg() to NULL)
 * destroys it.
 */
#ifndef _KVOD_RDMA_H
#define _KVOD_RDMA_H

#include <linux/completion.h>
#include <linux/hashtable.h>
#include <linux/kref.h>
#include <linux/scatterlist.h>
#include <linux/workqueue.h>
#include <rdma/ib_cm.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

#include <linux/kvod_rdma.h>

#include "kvod.h"

enum kvod_rdma_ctx_kind {
	KVOD_RDMA_CTX_LISTENER,
	KVOD_RDMA_CTX_CONN,
};

/* What an rdma_cm id's context points to, embedded in its owner. */
struct kvod_rdma_ctx {
	enum kvod_rdma_ctx_kind kind;
};

struct kvod_rdma_listener {
	struct kvod_rdma_ctx ctx;	/* the listening id's context */
	struct list_head node;		/* on kvod_rdma_listeners */
	struct kvod_listener *l;
	struct mutex id_lock;		/* serialises bind, unbind, stop */
	struct rdma_cm_id *id;		/* NULL while waiting for a device */
	bool stopping;			/* under id_lock and lock */
	struct work_struct retry_work;
	spinlock_t lock;		/* guards conns, peers, nr_conns */
	struct list_head conns;
	struct hlist_head peers[BIT(KVOD_PEER_BITS)];
	u32 nr_conns;
	struct completion drained;	/* nr_conns reached 0 while stopping */
};

/* A connection's segment table, in a memory region of its own. */
struct kvod_rdma_seg {
	struct sg_table sgt;
	int mapped;			/* entries ib_dma_map_sg() returned */
	struct ib_mr *mr;
	u64 length;
};

/* A run of a movie's chunks: one MR of each connection (rdma_map.c). */
struct kvod_rdma_mseg {
	struct sg_table sgt;
	int mapped;			/* entries ib_dma_map_sg() returned */
	u32 psize;			/* MR page size */
	u64 offset;			/* movie offset of the first byte */
	u64 length;
};

/* A movie's image DMA-mapped on one device (DOC: RDMA shared maps). */
struct kvod_rdma_map {
	struct list_head node;		/* on the maps' list */
	struct kref ref;		/* one per connection */
	struct kvod_image *image;	/* the map holds a reference */
	struct ib_device *dev;
	bool huge;			/* planned with 2 MiB MR pages */
	u32 nr_segs;
	size_t bytes;			/* its scatterlists and itself */
	struct kvod_rdma_mseg segs[] __counted_by(nr_segs);
};

/*
 * The local ACK timeout of every connection's QP: 4.096 us << 19, about
 * 2.1 s, against rdma_cm's 0.5 s for RoCE, so that an emulated or busy
 * host that stalls a second is not taken for a dead one. The retries are
 * the client's (DOC: RDMA keep-alive).
 */
#define KVOD_RDMA_ACK_TIMEOUT	19

/* Every this-many-th note is signaled; its completion frees them all. */
#define KVOD_RDMA_NOTE_SIGNAL	(KVOD_RDMA_NOTES / 4)

/* The completion of a group of KVOD_RDMA_NOTE_SIGNAL notes (rdma_note.c). */
struct kvod_rdma_note_cqe {
	struct ib_cqe cqe;
	u32 sent_to;			/* notes posted up to its last one */
};

struct kvod_rdma_conn {
	struct kvod_rdma_ctx ctx;	/* the id's context from admission */
	struct list_head node;		/* on rl->conns, under rl->lock */
	struct kvod_peer peer;		/* in rl->peers, under rl->lock */
	struct kvod_rdma_listener *rl;
	struct rdma_cm_id *id;
	struct ib_device *dev;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_qp *qp;
	struct kvod_movie *movie;
	u8 initiator_depth;		/* the client's READs in flight */
	bool iwarp;			/* READY waits for the client's START */

	struct kvod_rdma_map *map;	/* the movie, mapped on @dev */
	struct ib_mr **mrs;		/* one per segment of @map */
	u32 nr_segs;			/* @map's */
	u64 mr_pages;			/* in the MRs allocated, table's too */
	struct kvod_rdma_segment *table;	/* what the client READs */
	size_t table_len;
	struct kvod_rdma_seg table_seg;
	struct kvod_rdma_ready *ready;
	u64 ready_dma;
	struct ib_cqe reg_cqe;
	struct ib_cqe ready_cqe;
	/* iWARP only: where the client's STARTs land, one RECV each */
	struct kvod_rdma_start *start;
	u64 start_dma;
	struct ib_cqe start_cqe[KVOD_RDMA_STARTS];
	/* READY's conditions left (DOC: RDMA START over iWARP) */
	atomic_t ready_gate;

	/* a live channel's notes, if the client asked (rdma_note.c) */
	bool notify;			/* immutable */
	bool note_watching;		/* @note_watch is on the channel */
	bool notes_on;			/* READY is posted: notes may follow */
	struct kvod_live_watcher note_watch;
	struct kvod_rdma_live_note *notes;	/* KVOD_RDMA_NOTES buffers */
	u64 notes_dma;
	u32 note_posted;		/* under the channel's watch lock */
	u32 note_done;			/* notes out of their buffers */
	struct kvod_rdma_note_cqe note_cqes[KVOD_RDMA_NOTES /
					    KVOD_RDMA_NOTE_SIGNAL];

	/* a zero-length WRITE every rdma_keepalive s (rdma_keepalive.c) */
	struct delayed_work ka_work;
	struct ib_cqe ka_cqe;
	u64 ka_behind;			/* jiffies64 stuck behind notes, or 0 */

	unsigned long flags;
	struct work_struct setup_work;
	struct work_struct release_work;
};

#define KVOD_RDMA_CONN_CLOSING	0	/* release_work queued */
#define KVOD_RDMA_CONN_ANSWERED	1	/* accepted or rejected */
#define KVOD_RDMA_CONN_ACCEPTED	2	/* rdma_accept() succeeded */
#define KVOD_RDMA_CONN_STARTED	3	/* iWARP: a START arrived */
#define KVOD_RDMA_CONN_KA_OUT	4	/* a keep-alive is outstanding */

/* rdma.c */
extern struct workqueue_struct *kvod_rdma_wq;
u8 kvod_rdma_status(int err);
void kvod_rdma_reject(struct kvod_rdma_listener *rl, struct rdma_cm_id *id,
		      u8 status);
void kvod_rdma_conn_unlink(struct kvod_rdma_conn *conn);

/* rdma_conn.c */
struct kvod_rdma_conn *kvod_rdma_conn_create(struct kvod_rdma_listener *rl,
					     struct rdma_cm_id *id,
					     const struct rdma_conn_param *req,
					     struct kvod_movie *movie,
					     bool notify);
void kvod_rdma_conn_free(struct kvod_rdma_conn *conn);
int kvod_rdma_conn_established(struct kvod_rdma_conn *conn);
bool kvod_rdma_conn_close(struct kvod_rdma_conn *conn);
void kvod_rdma_conns_exit(void);

/* rdma_map.c */
struct kvod_rdma_map *kvod_rdma_map_get(struct kvod_movie *movie,
					struct ib_device *dev);
void kvod_rdma_map_put(struct kvod_rdma_map *map);
void kvod_rdma_map_stats(struct kvod_stats *st);

/* rdma_note.c */
int kvod_rdma_note_setup(struct kvod_rdma_conn *conn);
void kvod_rdma_note_start(struct kvod_rdma_conn *conn);
void kvod_rdma_note_stop(struct kvod_rdma_conn *conn);
void kvod_rdma_note_free(struct kvod_rdma_conn *conn);

/* rdma_keepalive.c */
void kvod_rdma_keepalive_init(struct kvod_rdma_conn *conn);
void kvod_rdma_keepalive_start(struct kvod_rdma_conn *conn);
void kvod_rdma_keepalive_await_start(struct kvod_rdma_conn *conn);
void kvod_rdma_keepalive_stop(struct kvod_rdma_conn *conn);

#endif /* _KVOD_RDMA_H */
