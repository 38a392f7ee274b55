// SPDX-License-Identifier: GPL-2.0
/*
 * Checks of what a kvod RDMA server sends, before a client trusts it: the
 * accept, the segment table's size in it and the table itself, a live
 * channel's head, and its notes. A server
 * that is hostile or broken must get an error out of a client, never an
 * allocation or a registration of its choosing, nor an index past a
 * buffer. So every field is checked against the limits of the ABI and of
 * what kmod/ builds (rdma_check.h), in 64-bit arithmetic that is checked
 * for overflow, before any of them is used.
 *
 * selftests/host/rdma_check_test.c holds the cases;
 * selftests/fuzz/rdma_reply_fuzz.c feeds the checks arbitrary bytes.
 */
#include "rdma_check.h"

#include <endian.h>
#include <stdarg.h>
#include <stdio.h>

static int bad(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
	return -1;
}

/**
 * kvod_accept_check() - is this private data a kvod server's accept?
 * @data: the accept's private data, NULL if it carried none
 * @bytes: its length
 * @a: its fields in host byte order, filled in only if it passes
 * @why: where to say what is wrong
 * @len: room at @why
 *
 * A struct kvod_rdma_reply of KVOD_RDMA_MAGIC and KVOD_RDMA_VERSION with
 * status KVOD_RDMA_OK. Its sizes are checked later: kvod_table_check().
 *
 * Return: 0, or -1 with the reason at @why.
 */
int kvod_accept_check(const void *data, size_t bytes, struct kvod_accept *a,
		      char *why, size_t len)
{
	const struct kvod_rdma_reply *r = data;

	if (!r || bytes < sizeof(*r))
		return bad(why, len,
			   "accept carries %zu bytes of private data, need %zu",
			   bytes, sizeof(*r));
	if (be32toh(r->magic) != KVOD_RDMA_MAGIC)
		return bad(why, len, "accept: bad magic 0x%08x",
			   be32toh(r->magic));
	if (r->version != KVOD_RDMA_VERSION || r->status != KVOD_RDMA_OK)
		return bad(why, len, "accept: version %u status %u",
			   r->version, r->status);
	a->flags = be16toh(r->flags);
	a->movie_size = be64toh(r->movie_size);
	a->table_addr = be64toh(r->table_addr);
	a->table_rkey = be32toh(r->table_rkey);
	a->table_len = be32toh(r->table_len);
	a->nr_segments = be32toh(r->nr_segments);
	return 0;
}

/**
 * kvod_table_check() - is the accept's segment table one to READ?
 * @movie_size: the accept's movie_size
 * @nr_segments: its nr_segments
 * @table_len: its table_len
 * @why: where to say what is wrong
 * @len: room at @why
 *
 * Return: 0, or -1 with the reason at @why.
 */
int kvod_table_check(uint64_t movie_size, uint32_t nr_segments,
		     uint32_t table_len, char *why, size_t len)
{
	uint64_t bytes = (uint64_t)nr_segments *
			 sizeof(struct kvod_rdma_segment);
	uint64_t most = movie_size / KVOD_SEG_MIN +
			!!(movie_size % KVOD_SEG_MIN);

	if (!nr_segments || table_len != bytes)
		return bad(why, len, "table of %u bytes for %u segments",
			   table_len, nr_segments);
	if (bytes > KVOD_TABLE_MAX)
		return bad(why, len, "table of %u segments, over the %u taken",
			   nr_segments,
			   KVOD_TABLE_MAX / (uint32_t)sizeof(struct kvod_rdma_segment));
	if (nr_segments > most)
		return bad(why, len, "%u segments for %llu bytes, over one per %u",
			   nr_segments, (unsigned long long)movie_size,
			   KVOD_SEG_MIN);
	return 0;
}

/**
 * kvod_table_parse() - the segment table as READ, checked
 * @t: the table, big-endian, of @nr_segments entries
 * @nr_segments: as kvod_table_check() passed it
 * @movie_size: the accept's movie_size
 * @segs: @nr_segments entries, filled in host byte order
 * @why: where to say what is wrong
 * @len: room at @why
 *
 * The segments must describe the movie contiguously from offset 0 to
 * @movie_size, none of them empty, so that a binary search by offset
 * (kvod_seg_find()) finds every byte of the movie in exactly one.
 *
 * Return: 0, or -1 with the reason at @why (@segs is then partly filled).
 */
int kvod_table_parse(const struct kvod_rdma_segment *t, uint32_t nr_segments,
		     uint64_t movie_size, struct kvod_seg *segs, char *why,
		     size_t len)
{
	uint64_t off = 0;
	uint32_t i;

	for (i = 0; i < nr_segments; i++) {
		struct kvod_seg *s = &segs[i];

		s->offset = be64toh(t[i].offset);
		s->addr = be64toh(t[i].addr);
		s->length = be64toh(t[i].length);
		s->rkey = be32toh(t[i].rkey);
		if (s->offset != off || !s->length ||
		    s->length > movie_size - off)
			return bad(why, len,
				   "segment %u: offset %llu length %llu, expected offset %llu",
				   i, (unsigned long long)s->offset,
				   (unsigned long long)s->length,
				   (unsigned long long)off);
		off += s->length;
	}
	if (off != movie_size)
		return bad(why, len, "segments cover %llu of %llu bytes",
			   (unsigned long long)off,
			   (unsigned long long)movie_size);
	return 0;
}

/* The head's sizes, before the layout they give is checked. */
static int head_sizes(uint32_t nr, uint32_t chunk, uint64_t slot, char *why,
		      size_t len)
{
	if (nr < KVOD_LIVE_CHUNKS_MIN || nr > KVOD_LIVE_CHUNKS_MAX)
		return bad(why, len, "nr_chunks %u, not %u..%u", nr,
			   KVOD_LIVE_CHUNKS_MIN, KVOD_LIVE_CHUNKS_MAX);
	if (chunk < KVOD_LIVE_CHUNK_MIN || chunk > KVOD_LIVE_CHUNK_MAX)
		return bad(why, len, "chunk_size %u, not %u..%u", chunk,
			   KVOD_LIVE_CHUNK_MIN, KVOD_LIVE_CHUNK_MAX);
	/* Multiples of 8: an entry READ again lands after a slot. */
	if (slot < chunk || slot > KVOD_LIVE_SLOT_MAX || slot % 8)
		return bad(why, len, "slot_bytes %llu, not a multiple of 8 in %u..%llu",
			   (unsigned long long)slot, chunk, KVOD_LIVE_SLOT_MAX);
	return 0;
}

/**
 * kvod_live_head_check() - is this a live channel's head to play by?
 * @h: the head as READ, big-endian
 * @mirror_size: the accept's movie_size: the mirror's bytes
 * @lay: the layout, filled in only if the head passes
 * @why: where to say what is wrong
 * @len: room at @why
 *
 * The head, its entries and every slot must lie inside the mirror, with
 * the ABI's counts and sizes, and slot 0 after the entries.
 *
 * Return: 0, or -1 with the reason at @why.
 */
int kvod_live_head_check(const struct kvod_rdma_live_head *h,
			 uint64_t mirror_size, struct kvod_live_layout *lay,
			 char *why, size_t len)
{
	uint32_t nr = be32toh(h->nr_chunks), chunk = be32toh(h->chunk_size);
	uint64_t slot = be64toh(h->slot_bytes), data = be64toh(h->data_offset);
	uint64_t hdr, end;

	if (be32toh(h->magic) != KVOD_RDMA_MAGIC)
		return bad(why, len, "magic 0x%08x", be32toh(h->magic));
	if (head_sizes(nr, chunk, slot, why, len))
		return -1;
	hdr = KVOD_LIVE_HEAD_BYTES +
	      (uint64_t)nr * sizeof(struct kvod_rdma_live_slot);
	if (data < hdr || data > KVOD_LIVE_DATA_OFF_MAX || data % 8)
		return bad(why, len, "data_offset %llu, not a multiple of 8 in %llu..%llu",
			   (unsigned long long)data, (unsigned long long)hdr,
			   KVOD_LIVE_DATA_OFF_MAX);
	if (__builtin_mul_overflow((uint64_t)nr, slot, &end) ||
	    __builtin_add_overflow(end, data, &end) || end > mirror_size)
		return bad(why, len, "%u slots of %llu bytes at %llu overrun a %llu-byte mirror",
			   nr, (unsigned long long)slot,
			   (unsigned long long)data,
			   (unsigned long long)mirror_size);
	lay->nr = nr;
	lay->chunk_size = chunk;
	lay->slot_bytes = slot;
	lay->data_off = data;
	lay->hdr_len = hdr;
	return 0;
}

/**
 * kvod_live_note_check() - what a live channel's note says
 * @n: the note as received, big-endian
 * @bytes: the bytes the receive completed with
 * @nr: the ring's slots, from the checked head (kvod_live_head_check())
 * @seq: the chunk, for KVOD_NOTE_CHUNK
 * @chunk_len: its length, for KVOD_NOTE_CHUNK: the server's word, which
 *	the caller checks against the slot before it READs that much
 * @why: where to say what is wrong
 * @len: room at @why
 *
 * A note whose slot is not its chunk's (@seq % @nr) names no chunk of
 * this ring and is ignored, as is any note before the ring is known
 * (@nr 0).
 *
 * Return: enum kvod_note_kind, or -1 with the reason at @why for a note
 * of the wrong size.
 */
int kvod_live_note_check(const struct kvod_rdma_live_note *n, uint32_t bytes,
			 uint32_t nr, uint64_t *seq, uint32_t *chunk_len,
			 char *why, size_t len)
{
	uint64_t s = be64toh(n->seq);

	if (bytes != sizeof(*n))
		return bad(why, len, "a note of %u bytes", bytes);
	if (be32toh(n->flags) & KVOD_RDMA_LIVE_ENDED)
		return KVOD_NOTE_ENDED;
	if (!nr || be32toh(n->index) != s % nr)
		return KVOD_NOTE_IGNORED;
	*seq = s;
	*chunk_len = be32toh(n->len);
	return KVOD_NOTE_CHUNK;
}
