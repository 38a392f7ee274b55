// SPDX-License-Identifier: GPL-2.0
/*
 * The RDMA clients' checks of what a server sends (tools/lib/rdma_check.c):
 * the accept's private data, the segment table's size and the table as
 * READ, a live channel's head and its notes. The first byte of the input
 * picks what the rest is:
 *
 *	0  the accept: a length byte (rdma_cm's u8), the private data, then
 *	   the segment table if the accept passed and the table is there
 *	1  a segment table: the movie's size (8 bytes), then the entries
 *	2  a live head: the mirror's size (8 bytes), the head, then notes,
 *	   each a byte that shortens it (0: a whole note) and the note
 *
 * Besides memory safety: what passes is what the clients then size
 * allocations, registrations and indices by, so it must keep to the
 * bounds they rely on: a table of at most KVOD_TABLE_MAX bytes whose
 * segments cover the movie in order, a head whose entries, slots and
 * the client's buffer (tools/fetch-live.c, live_setup()) fit where the
 * client puts them, a note's chunk in the slot it names.
 */
#include "fuzz.h"

#include <endian.h>

#include "lib/rdma_check.h"

struct input {
	const uint8_t *p;
	size_t left;
};

static const uint8_t *take(struct input *in, size_t n)
{
	const uint8_t *p = in->p;

	if (in->left < n)
		return NULL;
	in->p += n;
	in->left -= n;
	return p;
}

static int take_u64(struct input *in, uint64_t *v)
{
	const uint8_t *p = take(in, sizeof(*v));

	if (!p)
		return -1;
	memcpy(v, p, sizeof(*v));
	*v = be64toh(*v);
	return 0;
}

static void table(const uint8_t *p, uint32_t nr, uint64_t movie_size)
{
	struct kvod_rdma_segment *t = fuzz_dup(p, (size_t)nr * sizeof(*t));
	struct kvod_seg *segs = calloc(nr ? nr : 1, sizeof(*segs));
	uint64_t off = 0;
	char why[160];
	uint32_t i;

	FUZZ_CHECK(segs);
	if (!kvod_table_parse(t, nr, movie_size, segs, why, sizeof(why))) {
		for (i = 0; i < nr; i++) {
			FUZZ_CHECK(segs[i].offset == off && segs[i].length);
			off += segs[i].length;
			FUZZ_CHECK(off <= movie_size && off > segs[i].offset);
		}
		FUZZ_CHECK(off == movie_size);
	} else {
		FUZZ_CHECK(why[0]);
	}
	free(segs);
	free(t);
}

static void accept_reply(struct input *in)
{
	const uint8_t *len = take(in, 1), *p;
	struct kvod_accept a;
	void *pdata;
	char why[160];

	if (!len || !(p = take(in, *len)))
		return;
	pdata = fuzz_dup(p, *len);
	if (kvod_accept_check(pdata, *len, &a, why, sizeof(why))) {
		FUZZ_CHECK(why[0]);
		goto out;
	}
	if (kvod_table_check(a.movie_size, a.nr_segments, a.table_len, why,
			     sizeof(why))) {
		FUZZ_CHECK(why[0]);
		goto out;
	}
	FUZZ_CHECK(a.nr_segments && a.table_len <= KVOD_TABLE_MAX);
	FUZZ_CHECK(a.table_len ==
		   a.nr_segments * sizeof(struct kvod_rdma_segment));
	FUZZ_CHECK(a.nr_segments <= a.movie_size / KVOD_SEG_MIN + 1);
	p = take(in, a.table_len);
	if (p)
		table(p, a.nr_segments, a.movie_size);
out:
	free(pdata);
}

static void segment_table(struct input *in)
{
	uint64_t movie_size;
	uint32_t nr;

	if (take_u64(in, &movie_size))
		return;
	nr = in->left / sizeof(struct kvod_rdma_segment);
	table(take(in, nr * sizeof(struct kvod_rdma_segment)), nr, movie_size);
}

static void notes(struct input *in, const struct kvod_live_layout *lay)
{
	struct kvod_rdma_live_note *n;
	const uint8_t *cut, *p;
	uint32_t bytes, len;
	uint64_t seq;
	char why[64];
	int kind;

	while ((cut = take(in, 1)) && (p = take(in, sizeof(*n)))) {
		n = fuzz_dup(p, sizeof(*n));
		bytes = sizeof(*n) - *cut % (sizeof(*n) + 1);
		kind = kvod_live_note_check(n, bytes, lay->nr, &seq, &len, why,
					    sizeof(why));
		FUZZ_CHECK(kind == -1 || kind == KVOD_NOTE_IGNORED ||
			   kind == KVOD_NOTE_CHUNK || kind == KVOD_NOTE_ENDED);
		FUZZ_CHECK((kind == -1) == (bytes != sizeof(*n)));
		if (kind == KVOD_NOTE_CHUNK) {
			/* fetch-live.c indexes its copy of the entries so. */
			FUZZ_CHECK(be32toh(n->index) == seq % lay->nr);
			FUZZ_CHECK(KVOD_LIVE_HEAD_BYTES + (seq % lay->nr + 1) *
				   sizeof(struct kvod_rdma_live_slot) <=
				   lay->hdr_len);
		}
		free(n);
	}
}

static void live_head(struct input *in)
{
	struct kvod_live_layout lay;
	struct kvod_rdma_live_head *h;
	uint64_t mirror_size;
	const uint8_t *p;
	char why[160];

	if (take_u64(in, &mirror_size) || !(p = take(in, sizeof(*h))))
		return;
	h = fuzz_dup(p, sizeof(*h));
	memset(&lay, 0, sizeof(lay));
	if (kvod_live_head_check(h, mirror_size, &lay, why, sizeof(why))) {
		FUZZ_CHECK(why[0] && !lay.nr);
		goto out;
	}
	FUZZ_CHECK(lay.nr >= KVOD_LIVE_CHUNKS_MIN &&
		   lay.nr <= KVOD_LIVE_CHUNKS_MAX);
	FUZZ_CHECK(lay.chunk_size >= KVOD_LIVE_CHUNK_MIN &&
		   lay.chunk_size <= KVOD_LIVE_CHUNK_MAX);
	FUZZ_CHECK(lay.slot_bytes >= lay.chunk_size && !(lay.slot_bytes % 8));
	FUZZ_CHECK(lay.hdr_len == KVOD_LIVE_HEAD_BYTES + (uint64_t)lay.nr *
		   sizeof(struct kvod_rdma_live_slot));
	FUZZ_CHECK(lay.data_off >= lay.hdr_len && !(lay.data_off % 8));
	FUZZ_CHECK(lay.data_off + (uint64_t)lay.nr * lay.slot_bytes <=
		   mirror_size);
	/* live_setup(): "at most 4 MiB and a page". */
	FUZZ_CHECK(lay.data_off + lay.slot_bytes <= (4ULL << 20));
	notes(in, &lay);
out:
	free(h);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct input in = { data + !!size, size - !!size };

	if (!size)
		return 0;
	switch (data[0] % 3) {
	case 0:
		accept_reply(&in);
		break;
	case 1:
		segment_table(&in);
		break;
	default:
		live_head(&in);
		break;
	}
	return 0;
}
