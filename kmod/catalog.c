// SPDX-License-Identifier: GPL-2.0
/* The catalog: movies by name. */

/**
 * DOC: Catalog locking
 *
 * ``kvod_catalog_lock``, a mutex, serialises the catalog's changes (ADD's
 * insert, DEL, exit) and guards the movie count; LIST takes its snapshot
 * under it. The data paths never take it: they look a movie up under RCU,
 * take a reference with kref_get_unless_zero() and read the immutable
 * fields (name, length, image, file) of the movie they hold. DEL drops the
 * catalog's reference only after the movie left the hash, so a lookup that
 * races with DEL either misses the movie or holds a reference to a movie
 * that is on its way out; either way it never touches freed memory.
 * Counters are atomics.
 *
 * ADD reads the whole file without the lock (it can take seconds), unless
 * the title stays in it (DOC: Titles in the page cache), after a first
 * duplicate check that makes a taken name fail fast; a second check under
 * the lock, before the insert, settles races between concurrent ADDs of
 * one name (one gets ``EEXIST``). So a slow read never blocks queries.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/hashtable.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/stringhash.h>

#include "kvod.h"

#define KVOD_HASH_BITS	8

static DEFINE_HASHTABLE(kvod_movies, KVOD_HASH_BITS);
static DEFINE_MUTEX(kvod_catalog_lock);
static u32 kvod_nr_movies;	/* under kvod_catalog_lock */

static u32 name_hash(const char *name)
{
	return full_name_hash(NULL, name, strlen(name));
}

/* Under kvod_catalog_lock or rcu_read_lock(). */
static struct kvod_movie *catalog_find(const char *name)
{
	struct kvod_movie *movie;

	hash_for_each_possible_rcu(kvod_movies, movie, hnode, name_hash(name),
				   lockdep_is_held(&kvod_catalog_lock)) {
		if (!strcmp(movie->name, name))
			return movie;
	}
	return NULL;
}

static bool catalog_has(const char *name)
{
	guard(mutex)(&kvod_catalog_lock);
	return catalog_find(name);
}

/* Publish @movie, or put it if its name was taken meanwhile (-EEXIST). */
static int catalog_insert(struct kvod_movie *movie)
{
	mutex_lock(&kvod_catalog_lock);
	if (catalog_find(movie->name)) {
		mutex_unlock(&kvod_catalog_lock);
		kvod_movie_put(movie);
		return -EEXIST;
	}
	hash_add_rcu(kvod_movies, &movie->hnode, name_hash(movie->name));
	kvod_nr_movies++;
	mutex_unlock(&kvod_catalog_lock);
	return 0;
}

/*
 * A title stays in its file only while the add_lazy knob is set, and only
 * if its filesystem reads through the page cache; tmpfs, for one, has no
 * ->read_folio, so such a file is read into memory as with PIN.
 */
static bool add_cached(struct file *file, bool pin)
{
	return READ_ONCE(kvod_debug_add_lazy) && !pin &&
	       file->f_mapping->a_ops->read_folio;
}

static struct kvod_movie *movie_make(const char *name, struct file *file,
				     loff_t size, u64 bitrate, bool pin)
{
	if (add_cached(file, pin))
		return kvod_movie_cached(name, file, size, bitrate);
	return kvod_movie_load(name, file, size, bitrate);
}

/**
 * kvod_catalog_add() - register a movie
 * @name: movie name (validated here)
 * @file: an open file the caller checked is readable
 * @bitrate: nominal bits/s, 0 if unknown
 * @pin: KVOD_ADD_PIN: read the file into memory whatever add_lazy says
 *
 * Return: 0, or a negative errno as documented in uapi/linux/kvod.h.
 */
int kvod_catalog_add(const char *name, struct file *file, u64 bitrate,
		     bool pin)
{
	struct inode *inode = file_inode(file);
	const struct kvod_image *img;
	struct kvod_movie *movie;
	unsigned int nr_chunks;
	loff_t size;
	int ret;

	if (!kvod_name_valid(name))
		return -EINVAL;
	if (!S_ISREG(inode->i_mode))
		return -EINVAL;
	size = i_size_read(inode);
	if (size <= 0)
		return -EINVAL;
	if (size > KVOD_MOVIE_MAX_BYTES)
		return -EFBIG;
	if (catalog_has(name))
		return -EEXIST;

	movie = movie_make(name, file, size, bitrate, pin);
	if (IS_ERR(movie))
		return PTR_ERR(movie);
	/* Once in the catalog a DEL may free it: nothing of it is read after. */
	img = kvod_movie_image(movie);
	nr_chunks = img ? img->nr_chunks : 0;
	ret = catalog_insert(movie);
	if (ret)
		return ret;
	if (nr_chunks)
		pr_info("movie %s: %lld bytes in %u chunks\n", name, size,
			nr_chunks);
	else
		pr_info("movie %s: %lld bytes in the page cache\n", name, size);
	return 0;
}

/**
 * kvod_catalog_live_create() - create and register a live channel
 * @req: the request from userspace
 *
 * Return: 0, or a negative errno as documented in uapi/linux/kvod.h.
 */
int kvod_catalog_live_create(const struct kvod_live_create *req)
{
	struct kvod_movie *movie;
	int ret;

	if (!kvod_name_valid(req->name))
		return -EINVAL;
	if (catalog_has(req->name))
		return -EEXIST;
	movie = kvod_live_create(req);
	if (IS_ERR(movie))
		return PTR_ERR(movie);
	ret = catalog_insert(movie);
	if (ret)
		return ret;
	pr_info("live channel %s: %u chunks of %u bytes\n", req->name,
		req->nr_chunks, req->chunk_size);
	return 0;
}

/* Take a movie out of the catalog; returns the catalog's reference. */
static struct kvod_movie *catalog_unlink(struct kvod_movie *movie)
{
	lockdep_assert_held(&kvod_catalog_lock);
	hash_del_rcu(&movie->hnode);
	kvod_nr_movies--;
	kvod_movie_unlisted(movie);
	return movie;
}

/**
 * kvod_catalog_del() - remove a movie's name from the catalog
 * @name: movie name (validated here)
 *
 * Return: 0, -EINVAL or -ENOENT.
 */
int kvod_catalog_del(const char *name)
{
	struct kvod_movie *movie;

	if (!kvod_name_valid(name))
		return -EINVAL;

	mutex_lock(&kvod_catalog_lock);
	movie = catalog_find(name);
	if (movie)
		catalog_unlink(movie);
	mutex_unlock(&kvod_catalog_lock);

	if (!movie)
		return -ENOENT;
	if (movie->live)
		kvod_live_end(movie->live);
	pr_info("%s %s: deleted\n", movie->live ? "live channel" : "movie",
		name);
	kvod_movie_put(movie);
	return 0;
}

/**
 * kvod_movie_get() - look a movie up by name for a reader
 * @name: NUL-terminated name
 *
 * Context: any that may use RCU; takes no lock.
 *
 * Return: the movie with a new reference, or NULL.
 */
struct kvod_movie *kvod_movie_get(const char *name)
{
	struct kvod_movie *movie;

	rcu_read_lock();
	movie = catalog_find(name);
	if (movie && !kref_get_unless_zero(&movie->ref))
		movie = NULL;
	rcu_read_unlock();
	return movie;
}

/**
 * kvod_movie_open() - attach a reader to a movie (DOC: Movie lifetimes)
 * @name: NUL-terminated name
 *
 * Return: the movie, or NULL.
 */
struct kvod_movie *kvod_movie_open(const char *name)
{
	struct kvod_movie *movie = kvod_movie_get(name);

	if (movie)
		atomic_inc(&movie->active_clients);
	return movie;
}

/**
 * kvod_movie_close() - detach a reader from its movie
 * @movie: from kvod_movie_open(), or NULL
 *
 * Context: as kvod_movie_put().
 */
void kvod_movie_close(struct kvod_movie *movie)
{
	if (!movie)
		return;
	atomic_dec(&movie->active_clients);
	kvod_movie_put(movie);
}

static void movie_fill_info(struct kvod_movie *movie,
			    struct kvod_movie_info *info)
{
	const struct kvod_image *img = kvod_movie_image(movie);

	memset(info, 0, sizeof(*info));
	info->size = sizeof(*info);
	strscpy(info->name, movie->name, sizeof(info->name));
	info->length = movie->length;
	info->bitrate = movie->bitrate;
	info->resident = kvod_movie_resident(movie);
	info->chunks = img ? img->nr_chunks : 0;
	info->active_clients = atomic_read(&movie->active_clients);
	info->bytes_served = atomic64_read(&movie->bytes_served);
	if (movie->live)
		kvod_live_fill_info(movie->live, info);
}

/**
 * kvod_catalog_info() - describe one movie
 * @name: movie name (validated here)
 * @info: filled on success
 *
 * Return: 0, -EINVAL or -ENOENT.
 */
int kvod_catalog_info(const char *name, struct kvod_movie_info *info)
{
	struct kvod_movie *movie;

	if (!kvod_name_valid(name))
		return -EINVAL;
	movie = kvod_movie_get(name);
	if (!movie)
		return -ENOENT;
	movie_fill_info(movie, info);
	kvod_movie_put(movie);
	return 0;
}

static int info_cmp(const void *a, const void *b)
{
	const struct kvod_movie_info *x = a, *y = b;

	return strcmp(x->name, y->name);
}

/**
 * kvod_catalog_list() - snapshot the catalog
 * @infos: set to a kvmalloc()ed array (ZERO_SIZE_PTR if empty) that the
 *	caller kvfree()s
 * @nr: set to the number of movies
 *
 * Return: 0 or -ENOMEM. The array is sorted by name.
 */
int kvod_catalog_list(struct kvod_movie_info **infos, u32 *nr)
{
	struct kvod_movie_info *arr;
	struct kvod_movie *movie;
	unsigned int bkt;
	u32 n = 0;

	mutex_lock(&kvod_catalog_lock);
	arr = kvmalloc_array(kvod_nr_movies, sizeof(*arr), GFP_KERNEL);
	if (arr) {
		hash_for_each(kvod_movies, bkt, movie, hnode)
			movie_fill_info(movie, &arr[n++]);
	}
	mutex_unlock(&kvod_catalog_lock);
	if (!arr)
		return -ENOMEM;

	sort(arr, n, sizeof(*arr), info_cmp, NULL);
	*infos = arr;
	*nr = n;
	return 0;
}

/**
 * kvod_catalog_stats() - the catalog's part of STATS
 * @st: its movies and zombies are filled
 */
void kvod_catalog_stats(struct kvod_stats *st)
{
	mutex_lock(&kvod_catalog_lock);
	st->movies = kvod_nr_movies;
	mutex_unlock(&kvod_catalog_lock);
	st->zombies = kvod_movie_zombies();
}

int kvod_catalog_init(void)
{
	return 0;
}

/* No reader is left (DOC: Module load and exit): a WARN here is a leak. */
void kvod_catalog_exit(void)
{
	struct kvod_movie *movie;
	struct hlist_node *tmp;
	unsigned int bkt;

	mutex_lock(&kvod_catalog_lock);
	hash_for_each_safe(kvod_movies, bkt, tmp, movie, hnode)
		kvod_movie_put(catalog_unlink(movie));
	mutex_unlock(&kvod_catalog_lock);

	/*
	 * Structs still waiting in kfree_rcu() are plain kmalloc memory and
	 * need no barrier; the counters drop before that, at the last put.
	 */
	WARN(kvod_movies_alive(), "kvod: leaked %u movies\n",
	     kvod_movies_alive());
}
