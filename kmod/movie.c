// SPDX-License-Identifier: GPL-2.0
/* Movies: the title that the catalog lists and readers hold, and its image. */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/file.h>
#include <linux/fs.h>
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

static struct kvod_movie *movie_create(const char *name, u64 bitrate)
{
	struct kvod_movie *movie;

	movie = kzalloc(sizeof(*movie), GFP_KERNEL);
	if (!movie)
		return NULL;
	kref_init(&movie->ref);
	strscpy(movie->name, name, sizeof(movie->name));
	movie->bitrate = bitrate;
	atomic_inc(&kvod_movies_allocated);
	return movie;
}

/**
 * kvod_movie_alloc() - reserve memory for a live channel and set it up
 * @name: valid name
 * @resident: bytes of memory it will hold: its ring and its mirror
 * @bitrate: nominal bits/s
 *
 * @resident is reserved against the cap (DOC: Memory accounting) as the
 * movie's own, kept in movie->resident. The caller fills in the memory
 * (the live ring and its @release, and the mirror, an image that reserves
 * nothing of its own); on failure it just drops the reference: the
 * release handles a half-built movie and returns the reservation.
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
	movie = movie_create(name, bitrate);
	if (!movie) {
		kvod_mem_release(KVOD_MEM_RESIDENT, resident);
		return ERR_PTR(-ENOMEM);
	}
	movie->resident = resident;
	return movie;
}

/**
 * kvod_movie_load() - make a movie resident from a file
 * @name: valid movie name
 * @file: a readable regular file of @length bytes
 * @length: bytes to read, 1 .. KVOD_MOVIE_MAX_BYTES
 * @bitrate: nominal bits/s
 *
 * The movie's image (DOC: Image lifetimes) reserves and holds the memory;
 * the movie reserves nothing of its own.
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
	struct kvod_image *img;
	int ret;

	img = kvod_image_alloc(length);
	if (IS_ERR(img))
		return ERR_CAST(img);
	ret = kvod_image_read(img, file);
	if (ret)
		goto err_put;
	movie = movie_create(name, bitrate);
	if (!movie) {
		ret = -ENOMEM;
		goto err_put;
	}
	movie->length = length;
	RCU_INIT_POINTER(movie->image, img);	/* not published yet */
	return movie;

err_put:
	kvod_image_put(img);
	return ERR_PTR(ret);
}

/**
 * kvod_movie_cached() - register a movie that stays in its file
 * @name: valid movie name
 * @file: a readable regular file of at least @length bytes, whose mapping
 *	reads through the page cache (``a_ops->read_folio``)
 * @length: the file's size now: the movie's length, 1 ..
 *	KVOD_MOVIE_MAX_BYTES
 * @bitrate: nominal bits/s
 *
 * Reads nothing and reserves nothing: the movie holds @file (a reference
 * of its own, put by its last put) and has no image; HTTP and push serve
 * it from the page cache (DOC: Titles in the page cache).
 *
 * Return: a movie with one reference, or ERR_PTR(-ENOMEM).
 */
struct kvod_movie *kvod_movie_cached(const char *name, struct file *file,
				     u64 length, u64 bitrate)
{
	struct kvod_movie *movie = movie_create(name, bitrate);

	if (!movie)
		return ERR_PTR(-ENOMEM);
	movie->length = length;
	movie->file = get_file(file);
	return movie;
}

static void movie_release(struct kref *ref)
{
	struct kvod_movie *movie = container_of(ref, struct kvod_movie, ref);

	pr_debug("movie %s: freeing %llu bytes\n", movie->name,
		 kvod_movie_resident(movie));
	if (movie->release)
		movie->release(movie);
	kvod_image_put(kvod_movie_image(movie));
	if (movie->file)
		fput(movie->file);
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
 * put may free the image, which yields between chunks (kvod_image_put());
 * might_sleep() checks every caller.
 */
void kvod_movie_put(struct kvod_movie *movie)
{
	might_sleep();
	if (movie)
		kref_put(&movie->ref, movie_release);
}

/**
 * kvod_movie_resident() - the bytes a movie holds against the cap
 * @movie: a movie the caller holds
 *
 * Return: what the movie reserved itself and what its image reserved.
 */
u64 kvod_movie_resident(const struct kvod_movie *movie)
{
	const struct kvod_image *img = kvod_movie_image(movie);

	return movie->resident + (img ? img->resident : 0);
}
