// SPDX-License-Identifier: GPL-2.0
/*
 * kvod_live_head_check(), kvod_table_check(), kvod_accept_check(),
 * kvod_table_parse() and kvod_live_note_check() (tools/lib/rdma_check.c),
 * the RDMA clients' checks of what a server sends, on the host: no
 * module, no device. One KTAP result per case.
 *
 * Legitimate heads are built here the way kmod/live.c builds them
 * (mirror_alloc(): slot_bytes PAGE_SIZE << get_order(chunk_size),
 * data_offset PAGE_SIZE << get_order(head and entries), the mirror ending
 * after the last slot), for several chunk sizes, counts and page sizes:
 * each must pass with its layout, and fail in a mirror one byte short.
 * Hostile heads are the audit's triggers (tools/fetch-live.c used to
 * read 4 GiB past an 8 KiB buffer, or allocate and pin 2 GiB, for them),
 * wraps, misalignment, zeroes and each limit + 1: each must fail, with a
 * reason, and leave the layout untouched. Segment tables likewise: what
 * kmod/rdma_conn.c builds (siw's 1 MiB segments, rxe's 2 MiB pages, 4 KiB
 * pages at worst) passes; a table sized to make a client allocate and
 * pin 4 GiB fails.
 */
#include <endian.h>
#include <stdint.h>
#include <string.h>

#include "lib/rdma_check.h"
#include "kselftest_harness.h"

#define MiB		(1ULL << 20)
#define GiB		(1ULL << 30)
#define TS		188
#define UNTOUCHED	0x5a

/* The kernel's get_order() for pages of 1 << @shift bytes. */
static unsigned int get_order(uint64_t size, unsigned int shift)
{
	unsigned int order = 0;

	while ((1ULL << (shift + order)) < size)
		order++;
	return order;
}

static void set_head(struct kvod_rdma_live_head *h, uint32_t magic,
		     uint32_t chunk, uint32_t nr, uint64_t slot, uint64_t data)
{
	memset(h, 0, sizeof(*h));
	h->magic = htobe32(magic);
	h->chunk_size = htobe32(chunk);
	h->nr_chunks = htobe32(nr);
	h->slot_bytes = htobe64(slot);
	h->data_offset = htobe64(data);
}

/* --- Heads kmod/live.c builds ------------------------------------------ */

FIXTURE(kernel_head) {};
FIXTURE_SETUP(kernel_head) {}
FIXTURE_TEARDOWN(kernel_head) {}

FIXTURE_VARIANT(kernel_head) {
	unsigned int page_shift;
	uint32_t chunk;
	uint32_t nr;
};

#define KERNEL_HEAD(name, shift, chunk_size, chunks) \
	FIXTURE_VARIANT_ADD(kernel_head, name) { \
		.page_shift = shift, .chunk = chunk_size, .nr = chunks }

KERNEL_HEAD(least, 12, TS, 2);
KERNEL_HEAD(kvodctl_default, 12, 348 * TS, 64);
KERNEL_HEAD(selftest_ring, 12, 16 * TS, 512);
KERNEL_HEAD(one_page, 12, 4096, 2);
KERNEL_HEAD(page_plus_one, 12, 4097, 3);
KERNEL_HEAD(raw_1M, 12, 1 << 20, 16);
KERNEL_HEAD(ts_under_2M, 12, 11155 * TS, 4);
KERNEL_HEAD(entries_fill_a_page, 12, 3760, 252);
KERNEL_HEAD(entries_past_a_page, 12, 3760, 253);
KERNEL_HEAD(most_chunks, 12, TS, KVOD_LIVE_CHUNKS_MAX);
KERNEL_HEAD(largest, 12, KVOD_LIVE_CHUNK_MAX, KVOD_LIVE_CHUNKS_MAX);
KERNEL_HEAD(pages_64k_least, 16, TS, 2);
KERNEL_HEAD(pages_64k_largest, 16, KVOD_LIVE_CHUNK_MAX, KVOD_LIVE_CHUNKS_MAX);
KERNEL_HEAD(pages_256k, 18, 16 * TS, 1000);

TEST_F(kernel_head, accepted)
{
	uint64_t page = 1ULL << variant->page_shift;
	uint64_t slot = page << get_order(variant->chunk, variant->page_shift);
	uint64_t hdr = 64 + 16ULL * variant->nr;
	uint64_t data = page << get_order(hdr, variant->page_shift);
	uint64_t size = data + variant->nr * slot;
	struct kvod_rdma_live_head h;
	struct kvod_live_layout lay;
	char why[160] = "";

	set_head(&h, KVOD_RDMA_MAGIC, variant->chunk, variant->nr, slot, data);
	h.next_seq = htobe64(12345);
	ASSERT_EQ(0, kvod_live_head_check(&h, size, &lay, why, sizeof(why)))
		TH_LOG("rejected: %s", why);
	EXPECT_EQ(variant->nr, lay.nr);
	EXPECT_EQ(variant->chunk, lay.chunk_size);
	EXPECT_EQ(slot, lay.slot_bytes);
	EXPECT_EQ(data, lay.data_off);
	EXPECT_EQ(hdr, lay.hdr_len);
	/* The kernel's mirror ends after the last slot, to the byte. */
	EXPECT_EQ(-1, kvod_live_head_check(&h, size - 1, &lay, why,
					   sizeof(why)));
}

/* --- Heads no kvod server sends ---------------------------------------- */

FIXTURE(hostile_head) {};
FIXTURE_SETUP(hostile_head) {}
FIXTURE_TEARDOWN(hostile_head) {}

FIXTURE_VARIANT(hostile_head) {
	uint32_t magic;
	uint32_t chunk;
	uint32_t nr;
	uint64_t slot;
	uint64_t data;
	uint64_t size;		/* the mirror's, from the accept */
};

#define HOSTILE(name, m, c, n, s, d, sz) \
	FIXTURE_VARIANT_ADD(hostile_head, name) { \
		.magic = m, .chunk = c, .nr = n, .slot = s, .data = d, \
		.size = sz }
#define M		KVOD_RDMA_MAGIC
/* Around a legitimate head: 4 chunks of 4096 bytes after a page of head. */
#define OK_SIZE		(4096 + 4 * 4096)

/* The audit's trigger: hdr_len truncated to 64, entry() 4 GiB out. */
HOSTILE(audit_truncated_hdr, M, 1, 0x10000000, 1, 64, 1ULL << 40);
HOSTILE(audit_truncated_hdr_chunk_ok, M, 4096, 0x10000000, 4096, 64,
	1ULL << 40);
/* ... and its variant: a 2 GiB head to allocate, pin and READ. */
HOSTILE(audit_2g_head, M, 4096, (1U << 27) - 4, 4096, 2 * GiB, 1ULL << 40);
HOSTILE(bad_magic, 0x444f564b, 4096, 4, 4096, 4096, OK_SIZE);
HOSTILE(zero_magic, 0, 4096, 4, 4096, 4096, OK_SIZE);
HOSTILE(all_zero, 0, 0, 0, 0, 0, 0);
HOSTILE(nr_zero, M, 4096, 0, 4096, 4096, OK_SIZE);
HOSTILE(nr_one, M, 4096, 1, 4096, 4096, OK_SIZE);
HOSTILE(nr_max_plus_1, M, TS, KVOD_LIVE_CHUNKS_MAX + 1, 4096, 2 * MiB,
	1ULL << 40);
HOSTILE(nr_u32_max, M, TS, UINT32_MAX, 4096, 2 * MiB, UINT64_MAX);
HOSTILE(chunk_zero, M, 0, 4, 4096, 4096, OK_SIZE);
HOSTILE(chunk_under_ts, M, TS - 1, 4, 4096, 4096, OK_SIZE);
HOSTILE(chunk_max_plus_1, M, KVOD_LIVE_CHUNK_MAX + 1, 4, 4 * MiB, 4096,
	1ULL << 40);
HOSTILE(slot_zero, M, 4096, 4, 0, 4096, OK_SIZE);
HOSTILE(slot_one, M, TS, 4, 1, 4096, OK_SIZE);
HOSTILE(slot_under_chunk, M, 4096, 4, 4088, 4096, OK_SIZE);
HOSTILE(slot_misaligned, M, 4096, 4, 4100, 4096, 4096 + 4 * 4100);
HOSTILE(slot_max_plus_8, M, 4096, 4, 2 * MiB + 8, 4096, 1ULL << 40);
HOSTILE(slot_max_plus_1, M, 4096, 4, 2 * MiB + 1, 4096, 1ULL << 40);
HOSTILE(slot_wraps_product, M, 4096, 2, 1ULL << 63, 4096, UINT64_MAX);
HOSTILE(slot_u64_max, M, 4096, 4, UINT64_MAX, 4096, UINT64_MAX);
HOSTILE(data_zero, M, 4096, 4, 4096, 0, OK_SIZE);
HOSTILE(data_in_entries, M, 4096, 4, 4096, 64 + 4 * 16 - 8, OK_SIZE);
HOSTILE(data_misaligned, M, 4096, 4, 4096, 4100, OK_SIZE + 4);
HOSTILE(data_max_plus_8, M, 4096, 4, 4096, 2 * MiB + 8, 1ULL << 40);
HOSTILE(data_wraps_end, M, 4096, 4, 4096, UINT64_MAX - 7, UINT64_MAX);
HOSTILE(data_u64_max, M, 4096, 4, 4096, UINT64_MAX, UINT64_MAX);
HOSTILE(mirror_one_short, M, 4096, 4, 4096, 4096, OK_SIZE - 1);
HOSTILE(mirror_zero, M, 4096, 4, 4096, 4096, 0);
HOSTILE(mirror_only_head, M, 4096, 4, 4096, 4096, 64);

TEST_F(hostile_head, rejected)
{
	struct kvod_rdma_live_head h;
	struct kvod_live_layout lay, untouched;
	char why[160] = "";

	memset(&lay, UNTOUCHED, sizeof(lay));
	untouched = lay;
	set_head(&h, variant->magic, variant->chunk, variant->nr,
		 variant->slot, variant->data);
	h.next_seq = htobe64(variant->nr);
	EXPECT_EQ(-1, kvod_live_head_check(&h, variant->size, &lay, why,
					   sizeof(why)));
	EXPECT_NE(0, why[0]);
	EXPECT_EQ(0, memcmp(&lay, &untouched, sizeof(lay)));
	TH_LOG("%s", why);
}

/* The legitimate head the hostile ones are mutations of passes. */
TEST(hostile_base_is_legitimate)
{
	struct kvod_rdma_live_head h;
	struct kvod_live_layout lay;
	char why[160] = "";

	set_head(&h, M, 4096, 4, 4096, 4096);
	EXPECT_EQ(0, kvod_live_head_check(&h, OK_SIZE, &lay, why, sizeof(why)))
		TH_LOG("%s", why);
}

/* --- Segment tables ----------------------------------------------------- */

FIXTURE(table) {};
FIXTURE_SETUP(table) {}
FIXTURE_TEARDOWN(table) {}

FIXTURE_VARIANT(table) {
	uint64_t size;
	uint32_t nr;
	uint32_t len;		/* table_len */
	int ok;
};

#define TABLE(name, sz, n, l, good) \
	FIXTURE_VARIANT_ADD(table, name) { \
		.size = sz, .nr = n, .len = l, .ok = good }
#define SEGS(n)		((uint32_t)((n) * 32ULL))

/* What kmod/rdma_conn.c builds. */
TABLE(siw_1g, GiB, 1024, SEGS(1024), 1);
TABLE(siw_1g_and_a_byte, GiB + 1, 1025, SEGS(1025), 1);
TABLE(rxe_huge_1g, GiB, 1, SEGS(1), 1);
TABLE(one_byte, 1, 1, SEGS(1), 1);
TABLE(pages_4k_last_short, 4097, 2, SEGS(2), 1);
TABLE(pages_4k_exact, 40960, 10, SEGS(10), 1);
TABLE(cap_exact, 8 * GiB, 1U << 21, SEGS(1U << 21), 1);
TABLE(live_mirror, 4096 + 4 * 4096, 5, SEGS(5), 1);
/* What no server may send. */
TABLE(no_segments, GiB, 0, 0, 0);
TABLE(len_mismatch, GiB, 1024, SEGS(1024) + 1, 0);
TABLE(len_wraps_32, 1ULL << 40, 1U << 27, 0, 0);
TABLE(audit_4g, 1ULL << 40, (1U << 27) - 1, SEGS((1U << 27) - 1), 0);
TABLE(cap_plus_1, 8 * GiB + 4096, (1U << 21) + 1, SEGS((1U << 21) + 1), 0);
TABLE(more_than_pages, 40960, 11, SEGS(11), 0);
TABLE(sub_page_segments, 4097, 3, SEGS(3), 0);
TABLE(empty_movie, 0, 1, SEGS(1), 0);
TABLE(nr_u32_max, UINT64_MAX, UINT32_MAX, SEGS(UINT32_MAX), 0);

TEST_F(table, check)
{
	char why[160] = "";
	int ret = kvod_table_check(variant->size, variant->nr, variant->len,
				   why, sizeof(why));

	EXPECT_EQ(variant->ok ? 0 : -1, ret)
		TH_LOG("%llu bytes, %u segments, table_len %u: %s",
		       (unsigned long long)variant->size, variant->nr,
		       variant->len, why[0] ? why : "accepted");
	if (!variant->ok)
		EXPECT_NE(0, why[0]);
}

/* --- The accept, the table as READ, notes ------------------------------- */

static void set_reply(struct kvod_rdma_reply *r, uint32_t magic,
		      uint8_t version, uint8_t status)
{
	memset(r, 0, sizeof(*r));
	r->magic = htobe32(magic);
	r->version = version;
	r->status = status;
	r->flags = htobe16(KVOD_RDMA_LIVE);
	r->movie_size = htobe64(GiB);
	r->table_len = htobe32(SEGS(1024));
	r->nr_segments = htobe32(1024);
}

TEST(accept)
{
	struct kvod_rdma_reply r;
	struct kvod_accept a;
	char why[160] = "";

	set_reply(&r, KVOD_RDMA_MAGIC, KVOD_RDMA_VERSION, KVOD_RDMA_OK);
	ASSERT_EQ(0, kvod_accept_check(&r, sizeof(r), &a, why, sizeof(why)))
		TH_LOG("%s", why);
	EXPECT_EQ(KVOD_RDMA_LIVE, a.flags);
	EXPECT_EQ(GiB, a.movie_size);
	EXPECT_EQ(1024U, a.nr_segments);
	EXPECT_EQ(SEGS(1024), a.table_len);
	/* More private data than the reply (IB pads it): fine. */
	EXPECT_EQ(0, kvod_accept_check(&r, 56, &a, why, sizeof(why)));

	EXPECT_EQ(-1, kvod_accept_check(NULL, 0, &a, why, sizeof(why)));
	EXPECT_EQ(-1, kvod_accept_check(&r, sizeof(r) - 1, &a, why,
					sizeof(why)));
	EXPECT_STREQ("accept carries 39 bytes of private data, need 40", why);
	set_reply(&r, KVOD_RDMA_MAGIC + 1, KVOD_RDMA_VERSION, KVOD_RDMA_OK);
	EXPECT_EQ(-1, kvod_accept_check(&r, sizeof(r), &a, why, sizeof(why)));
	set_reply(&r, KVOD_RDMA_MAGIC, KVOD_RDMA_VERSION + 1, KVOD_RDMA_OK);
	EXPECT_EQ(-1, kvod_accept_check(&r, sizeof(r), &a, why, sizeof(why)));
	set_reply(&r, KVOD_RDMA_MAGIC, KVOD_RDMA_VERSION, KVOD_RDMA_BUSY);
	EXPECT_EQ(-1, kvod_accept_check(&r, sizeof(r), &a, why, sizeof(why)));
	EXPECT_STREQ("accept: version 1 status 2", why);
}

static void set_seg(struct kvod_rdma_segment *t, uint64_t off, uint64_t len)
{
	memset(t, 0, sizeof(*t));
	t->offset = htobe64(off);
	t->length = htobe64(len);
	t->addr = htobe64(0x1000 + off);
	t->rkey = htobe32(7);
}

TEST(table_parse)
{
	struct kvod_rdma_segment t[3];
	struct kvod_seg segs[3];
	char why[160] = "";

	set_seg(&t[0], 0, 4096);
	set_seg(&t[1], 4096, 4096);
	set_seg(&t[2], 8192, 1);
	ASSERT_EQ(0, kvod_table_parse(t, 3, 8193, segs, why, sizeof(why)))
		TH_LOG("%s", why);
	EXPECT_EQ(8192ULL, segs[2].offset);
	EXPECT_EQ(0x1000ULL + 8192, segs[2].addr);
	EXPECT_EQ(7U, segs[2].rkey);
	/* Short of the movie, past it, a gap, an empty segment. */
	EXPECT_EQ(-1, kvod_table_parse(t, 3, 8194, segs, why, sizeof(why)));
	EXPECT_STREQ("segments cover 8193 of 8194 bytes", why);
	EXPECT_EQ(-1, kvod_table_parse(t, 3, 8192, segs, why, sizeof(why)));
	set_seg(&t[1], 4097, 4095);
	EXPECT_EQ(-1, kvod_table_parse(t, 3, 8193, segs, why, sizeof(why)));
	set_seg(&t[1], 4096, 0);
	EXPECT_EQ(-1, kvod_table_parse(t, 3, 8193, segs, why, sizeof(why)));
	/* A length that would wrap the offset. */
	set_seg(&t[1], 4096, UINT64_MAX - 4095);
	EXPECT_EQ(-1, kvod_table_parse(t, 3, UINT64_MAX, segs, why,
				       sizeof(why)));
}

static void set_note(struct kvod_rdma_live_note *n, uint64_t seq,
		     uint32_t index, uint32_t len, uint32_t flags)
{
	memset(n, 0, sizeof(*n));
	n->seq = htobe64(seq);
	n->index = htobe32(index);
	n->len = htobe32(len);
	n->flags = htobe32(flags);
}

TEST(note)
{
	struct kvod_rdma_live_note n;
	uint64_t seq = 0;
	uint32_t len = 0;
	char why[64] = "";

	set_note(&n, 13, 5, 1316, 0);
	EXPECT_EQ(KVOD_NOTE_CHUNK, kvod_live_note_check(&n, sizeof(n), 8, &seq,
							&len, why, sizeof(why)));
	EXPECT_EQ(13ULL, seq);
	EXPECT_EQ(1316U, len);
	/* The slot of another ring, or before the ring is known. */
	EXPECT_EQ(KVOD_NOTE_IGNORED, kvod_live_note_check(&n, sizeof(n), 7,
							  &seq, &len, why,
							  sizeof(why)));
	EXPECT_EQ(KVOD_NOTE_IGNORED, kvod_live_note_check(&n, sizeof(n), 0,
							  &seq, &len, why,
							  sizeof(why)));
	set_note(&n, KVOD_RDMA_LIVE_NONE, 0, 0, KVOD_RDMA_LIVE_ENDED);
	EXPECT_EQ(KVOD_NOTE_ENDED, kvod_live_note_check(&n, sizeof(n), 8, &seq,
							&len, why, sizeof(why)));
	EXPECT_EQ(-1, kvod_live_note_check(&n, sizeof(n) - 1, 8, &seq, &len,
					   why, sizeof(why)));
	EXPECT_STREQ("a note of 23 bytes", why);
}

TEST_HARNESS_MAIN
