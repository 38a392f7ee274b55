// SPDX-License-Identifier: GPL-2.0
/* The cursor: the one walk of a movie's bytes that HTTP and push share. */

/**
 * DOC: The cursor
 *
 * HTTP and push hand a movie's pages to TCP and UDP by reference
 * (``MSG_SPLICE_PAGES``, DOC: Movie memory), and find them with a struct
 * kvod_cursor: one per HTTP response with a body from a movie, one per
 * push of a movie. Readers of a live channel take its chunks instead
 * (``live.rst``). Each send is a kvod_cursor_fill(), which points socket
 * vectors at up to the bytes asked for, then the sendmsg(), after which
 * the socket holds what it took by page references of its own, then
 * kvod_cursor_sent(), which lets go of what the fill held. A movie with an
 * image is served from the image's chunks; one without, from the page
 * cache of its file (DOC: Titles in the page cache).
 *
 * A fill that fails describes nothing. ``-EIOCBQUEUED``: the bytes are
 * not in memory yet, and the cursor runs the reader again once they may
 * be (DOC: Cursor waits). ``-ENODATA``: there is nothing at that offset,
 * past the movie's end or past the end of a file that shrank; ``-EIO``:
 * the file could not be read there. HTTP then ends the response after
 * what it sent, with a FIN (``http.rst``), and a push ends.
 *
 * The reader holds the movie (kvod_movie_open()) for the cursor's whole
 * life. The cursor holds the image it serves from, by a reference of its
 * own from kvod_cursor_init() to kvod_cursor_release(), so the chunks it
 * reads stay whole whoever else lets go of the image. A reader releases
 * its cursor right before it closes the movie; while a movie holds its
 * image, the image is then still freed by the movie's last put.
 *
 * A cursor is its reader's: an HTTP response's is touched by the
 * connection's work only (DOC: HTTP connection work); a push's by
 * PUSH_START, then the push's work and, once that cannot run, the push's
 * teardown (DOC: Push lifetimes and locking). Only the page-cache path
 * shares it, with its own work item and its wait, under the rules of DOC:
 * Cursor waits. Init, fill and sent do not sleep; release may, as it
 * waits for the work item and as the image's last put does
 * (kvod_image_put()), so readers release their cursor where they close
 * the movie, which may sleep for the same reason: in process context,
 * never from a socket callback, a timer or a connection's last
 * kref_put().
 */

/**
 * DOC: Titles in the page cache
 *
 * While the ``add_lazy`` test knob is set, ADD without ``KVOD_ADD_PIN``
 * of a file whose mapping has ``->read_folio`` reads nothing: the movie
 * keeps the file open (get_file() at ADD, fput() at its last put) and
 * records its size then as its length, and has no image. Files without
 * ``->read_folio`` (tmpfs) are read into an image as before.
 *
 * A fill then takes the folios of its range from the file's page cache
 * with filemap_get_folios_contig(), a reference each, describes those up
 * to the first that is not uptodate, and reads the file's size *after*
 * those checks,
 * as filemap_splice_read() does, so that it never describes bytes past a
 * shrunk end: it describes up to the smaller of the movie's length and
 * the file's size now. It marks the folios accessed (once per folio per
 * reader) and points one vector at each. TCP and UDP take page
 * references of their own on what they take, in fragments of at most a
 * page, so the cursor drops its folio references right after the send;
 * a truncate then only takes the folios out of the mapping, and the data
 * TCP holds stays valid memory. Between the size check and the send (one
 * fill: up to 16 folios for HTTP, 2 for a push's packet) a truncate can
 * still let the file's old bytes, or the zeroed tail of a folio, leave,
 * as with sendfile().
 *
 * Growth of the file is not served: the length stays the size at ADD. A
 * response or push that reaches a shrunk end ends there (``-ENODATA``).
 * A folio that stays not uptodate after one read of its own
 * (``->read_folio``, after the readahead's) fails with ``-EIO``; the next
 * response or push reads it again. A write into the file is served as
 * the page cache holds it from the next fill on.
 *
 * The title holds the file, not its name: a rename or unlink of the name
 * changes nothing it serves, and a lazy unmount (``umount -l``) leaves
 * the filesystem, and its device, held until the title is deleted and its
 * last reader is gone; a plain ``umount`` fails with ``EBUSY`` meanwhile.
 */

/**
 * DOC: Cursor waits
 *
 * The readers' works (an HTTP connection's, a push's) never wait for
 * storage. A fill that finds its first folio missing, or not uptodate,
 * queues the cursor's @io_work on the ``kvod_io`` workqueue and returns
 * ``-EIOCBQUEUED``; one that meets a folio marked for readahead queues it
 * too, to read ahead, and goes on. Only one runs at a time per cursor
 * (``CURSOR_IO_BUSY``), and it wakes the reader (its @wake) whenever it
 * is done, so a wake may find nothing new; the reader then just fills
 * again.
 *
 * @io_work reads ahead with the reader's own readahead state
 * (page_cache_sync_ra() on a miss, taking every reader for a streaming
 * one, so a miss reads a window of ``KVOD_CURSOR_RA_BYTES``;
 * page_cache_async_ra() on a marked folio). That may sleep on memory or on
 * the filesystem's metadata, which is why it runs here. Then it looks at
 * the folio the reader waits for: uptodate, it wakes the reader; locked
 * (a read in flight), it arms a wait; unlocked and not uptodate, it reads
 * it with ``->read_folio`` under the mapping's invalidate lock, as
 * filemap_update_page() does, and arms a wait, or, if it did that for
 * this page before, records the failure and wakes the reader.
 *
 * The wait is a struct kvod_io_wait on the folio's wait queue
 * (folio_add_wait_queue()), as io_uring's buffered reads wait
 * (io_async_buf_func()). Its wake function runs where the folio is
 * unlocked, often in an interrupt: it takes itself off the queue and
 * queues its work, nothing else. The folio may have been unlocked before
 * the wait was on the queue, and a wait cannot take itself off a folio's
 * queue (the queue is private to mm/filemap.c); so after queueing, @io_work
 * locks and unlocks the folio if it can, which wakes the wait if nobody
 * else holds the lock, and whoever holds it wakes it when they unlock.
 * The wait holds a folio reference until its work ran.
 *
 * Teardown: the wait outlives its reader. ``kvod_io_lock`` (a spinlock)
 * guards @stopped, @wait and the wait's @owner; the wait's work wakes its
 * owner under it, and kvod_cursor_stop() detaches the wait (its owner
 * becomes NULL) and stops every later wake under it, so after
 * kvod_cursor_stop() nothing of the cursor's wakes the reader. A reader
 * whose work only it queues (HTTP: the connection's work releases the
 * cursor itself) just releases the cursor, which stops it and then
 * cancels @io_work. A reader whose work others queue (a push: its wake
 * is mod_delayed_work()) stops the cursor first, then cancels its own
 * work, then releases the cursor, which waits for an @io_work that the
 * last run queued. Module exit waits until every wait ran its work
 * (``kvod_io_waits``), then destroys the workqueue: rmmod returns once
 * the reads in flight completed. A device that never completes a read
 * keeps it waiting; a reader's own limits (HTTP's send timeout) still end
 * the reader. The wake function's last instruction runs under the wait
 * queue's spinlock, with interrupts off, so module unload's
 * synchronize_rcu() waits for it before the module's text goes.
 *
 * The ``cursor_sync`` test knob, set, makes the reader's work wait as a
 * naive server's would, the control of ``library_slow.sh``: a fill that
 * misses reads ahead (page_cache_sync_ra()) and sleeps in
 * folio_wait_locked() for the page at its offset, then looks once more;
 * what is still missing then goes the asynchronous way above. It waits
 * only while @io_work is idle, and holds nothing but a folio reference
 * while it sleeps, so it cannot deadlock with the cursor's own waits; but
 * a read that never completes holds the reader's work, and whoever waits
 * for it (UNLISTEN, PUSH_STOP, rmmod), as long. A test knob only.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bug.h>
#include <linux/bvec.h>
#include <linux/errno.h>
#include <linux/limits.h>
#include <linux/minmax.h>
#include <linux/pagemap.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/swap.h>
#include <linux/wait_bit.h>

#include "cursor.h"
#include "kvod.h"

/* The readahead window of a reader of the page cache. */
#define KVOD_CURSOR_RA_BYTES	(2U << 20)
/* Reads and waits the kvod_io workqueue runs at once. */
#define KVOD_IO_MAX_ACTIVE	8

#define CURSOR_IO_BUSY		0	/* kvod_cursor.io_flags */

/**
 * struct kvod_io_wait - a wait for a folio's unlock (DOC: Cursor waits)
 * @wpq: on the folio's wait queue until woken; holds a folio reference
 * @work: runs the wake in process context, then frees the wait
 * @owner: the cursor to wake, or NULL once detached; under kvod_io_lock
 */
struct kvod_io_wait {
	struct wait_page_queue wpq;
	struct work_struct work;
	struct kvod_cursor *owner;
};

static struct workqueue_struct *kvod_io_wq;
static DEFINE_SPINLOCK(kvod_io_lock);
static atomic_t kvod_io_waits = ATOMIC_INIT(0);

/* Under kvod_io_lock: @io_work is done; run the reader unless stopped. */
static void io_wake_owner(struct kvod_cursor *c)
{
	lockdep_assert_held(&kvod_io_lock);
	clear_bit(CURSOR_IO_BUSY, &c->io_flags);
	if (!c->stopped)
		c->wake(c);
}

static void io_done(struct kvod_cursor *c)
{
	spin_lock(&kvod_io_lock);
	io_wake_owner(c);
	spin_unlock(&kvod_io_lock);
}

static void io_wait_done(struct work_struct *work)
{
	struct kvod_io_wait *w = container_of(work, struct kvod_io_wait, work);

	spin_lock(&kvod_io_lock);
	if (w->owner) {
		w->owner->wait = NULL;
		io_wake_owner(w->owner);
	}
	spin_unlock(&kvod_io_lock);
	folio_put(w->wpq.folio);
	kfree(w);
	if (atomic_dec_and_test(&kvod_io_waits))
		wake_up_var(&kvod_io_waits);
}

/* The folio's queue, its lock held, interrupts off; maybe hardirq. */
static int io_wait_wake(struct wait_queue_entry *wait, unsigned int mode,
			int sync, void *key)
{
	struct kvod_io_wait *w = container_of(wait, struct kvod_io_wait,
					      wpq.wait);

	if (!wake_page_match(&w->wpq, key))
		return 0;
	list_del_init(&wait->entry);
	queue_work(kvod_io_wq, &w->work);	/* may free @w: the last use */
	return 1;
}

/* @io_work: wake the reader when @folio is unlocked; takes our reference. */
static void io_arm(struct kvod_cursor *c, struct folio *folio)
{
	struct kvod_io_wait *w = kzalloc(sizeof(*w), GFP_KERNEL);

	if (!w) {
		/* Wait here: a kvod_io worker, never a reader's work. */
		folio_wait_locked(folio);
		folio_put(folio);
		io_done(c);
		return;
	}
	w->wpq.folio = folio;
	w->wpq.bit_nr = PG_locked;
	init_waitqueue_func_entry(&w->wpq.wait, io_wait_wake);
	INIT_WORK(&w->work, io_wait_done);

	spin_lock(&kvod_io_lock);
	if (c->stopped) {
		spin_unlock(&kvod_io_lock);
		folio_put(folio);
		kfree(w);
		return;
	}
	w->owner = c;
	c->wait = w;
	atomic_inc(&kvod_io_waits);
	spin_unlock(&kvod_io_lock);

	/* Once queued, @w may be woken and freed, its reference put. */
	folio_get(folio);
	folio_add_wait_queue(folio, &w->wpq.wait);
	/* An unlock before we were queued woke nobody: unlock once more. */
	if (folio_trylock(folio))
		folio_unlock(folio);
	folio_put(folio);
}

/*
 * @io_work: @folio (at @index) is unlocked and not uptodate: readahead
 * skipped it or its read failed. Read it again, once per page. Return:
 * true to wait for its unlock; false to let the reader look again.
 */
static bool io_read(struct kvod_cursor *c, struct folio *folio,
		    pgoff_t index)
{
	struct address_space *mapping = c->movie->file->f_mapping;
	bool wait = true;

	if (c->io_retried == index) {
		WRITE_ONCE(c->io_failed, index);
		return false;
	}
	filemap_invalidate_lock_shared(mapping);
	if (!folio_trylock(folio))
		goto out;	/* someone reads it: wait for them */
	if (folio->mapping != mapping || folio_test_uptodate(folio)) {
		folio_unlock(folio);
		wait = false;
		goto out;
	}
	c->io_retried = index;
	/* It unlocks the folio once the read is over, failed or not. */
	mapping->a_ops->read_folio(c->movie->file, folio);
out:
	filemap_invalidate_unlock_shared(mapping);
	return wait;
}

/*
 * @io_work: readahead left @index out (no memory, or a race with reclaim
 * or truncation): add a folio and read it, as filemap_create_folio()
 * does. Return: the folio, being read, with a reference; or NULL to let
 * the reader look again.
 */
static struct folio *io_create(struct kvod_cursor *c, pgoff_t index)
{
	struct address_space *mapping = c->movie->file->f_mapping;
	unsigned int order = mapping_min_folio_order(mapping);
	struct folio *folio;
	int ret;

	if ((loff_t)index << PAGE_SHIFT >= i_size_read(mapping->host))
		return NULL;	/* the file shrank: the fill sees it */
	folio = filemap_alloc_folio(mapping_gfp_mask(mapping), order);
	if (!folio) {
		WRITE_ONCE(c->io_failed, index);
		return NULL;
	}
	filemap_invalidate_lock_shared(mapping);
	ret = filemap_add_folio(mapping, folio, round_down(index, 1UL << order),
				mapping_gfp_constraint(mapping, GFP_KERNEL));
	if (ret) {
		filemap_invalidate_unlock_shared(mapping);
		folio_put(folio);
		if (ret != -EEXIST)
			WRITE_ONCE(c->io_failed, index);
		return NULL;
	}
	c->io_retried = index;
	mapping->a_ops->read_folio(c->movie->file, folio);
	filemap_invalidate_unlock_shared(mapping);
	return folio;
}

/* @io_work: have the reader woken once @index may be uptodate. */
static void io_wait_for(struct kvod_cursor *c, pgoff_t index)
{
	struct folio *folio;

	folio = filemap_get_folio(c->movie->file->f_mapping, index);
	if (IS_ERR(folio)) {
		folio = io_create(c, index);
		if (!folio)
			goto done;
	} else if (folio_test_uptodate(folio) ||
		   (!folio_test_locked(folio) && !io_read(c, folio, index))) {
		folio_put(folio);
		goto done;
	}
	io_arm(c, folio);
	return;
done:
	io_done(c);
}

/* @io_work: a miss; every reader streams, so read a whole window. */
static void io_readahead(struct kvod_cursor *c, pgoff_t index)
{
	struct file *file = c->movie->file;
	DEFINE_READAHEAD(ractl, file, &c->ra, file->f_mapping, index);

	c->ra.prev_pos = (loff_t)index << PAGE_SHIFT;
	page_cache_sync_ra(&ractl, c->ra.ra_pages);
}

/* @io_work: the reader met @ra, marked: read the next window ahead. */
static void io_readahead_async(struct kvod_cursor *c, struct folio *ra)
{
	struct file *file = c->movie->file;
	DEFINE_READAHEAD(ractl, file, &c->ra, file->f_mapping, ra->index);

	page_cache_async_ra(&ractl, ra, c->ra.ra_pages);
	folio_put(ra);
}

/*
 * Reads ahead and arms the wait (DOC: Cursor waits); never waits for a
 * read itself. It takes its inputs before anything can wake the reader,
 * whose next fill may queue it again.
 */
static void cursor_io_work(struct work_struct *work)
{
	struct kvod_cursor *c = container_of(work, struct kvod_cursor,
					     io_work);
	struct folio *ra = c->io_ra;
	pgoff_t index = c->io_index;

	c->io_ra = NULL;
	if (ra) {
		io_readahead_async(c, ra);
		io_done(c);
		return;
	}
	io_readahead(c, index);
	io_wait_for(c, index);
}

/* Queue @io_work for @index (or @ra), unless it is busy: it wakes us. */
static void io_queue(struct kvod_cursor *c, pgoff_t index, struct folio *ra)
{
	if (test_and_set_bit(CURSOR_IO_BUSY, &c->io_flags))
		return;
	c->io_index = index;
	if (ra)
		folio_get(ra);
	c->io_ra = ra;
	queue_work(kvod_io_wq, &c->io_work);
}

/**
 * kvod_cursor_init() - start a reader's walk of a movie
 * @c: the cursor, zeroed or released
 * @movie: a movie (not a live channel) that the caller holds until it
 *	released @c
 * @wake: runs the reader again after a fill returned -EIOCBQUEUED (DOC:
 *	Cursor waits); any context, under a spinlock
 *
 * Takes the cursor's reference on the movie's image, if it has one.
 *
 * Context: any; does not sleep.
 */
void kvod_cursor_init(struct kvod_cursor *c, struct kvod_movie *movie,
		      void (*wake)(struct kvod_cursor *c))
{
	struct kvod_image *img = kvod_movie_image(movie);

	memset(c, 0, sizeof(*c));
	c->movie = movie;
	c->image = img ? kvod_image_get(img) : NULL;
	c->wake = wake;
	folio_batch_init(&c->fb);
	INIT_WORK(&c->io_work, cursor_io_work);
	c->io_retried = ULONG_MAX;
	c->io_failed = ULONG_MAX;
	if (movie->file) {
		file_ra_state_init(&c->ra, movie->file->f_mapping);
		c->ra.ra_pages = max_t(unsigned int, c->ra.ra_pages,
				       KVOD_CURSOR_RA_BYTES >> PAGE_SHIFT);
	}
}

/* The last fill ended in @folio: it was marked accessed then. */
static bool folio_seen(const struct kvod_cursor *c, struct folio *folio)
{
	u64 pos = folio_pos(folio);

	return c->prev_end > pos && c->prev_end - 1 < pos + folio_size(folio);
}

/* The first @n folios of @c->fb are uptodate: point @bv at @len bytes. */
static size_t cache_bvecs(struct kvod_cursor *c, unsigned int n, u64 off,
			  size_t len, struct bio_vec *bv, unsigned int *nr)
{
	size_t total = 0;
	unsigned int i;

	for (i = 0; i < n && total < len; i++) {
		struct folio *folio = c->fb.folios[i];
		size_t in = off + total - folio_pos(folio);
		size_t seg = min(folio_size(folio) - in, len - total);

		/* Age it once per reader, as filemap_read() does. */
		if (i || !folio_seen(c, folio))
			folio_mark_accessed(folio);
		bvec_set_folio(&bv[i], folio, seg, in);
		total += seg;
	}
	*nr = i;
	c->prev_end = off + total;
	return total;
}

/*
 * Nothing uptodate at @off: fail, or have it read. @at is the folio there
 * that the fill found not uptodate, or NULL if there was none.
 */
static int cache_miss(struct kvod_cursor *c, u64 off, struct folio *at)
{
	pgoff_t index = off >> PAGE_SHIFT;
	int ret = -EIOCBQUEUED;

	if (off >= i_size_read(file_inode(c->movie->file)))
		ret = -ENODATA;
	else if (READ_ONCE(c->io_failed) == index &&
		 (!at || !folio_test_locked(at)))
		ret = -EIO;
	kvod_cursor_sent(c);
	if (ret == -EIOCBQUEUED)
		io_queue(c, index, NULL);
	return ret;
}

/*
 * The cursor_sync test knob (DOC: Cursor waits): wait for the page at
 * @off here, in the reader's work, as a server that reads in place would.
 * Only while @io_work is idle: taking CURSOR_IO_BUSY keeps it so, and
 * keeps @ra ours. Return: true if it waited, so the fill may look again.
 */
static bool cache_wait_sync(struct kvod_cursor *c, u64 off)
{
	struct file *file = c->movie->file;
	pgoff_t index = off >> PAGE_SHIFT;
	struct folio *folio;

	if (!READ_ONCE(kvod_debug_cursor_sync) ||
	    off >= i_size_read(file_inode(file)) ||
	    test_and_set_bit(CURSOR_IO_BUSY, &c->io_flags))
		return false;
	io_readahead(c, index);
	folio = filemap_get_folio(file->f_mapping, index);
	if (!IS_ERR(folio)) {
		folio_wait_locked(folio);
		folio_put(folio);
	}
	clear_bit(CURSOR_IO_BUSY, &c->io_flags);
	return !IS_ERR(folio);
}

static ssize_t cache_fill(struct kvod_cursor *c, u64 off, size_t len,
			  struct bio_vec *bv, unsigned int max,
			  unsigned int *nr, bool whole)
{
	struct file *file = c->movie->file;
	pgoff_t index = off >> PAGE_SHIFT, next;
	pgoff_t last = min_t(pgoff_t, (off + len - 1) >> PAGE_SHIFT,
			     index + max - 1);
	struct folio *ra, *at;
	unsigned int n, count;
	bool waited = false;
	size_t got;
	u64 end;

again:
	kvod_cursor_sent(c);
	next = index;
	ra = NULL;
	count = filemap_get_folios_contig(file->f_mapping, &next, last,
					  &c->fb);
	for (n = 0; n < count; n++) {
		struct folio *folio = c->fb.folios[n];

		if (!folio_test_uptodate(folio))
			break;
		if (!ra && folio_test_readahead(folio))
			ra = folio;
	}
	at = n < count ? c->fb.folios[n] : NULL;
	if (!n) {
		got = 0;
		goto miss;
	}
	/* After the uptodate tests, as filemap_splice_read() reads it. */
	end = min_t(u64, c->movie->length, i_size_read(file_inode(file)));
	if (off >= end) {
		kvod_cursor_sent(c);
		return -ENODATA;
	}
	len = min_t(u64, len, end - off);
	got = cache_bvecs(c, n, off, len, bv, nr);
	/* A packet goes whole: wait for the rest of it, or fail. */
	if (whole && got < len)
		goto miss;
	if (ra)
		io_queue(c, ra->index, ra);
	return got;
miss:
	/* Once per fill: a folio that stays not uptodate goes the async way. */
	if (!waited && cache_wait_sync(c, off + got)) {
		waited = true;
		goto again;
	}
	return cache_miss(c, off + got, at);
}

/**
 * kvod_cursor_fill() - describe a movie's bytes for a send
 * @c: the cursor
 * @off: the first byte, a movie offset
 * @len: bytes wanted, at least 1
 * @bv: filled with one vector per chunk or folio touched, pointing into
 *	the image's pages or the page cache (nothing is copied)
 * @max: room in @bv, at least 1
 * @nr: set to the vectors used
 * @whole: all of @len or nothing, but at the end of the movie or of its
 *	shrunk file (a push's packet)
 *
 * The caller sends what @bv describes, then calls kvod_cursor_sent().
 *
 * Context: the reader's; does not sleep, unless the ``cursor_sync`` test
 * knob is set (DOC: Cursor waits).
 *
 * Return: the bytes described, from 1 up to @len (less where @bv, the
 * movie, the file or, unless @whole, what is in memory ran out); -ENODATA
 * if @off is at or past the movie's end or the end of its shrunk file;
 * -EIO if the file cannot be read at @off; -EIOCBQUEUED if the bytes at
 * @off (with @whole, any of the @len) are not in memory yet: the cursor's
 * wake runs the reader again later; -EINVAL if nothing was asked for. On
 * error @bv and @nr are untouched and there is nothing to send.
 */
ssize_t kvod_cursor_fill(struct kvod_cursor *c, u64 off, size_t len,
			 struct bio_vec *bv, unsigned int max,
			 unsigned int *nr, bool whole)
{
	if (off >= c->movie->length)
		return -ENODATA;
	if (WARN_ON_ONCE(!len || !max))
		return -EINVAL;
	len = min_t(size_t, len, SSIZE_MAX);	/* fits the return value */
	if (c->image)
		return kvod_image_bvecs(c->image, off, len, bv, max, nr);
	if (WARN_ON_ONCE(!c->movie->file))
		return -ENODATA;
	return cache_fill(c, off, len, bv, max, nr, whole);
}

/**
 * kvod_cursor_sent() - let go of what the last fill described
 * @c: the cursor, maybe zeroed
 *
 * Drops the fill's folio references, once the socket took references of
 * its own on what it sent.
 *
 * Context: the reader's; does not sleep.
 */
void kvod_cursor_sent(struct kvod_cursor *c)
{
	if (folio_batch_count(&c->fb))
		folio_batch_release(&c->fb);
}

/**
 * kvod_cursor_stop() - make sure the cursor wakes its reader no more
 * @c: the cursor: initialised, zeroed or released
 *
 * Detaches an armed wait, which stays until its folio is unlocked, and
 * stops @c's wakes (DOC: Cursor waits). A reader whose work others may
 * queue calls it before it cancels that work for good.
 *
 * Context: process context; does not sleep.
 */
void kvod_cursor_stop(struct kvod_cursor *c)
{
	spin_lock(&kvod_io_lock);
	c->stopped = true;
	if (c->wait) {
		c->wait->owner = NULL;
		c->wait = NULL;
	}
	spin_unlock(&kvod_io_lock);
}

/**
 * kvod_cursor_release() - end a reader's walk
 * @c: the cursor: initialised, or zeroed, or released already (then
 *	this does nothing)
 *
 * Stops the cursor's wakes, waits for its io work, drops what the last
 * fill held and puts the cursor's image reference. The caller closes the
 * movie only afterwards.
 *
 * Context: process context, no spinlock or RCU read lock held, as the put
 * may be the image's last (kvod_image_put()).
 */
void kvod_cursor_release(struct kvod_cursor *c)
{
	if (!c->movie)
		return;
	kvod_cursor_stop(c);
	cancel_work_sync(&c->io_work);
	if (c->io_ra)		/* queued, then cancelled before it ran */
		folio_put(c->io_ra);
	c->io_ra = NULL;
	kvod_cursor_sent(c);
	kvod_image_put(c->image);
	c->image = NULL;
	c->movie = NULL;
}

/**
 * kvod_cursors_init() - the ``kvod_io`` workqueue of the cursors' reads
 *
 * Return: 0 or -ENOMEM.
 */
int kvod_cursors_init(void)
{
	kvod_io_wq = alloc_workqueue("kvod_io", WQ_UNBOUND,
				     KVOD_IO_MAX_ACTIVE);
	return kvod_io_wq ? 0 : -ENOMEM;
}

/**
 * kvod_cursors_exit() - wait for the reads in flight, then the workqueue
 *
 * Every cursor was released (HTTP and push went first): only waits whose
 * reader let go are left, each until its folio is unlocked.
 */
void kvod_cursors_exit(void)
{
	while (!wait_var_event_timeout(&kvod_io_waits,
				       !atomic_read(&kvod_io_waits), 5 * HZ))
		pr_warn("waiting for %d reads of the page cache\n",
			atomic_read(&kvod_io_waits));
	destroy_workqueue(kvod_io_wq);
}
