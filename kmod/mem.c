// SPDX-License-Identifier: GPL-2.0
/* Memory accounting: what kvod keeps alive, by kind, and the cap. */

/**
 * DOC: Memory accounting
 *
 * The memory that holds titles, their mappings and the connections'
 * registrations is counted here, by kind, and ``kvodctl stats`` shows
 * each kind and their sum, ``mem``:
 *
 * - ``resident``: the chunks of movies and the rings of live channels.
 *   They are reserved against the cap, ``max_resident_mb``, before they
 *   are allocated (kvod_mem_reserve()); going over is ``ENOSPC``. The
 *   reservation is returned when the memory is freed: a movie's at the
 *   last reference to its image (DOC: Image lifetimes), a live channel's
 *   (ring and mirror) at the last reference to the channel.
 * - ``rdma_map_bytes``: the scatterlists and bookkeeping of the shared DMA
 *   mappings of movies (``rdma.rst``, "RDMA shared maps").
 * - ``rdma_conn_bytes``: what each RDMA connection keeps of its own for
 *   its registrations: a pointer per MR and the segment table.
 * - ``graveyard``: pages of movies and rings that kvod let go of while
 *   TCP or a queued packet still referenced them, until they are freed
 *   (DOC: The graveyard).
 *
 * The last three are charged without a look at the cap: the first two are
 * bookkeeping of mappings and connections, bounded by the connection
 * limits (``rdma_max_conns``), and the graveyard holds what readers still
 * send, bounded by what their sockets may queue (for live HTTP, DOC: HTTP
 * live queue bound). So the cap bounds ``resident``; ``mem`` is at most
 * the cap plus the other three.
 *
 * Not counted: structures of a fixed size per movie, listener, push,
 * connection or HTTP response; the arrays that describe the memory, 24
 * bytes per chunk of a movie or slot of a ring, and 32 per buried page;
 * the socket buffers, which the network stack charges to the sockets;
 * and what an RDMA device keeps per MR page, of which ``rdma_mr_pages``
 * counts the pages.
 *
 * Each kind is an atomic counter, changed where the memory is allocated
 * and freed; no lock is taken. At module exit every kind is zero, or a
 * ``WARN`` names the kind that leaked.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/mm.h>
#include <linux/module.h>

#include "kvod.h"

static unsigned int max_resident_mb;
module_param(max_resident_mb, uint, 0644);
MODULE_PARM_DESC(max_resident_mb,
		 "Cap on movie memory in MiB (0: half of RAM); lowering it evicts nothing");

static atomic64_t kvod_mem[KVOD_MEM_NR_KINDS];

static const char *const kvod_mem_names[KVOD_MEM_NR_KINDS] = {
	[KVOD_MEM_RESIDENT]	= "resident",
	[KVOD_MEM_RDMA_MAPS]	= "rdma_map_bytes",
	[KVOD_MEM_RDMA_CONNS]	= "rdma_conn_bytes",
	[KVOD_MEM_GRAVEYARD]	= "graveyard",
};

/* The cap on KVOD_MEM_RESIDENT, in bytes. */
static u64 kvod_mem_cap(void)
{
	unsigned int mb = READ_ONCE(max_resident_mb);

	if (!mb)
		return ((u64)totalram_pages() << PAGE_SHIFT) / 2;
	return (u64)mb << 20;
}

/**
 * kvod_mem_reserve() - reserve resident bytes against the cap
 * @bytes: what the caller is about to allocate
 *
 * Return: 0, or -ENOSPC if the reservation would go over the cap.
 */
int kvod_mem_reserve(u64 bytes)
{
	atomic64_t *v = &kvod_mem[KVOD_MEM_RESIDENT];
	u64 cap = kvod_mem_cap();
	s64 old = atomic64_read(v);

	do {
		if (bytes > cap || (u64)old > cap - bytes)
			return -ENOSPC;
	} while (!atomic64_try_cmpxchg(v, &old, old + bytes));
	return 0;
}

/**
 * kvod_mem_charge() - count bytes allocated, without a look at the cap
 * @kind: what they are
 * @bytes: how many
 */
void kvod_mem_charge(enum kvod_mem_kind kind, u64 bytes)
{
	atomic64_add(bytes, &kvod_mem[kind]);
}

/**
 * kvod_mem_release() - count bytes freed, or a reservation returned
 * @kind: what they were
 * @bytes: as charged or reserved
 */
void kvod_mem_release(enum kvod_mem_kind kind, u64 bytes)
{
	atomic64_sub(bytes, &kvod_mem[kind]);
}

/**
 * kvod_mem_stats() - the memory part of STATS
 * @st: its resident, resident_max, rdma_map_bytes, rdma_conn_bytes,
 *	graveyard and mem are filled; mem is the sum of the kinds as read here
 */
void kvod_mem_stats(struct kvod_stats *st)
{
	st->resident = atomic64_read(&kvod_mem[KVOD_MEM_RESIDENT]);
	st->resident_max = kvod_mem_cap();
	st->rdma_map_bytes = atomic64_read(&kvod_mem[KVOD_MEM_RDMA_MAPS]);
	st->rdma_conn_bytes = atomic64_read(&kvod_mem[KVOD_MEM_RDMA_CONNS]);
	st->graveyard = atomic64_read(&kvod_mem[KVOD_MEM_GRAVEYARD]);
	st->mem = st->resident + st->rdma_map_bytes + st->rdma_conn_bytes +
		  st->graveyard;
}

/*
 * Module exit, once nothing is left that holds memory: the graveyard lets
 * go of its pages, and a WARN is a leak.
 */
void kvod_mem_exit(void)
{
	int i;

	kvod_graveyard_exit();
	for (i = 0; i < KVOD_MEM_NR_KINDS; i++) {
		s64 v = atomic64_read(&kvod_mem[i]);

		WARN(v, "kvod: leaked %lld bytes of %s\n", v,
		     kvod_mem_names[i]);
	}
}
