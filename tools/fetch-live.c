// SPDX-License-Identifier: GPL-2.0
/*
 * kvod-fetch on a live channel: the server accepted with KVOD_RDMA_LIVE,
 * and the "movie" of the segment table is the channel's mirror
 * (<linux/kvod_rdma.h>): a head and slot entries, then the slots.
 *
 * We start at the newest complete chunk and write whole chunks to the
 * output in order. For each chunk: its slot entry must name it (else the
 * ring has moved past it and we go on at the newest chunk, counting what
 * we skipped); we READ its bytes, then the entry again, and write the
 * bytes only if the entry still names the chunk (else they may be torn:
 * counted, dropped, and we go on at the newest). The entry's second READ
 * must read the server's memory after the bytes' READs did
 * (<linux/kvod_rdma.h>): we post it once they completed or, with
 * --fence on a device that fences READs, together with them and fenced.
 *
 * How we learn of new chunks: by default from the server's notes (we ask
 * with KVOD_RDMA_REQ_NOTIFY; one SEND per chunk, which names the chunk
 * and its length, so its first entry READ is saved), and from the head
 * if no note came for --note-wait MS (notes are best effort); with
 * --poll MS, and over iWARP (tools/lib/rdma.h, KVOD_NOTES_AUTO), by
 * READing the head every MS (POLL_DEFAULT_MS) milliseconds, and the
 * server does nothing for us at all. The channel's end (DEL) ends the run,
 * after the chunks completed before it.
 *
 * The head's layout is the server's word, and we size our buffer and its
 * registration by it and index the entries with it: so it is checked
 * first (kvod_live_head_check(), lib/rdma_check.c), and a head no kvod
 * server builds ends the run. A note is read by kvod_live_note_check()
 * there too.
 */
#include "kvod-fetch.h"
#include "lib/rdma_check.h"

#include <endian.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define POLL_DEFAULT_MS	20	/* no notes and no --poll (iWARP) */

struct live {
	struct kvod_rdma_live_head *head;	/* then the entries */
	char *data;				/* one slot */
	struct kvod_rdma_live_slot *check;	/* an entry READ again */
	uint32_t nr;		/* the head's layout, checked: rdma_check.h */
	uint64_t slot_bytes;
	uint64_t data_off;
	uint32_t hdr_len;
	int notes;		/* the server SENDs notes */
	int fence;		/* --fence, on a device that fences READs */
	uint64_t known;		/* chunks complete, as far as we know */
	int ended;		/* the channel's end is known */
	int end_noted;		/* ... from a note, the head not read since */
	uint64_t note_seq;	/* the latest note's chunk, and its length */
	uint32_t note_len;
};

/*
 * If @wc is a note's receive, learn from the note and post the receive
 * again: 1; 0 for another completion; -1 after saying what went wrong.
 */
static int on_note(struct fetch *f, struct live *l, const struct ibv_wc *wc)
{
	int i = kvod_note_slot(wc->wr_id), kind;
	uint32_t len;
	uint64_t seq;
	char why[64];

	if (i < 0)
		return 0;
	if (wc->status != IBV_WC_SUCCESS) {
		fprintf(stderr, "kvod-fetch: live: note: %s\n",
			ibv_wc_status_str(wc->status));
		return -1;
	}
	kind = kvod_live_note_check(&f->c.notes[i], wc->byte_len, l->nr, &seq,
				    &len, why, sizeof(why));
	if (kind < 0) {
		fprintf(stderr, "kvod-fetch: live: %s\n", why);
		return -1;
	}
	f->live_notes++;
	if (kind == KVOD_NOTE_ENDED) {
		l->end_noted = 1;
	} else if (kind == KVOD_NOTE_CHUNK) {
		if (seq + 1 > l->known)
			l->known = seq + 1;
		l->note_seq = seq;
		l->note_len = len;
	}
	if (kvod_note_repost(&f->c, i)) {
		fprintf(stderr, "kvod-fetch: live: %s\n", f->c.err);
		return -1;
	}
	return 1;
}

/*
 * READ the piece of [@off, +@len) of the mirror that lies in one segment
 * into @p (in f->mr), with send @flags: its length, or 0 after saying
 * what went wrong.
 */
static uint32_t rd_piece(struct fetch *f, uint64_t off, char *p, uint32_t len,
			 unsigned int flags)
{
	long s = kvod_seg_find(&f->c, off);
	const struct kvod_seg *seg;
	uint32_t take;

	if (s < 0) {
		fprintf(stderr, "kvod-fetch: live: offset %" PRIu64 " is in no segment\n",
			off);
		return 0;
	}
	seg = &f->c.segs[s];
	take = seg->offset + seg->length - off < len ?
	       (uint32_t)(seg->offset + seg->length - off) : len;
	if (kvod_post_read_flags(&f->c, p, f->mr->lkey,
				 seg->addr + (off - seg->offset), seg->rkey,
				 take, 0, flags)) {
		fprintf(stderr, "kvod-fetch: live: %s\n", f->c.err);
		return 0;
	}
	return take;
}

/*
 * Completions of rd()'s READs, and the notes that arrive meanwhile:
 * *@posted counts the READs still out. 0, or -1 after saying why.
 */
static int rd_reap(struct fetch *f, struct live *l, unsigned int *posted)
{
	struct ibv_wc wc[8];
	int n, i;

	n = kvod_poll(&f->c, wc, 8, f->o->timeout_ms);
	if (n <= 0) {
		fprintf(stderr, "kvod-fetch: live: %s\n",
			n < 0 ? f->c.err : "READ timed out");
		return -1;
	}
	for (i = 0; i < n; i++) {
		int note = on_note(f, l, &wc[i]);

		if (note < 0)
			return -1;
		if (note)
			continue;
		if (wc[i].status != IBV_WC_SUCCESS) {
			fprintf(stderr, "kvod-fetch: live: READ: %s\n",
				ibv_wc_status_str(wc[i].status));
			return -1;
		}
		(*posted)--;
	}
	return 0;
}

/*
 * Post READs of [@off, +@len) of the mirror into @dst (in f->mr), with
 * send @flags: one READ per segment it spans. *@posted counts the READs
 * out. A slot may span more segments than the connection takes READs at
 * once (--depth + 1: siw's segments are 1 MiB, so a slot of a 2 MiB
 * chunk spans three); then a READ completes before the next piece goes
 * out, so any --depth works.
 */
static int rd_post(struct fetch *f, struct live *l, uint64_t off, void *dst,
		   uint32_t len, unsigned int flags, unsigned int *posted)
{
	char *p = dst;

	while (len) {
		uint32_t take;

		if (*posted && f->c.out_count == f->c.out_cap) {
			if (rd_reap(f, l, posted))
				return -1;
			continue;
		}
		take = rd_piece(f, off, p, len, flags);
		if (!take)
			return -1;
		(*posted)++;
		p += take;
		off += take;
		len -= take;
	}
	return 0;
}

/* Wait for the *@posted READs still out. */
static int rd_wait(struct fetch *f, struct live *l, unsigned int *posted)
{
	while (*posted)
		if (rd_reap(f, l, posted))
			return -1;
	return 0;
}

/* READ [@off, +@len) of the mirror into @dst (in f->mr). */
static int rd(struct fetch *f, struct live *l, uint64_t off, void *dst,
	      uint32_t len)
{
	unsigned int posted = 0;

	if (rd_post(f, l, off, dst, len, 0, &posted))
		return -1;
	return rd_wait(f, l, &posted);
}

static struct kvod_rdma_live_slot *entry(struct live *l, uint64_t seq)
{
	return (struct kvod_rdma_live_slot *)((char *)l->head +
					      KVOD_LIVE_HEAD_BYTES) +
	       seq % l->nr;
}

static uint64_t entry_off(struct live *l, uint64_t seq)
{
	return KVOD_LIVE_HEAD_BYTES +
	       (seq % l->nr) * sizeof(struct kvod_rdma_live_slot);
}

/*
 * READ the head into f->buf and check it: it sizes what we allocate and
 * register, and where we READ and index, so it must add up
 * (kvod_live_head_check()). 0, or -1 after saying why.
 */
static int head_setup(struct fetch *f, struct live *l)
{
	struct kvod_rdma_live_head h;
	struct kvod_live_layout lay;
	char why[160];

	if (f->c.movie_size < sizeof(h)) {
		snprintf(why, sizeof(why), "a mirror of %" PRIu64 " bytes",
			 f->c.movie_size);
		goto bad;
	}
	if (rd(f, l, 0, f->buf, sizeof(h)))
		return -1;
	memcpy(&h, f->buf, sizeof(h));
	if (kvod_live_head_check(&h, f->c.movie_size, &lay, why, sizeof(why)))
		goto bad;
	l->nr = lay.nr;
	l->slot_bytes = lay.slot_bytes;
	l->data_off = lay.data_off;
	l->hdr_len = lay.hdr_len;
	return 0;
bad:
	fprintf(stderr, "kvod-fetch: live: bad head from server: %s\n", why);
	return -1;
}

/* READ the head, learn the layout, make room; 0 or -1 after saying why. */
static int live_setup(struct fetch *f, struct live *l)
{
	uint64_t room;
	char *buf;

	/* The head first, through a buffer of its own size. */
	f->buf = aligned_alloc(4096, 4096);
	f->mr = f->buf ? kvod_reg(&f->c, f->buf, 4096) : NULL;
	if (!f->mr)
		goto fail;
	if (head_setup(f, l))
		return -1;
	ibv_dereg_mr(f->mr);
	free(f->buf);
	f->mr = NULL;
	f->buf = NULL;

	/* At most 4 MiB and a page: the head's sizes are bounded. */
	room = l->data_off + l->slot_bytes + 4096;
	buf = aligned_alloc(4096, (room + 4095) & ~4095ULL);
	f->buf = buf;
	f->mr = buf ? kvod_reg(&f->c, buf, room) : NULL;
	if (!f->mr)
		goto fail;
	/* The head and entries, a slot, an entry: all in the one MR. */
	l->head = (struct kvod_rdma_live_head *)buf;
	l->data = buf + l->data_off;
	l->check = (struct kvod_rdma_live_slot *)(l->data + l->slot_bytes);
	return 0;
fail:
	fprintf(stderr, "kvod-fetch: live: %s\n",
		f->c.err[0] ? f->c.err : "out of memory");
	return -1;
}

/* READ the head and entries again: what is complete, and the end. */
static int read_head(struct fetch *f, struct live *l)
{
	uint64_t next;

	if (rd(f, l, 0, l->head, l->hdr_len))
		return -1;
	next = be64toh(l->head->next_seq);
	if (next > l->known)
		l->known = next;
	if (be32toh(l->head->flags) & KVOD_RDMA_LIVE_ENDED)
		l->ended = 1;
	return 0;
}

/* Go on at the newest chunk, counting the ones between. */
static uint64_t skip_to_newest(struct fetch *f, struct live *l, uint64_t want)
{
	uint64_t newest = l->known - 1;

	if (newest > want)
		f->live_skipped += newest - want;
	return newest > want ? newest : want;
}

static void nap(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/*
 * For the tests (selftests/kvod/live_rdma_writer.sh): if the environment
 * names a file in KVOD_FETCH_TEST_STALL, then once, after the bytes of a
 * chunk are READ (with --fence: after their READs are posted, before
 * their completions are taken) and before its entry's READ is posted
 * again, say so and wait while that file exists. The test overwrites the
 * chunk meanwhile, which is otherwise a race no test can win on purpose.
 */
static void test_stall(const struct live *l, uint64_t seq)
{
	static int done;
	const char *path;

	if (done)
		return;
	done = 1;
	path = getenv("KVOD_FETCH_TEST_STALL");
	if (!path || !*path)
		return;
	fprintf(stderr, "kvod-fetch: live: test stall after %schunk %" PRIu64 "'s bytes\n",
		l->fence ? "posting " : "", seq);
	while (!fetch_stop && access(path, F_OK) == 0)
		nap(10);
}

/*
 * READ chunk @seq's @len bytes into l->data, then its slot entry again
 * into l->check. The entry's READ must read the server's memory after
 * the bytes' READs did, which the transports promise only for a READ
 * posted after they completed, or fenced (<linux/kvod_rdma.h>). So
 * without --fence it is posted once their completions are in; with it,
 * together with them and IBV_SEND_FENCE, and the device holds it back
 * until they completed: one wait for all of them.
 */
static int rd_chunk(struct fetch *f, struct live *l, uint64_t seq,
		    uint32_t len)
{
	unsigned int posted = 0;

	if (rd_post(f, l, l->data_off + (seq % l->nr) * l->slot_bytes,
		    l->data, len, 0, &posted))
		return -1;
	if (!l->fence && rd_wait(f, l, &posted))
		return -1;
	test_stall(l, seq);
	if (rd_post(f, l, entry_off(l, seq), l->check, sizeof(*l->check),
		    l->fence ? IBV_SEND_FENCE : 0, &posted))
		return -1;
	return rd_wait(f, l, &posted);
}

/* Nothing new is known: wait for a note, or poll the head. */
static int wait_chunk(struct fetch *f, struct live *l)
{
	struct ibv_wc wc[8];
	int n, i;

	if (!l->notes) {
		nap(f->o->poll_ms ? f->o->poll_ms : POLL_DEFAULT_MS);
		return read_head(f, l);
	}
	n = kvod_poll(&f->c, wc, 8, f->o->note_wait_ms);
	if (n < 0) {
		fprintf(stderr, "kvod-fetch: live: %s\n", f->c.err);
		return -1;
	}
	if (!n)		/* quiet: maybe notes were dropped */
		return read_head(f, l);
	for (i = 0; i < n; i++) {
		int note = on_note(f, l, &wc[i]);

		if (note < 0)
			return -1;
		if (!note) {
			fprintf(stderr, "kvod-fetch: live: a completion of no note\n");
			return -1;
		}
	}
	return 0;
}

/**
 * fetch_live_run() - play a live channel to the output
 * @f: connected, with f->live set
 * @t_end: stop then (fetch_now() time), 0 for never
 *
 * Return: 0 at the channel's end, at @t_end or on a signal; -1 on error.
 */
int fetch_live_run(struct fetch *f, double t_end)
{
	struct live l = { .note_seq = UINT64_MAX };
	uint64_t want;

	l.notes = !!(f->c.reply_flags & KVOD_RDMA_NOTIFY);
	l.fence = f->o->fence && kvod_fences_reads(&f->c);
	if (live_setup(f, &l) || read_head(f, &l))
		return -1;
	want = l.known ? l.known - 1 : 0;
	if (!f->o->quiet)
		fprintf(stderr, "kvod-fetch: live: from chunk %" PRIu64 "%s%s\n",
			want, l.notes ? ", with notes" : "",
			l.fence ? ", fenced" :
			f->o->fence ? ", not fenced (iWARP fences no READ)" : "");
	while (!fetch_stop && (!t_end || fetch_now() < t_end)) {
		struct kvod_rdma_live_slot *e;
		uint32_t len;

		if (want >= l.known) {
			if (l.ended)
				return 0;
			/*
			 * The end note can come after dropped notes: the
			 * head, which the server marks ended before that
			 * note, counts every chunk completed before it.
			 */
			if (l.end_noted) {
				if (read_head(f, &l))
					return -1;
				l.ended = 1;
				continue;
			}
			if (wait_chunk(f, &l))
				return -1;
			continue;
		}
		if (want == l.note_seq) {
			len = l.note_len;	/* the note saves the entry READ */
		} else {
			e = entry(&l, want);
			if (be64toh(e->seq) != want) {
				/* Overwritten since, or being written. */
				if (read_head(f, &l))
					return -1;
				if (be64toh(e->seq) != want)
					want = skip_to_newest(f, &l, want);
				continue;
			}
			len = be32toh(e->len);
		}
		if (len > l.slot_bytes) {
			fprintf(stderr, "kvod-fetch: live: chunk %" PRIu64 " of %u bytes, in a slot of %" PRIu64 "\n",
				want, len, l.slot_bytes);
			return -1;
		}
		if (rd_chunk(f, &l, want, len))
			return -1;
		if (be64toh(l.check->seq) != want) {
			f->live_torn++;
			if (read_head(f, &l))
				return -1;
			want = skip_to_newest(f, &l, want);
			continue;
		}
		if (fetch_write(f, l.data, len))
			return -1;
		f->chunks++;
		f->bytes += len;
		want++;
	}
	return 0;
}
