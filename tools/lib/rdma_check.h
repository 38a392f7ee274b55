/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tools/lib: checks of what a kvod RDMA server tells its clients, made
 * before a client sizes an allocation, a registration or an index by it.
 * Plain C, no verbs: lib/rdma.c and tools/fetch-live.c call them,
 * selftests/host/rdma_check_test.c feeds them what the kernel builds and
 * what a hostile server might send, and selftests/fuzz/rdma_reply_fuzz.c
 * feeds them anything. No output: a check that fails writes
 * its reason into the caller's buffer.
 */
#ifndef KVOD_LIB_RDMA_CHECK_H
#define KVOD_LIB_RDMA_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include <linux/kvod.h>
#include <linux/kvod_rdma.h>

/* The accept's private data, host byte order (kvod_accept_check()). */
struct kvod_accept {
	uint16_t flags;		/* KVOD_RDMA_LIVE, KVOD_RDMA_NOTIFY */
	uint64_t movie_size;
	uint64_t table_addr;
	uint32_t table_rkey;
	uint32_t table_len;
	uint32_t nr_segments;
};

int kvod_accept_check(const void *data, size_t bytes, struct kvod_accept *a,
		      char *why, size_t len);

/*
 * The segment table. kmod/rdma_conn.c cuts the movie into whole pages of
 * the server, so every segment but the last is at least 4 KiB, and it
 * builds the table in one alloc_pages() block (4 MiB on 4 KiB pages).
 * A client takes at most 64 MiB of table: 2M segments, 2 TiB of movie
 * in siw's 1 MiB segments.
 */
#define KVOD_SEG_MIN		4096
#define KVOD_TABLE_MAX		(64U << 20)

int kvod_table_check(uint64_t movie_size, uint32_t nr_segments,
		     uint32_t table_len, char *why, size_t len);

/* One entry of the segment table, host byte order. */
struct kvod_seg {
	uint64_t offset;
	uint64_t addr;
	uint64_t length;
	uint32_t rkey;
};

int kvod_table_parse(const struct kvod_rdma_segment *t, uint32_t nr_segments,
		     uint64_t movie_size, struct kvod_seg *segs, char *why,
		     size_t len);

/*
 * A live channel's mirror (<linux/kvod_rdma.h>): the head, its nr_chunks
 * slot entries, then at data_offset the slots, slot_bytes apart.
 * kmod/live.c makes a slot PAGE_SIZE << get_order(chunk_size) bytes and
 * puts slot 0 at PAGE_SIZE << get_order(head and entries): on any page
 * size up to 2 MiB, neither is over 2 MiB (chunks are at most
 * KVOD_LIVE_CHUNK_MAX, the entries at most 1 MiB).
 */
#define KVOD_LIVE_HEAD_BYTES	sizeof(struct kvod_rdma_live_head)
#define KVOD_LIVE_CHUNK_MIN	188	/* the uapi's least chunk_size */
#define KVOD_LIVE_SLOT_MAX	(2ULL << 20)
#define KVOD_LIVE_DATA_OFF_MAX	(2ULL << 20)

/* A mirror's layout, host byte order, once kvod_live_head_check() passed. */
struct kvod_live_layout {
	uint32_t nr;		/* slots */
	uint32_t chunk_size;
	uint64_t slot_bytes;	/* a multiple of 8, >= chunk_size */
	uint64_t data_off;	/* a multiple of 8, >= hdr_len */
	uint32_t hdr_len;	/* the head and its entries */
};

int kvod_live_head_check(const struct kvod_rdma_live_head *h,
			 uint64_t mirror_size, struct kvod_live_layout *lay,
			 char *why, size_t len);

/* What a live channel's note says (kvod_live_note_check()). */
enum kvod_note_kind {
	KVOD_NOTE_IGNORED,	/* names no slot of this ring: nothing learnt */
	KVOD_NOTE_CHUNK,	/* the chunk it names is in its slot */
	KVOD_NOTE_ENDED,	/* the channel was deleted */
};

int kvod_live_note_check(const struct kvod_rdma_live_note *n, uint32_t bytes,
			 uint32_t nr, uint64_t *seq, uint32_t *chunk_len,
			 char *why, size_t len);

#endif /* KVOD_LIB_RDMA_CHECK_H */
