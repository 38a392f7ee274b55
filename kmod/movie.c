// SPDX-License-Identifier: GPL-2.0
/* Movie memory: reservation, allocation, the read at ADD, and release. */

/**
 * DOC: Movie memory
 *
 * ADD reads the file once, from offset 0 to the size it had at the start,
 * into memory the module owns; the file can be closed, truncated or
 * rewritten afterwards without effect. ADD reserves the bytes against the
 * cap before it allocates them; going over is ``ENOSPC``.
 *
 * The body is held in order-9 compound pages (2 MiB on x86-64), the tail
 * in descending powers of two, so at most one page is partly used. If a
 * 2 MiB allocation fails, that chunk is retried at lower orders, down to
 * single pages, and the next chunk tries 2 MiB again. High orders use
 * ``__GFP_NORETRY``; single pages use ``__GFP_RETRY_MAYFAIL``, so a large
 * ADD fails with ``ENOMEM`` rather than waking the OOM killer. The unused
 * end of the last page is zeroed, because RDMA exposes whole pages and
 * must never expose stale kernel memory.
 *
 * The pages are compound because the RDMA path registers 2 MiB chunks
 * with 2 MiB MR pages, and because the TCP and push paths hand page
 * references to the stack (``MSG_SPLICE_PAGES``), which takes get_page()
 * references on the head: those keep a page alive after the movie is
 * freed, until TCP is done with it or the UDP packet that holds it is
 * freed; it is counted in the graveyard meanwhile (DOC: The graveyard).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bvec.h>
#include <linux/fs.h>
#include <linux/gfp.h>
#include <linux/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "kvod.h"

static atomic_t kvod_movies_allocated = ATOMIC_INIT(0);
/* Movies out of the catalog but not yet freed: not those still loading. */
static atomic_t kvod_movies_zombie = ATOMIC_INIT(0);

unsigned int kvod_movies_alive(void)
{
	return atomic_read(&kvod_movies_allocated);
}

/* The catalog let @movie go (under its mutex): a zombie until freed. */
void kvod_movie_unlisted(struct kvod_movie *movie)
{
	movie->unlisted = true;
	atomic_inc(&kvod_movies_zombie);
}

unsigned int kvod_movie_zombies(void)
{
	return atomic_read(&kvod_movies_zombie);
}

static struct page *chunk_alloc(unsigned int *order)
{
	const gfp_t high = GFP_KERNEL | __GFP_COMP | __GFP_NOWARN | __GFP_NORETRY;
	const gfp_t low = GFP_KERNEL | __GFP_COMP | __GFP_NOWARN | __GFP_RETRY_MAYFAIL;
	struct page *page;

	for (;;) {
		page = alloc_pages(*order ? high : low, *order);
		if (page || !*order)
			return page;
		(*order)--;
	}
}

/*
 * A movie of up to 1 TiB may be thousands of chunks (or, fragmented, far
 * more): yield between them. Every caller may sleep (see kvod_movie_put()).
 */
static void movie_free_chunks(struct kvod_movie *movie)
{
	u32 i;

	for (i = 0; i < movie->nr_chunks; i++) {
		struct kvod_chunk *c = &movie->chunks[i];

		if (!kvod_graveyard_bury(c->page, c->order))
			__free_pages(c->page, c->order);
		cond_resched();
	}
	kvfree(movie->chunks);
	movie->chunks = NULL;
	movie->nr_chunks = 0;
}

static int chunks_reserve(struct kvod_movie *movie, u32 *cap, u32 want)
{
	struct kvod_chunk *bigger;
	u32 ncap;

	if (want <= *cap)
		return 0;
	ncap = max(want, *cap * 2);
	bigger = kvrealloc(movie->chunks, array_size(ncap, sizeof(*bigger)),
			   GFP_KERNEL);
	if (!bigger)
		return -ENOMEM;
	movie->chunks = bigger;
	*cap = ncap;
	return 0;
}

/*
 * The first guess at the array size is what an unfragmented machine needs:
 * whole 2 MiB chunks plus one per bit of the tail's page count.
 */
static int movie_alloc_chunks(struct kvod_movie *movie)
{
	unsigned long left = DIV_ROUND_UP(movie->length, PAGE_SIZE);
	unsigned long full = left >> KVOD_CHUNK_MAX_ORDER;
	u32 cap = 0;
	u64 offset = 0;
	int ret;

	ret = chunks_reserve(movie, &cap, full + hweight_long(left &
				(BIT(KVOD_CHUNK_MAX_ORDER) - 1)));
	if (ret)
		return ret;

	while (left) {
		unsigned int order = min_t(unsigned int, KVOD_CHUNK_MAX_ORDER,
					   ilog2(left));
		struct kvod_chunk *c;
		struct page *page;
		u64 bytes;

		ret = chunks_reserve(movie, &cap, movie->nr_chunks + 1);
		if (ret)
			return ret;
		if (movie->nr_chunks < READ_ONCE(kvod_debug_small_chunks))
			order = 0;
		page = chunk_alloc(&order);
		if (!page)
			return -ENOMEM;
		bytes = PAGE_SIZE << order;
		c = &movie->chunks[movie->nr_chunks++];
		c->page = page;
		c->order = order;
		c->offset = offset;
		c->len = min_t(u64, bytes, movie->length - offset);
		offset += c->len;
		left -= 1UL << order;
		cond_resched();
	}
	return 0;
}

static int chunk_read(struct file *file, struct kvod_chunk *c, loff_t *pos)
{
	char *buf = page_address(c->page);
	size_t done = 0;

	while (done < c->len) {
		ssize_t n;

		if (fatal_signal_pending(current))
			return -EINTR;
		n = kernel_read(file, buf + done, c->len - done, pos);
		if (n < 0)
			return n;
		if (n == 0)
			return -EIO;	/* the file shrank under us */
		done += n;
		cond_resched();
	}
	memset(buf + c->len, 0, (PAGE_SIZE << c->order) - c->len);
	return 0;
}

/**
 * kvod_movie_alloc() - reserve memory for a movie or channel and set it up
 * @name: valid name
 * @resident: bytes of memory it will hold
 * @bitrate: nominal bits/s
 *
 * @resident is reserved against the cap (DOC: Memory accounting). The
 * caller fills in the memory (movie chunks, or the live ring and its
 * @release); on failure it just drops the reference: the release handles
 * a half-built movie and returns the reservation.
 *
 * Return: a movie with one reference, or an ERR_PTR.
 */
struct kvod_movie *kvod_movie_alloc(const char *name, u64 resident,
				    u64 bitrate)
{
	struct kvod_movie *movie;
	int ret;

	ret = kvod_mem_reserve(resident);
	if (ret)
		return ERR_PTR(ret);
	movie = kzalloc(sizeof(*movie), GFP_KERNEL);
	if (!movie) {
		kvod_mem_release(KVOD_MEM_RESIDENT, resident);
		return ERR_PTR(-ENOMEM);
	}
	kref_init(&movie->ref);
	strscpy(movie->name, name, sizeof(movie->name));
	movie->bitrate = bitrate;
	movie->resident = resident;
	atomic_inc(&kvod_movies_allocated);
	return movie;
}

/**
 * kvod_movie_load() - make a movie resident from a file
 * @name: valid movie name
 * @file: a readable regular file of @length bytes
 * @length: bytes to read, 1 .. KVOD_MOVIE_MAX_BYTES
 * @bitrate: nominal bits/s
 *
 * Context: may sleep for as long as the read takes (DOC: Movie memory); a
 * fatal signal interrupts it.
 *
 * Return: a movie with one reference, or an ERR_PTR; on error nothing
 * stays allocated or reserved.
 */
struct kvod_movie *kvod_movie_load(const char *name, struct file *file,
				   u64 length, u64 bitrate)
{
	struct kvod_movie *movie;
	loff_t pos = 0;
	u32 i;
	int ret;

	movie = kvod_movie_alloc(name, PAGE_ALIGN(length), bitrate);
	if (IS_ERR(movie))
		return movie;
	movie->length = length;

	ret = movie_alloc_chunks(movie);
	if (ret)
		goto err_put;
	for (i = 0; i < movie->nr_chunks; i++) {
		ret = chunk_read(file, &movie->chunks[i], &pos);
		if (ret)
			goto err_put;
	}
	return movie;

err_put:
	kvod_movie_put(movie);
	return ERR_PTR(ret);
}

static void movie_release(struct kref *ref)
{
	struct kvod_movie *movie = container_of(ref, struct kvod_movie, ref);

	pr_debug("movie %s: freeing %llu bytes\n", movie->name,
		 movie->resident);
	if (movie->release)
		movie->release(movie);
	movie_free_chunks(movie);
	kvod_mem_release(KVOD_MEM_RESIDENT, movie->resident);
	if (movie->unlisted)
		atomic_dec(&kvod_movies_zombie);
	atomic_dec(&kvod_movies_allocated);
	kfree_rcu(movie, rcu);
}

/**
 * kvod_movie_put() - drop a reference to a movie
 * @movie: the movie, or NULL
 *
 * See DOC: Movie lifetimes.
 *
 * Context: process context, no spinlock or RCU read lock held, as the last
 * put yields between chunks; might_sleep() checks every caller.
 */
void kvod_movie_put(struct kvod_movie *movie)
{
	might_sleep();
	if (movie)
		kref_put(&movie->ref, movie_release);
}

/**
 * kvod_movie_chunk() - find the chunk holding a movie offset
 * @movie: a movie the caller holds a reference on
 * @offset: byte offset, below movie->length
 *
 * Return: the chunk, or NULL if @offset is past the end.
 */
const struct kvod_chunk *kvod_movie_chunk(const struct kvod_movie *movie,
					  u64 offset)
{
	u32 lo = 0, hi = movie->nr_chunks;

	if (offset >= movie->length)
		return NULL;
	while (hi - lo > 1) {
		u32 mid = lo + (hi - lo) / 2;

		if (movie->chunks[mid].offset <= offset)
			lo = mid;
		else
			hi = mid;
	}
	return &movie->chunks[lo];
}

/**
 * kvod_movie_next_chunk() - the chunk after one, in movie order
 * @movie: a movie the caller holds a reference on
 * @c: one of @movie's chunks
 *
 * A walk over movie bytes finds its first chunk with kvod_movie_chunk()
 * and steps with this, instead of searching again for every chunk.
 *
 * Return: the next chunk, or NULL after the last.
 */
const struct kvod_chunk *kvod_movie_next_chunk(const struct kvod_movie *movie,
					       const struct kvod_chunk *c)
{
	return ++c < movie->chunks + movie->nr_chunks ? c : NULL;
}

/**
 * kvod_movie_bvecs() - describe movie bytes for a socket
 * @movie: a movie the caller holds a reference on
 * @off: first byte, below movie->length
 * @len: bytes wanted
 * @bv: filled with one vector per chunk touched, pointing into the movie's
 *	pages (for MSG_SPLICE_PAGES: nothing is copied)
 * @max: room in @bv
 * @nr: set to the vectors used
 *
 * Return: the bytes described: @len, or less where @bv or the movie ran
 * out.
 */
size_t kvod_movie_bvecs(const struct kvod_movie *movie, u64 off, size_t len,
			struct bio_vec *bv, unsigned int max, unsigned int *nr)
{
	const struct kvod_chunk *c = kvod_movie_chunk(movie, off);
	size_t total = 0;
	unsigned int n = 0;

	for (; c && n < max && total < len; c = kvod_movie_next_chunk(movie, c)) {
		u64 in = off + total - c->offset;
		size_t seg = min_t(u64, c->len - in, len - total);

		bvec_set_page(&bv[n++], c->page, seg, in);
		total += seg;
	}
	*nr = n;
	return total;
}
