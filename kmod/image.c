// SPDX-License-Identifier: GPL-2.0
/* Images: a title's memory, its allocation, the read at ADD, and release. */

/**
 * DOC: Movie memory
 *
 * ADD reads the file once, from offset 0 to the size it had at the start,
 * into memory the module owns, the movie's image; the file can be closed,
 * truncated or rewritten afterwards without effect. ADD reserves the bytes
 * against the cap before it allocates them; going over is ``ENOSPC``.
 * (Unless the title stays in its file: DOC: Titles in the page cache.)
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

/**
 * DOC: Image lifetimes
 *
 * A struct kvod_image is the memory of a title: a movie's, read at ADD
 * (kvod_image_alloc(), kvod_image_read()), or a live channel's RDMA mirror
 * (kvod_image_new(), filled by live.c), pinned for the channel's life. Its
 * creator hands its one reference to the movie before the movie is
 * published, and the movie's last put drops it. Readers of the movie reach
 * the image through the movie they hold (kvod_movie_image()); nothing of
 * the image changes meanwhile. A shared RDMA map takes one more
 * (kvod_image_get()) from its build until it is freed, so that no map
 * outlives the chunks it maps (DOC: RDMA map lifetime and locking), and so
 * does the cursor of an HTTP response or a push, from its init to its
 * release (DOC: The cursor). A connection puts its map, and a reader
 * releases its cursor, before it closes its movie, so an image is freed
 * by its movie's last put.
 *
 * The last kvod_image_put() frees the chunks, burying those the network
 * stack still holds (DOC: The graveyard), then returns the image's
 * reservation. It yields between chunks, so it may sleep.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bvec.h>
#include <linux/fs.h>
#include <linux/gfp.h>
#include <linux/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>

#include "kvod.h"

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
 * more): yield between them. Every caller may sleep (see kvod_image_put()).
 */
static void image_free_chunks(struct kvod_image *img)
{
	u32 i;

	for (i = 0; i < img->nr_chunks; i++) {
		struct kvod_chunk *c = &img->chunks[i];

		if (!kvod_graveyard_bury(c->page, c->order))
			__free_pages(c->page, c->order);
		cond_resched();
	}
	kvfree(img->chunks);
}

static int chunks_reserve(struct kvod_image *img, u32 *cap, u32 want)
{
	struct kvod_chunk *bigger;
	u32 ncap;

	if (want <= *cap)
		return 0;
	ncap = max(want, *cap * 2);
	bigger = kvrealloc(img->chunks, array_size(ncap, sizeof(*bigger)),
			   GFP_KERNEL);
	if (!bigger)
		return -ENOMEM;
	img->chunks = bigger;
	*cap = ncap;
	return 0;
}

/*
 * The first guess at the array size is what an unfragmented machine needs:
 * whole 2 MiB chunks plus one per bit of the tail's page count.
 */
static u32 chunks_guess(u64 length)
{
	unsigned long pages = DIV_ROUND_UP(length, PAGE_SIZE);

	return (pages >> KVOD_CHUNK_MAX_ORDER) +
	       hweight_long(pages & (BIT(KVOD_CHUNK_MAX_ORDER) - 1));
}

/* @img->chunks has room for @cap entries (kvod_image_new()). */
static int image_alloc_chunks(struct kvod_image *img, u32 cap)
{
	unsigned long left = DIV_ROUND_UP(img->length, PAGE_SIZE);
	u64 offset = 0;
	int ret;

	while (left) {
		unsigned int order = min_t(unsigned int, KVOD_CHUNK_MAX_ORDER,
					   ilog2(left));
		struct kvod_chunk *c;
		struct page *page;
		u64 bytes;

		ret = chunks_reserve(img, &cap, img->nr_chunks + 1);
		if (ret)
			return ret;
		if (img->nr_chunks < READ_ONCE(kvod_debug_small_chunks))
			order = 0;
		page = chunk_alloc(&order);
		if (!page)
			return -ENOMEM;
		bytes = PAGE_SIZE << order;
		c = &img->chunks[img->nr_chunks++];
		c->page = page;
		c->order = order;
		c->offset = offset;
		c->len = min_t(u64, bytes, img->length - offset);
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
 * kvod_image_new() - an empty image, for a creator that lays out its chunks
 * @nr_chunks: room in its chunks array
 *
 * Reserves nothing. The caller fills img->chunks in order, counting each
 * in img->nr_chunks once its page is allocated, and sets img->length; on
 * failure it just puts the image, which frees the pages counted.
 *
 * Return: the image with one reference, or NULL.
 */
struct kvod_image *kvod_image_new(u32 nr_chunks)
{
	struct kvod_image *img;

	img = kzalloc(sizeof(*img), GFP_KERNEL);
	if (!img)
		return NULL;
	img->chunks = kvmalloc_array(nr_chunks, sizeof(*img->chunks),
				     GFP_KERNEL);
	if (!img->chunks) {
		kfree(img);
		return NULL;
	}
	kref_init(&img->ref);
	return img;
}

/**
 * kvod_image_alloc() - reserve and allocate the memory of a movie
 * @length: its bytes, 1 .. KVOD_MOVIE_MAX_BYTES
 *
 * The bytes, in whole pages, are reserved against the cap (DOC: Memory
 * accounting) before any is allocated, in chunks as DOC: Movie memory
 * says. Their contents are left to kvod_image_read().
 *
 * Context: may sleep.
 *
 * Return: the image with one reference, or ERR_PTR(-ENOSPC) or
 * ERR_PTR(-ENOMEM); on error nothing stays allocated or reserved.
 */
struct kvod_image *kvod_image_alloc(u64 length)
{
	u64 resident = PAGE_ALIGN(length);
	u32 cap = chunks_guess(length);
	struct kvod_image *img;
	int ret;

	ret = kvod_mem_reserve(resident);
	if (ret)
		return ERR_PTR(ret);
	img = kvod_image_new(cap);
	if (!img) {
		kvod_mem_release(KVOD_MEM_RESIDENT, resident);
		return ERR_PTR(-ENOMEM);
	}
	img->resident = resident;
	img->length = length;

	ret = image_alloc_chunks(img, cap);
	if (ret) {
		kvod_image_put(img);
		return ERR_PTR(ret);
	}
	return img;
}

/**
 * kvod_image_read() - fill an image from a file
 * @img: from kvod_image_alloc(), not yet handed to a movie
 * @file: a readable file of at least @img->length bytes
 *
 * Context: may sleep for as long as the read takes (DOC: Movie memory); a
 * fatal signal interrupts it.
 *
 * Return: 0, or a negative errno (-EIO if the file shrank under the read).
 */
int kvod_image_read(struct kvod_image *img, struct file *file)
{
	loff_t pos = 0;
	u32 i;
	int ret;

	for (i = 0; i < img->nr_chunks; i++) {
		ret = chunk_read(file, &img->chunks[i], &pos);
		if (ret)
			return ret;
	}
	return 0;
}

/**
 * kvod_image_get() - take a reference to an image
 * @img: an image the caller holds, directly or through its movie
 *
 * Return: @img.
 */
struct kvod_image *kvod_image_get(struct kvod_image *img)
{
	kref_get(&img->ref);
	return img;
}

static void image_release(struct kref *ref)
{
	struct kvod_image *img = container_of(ref, struct kvod_image, ref);

	image_free_chunks(img);
	kvod_mem_release(KVOD_MEM_RESIDENT, img->resident);
	kfree(img);
}

/**
 * kvod_image_put() - drop a reference to an image
 * @img: the image, or NULL
 *
 * See DOC: Image lifetimes.
 *
 * Context: process context, no spinlock or RCU read lock held, as the last
 * put yields between chunks; might_sleep() checks every caller.
 */
void kvod_image_put(struct kvod_image *img)
{
	might_sleep();
	if (img)
		kref_put(&img->ref, image_release);
}

/**
 * kvod_image_chunk() - find the chunk holding an offset
 * @img: an image the caller holds, directly or through its movie
 * @offset: byte offset, below img->length
 *
 * Return: the chunk, or NULL if @offset is past the end.
 */
const struct kvod_chunk *kvod_image_chunk(const struct kvod_image *img,
					  u64 offset)
{
	u32 lo = 0, hi = img->nr_chunks;

	if (offset >= img->length)
		return NULL;
	while (hi - lo > 1) {
		u32 mid = lo + (hi - lo) / 2;

		if (img->chunks[mid].offset <= offset)
			lo = mid;
		else
			hi = mid;
	}
	return &img->chunks[lo];
}

/**
 * kvod_image_next_chunk() - the chunk after one, in title order
 * @img: an image the caller holds, directly or through its movie
 * @c: one of @img's chunks
 *
 * A walk over an image's bytes finds its first chunk with
 * kvod_image_chunk() and steps with this, instead of searching again for
 * every chunk.
 *
 * Return: the next chunk, or NULL after the last.
 */
const struct kvod_chunk *kvod_image_next_chunk(const struct kvod_image *img,
					       const struct kvod_chunk *c)
{
	return ++c < img->chunks + img->nr_chunks ? c : NULL;
}

/**
 * kvod_image_bvecs() - describe an image's bytes for a socket
 * @img: an image the caller holds, directly or through its movie
 * @off: first byte, below img->length
 * @len: bytes wanted
 * @bv: filled with one vector per chunk touched, pointing into the image's
 *	pages (for MSG_SPLICE_PAGES: nothing is copied)
 * @max: room in @bv
 * @nr: set to the vectors used
 *
 * HTTP and push call it through their cursor (kvod_cursor_fill()).
 *
 * Return: the bytes described: @len, or less where @bv or the image ran
 * out.
 */
size_t kvod_image_bvecs(const struct kvod_image *img, u64 off, size_t len,
			struct bio_vec *bv, unsigned int max, unsigned int *nr)
{
	const struct kvod_chunk *c = kvod_image_chunk(img, off);
	size_t total = 0;
	unsigned int n = 0;

	for (; c && n < max && total < len; c = kvod_image_next_chunk(img, c)) {
		u64 in = off + total - c->offset;
		size_t seg = min_t(u64, c->len - in, len - total);

		bvec_set_page(&bv[n++], c->page, seg, in);
		total += seg;
	}
	*nr = n;
	return total;
}
