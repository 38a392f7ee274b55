// SPDX-License-Identifier: GPL-2.0
/*
 * Live channels: a resident ring of chunks that one writer fills and any
 * number of readers follow. What a chunk left in a slot past a shorter
 * one's end is never given to a reader: readers and the mirror get @len.
 */

/**
 * DOC: Overwrite without tearing
 *
 * A reader never gets a torn or overwritten chunk, and the writer never
 * waits for a reader:
 *
 * * A reader takes a chunk with kvod_live_take(). Under the ring's
 *   spinlock it checks that the slot still holds that chunk and takes a
 *   reference on its page. TCP then takes references of its own for what
 *   it queues (``MSG_SPLICE_PAGES``), and keeps them until the bytes are
 *   acknowledged.
 * * Before the writer writes into a slot, it marks the slot empty under
 *   the spinlock, so nobody can take the slot's page any more, and looks
 *   at the page's reference count. If anybody but the ring holds the page
 *   (a reader between chunks, or a TCP send queue), the writer puts a
 *   fresh zeroed page into the slot, drops the ring's reference to the old
 *   one and counts the swap in ``live_swaps``. The old page is freed when
 *   its last holder lets go.
 * * A reader that wants a chunk the ring has already overwritten is moved
 *   ahead to the newest complete chunk, between chunks, and the chunks it
 *   skipped are added to ``live_overruns``.
 *
 * A slow reader thus pins the chunk it is sending and every chunk of
 * which its send queue holds bytes, each a whole slot page, counted in
 * the graveyard once swapped out (DOC: The graveyard), while TCP charges
 * the socket only the bytes it queued; an HTTP response therefore bounds
 * the chunks it has in TCP's queue (``HTTP_LIVE_QUEUED``,
 * kmod/http_live.c).
 */

/**
 * DOC: The RDMA mirror
 *
 * RDMA clients READ memory that was registered once per connection, so
 * the pages they see cannot be swapped as above, and the writer must
 * still not wait for them. A channel created with ``KVOD_LIVE_RDMA``
 * therefore keeps a second ring with fixed pages, the movie's image,
 * pinned for the channel's life (DOC: Image lifetimes; a movie of
 * @length bytes to rdma_conn.c): chunk 0 holds a
 * struct kvod_rdma_live_head and a struct kvod_rdma_live_slot per slot,
 * the others are the slots. When a chunk is complete the writer copies it
 * into its mirror slot, seqlock-style:
 *
 * 1. the slot entry's ``seq`` becomes ``KVOD_RDMA_LIVE_NONE``;
 * 2. the bytes are copied;
 * 3. the entry gets the chunk's length, then its number;
 * 4. the head's ``next_seq`` moves on.
 *
 * A client READs the entry again after the bytes and keeps them only if
 * it still names the chunk (``<linux/kvod_rdma.h>``). That is one copy per
 * chunk, whatever the number of clients.
 */

/**
 * DOC: Lifetimes and locking
 *
 * The ring belongs to its movie and is freed by the movie's last
 * kvod_movie_put() (live_release()); the mirror is the movie's image, put
 * right after (DOC: Image lifetimes). The feed file holds a reference on
 * the movie from ``KVOD_IOC_LIVE_FEED`` until it is released; every
 * reader holds one through kvod_movie_open(). DEL ends the channel
 * (kvod_live_end()): readers finish their response, the writer gets
 * ``EPIPE``. The writer and DEL queue @fanout without a reference:
 * live_release() cancels it, or waits for its run to end, before the ring
 * goes.
 *
 * Every follower (an HTTP response, a push, an RDMA connection that takes
 * notes) is a struct kvod_live_watcher on @watchers, told of each
 * completed chunk and of the end by @fanout, not by the writer: the
 * writer (and DEL) only queue the work, which walks the list in process
 * context, with interrupts and preemption on, yielding every
 * ``FANOUT_BATCH`` watchers. It tells of the chunks in order, one chunk
 * per run (queuing itself again while there is more), then of the end; a
 * chunk the writer overwrote before the work reached it is not told, only
 * counted in the next event's @lost, so a work that fell behind does at
 * most a ring's worth of walks.
 *
 * @lock, a spinlock taken in process context only and never held while
 * sleeping or copying, guards the slots' page, seq and len, @next_seq,
 * @writer and @ended. The writer, under @wlock, is the only one that
 * changes @next_seq and a claimed slot's page, so it reads them without
 * @lock; the writer and the feed's release read @ended with READ_ONCE()
 * to stop early. @wlock, a mutex, serialises writes on the feed file and
 * guards @fill; it is held across copies from the writer's memory, which
 * may fault for ever. @plock, a mutex held only for a chunk's copy into
 * the mirror, orders publishing a chunk against DEL: a chunk is
 * published, mirror included, only before the end, and the end's head
 * flag comes after the last one. @watch_lock, a mutex, guards @watchers,
 * @told and @told_end and is held by @fanout across its walk, so a
 * watcher taken off is not being called when kvod_live_unwatch() returns,
 * and watchers are called one at a time.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/anon_inodes.h>
#include <linux/fs.h>
#include <linux/gfp.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/uio.h>
#include <linux/workqueue.h>

#include <linux/kvod_rdma.h>

#include "kvod.h"

#define LIVE_HEAD_BYTES		64
#define TS_PACKET		188
#define FANOUT_BATCH		64	/* watchers told between yields */

/**
 * struct kvod_live_slot - one chunk of the ring
 * @page: head of a compound page (DOC: Overwrite without tearing)
 * @seq: the chunk it holds, or KVOD_LIVE_SEQ_NONE while empty or written
 * @len: bytes of that chunk
 */
struct kvod_live_slot {
	struct page *page;
	u64 seq;
	u32 len;
};

/**
 * struct kvod_live - a live channel's ring; see the top of the file
 * @lock: guards what the top of the file says
 * @wlock: serialises writers on the feed file; guards @fill
 * @plock: orders publishing a chunk against the end
 * @watch_lock: guards @watchers, @told and @told_end
 * @watchers: struct kvod_live_watcher.node of every watcher
 * @fanout: tells the watchers of new chunks and of the end
 * @told: the next chunk @fanout tells of
 * @told_end: @fanout told of the end
 * @opts: KVOD_LIVE_*; immutable
 * @chunk_size: bytes per chunk; immutable
 * @nr_chunks: slots; immutable
 * @order: allocation order of a slot's page; immutable
 * @next_seq: the chunk being written, and the number completed
 * @fill: bytes written into chunk @next_seq
 * @writer: a feed file is open
 * @ended: the channel was deleted: no chunk will follow
 * @written: bytes written, for kvodctl list
 * @overruns: chunks readers skipped
 * @swaps: slot pages replaced because somebody still held them
 * @head: the RDMA mirror's head and slot entries; NULL without the mirror
 * @mirror: the mirror's slots (its image's chunks after the head's)
 * @slots: the ring
 */
struct kvod_live {
	spinlock_t lock;	/* see above */
	struct mutex wlock;	/* see above */
	struct mutex plock;	/* see above */
	struct mutex watch_lock;	/* see above */
	struct list_head watchers;
	struct work_struct fanout;
	u64 told;
	bool told_end;
	u32 opts;
	u32 chunk_size;
	u32 nr_chunks;
	u32 order;
	u64 next_seq;
	u32 fill;
	bool writer;
	bool ended;
	atomic64_t written;
	atomic64_t overruns;
	atomic64_t swaps;
	struct kvod_rdma_live_head *head;
	const struct kvod_chunk *mirror;
	struct kvod_live_slot slots[] __counted_by(nr_chunks);
};

static struct kvod_live_slot *live_slot(struct kvod_live *ch, u64 seq)
{
	return &ch->slots[do_div(seq, ch->nr_chunks)];
}

static struct page *slot_page_alloc(const struct kvod_live *ch)
{
	return alloc_pages(GFP_KERNEL | __GFP_COMP | __GFP_ZERO |
			   __GFP_NOWARN | __GFP_RETRY_MAYFAIL, ch->order);
}

static u64 ring_bytes(u32 size, u32 nr)
{
	return (u64)nr << (PAGE_SHIFT + get_order(size));
}

/* Under @watch_lock; false when @fanout told of everything. */
static bool fanout_next(struct kvod_live *ch, struct kvod_live_event *ev)
{
	u64 seq = ch->told;
	bool more = true;

	memset(ev, 0, sizeof(*ev));
	spin_lock(&ch->lock);
	/* Chunks the ring no longer holds are lost; a ring's worth at most. */
	if (ch->next_seq - seq > ch->nr_chunks)
		seq = ch->next_seq - ch->nr_chunks;
	for (; seq < ch->next_seq; seq++) {
		struct kvod_live_slot *slot = live_slot(ch, seq);

		if (slot->seq == seq) {
			ev->seq = seq;
			ev->index = slot - ch->slots;
			ev->len = slot->len;
			break;
		}
	}
	if (seq < ch->next_seq) {
		ev->lost = seq - ch->told;
		ch->told = seq + 1;
	} else if (ch->ended && !ch->told_end) {
		/* @next_seq is final once @ended is set: see @plock. */
		ev->seq = KVOD_LIVE_SEQ_NONE;
		ev->lost = seq - ch->told;
		ev->ended = true;
		ch->told = seq;
		ch->told_end = true;
	} else {
		more = false;
	}
	spin_unlock(&ch->lock);
	return more;
}

/*
 * One event per hold of @watch_lock, so that a writer faster than a walk
 * does not keep the watchers that come and go waiting.
 */
static void live_fanout(struct work_struct *work)
{
	struct kvod_live *ch = container_of(work, struct kvod_live, fanout);
	struct kvod_live_watcher *w;
	struct kvod_live_event ev;
	unsigned int n = 0;
	bool more;

	mutex_lock(&ch->watch_lock);
	more = fanout_next(ch, &ev);
	if (more) {
		list_for_each_entry(w, &ch->watchers, node) {
			w->notify(w, &ev);
			if (!(++n % FANOUT_BATCH))
				cond_resched();
		}
	}
	mutex_unlock(&ch->watch_lock);
	if (more)
		queue_work(system_unbound_wq, &ch->fanout);
}

static u32 head_order(u32 nr)
{
	return get_order(LIVE_HEAD_BYTES +
			 nr * sizeof(struct kvod_rdma_live_slot));
}

static u64 channel_bytes(const struct kvod_live_create *req)
{
	u64 ring = ring_bytes(req->chunk_size, req->nr_chunks);

	if (!(req->opts & KVOD_LIVE_RDMA))
		return ring;
	return 2 * ring + (PAGE_SIZE << head_order(req->nr_chunks));
}

static struct kvod_rdma_live_slot *mirror_entry(struct kvod_live *ch, u32 i)
{
	return (struct kvod_rdma_live_slot *)((char *)ch->head +
					       LIVE_HEAD_BYTES) + i;
}

/* Its bytes are in the channel's own reservation (kvod_live_create()). */
static int mirror_alloc(struct kvod_movie *movie, struct kvod_live *ch)
{
	u32 i, n = ch->nr_chunks + 1;
	struct kvod_image *img;
	u64 off = 0;

	img = kvod_image_new(n);
	if (!img)
		return -ENOMEM;
	RCU_INIT_POINTER(movie->image, img);	/* not published yet */
	for (i = 0; i < n; i++) {
		struct kvod_chunk *c = &img->chunks[i];

		c->order = i ? ch->order : head_order(ch->nr_chunks);
		c->page = alloc_pages(GFP_KERNEL | __GFP_COMP | __GFP_ZERO |
				      __GFP_NOWARN | __GFP_RETRY_MAYFAIL,
				      c->order);
		if (!c->page)
			return -ENOMEM;	/* the movie's release frees the rest */
		img->nr_chunks++;
		c->len = PAGE_SIZE << c->order;
		c->offset = off;
		off += c->len;
		cond_resched();
	}
	img->length = off;
	movie->length = off;
	ch->mirror = img->chunks + 1;
	ch->head = page_address(img->chunks[0].page);
	ch->head->magic = cpu_to_be32(KVOD_RDMA_MAGIC);
	ch->head->chunk_size = cpu_to_be32(ch->chunk_size);
	ch->head->nr_chunks = cpu_to_be32(ch->nr_chunks);
	ch->head->slot_bytes = cpu_to_be64(PAGE_SIZE << ch->order);
	ch->head->data_offset = cpu_to_be64(ch->mirror[0].offset);
	for (i = 0; i < ch->nr_chunks; i++)
		mirror_entry(ch, i)->seq = cpu_to_be64(KVOD_RDMA_LIVE_NONE);
	return 0;
}

/*
 * Under @plock, in the order <linux/kvod_rdma.h> describes. A client's READ
 * may see any of these stores, so each is one aligned store, and the
 * barriers keep the order between them.
 */
static void mirror_publish(struct kvod_live *ch, u64 seq, struct page *src,
			   u32 len)
{
	u32 i = live_slot(ch, seq) - ch->slots;
	struct kvod_rdma_live_slot *e = mirror_entry(ch, i);

	WRITE_ONCE(e->seq, cpu_to_be64(KVOD_RDMA_LIVE_NONE));
	/*
	 * The readers are RDMA devices: rxe and siw on another CPU, or a NIC
	 * by DMA, so the barriers are dma_wmb(), which orders stores for
	 * both. The entry says "empty" before any byte of the slot changes...
	 */
	dma_wmb();
	memcpy(page_address(ch->mirror[i].page), page_address(src), len);
	WRITE_ONCE(e->len, cpu_to_be32(len));
	/* ...names the chunk only once all of it is there... */
	dma_wmb();
	WRITE_ONCE(e->seq, cpu_to_be64(seq));
	/* ...and the head counts it only once the entry names it. */
	dma_wmb();
	WRITE_ONCE(ch->head->next_seq, cpu_to_be64(seq + 1));
}

static int create_check(const struct kvod_live_create *req)
{
	if (req->reserved0 || memchr_inv(req->reserved, 0, sizeof(req->reserved)))
		return -EINVAL;
	if (req->opts & ~KVOD_LIVE_OPTS)
		return -EINVAL;
	if (req->chunk_size < TS_PACKET || req->chunk_size > KVOD_LIVE_CHUNK_MAX)
		return -EINVAL;
	if ((req->opts & KVOD_LIVE_TS) && req->chunk_size % TS_PACKET)
		return -EINVAL;
	if (req->nr_chunks < KVOD_LIVE_CHUNKS_MIN ||
	    req->nr_chunks > KVOD_LIVE_CHUNKS_MAX)
		return -EINVAL;
	if (!kvod_name_valid(req->name))
		return -EINVAL;
	return 0;
}

/* The movie's @release: nobody else holds it; the ring may be half-built. */
static void live_release(struct kvod_movie *movie)
{
	struct kvod_live *ch = movie->live;
	u32 i;

	/* Queued by the writer or DEL; with no watcher left it tells nobody. */
	cancel_work_sync(&ch->fanout);
	for (i = 0; i < ch->nr_chunks; i++) {
		struct page *page = ch->slots[i].page;

		if (page && !kvod_graveyard_bury(page, ch->order))
			__free_pages(page, ch->order);
		cond_resched();
	}
	mutex_destroy(&ch->wlock);
	mutex_destroy(&ch->plock);
	mutex_destroy(&ch->watch_lock);
	kvfree(ch);
}

/**
 * kvod_live_create() - make a live channel, ring allocated and resident
 * @req: the request (checked here, but for the name's uniqueness)
 *
 * Return: the channel's movie with one reference, or an ERR_PTR.
 */
struct kvod_movie *kvod_live_create(const struct kvod_live_create *req)
{
	struct kvod_movie *movie;
	struct kvod_live *ch;
	u32 i;
	int ret;

	ret = create_check(req);
	if (ret)
		return ERR_PTR(ret);
	movie = kvod_movie_alloc(req->name, channel_bytes(req), req->bitrate);
	if (IS_ERR(movie))
		return movie;

	ch = kvzalloc(struct_size(ch, slots, req->nr_chunks), GFP_KERNEL);
	if (!ch) {
		ret = -ENOMEM;
		goto err_put;
	}
	ch->nr_chunks = req->nr_chunks;
	spin_lock_init(&ch->lock);
	mutex_init(&ch->wlock);
	mutex_init(&ch->plock);
	mutex_init(&ch->watch_lock);
	INIT_LIST_HEAD(&ch->watchers);
	INIT_WORK(&ch->fanout, live_fanout);
	ch->opts = req->opts;
	ch->chunk_size = req->chunk_size;
	ch->order = get_order(req->chunk_size);
	movie->live = ch;
	movie->release = live_release;

	for (i = 0; i < ch->nr_chunks; i++) {
		ch->slots[i].seq = KVOD_LIVE_SEQ_NONE;
		ch->slots[i].page = slot_page_alloc(ch);
		if (!ch->slots[i].page) {
			ret = -ENOMEM;
			goto err_put;
		}
		cond_resched();
	}
	if (req->opts & KVOD_LIVE_RDMA) {
		ret = mirror_alloc(movie, ch);
		if (ret)
			goto err_put;
	}
	return movie;

err_put:
	kvod_movie_put(movie);
	return ERR_PTR(ret);
}

/**
 * kvod_live_end() - DEL: no chunk follows; wake every reader
 * @ch: the ring of a channel just taken out of the catalog
 */
void kvod_live_end(struct kvod_live *ch)
{
	/* @plock, not @wlock: DEL never waits for the writer's memory. */
	mutex_lock(&ch->plock);
	spin_lock(&ch->lock);
	WRITE_ONCE(ch->ended, true);	/* read locklessly by the writer */
	spin_unlock(&ch->lock);
	if (ch->head) {
		dma_wmb();
		WRITE_ONCE(ch->head->flags, cpu_to_be32(KVOD_RDMA_LIVE_ENDED));
	}
	mutex_unlock(&ch->plock);
	queue_work(system_unbound_wq, &ch->fanout);
}

/* The writer: claim the slot of chunk @next_seq before writing into it. */
static int slot_claim(struct kvod_live *ch)
{
	struct kvod_live_slot *slot = live_slot(ch, ch->next_seq);
	struct page *page, *old;
	bool held;

	spin_lock(&ch->lock);
	slot->seq = KVOD_LIVE_SEQ_NONE;
	slot->len = 0;
	/* Nobody can take the page from now on; the count only drops. */
	held = folio_ref_count(page_folio(slot->page)) > 1;
	spin_unlock(&ch->lock);
	if (!held)
		return 0;

	page = slot_page_alloc(ch);
	if (!page)
		return -ENOMEM;
	spin_lock(&ch->lock);
	old = slot->page;
	slot->page = page;
	spin_unlock(&ch->lock);
	if (!kvod_graveyard_bury(old, ch->order))
		put_page(old);
	atomic64_inc(&ch->swaps);
	return 0;
}

/* The writer: publish chunk @next_seq, of @len bytes. */
static void chunk_complete(struct kvod_live *ch, u32 len)
{
	struct kvod_live_slot *slot = live_slot(ch, ch->next_seq);

	ch->fill = 0;
	mutex_lock(&ch->plock);
	if (READ_ONCE(ch->ended))
		goto out;
	if (ch->head)
		mirror_publish(ch, ch->next_seq, slot->page, len);
	spin_lock(&ch->lock);
	slot->len = len;
	slot->seq = ch->next_seq++;
	spin_unlock(&ch->lock);
	queue_work(system_unbound_wq, &ch->fanout);
out:
	mutex_unlock(&ch->plock);
}

/* Copy from @from into the ring; under @wlock. */
static ssize_t live_write(struct kvod_live *ch, struct iov_iter *from)
{
	size_t done = 0;
	int ret = 0;

	/* Checked before the loop too: a write of 0 bytes after DEL fails. */
	if (READ_ONCE(ch->ended))
		return -EPIPE;
	while (iov_iter_count(from)) {
		struct kvod_live_slot *slot;
		size_t n, got;

		if (READ_ONCE(ch->ended)) {
			ret = -EPIPE;
			break;
		}
		if (!ch->fill) {
			ret = slot_claim(ch);
			if (ret)
				break;
		}
		slot = live_slot(ch, ch->next_seq);
		n = min_t(size_t, ch->chunk_size - ch->fill,
			  iov_iter_count(from));
		got = copy_from_iter(page_address(slot->page) + ch->fill, n,
				     from);
		ch->fill += got;
		done += got;
		atomic64_add(got, &ch->written);
		if (ch->fill == ch->chunk_size)
			chunk_complete(ch, ch->fill);
		if (got < n) {
			ret = -EFAULT;
			break;
		}
		cond_resched();
	}
	return done ?: ret;
}

static ssize_t feed_write_iter(struct kiocb *iocb, struct iov_iter *from)
{
	struct kvod_movie *movie = iocb->ki_filp->private_data;
	struct kvod_live *ch = movie->live;
	ssize_t ret;

	if (mutex_lock_interruptible(&ch->wlock))
		return -ERESTARTSYS;
	ret = live_write(ch, from);
	mutex_unlock(&ch->wlock);
	return ret;
}

/*
 * The writer is gone: complete what it left of a chunk (whole MPEG-TS
 * packets only; a torn packet is dropped) and let the next writer in.
 */
static int feed_release(struct inode *inode, struct file *file)
{
	struct kvod_movie *movie = file->private_data;
	struct kvod_live *ch = movie->live;
	u32 keep;

	mutex_lock(&ch->wlock);
	keep = ch->fill;
	if (ch->opts & KVOD_LIVE_TS)
		keep -= keep % TS_PACKET;
	if (keep && !READ_ONCE(ch->ended))
		chunk_complete(ch, keep);
	ch->fill = 0;
	mutex_unlock(&ch->wlock);

	spin_lock(&ch->lock);
	ch->writer = false;
	spin_unlock(&ch->lock);
	kvod_movie_put(movie);
	return 0;
}

static const struct file_operations kvod_feed_fops = {
	.owner = THIS_MODULE,
	.write_iter = feed_write_iter,
	.splice_write = iter_file_splice_write,
	.release = feed_release,
};

/**
 * kvod_live_feed() - open a channel's feed file for its one writer
 * @movie: a movie the caller holds a reference on, which the file takes
 *	over on success
 *
 * Return: the file (write-only, not yet in any fd table), or an ERR_PTR:
 * -EINVAL for a movie that is no channel, -EBUSY while another writer is
 * attached, -ENOENT once the channel was deleted.
 */
struct file *kvod_live_feed(struct kvod_movie *movie)
{
	struct kvod_live *ch = movie->live;
	struct file *file;
	int ret = 0;

	if (!ch)
		return ERR_PTR(-EINVAL);
	spin_lock(&ch->lock);
	if (ch->ended)
		ret = -ENOENT;
	else if (ch->writer)
		ret = -EBUSY;
	else
		ch->writer = true;
	spin_unlock(&ch->lock);
	if (ret)
		return ERR_PTR(ret);

	file = anon_inode_getfile("[kvod-live]", &kvod_feed_fops, movie,
				  O_WRONLY);
	if (IS_ERR(file)) {
		spin_lock(&ch->lock);
		ch->writer = false;
		spin_unlock(&ch->lock);
		return file;
	}
	stream_open(file_inode(file), file);	/* no seeks, no pwrite() */
	return file;
}

/**
 * kvod_live_fill_info() - the live half of a channel's info
 * @ch: the ring
 * @info: its length, chunks and kind fields and the live_* fields are set
 */
void kvod_live_fill_info(struct kvod_live *ch, struct kvod_movie_info *info)
{
	spin_lock(&ch->lock);
	info->live_seq = ch->next_seq;
	info->live_opts = ch->opts | (ch->writer ? KVOD_LIVE_WRITER : 0);
	spin_unlock(&ch->lock);
	info->kind = KVOD_KIND_LIVE;
	info->length = atomic64_read(&ch->written);
	info->chunks = ch->nr_chunks;
	info->live_chunk_size = ch->chunk_size;
	info->live_overruns = atomic64_read(&ch->overruns);
	info->live_swaps = atomic64_read(&ch->swaps);
}

/**
 * kvod_live_ts() - whether the channel carries MPEG-TS
 * @ch: the ring
 *
 * Return: true if it was created with KVOD_LIVE_TS.
 */
bool kvod_live_ts(const struct kvod_live *ch)
{
	return ch->opts & KVOD_LIVE_TS;
}

/**
 * kvod_live_newest() - where a new reader starts
 * @ch: the ring
 *
 * Return: the newest complete chunk, or 0 (the first one, still to come)
 * if none is complete yet.
 */
u64 kvod_live_newest(struct kvod_live *ch)
{
	u64 seq;

	spin_lock(&ch->lock);
	seq = ch->next_seq ? ch->next_seq - 1 : 0;
	spin_unlock(&ch->lock);
	return seq;
}

/**
 * kvod_live_take() - hold the next chunk for a reader
 * @ch: the ring
 * @seq: in: the chunk wanted; out: the chunk taken, a later one if the
 *	ring overwrote that one (DOC: Overwrite without tearing)
 * @page: out: the chunk's page, with a reference the caller must put
 * @len: out: the chunk's bytes, from the start of @page
 *
 * Context: process context; takes @lock briefly.
 *
 * Return: 0, -EAGAIN if chunk @seq is not complete yet, or -EPIPE once the
 * channel ended.
 */
int kvod_live_take(struct kvod_live *ch, u64 *seq, struct page **page,
		   u32 *len)
{
	struct kvod_live_slot *slot;
	u64 want = *seq;

	spin_lock(&ch->lock);
	if (ch->ended) {
		spin_unlock(&ch->lock);
		return -EPIPE;
	}
	if (want >= ch->next_seq) {
		spin_unlock(&ch->lock);
		return -EAGAIN;
	}
	slot = live_slot(ch, want);
	if (slot->seq != want) {
		/* Overwritten. The newest chunk is in another slot than the
		 * one being written, as there are at least two.
		 */
		want = ch->next_seq - 1;
		slot = live_slot(ch, want);
		atomic64_add(want - *seq, &ch->overruns);
	}
	get_page(slot->page);
	*page = slot->page;
	*len = slot->len;
	spin_unlock(&ch->lock);
	*seq = want;
	return 0;
}

/**
 * kvod_live_watch() - have @notify called after each chunk and at the end
 * @ch: the ring
 * @w: the watcher; kvod_live_unwatch() takes it off again before it goes
 *	away
 * @notify: what to call
 *
 * See DOC: Lifetimes and locking. @notify must not wait for anything, as
 * every other watcher waits behind it, nor watch or unwatch. A watcher
 * added between a chunk's completion and the fan-out's run is told of it
 * too. The event is valid only during the call.
 */
void kvod_live_watch(struct kvod_live *ch, struct kvod_live_watcher *w,
		     kvod_live_notify_t notify)
{
	w->notify = notify;
	mutex_lock(&ch->watch_lock);
	list_add_tail(&w->node, &ch->watchers);
	mutex_unlock(&ch->watch_lock);
}

/**
 * kvod_live_unwatch() - undo kvod_live_watch()
 * @ch: the ring
 * @w: the watcher; its @notify is not running when this returns
 */
void kvod_live_unwatch(struct kvod_live *ch, struct kvod_live_watcher *w)
{
	mutex_lock(&ch->watch_lock);
	list_del(&w->node);
	mutex_unlock(&ch->watch_lock);
}
