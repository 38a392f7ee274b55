/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kvod internal interfaces, grouped by the file that owns them.
 *
 * Object lifetimes (see Documentation/kvod.rst for the full picture):
 *
 *   struct kvod_movie: one reference is held by the catalog from ADD until
 *   DEL (or module exit); every reader (an HTTP download, an RDMA
 *   connection, a push) holds its own, taken with kvod_movie_get() or
 *   kvod_movie_hold(). The last kvod_movie_put() frees the memory and the
 *   resident-bytes reservation; the struct itself is freed after an RCU
 *   grace period because lookups walk the catalog under rcu_read_lock().
 *
 * Locking: the catalog mutex serialises changes (ADD's insert, DEL, LIST
 * snapshots, exit). Data paths never take it: they look movies up under
 * RCU and read immutable fields (name, length, chunks) of a movie they hold
 * a reference on. Counters are atomics.
 */
#ifndef _KVOD_H
#define _KVOD_H

#include <linux/atomic.h>
#include <linux/bits.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/rcupdate.h>
#include <linux/types.h>

#include <linux/kvod.h>

struct file;
struct page;

/* Largest chunk: 2 MiB, one PMD-sized compound page on x86-64. */
#define KVOD_CHUNK_MAX_ORDER	9
/* Largest movie we accept; keeps chunk counts and offsets well in range. */
#define KVOD_MOVIE_MAX_BYTES	BIT_ULL(40)

/**
 * struct kvod_chunk - one physically contiguous piece of a movie
 * @page: head of a compound page of 1 << @order pages
 * @order: allocation order
 * @len: bytes of movie data it holds (the last chunk may be partly used)
 * @offset: movie offset of its first byte
 */
struct kvod_chunk {
	struct page *page;
	u32 order;
	u32 len;
	u64 offset;
};

/**
 * struct kvod_movie - a registered movie, resident in memory
 * @ref: see the lifetime rules above
 * @hnode: catalog hash linkage, RCU-protected, under the catalog mutex
 * @rcu: defers freeing the struct past concurrent RCU lookups
 * @name: NUL-terminated name; immutable
 * @length: bytes of movie data; immutable
 * @bitrate: nominal bits/s, 0 if unknown; immutable
 * @resident: bytes of memory held by @chunks; immutable
 * @nr_chunks: entries in @chunks; immutable
 * @chunks: the memory, in movie order; immutable after ADD
 * @active_clients: readers currently attached
 * @bytes_served: bytes handed to clients
 */
struct kvod_movie {
	struct kref ref;
	struct hlist_node hnode;
	struct rcu_head rcu;
	char name[KVOD_NAME_MAX];
	u64 length;
	u64 bitrate;
	u64 resident;
	u32 nr_chunks;
	struct kvod_chunk *chunks;
	atomic_t active_clients;
	atomic64_t bytes_served;
};

/* movie.c */
struct kvod_movie *kvod_movie_load(const char *name, struct file *file,
				   u64 length, u64 bitrate, u64 cap);
void kvod_movie_put(struct kvod_movie *movie);
const struct kvod_chunk *kvod_movie_chunk(const struct kvod_movie *movie,
					  u64 offset);
u64 kvod_resident_bytes(void);
unsigned int kvod_movies_alive(void);

/* catalog.c */
int kvod_catalog_init(void);
void kvod_catalog_exit(void);
bool kvod_name_valid(const char name[KVOD_NAME_MAX]);
int kvod_catalog_add(const char *name, struct file *file, u64 bitrate);
int kvod_catalog_del(const char *name);
int kvod_catalog_info(const char *name, struct kvod_movie_info *info);
int kvod_catalog_list(struct kvod_movie_info **infos, u32 *nr);
void kvod_catalog_stats(struct kvod_stats *st);
struct kvod_movie *kvod_movie_get(const char *name);

static inline struct kvod_movie *kvod_movie_hold(struct kvod_movie *movie)
{
	kref_get(&movie->ref);
	return movie;
}

/* dev.c */
int kvod_dev_init(void);
void kvod_dev_exit(void);

#endif /* _KVOD_H */
