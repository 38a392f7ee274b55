/* SPDX-License-Identifier: GPL-2.0 */
/* kvod internal interfaces, grouped by the file that owns them. */
#ifndef _KVOD_H
#define _KVOD_H

#include <linux/atomic.h>
#include <linux/bits.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/rcupdate.h>
#include <linux/socket.h>
#include <linux/types.h>

#include <linux/kvod.h>

#include "name.h"

struct bio_vec;
struct file;
struct kvod_live;
struct net;
struct page;
struct wait_queue_entry;

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
 * struct kvod_image - a title's bytes in memory, in chunks (image.c)
 * @ref: see DOC: Image lifetimes
 * @resident: bytes the image reserved against the cap, returned by its
 *	last put; 0 for a live channel's mirror, which its channel reserved
 * @length: bytes of data in @chunks
 * @nr_chunks: entries in @chunks
 * @chunks: the memory, in title order
 *
 * Nothing of it changes once its creator handed it to a movie.
 */
struct kvod_image {
	struct kref ref;
	u64 resident;
	u64 length;
	u32 nr_chunks;
	struct kvod_chunk *chunks;
};

/**
 * DOC: Movie lifetimes
 *
 * ADD (or LIVE_CREATE, for a live channel) creates a struct kvod_movie
 * with one reference, which the catalog holds until DEL or module exit.
 * Every reader (an HTTP response until its client acknowledged it, an
 * RDMA connection, a push) opens it with kvod_movie_open(), which takes a
 * reference of its own and counts the reader in @active_clients, and lets
 * go with kvod_movie_close(). Lookups that only describe a movie pair
 * kvod_movie_get() with kvod_movie_put().
 * HTTP and push walk a movie's bytes with a cursor of their own (DOC:
 * The cursor), which points socket vectors at the pages of its image.
 *
 * DEL unlinks the name at once (a new ADD of the name may follow) and
 * drops the catalog's reference. The last put drops the movie's reference
 * to its image, whose last put frees the memory and returns the image's
 * reservation (DOC: Image lifetimes), and returns what the movie reserved
 * itself (a live channel's); the struct itself is freed an RCU grace
 * period later, because lookups walk the catalog under rcu_read_lock(). A
 * deleted movie that readers still hold is a *zombie* (@unlisted,
 * counted by ``kvodctl stats``).
 */
/**
 * struct kvod_movie - a registered movie or live channel
 * @ref: see DOC: Movie lifetimes above
 * @hnode: catalog hash linkage, RCU-protected, under the catalog mutex
 * @rcu: defers freeing the struct past concurrent RCU lookups
 * @name: NUL-terminated name; immutable
 * @length: bytes of movie data; immutable
 * @bitrate: nominal bits/s, 0 if unknown; immutable
 * @resident: bytes the movie reserved itself against the cap: a live
 *	channel's ring and mirror; 0 for a movie, whose image reserved its
 *	own; immutable
 * @image: the memory (a movie's, or a live channel's RDMA mirror), or
 *	NULL for a channel without a mirror and for a movie served from the
 *	page cache; the movie holds a reference. Set before publication and
 *	put by the last put: read it with kvod_movie_image()
 * @file: the file a movie without an image is served from (DOC: Titles
 *	in the page cache), held from ADD to the last put; NULL otherwise;
 *	immutable
 * @active_clients: readers currently attached
 * @bytes_served: bytes handed to clients
 * @unlisted: a zombie; set under the catalog mutex before the catalog's
 *	put, read by the last put
 * @live: a live channel's ring (live.c), NULL for a movie; immutable
 * @release: NULL, or frees what the creator attached (a live channel's
 *	ring) at the last put, before @image is put; set before publication
 */
struct kvod_movie {
	struct kref ref;
	struct hlist_node hnode;
	struct rcu_head rcu;
	char name[KVOD_NAME_MAX];
	u64 length;
	u64 bitrate;
	u64 resident;
	struct kvod_image __rcu *image;
	struct file *file;
	atomic_t active_clients;
	atomic64_t bytes_served;
	bool unlisted;
	struct kvod_live *live;
	void (*release)(struct kvod_movie *movie);
};

/*
 * The image of a movie that the caller holds (a reference, or the catalog
 * mutex while it is listed): it does not change from publication to the
 * last put, so no RCU read section is needed to read it.
 */
static inline struct kvod_image *
kvod_movie_image(const struct kvod_movie *movie)
{
	return rcu_dereference_protected(movie->image, true);
}

struct kvod_listener;

/**
 * struct kvod_proto_ops - one serving protocol's half of a listener
 * @proto: KVOD_PROTO_*
 * @name: for logs and kvodctl
 * @start: open the listening endpoint for @l (l->net, l->addr); store
 *	protocol state in l->priv. Called under the listen lock; may sleep.
 * @stop: undo @start (DOC: Listener lifetimes). May sleep.
 */
struct kvod_proto_ops {
	u32 proto;
	const char *name;
	int (*start)(struct kvod_listener *l);
	void (*stop)(struct kvod_listener *l);
};

/**
 * struct kvod_listener - where clients of one protocol are accepted
 * @node: on the listener list, under the listen lock
 * @ops: the protocol
 * @net: its network namespace; not counted (see listener.c)
 * @addr: the address, kernel form
 * @uaddr: the address as userspace gave it (for matching and listing)
 * @counters: indexed by enum kvod_listener_counter
 * @priv: the protocol's state
 */
struct kvod_listener {
	struct list_head node;
	const struct kvod_proto_ops *ops;
	struct net *net;
	struct sockaddr_storage addr;
	struct kvod_sockaddr uaddr;
	atomic64_t counters[KVOD_LC_NR];
	void *priv;
};

/* A connection's client address, counted by kvod_peer_add(). */
#define KVOD_PEER_BITS	6
struct kvod_peer {
	struct hlist_node node;
	struct sockaddr_storage addr;
};

static inline void kvod_lc_add(struct kvod_listener *l,
			       enum kvod_listener_counter c, s64 v)
{
	atomic64_add(v, &l->counters[c]);
}

static inline void kvod_lc_inc(struct kvod_listener *l,
			       enum kvod_listener_counter c)
{
	atomic64_inc(&l->counters[c]);
}

static inline void kvod_lc_dec(struct kvod_listener *l,
			       enum kvod_listener_counter c)
{
	atomic64_dec(&l->counters[c]);
}

/* debugfs.c: test knobs, 0 when off */
extern u32 kvod_debug_small_chunks;
extern u32 kvod_debug_rdma_setup_delay_ms;
extern u32 kvod_debug_push_release_delay_ms;
extern atomic_t kvod_debug_drop_notes;
extern u32 kvod_debug_add_lazy;
extern u32 kvod_debug_cursor_sync;
void kvod_debugfs_init(void);
void kvod_debugfs_exit(void);

/* mem.c: DOC: Memory accounting */
enum kvod_mem_kind {
	KVOD_MEM_RESIDENT,	/* movie chunks and live rings, under the cap */
	KVOD_MEM_RDMA_MAPS,	/* shared DMA mappings of movies */
	KVOD_MEM_RDMA_CONNS,	/* RDMA connections' MR pointers and tables */
	KVOD_MEM_GRAVEYARD,	/* let go of, still referenced by the stack */
	KVOD_MEM_NR_KINDS,
};

int kvod_mem_reserve(u64 bytes);
void kvod_mem_charge(enum kvod_mem_kind kind, u64 bytes);
void kvod_mem_release(enum kvod_mem_kind kind, u64 bytes);
void kvod_mem_stats(struct kvod_stats *st);
void kvod_mem_exit(void);

/* graveyard.c */
bool kvod_graveyard_bury(struct page *page, unsigned int order);
void kvod_graveyard_exit(void);

/* image.c: DOC: Image lifetimes */
struct kvod_image *kvod_image_new(u32 nr_chunks);
struct kvod_image *kvod_image_alloc(u64 length);
int kvod_image_read(struct kvod_image *img, struct file *file);
struct kvod_image *kvod_image_get(struct kvod_image *img);
void kvod_image_put(struct kvod_image *img);
const struct kvod_chunk *kvod_image_chunk(const struct kvod_image *img,
					  u64 offset);
const struct kvod_chunk *kvod_image_next_chunk(const struct kvod_image *img,
					       const struct kvod_chunk *c);
size_t kvod_image_bvecs(const struct kvod_image *img, u64 off, size_t len,
			struct bio_vec *bv, unsigned int max, unsigned int *nr);

/* movie.c */
struct kvod_movie *kvod_movie_alloc(const char *name, u64 resident,
				    u64 bitrate);
struct kvod_movie *kvod_movie_load(const char *name, struct file *file,
				   u64 length, u64 bitrate);
struct kvod_movie *kvod_movie_cached(const char *name, struct file *file,
				     u64 length, u64 bitrate);
void kvod_movie_put(struct kvod_movie *movie);
u64 kvod_movie_resident(const struct kvod_movie *movie);
unsigned int kvod_movies_alive(void);
void kvod_movie_unlisted(struct kvod_movie *movie);
unsigned int kvod_movie_zombies(void);

/**
 * struct kvod_live_event - what a channel's watchers are told of
 * @seq: the chunk completed; KVOD_LIVE_SEQ_NONE when @ended
 * @index: its slot
 * @len: its bytes
 * @lost: chunks before it that were overwritten before watchers could be
 *	told of them (each still counts as one)
 * @ended: the channel was deleted: no chunk follows
 */
struct kvod_live_event {
	u64 seq;
	u32 index;
	u32 len;
	u32 lost;
	bool ended;
};

struct kvod_live_watcher;
typedef void (*kvod_live_notify_t)(struct kvod_live_watcher *w,
				   const struct kvod_live_event *ev);

/**
 * struct kvod_live_watcher - one follower of a channel (kvod_live_watch())
 * @node: on the channel's list of watchers, under its @watch_lock
 * @notify: called for each completed chunk and for the end
 */
struct kvod_live_watcher {
	struct list_head node;
	kvod_live_notify_t notify;
};

#define KVOD_LIVE_SEQ_NONE	U64_MAX

/* live.c */
struct kvod_movie *kvod_live_create(const struct kvod_live_create *req);
void kvod_live_end(struct kvod_live *ch);
struct file *kvod_live_feed(struct kvod_movie *movie);
void kvod_live_fill_info(struct kvod_live *ch, struct kvod_movie_info *info);
bool kvod_live_ts(const struct kvod_live *ch);
u64 kvod_live_newest(struct kvod_live *ch);
int kvod_live_take(struct kvod_live *ch, u64 *seq, struct page **page,
		   u32 *len);
void kvod_live_watch(struct kvod_live *ch, struct kvod_live_watcher *w,
		     kvod_live_notify_t notify);
void kvod_live_unwatch(struct kvod_live *ch, struct kvod_live_watcher *w);

/* catalog.c */
int kvod_catalog_init(void);
void kvod_catalog_exit(void);
int kvod_catalog_add(const char *name, struct file *file, u64 bitrate,
		     bool pin);
int kvod_catalog_live_create(const struct kvod_live_create *req);
int kvod_catalog_del(const char *name);
int kvod_catalog_info(const char *name, struct kvod_movie_info *info);
int kvod_catalog_list(struct kvod_movie_info **infos, u32 *nr);
void kvod_catalog_stats(struct kvod_stats *st);
struct kvod_movie *kvod_movie_get(const char *name);
struct kvod_movie *kvod_movie_open(const char *name);
void kvod_movie_close(struct kvod_movie *movie);

/* listener.c */
int kvod_listeners_init(void);
void kvod_listeners_exit(void);
void kvod_proto_register(const struct kvod_proto_ops *ops);
void kvod_proto_unregister(const struct kvod_proto_ops *ops);
int kvod_listener_add(u32 proto, const struct kvod_sockaddr *ua);
int kvod_listener_del(u32 proto, const struct kvod_sockaddr *ua);
int kvod_listener_list(struct kvod_listener_info **infos, u32 *nr);
int kvod_sockaddr_to_kernel(const struct kvod_sockaddr *ua,
			    struct sockaddr_storage *ss, int *len);
bool kvod_peer_add(struct hlist_head *peers, struct kvod_peer *peer,
		   unsigned int max);

/* http.c */
void kvod_http_init(void);
void kvod_http_exit(void);

/* rdma.c */
int kvod_rdma_init(void);
void kvod_rdma_exit(void);

/* rdma_conn.c */
void kvod_rdma_stats(struct kvod_stats *st);

/* push.c */
int kvod_push_init(void);
void kvod_push_exit(void);
int kvod_push_start(struct kvod_push_start *req);
int kvod_push_stop(u32 id);
int kvod_push_list(struct kvod_push_info **infos, u32 *nr);

/* dev.c */
int kvod_dev_init(void);
void kvod_dev_exit(void);

#endif /* _KVOD_H */
