// SPDX-License-Identifier: GPL-2.0
/*
 * The rules every ioctl of /dev/kvod follows, one fixture variant per
 * command: the size and flags fields, the command number's size and
 * direction bits, bad argument pointers, writes no larger than the
 * caller's struct, CAP_NET_ADMIN, reserved fields; and unknown command
 * numbers. catalog_lib.h says how the program runs.
 */
#include "catalog_lib.h"

/* ------------------------------------------------------------------ */
/* The rules every command follows, one variant per command.           */

/*
 * Every test starts from the same state, so that a query has something to
 * report, a change something to act on and a rejected call something to
 * disturb: the movie "keep", an HTTP listener on 127.0.0.1:ABI_TCP_KEEP
 * (UNLISTEN's) and a looping push of "keep" to 127.0.0.1:ABI_UDP_KEEP
 * (PUSH_STOP's); for LIVE_FEED also the channel "tv". LISTEN and
 * PUSH_START make theirs on other ports. The teardown stops every push
 * and listener, empties the catalog and checks that nothing is left.
 */
#define ABI_TCP_KEEP	8091
#define ABI_TCP_NEW	8092
#define ABI_UDP_KEEP	5091
#define ABI_UDP_NEW	5092
#define ABI_WINDOW_MS	20	/* PUSH_START's */
#define ABI_WINDOW_DEF	50	/* the setup's: window_ms 0 means 50 */

enum cmd_kind {
	K_ADD, K_DEL, K_INFO, K_LIST, K_STATS,
	K_LISTEN, K_UNLISTEN, K_LISTENER_LIST,
	K_PUSH_START, K_PUSH_STOP, K_PUSH_LIST,
	K_LIVE_CREATE, K_LIVE_FEED,
};

FIXTURE(abi) {
	int dev;
	int file;
	char *mem;		/* two read-write pages, then a guard page */
	__u32 netns;		/* ours, as the LISTs report it */
	__u32 push;		/* the id of the setup's push */
	struct kvod_movie_info keep;
	struct kvod_movie_info entries[4];
	struct kvod_listener_info listeners[4];
	struct kvod_push_info pushes[4];
	struct snap before;
};

FIXTURE_VARIANT(abi) {
	enum cmd_kind kind;
	unsigned long cmd;
	__u32 ver0;
	__u32 ksize;
	bool writes;		/* has output fields */
	bool changes;		/* changes state (needs CAP_NET_ADMIN) */
	__u32 flags;		/* the bits of @flags the command knows */
};

/* The kernel's struct is the one the command number encodes. */
#define ABI_VARIANT_FLAGS(_name, _kind, _cmd, _ver0, _writes, _changes,	\
			  _flags)					\
	FIXTURE_VARIANT_ADD(abi, _name) {				\
		.kind = (_kind), .cmd = (_cmd), .ver0 = (_ver0),	\
		.ksize = _IOC_SIZE(_cmd), .writes = (_writes),		\
		.changes = (_changes), .flags = (_flags),		\
	}
#define ABI_VARIANT(_name, _kind, _cmd, _ver0, _writes, _changes)	\
	ABI_VARIANT_FLAGS(_name, _kind, _cmd, _ver0, _writes, _changes, 0)

/* KVOD_ADD_PIN reads the file as every ADD of a file in tmpfs does. */
ABI_VARIANT_FLAGS(add, K_ADD, KVOD_IOC_MOVIE_ADD,
		  KVOD_MOVIE_ADD_SIZE_VER0, false, true, KVOD_ADD_FLAGS);
ABI_VARIANT(del, K_DEL, KVOD_IOC_MOVIE_DEL,
	    KVOD_MOVIE_REF_SIZE_VER0, false, true);
ABI_VARIANT(info, K_INFO, KVOD_IOC_MOVIE_INFO,
	    KVOD_MOVIE_INFO_SIZE_VER0, true, false);
ABI_VARIANT(list, K_LIST, KVOD_IOC_MOVIE_LIST,
	    KVOD_MOVIE_LIST_SIZE_VER0, true, false);
ABI_VARIANT(stats, K_STATS, KVOD_IOC_STATS,
	    KVOD_STATS_SIZE_VER0, true, false);
ABI_VARIANT(listen, K_LISTEN, KVOD_IOC_LISTEN,
	    KVOD_LISTEN_SIZE_VER0, false, true);
ABI_VARIANT(unlisten, K_UNLISTEN, KVOD_IOC_UNLISTEN,
	    KVOD_LISTEN_SIZE_VER0, false, true);
ABI_VARIANT(listener_list, K_LISTENER_LIST, KVOD_IOC_LISTENER_LIST,
	    KVOD_MOVIE_LIST_SIZE_VER0, true, false);
/* @id is an output: PUSH_START writes back. */
ABI_VARIANT(push_start, K_PUSH_START, KVOD_IOC_PUSH_START,
	    KVOD_PUSH_START_SIZE_VER0, true, true);
ABI_VARIANT(push_stop, K_PUSH_STOP, KVOD_IOC_PUSH_STOP,
	    KVOD_PUSH_REF_SIZE_VER0, false, true);
ABI_VARIANT(push_list, K_PUSH_LIST, KVOD_IOC_PUSH_LIST,
	    KVOD_MOVIE_LIST_SIZE_VER0, true, false);
ABI_VARIANT(live_create, K_LIVE_CREATE, KVOD_IOC_LIVE_CREATE,
	    KVOD_LIVE_CREATE_SIZE_VER0, false, true);
/* @fd is an output; the setup made the channel "tv" for it. */
ABI_VARIANT(live_feed, K_LIVE_FEED, KVOD_IOC_LIVE_FEED,
	    KVOD_LIVE_FEED_SIZE_VER0, true, true);

/* The LISTENER_LIST entry of an HTTP listener of ours on 127.0.0.1:@port. */
static struct kvod_listener_info abi_listener(FIXTURE_DATA(abi) *self,
					      __u16 port)
{
	struct kvod_listener_info li = {
		.size = sizeof(li),
		.proto = KVOD_PROTO_HTTP,
		.netns = self->netns,
	};

	kvod_sockaddr_v4(&li.addr, "127.0.0.1", port);
	return li;
}

/* The PUSH_LIST entry, traffic masked, of a looping push of "keep". */
static struct kvod_push_info abi_push(FIXTURE_DATA(abi) *self, __u32 id,
				      __u16 port, __u32 window_ms)
{
	struct kvod_push_info pi = {
		.size = sizeof(pi),
		.id = id,
		.opts = KVOD_PUSH_LOOP,
		.rate = 10000,
		.window_ms = window_ms,
		.netns = self->netns,
	};

	kvod_sockaddr_v4(&pi.dst, "127.0.0.1", port);
	kvod_set_name(pi.name, "keep");
	return pi;
}

FIXTURE_SETUP(abi)
{
	self->dev = open(KVOD_DEVICE, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->dev);
	/* A test whose setup failed had no teardown. */
	ASSERT_EQ(0, kvod_stop_all(self->dev));
	ASSERT_EQ(0, kvod_catalog_clear(self->dev));
	self->netns = kvod_netns();
	ASSERT_NE(0U, self->netns);
	self->file = kvod_make_file(8192, 21);
	ASSERT_LE(0, self->file);
	self->mem = map_guarded();
	ASSERT_NE(NULL, self->mem);
	add_keep(_metadata, self->dev);
	ASSERT_EQ(0, kvod_listen_v4(self->dev, true, KVOD_PROTO_HTTP,
				    "127.0.0.1", ABI_TCP_KEEP));
	ASSERT_EQ(0, kvod_push_loop(self->dev, "keep", ABI_UDP_KEEP,
				    &self->push));
	if (variant->kind == K_LIVE_FEED)
		ASSERT_EQ(0, kvod_live_create(self->dev, "tv", KVOD_LIVE_TS,
					      16 * 188, 4, 0));
	ASSERT_EQ(0, kvod_info(self->dev, "keep", &self->keep));
	ASSERT_EQ(1U, self->keep.active_clients);
	ASSERT_EQ(0, snap_take(self->dev, &self->before));
	ASSERT_EQ(variant->kind == K_LIVE_FEED ? 2U : 1U,
		  self->before.filled);
	ASSERT_EQ(1U, self->before.nl_filled);
	ASSERT_EQ(1U, self->before.np_filled);
}

FIXTURE_TEARDOWN(abi)
{
	struct snap left;

	/* Pushes first: one may hold a movie that DEL made a zombie. */
	EXPECT_EQ(0, kvod_stop_all(self->dev));
	EXPECT_EQ(0, kvod_catalog_clear(self->dev));
	EXPECT_EQ(0, snap_take(self->dev, &left));
	EXPECT_EQ(0U, left.count);
	EXPECT_EQ(0U, left.st.zombies);
	EXPECT_EQ(0ULL, left.st.resident);
	EXPECT_EQ(0U, left.nl);
	EXPECT_EQ(0U, left.np);
	close(self->file);
	close(self->dev);
}

/* A LIST argument with room for the @bytes at @entries. */
static void abi_fill_list(struct kvod_movie_list *l, void *entries,
			  size_t bytes, __u32 entry_size)
{
	memset(entries, 0, bytes);
	l->count = bytes / entry_size;
	l->entry_size = entry_size;
	l->entries = (uintptr_t)entries;
}

/*
 * Writes a valid argument for the variant's command at @buf, zeroing the
 * @span bytes from @buf, with @size in the size field.
 */
static void abi_fill(FIXTURE_DATA(abi) *self,
		     const FIXTURE_VARIANT(abi) *variant,
		     void *buf, size_t span, __u32 size)
{
	memset(buf, 0, span);
	switch (variant->kind) {
	case K_ADD: {
		struct kvod_movie_add *a = buf;

		a->fd = self->file;
		a->bitrate = 1000;
		kvod_set_name(a->name, "new");
		break;
	}
	case K_DEL:
		kvod_set_name(((struct kvod_movie_ref *)buf)->name, "keep");
		break;
	case K_INFO:
		kvod_set_name(((struct kvod_movie_info *)buf)->name, "keep");
		break;
	case K_LIST:
		abi_fill_list(buf, self->entries, sizeof(self->entries),
			      sizeof(self->entries[0]));
		break;
	case K_STATS:
		break;
	case K_LISTEN:
	case K_UNLISTEN: {
		struct kvod_listen *l = buf;

		l->proto = KVOD_PROTO_HTTP;
		kvod_sockaddr_v4(&l->addr, "127.0.0.1",
				 variant->kind == K_LISTEN ? ABI_TCP_NEW :
							     ABI_TCP_KEEP);
		break;
	}
	case K_LISTENER_LIST:
		abi_fill_list(buf, self->listeners, sizeof(self->listeners),
			      sizeof(self->listeners[0]));
		break;
	case K_PUSH_START: {
		struct kvod_push_start *p = buf;

		/* As if reused from the setup's start: @id is output only. */
		p->id = self->push;
		p->opts = KVOD_PUSH_LOOP;
		p->rate = 10000;
		p->window_ms = ABI_WINDOW_MS;
		kvod_sockaddr_v4(&p->dst, "127.0.0.1", ABI_UDP_NEW);
		kvod_set_name(p->name, "keep");
		break;
	}
	case K_PUSH_STOP:
		((struct kvod_push_ref *)buf)->id = self->push;
		break;
	case K_PUSH_LIST:
		abi_fill_list(buf, self->pushes, sizeof(self->pushes),
			      sizeof(self->pushes[0]));
		break;
	case K_LIVE_CREATE: {
		struct kvod_live_create *c = buf;

		c->opts = KVOD_LIVE_TS;
		c->chunk_size = 16 * 188;
		c->nr_chunks = 4;
		c->bitrate = 1000;
		kvod_set_name(c->name, "new");
		break;
	}
	case K_LIVE_FEED:
		/* As if reused: @fd is output only. */
		((struct kvod_live_feed *)buf)->fd = -1;
		kvod_set_name(((struct kvod_live_feed *)buf)->name, "tv");
		break;
	}
	*(__u32 *)buf = size;
}

/* A LIST call: one entry, as listed, the rest of the room untouched. */
static void abi_expect_one(struct __test_metadata *_metadata,
			   const struct kvod_movie_list *l,
			   const void *entries, size_t bytes)
{
	EXPECT_EQ(1U, l->count);
	EXPECT_EQ(1U, l->filled);
	EXPECT_TRUE(all_zero((const char *)entries + l->entry_size,
			     bytes - l->entry_size));
}

/*
 * After an accepted call: the command did what it is for, and nothing
 * else. @want starts as the setup's snapshot and takes the command's
 * effect; the state must then be exactly that.
 */
static void abi_expect_done(struct __test_metadata *_metadata,
			    FIXTURE_DATA(abi) *self,
			    const FIXTURE_VARIANT(abi) *variant, void *buf)
{
	struct snap want = self->before, after;
	struct kvod_movie_info mi;
	int feed = -1;

	switch (variant->kind) {
	case K_ADD:
		ASSERT_EQ(0, kvod_info(self->dev, "new", &mi));
		expect_info_fresh(_metadata, &mi, "new", 8192, 1000);
		/* Listed after "keep", in name order. */
		want.e[want.filled++] = mi;
		want.count++;
		want.st.movies++;
		want.st.resident += mi.resident;
		want.st.mem += mi.resident;
		break;
	case K_DEL:
		EXPECT_EQ(ENOENT, kvod_info(self->dev, "keep", &mi));
		/* The setup's push holds it: a zombie, still resident. */
		memset(&want.e[0], 0, sizeof(want.e[0]));
		want.filled = 0;
		want.count = 0;
		want.st.movies--;
		want.st.zombies++;
		break;
	case K_INFO: {
		struct kvod_movie_info *out = buf;

		mi = self->keep;
		mi.size = out->size;
		/* The setup's push serves it meanwhile. */
		EXPECT_GE(out->bytes_served, mi.bytes_served);
		mi.bytes_served = out->bytes_served;
		EXPECT_EQ(0, memcmp(&mi, out, sizeof(mi)));
		break;
	}
	case K_LIST:
		abi_expect_one(_metadata, buf, self->entries,
			       sizeof(self->entries));
		EXPECT_STREQ("keep", self->entries[0].name);
		EXPECT_EQ(self->keep.length, self->entries[0].length);
		break;
	case K_STATS: {
		struct kvod_stats *st = buf;

		EXPECT_EQ(1U, st->movies);
		EXPECT_EQ(self->keep.resident, st->resident);
		/* No RDMA connection: the movie is all kvod holds. */
		if (st->size >= KVOD_STATS_SIZE_VER1)
			EXPECT_EQ(self->keep.resident, st->mem);
		EXPECT_EQ(self->before.st.resident_max, st->resident_max);
		break;
	}
	case K_LISTEN:
		/* Listed after the setup's, in the order they were made. */
		want.l[want.nl_filled++] = abi_listener(self, ABI_TCP_NEW);
		want.nl++;
		break;
	case K_UNLISTEN:
		memset(&want.l[0], 0, sizeof(want.l[0]));
		want.nl = 0;
		want.nl_filled = 0;
		break;
	case K_LISTENER_LIST: {
		struct kvod_listener_info li = abi_listener(self, ABI_TCP_KEEP);

		abi_expect_one(_metadata, buf, self->listeners,
			       sizeof(self->listeners));
		EXPECT_EQ(0, memcmp(&li, &self->listeners[0], sizeof(li)));
		break;
	}
	case K_PUSH_START: {
		const struct kvod_push_start *p = buf;

		EXPECT_NE(0U, p->id);
		EXPECT_NE(self->push, p->id) TH_LOG("@id not written back");
		/* Listed after the setup's, in id order: a second reader. */
		want.p[want.np_filled++] = abi_push(self, p->id, ABI_UDP_NEW,
						    ABI_WINDOW_MS);
		want.np++;
		want.e[0].active_clients++;
		break;
	}
	case K_PUSH_STOP:
		memset(&want.p[0], 0, sizeof(want.p[0]));
		want.np = 0;
		want.np_filled = 0;
		/* "keep" has no reader left: bytes_served is kept again. */
		want.e[0].active_clients--;
		ASSERT_EQ(0, kvod_info(self->dev, "keep", &mi));
		EXPECT_GE(mi.bytes_served, self->keep.bytes_served);
		want.e[0].bytes_served = mi.bytes_served;
		break;
	case K_PUSH_LIST: {
		struct kvod_push_info pi = abi_push(self, self->push,
						    ABI_UDP_KEEP,
						    ABI_WINDOW_DEF);

		abi_expect_one(_metadata, buf, self->pushes,
			       sizeof(self->pushes));
		push_mask_traffic(&self->pushes[0]);
		EXPECT_EQ(0, memcmp(&pi, &self->pushes[0], sizeof(pi)));
		break;
	}
	case K_LIVE_CREATE:
		ASSERT_EQ(0, kvod_info(self->dev, "new", &mi));
		EXPECT_EQ((__u32)KVOD_KIND_LIVE, mi.kind);
		EXPECT_EQ(16U * 188, mi.live_chunk_size);
		EXPECT_EQ(4U, mi.chunks);
		EXPECT_EQ(1000ULL, mi.bitrate);
		/* Listed after "keep", in name order. */
		want.e[want.filled++] = mi;
		want.count++;
		want.st.movies++;
		want.st.resident += mi.resident;
		want.st.mem += mi.resident;
		break;
	case K_LIVE_FEED:
		feed = ((const struct kvod_live_feed *)buf)->fd;
		EXPECT_LE(0, feed) TH_LOG("@fd not written back");
		EXPECT_EQ(O_WRONLY, fcntl(feed, F_GETFL) & O_ACCMODE);
		EXPECT_EQ(FD_CLOEXEC, fcntl(feed, F_GETFD));
		/* "tv", after "keep", has its writer. */
		want.e[1].live_opts |= KVOD_LIVE_WRITER;
		break;
	}
	ASSERT_EQ(0, snap_take(self->dev, &after));
	expect_snap_eq(_metadata, &want, &after);
	if (feed >= 0)
		close(feed);
}

static void abi_expect_rejected(struct __test_metadata *_metadata,
				FIXTURE_DATA(abi) *self, int err, int ret)
{
	expect_rejected(_metadata, self->dev, &self->before, err, ret, "new");
}

TEST_F(abi, size_ksize_accepted)
{
	abi_fill(self, variant, self->mem, variant->ksize, variant->ksize);
	ASSERT_EQ(0, kvod_ioctl(self->dev, variant->cmd, self->mem));
	abi_expect_done(_metadata, self, variant, self->mem);
}

TEST_F(abi, size_ver0_accepted)
{
	abi_fill(self, variant, self->mem, variant->ksize, variant->ver0);
	ASSERT_EQ(0, kvod_ioctl(self->dev, variant->cmd, self->mem));
	abi_expect_done(_metadata, self, variant, self->mem);
}

TEST_F(abi, size_zero)
{
	abi_fill(self, variant, self->mem, variant->ksize, 0);
	abi_expect_rejected(_metadata, self, EINVAL,
			    kvod_ioctl(self->dev, variant->cmd, self->mem));
}

TEST_F(abi, size_below_ver0)
{
	__u32 sizes[] = { 4, 8, variant->ver0 / 2, variant->ver0 - 8,
			  variant->ver0 - 1 };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		abi_fill(self, variant, self->mem, variant->ksize, sizes[i]);
		abi_expect_rejected(_metadata, self, EINVAL,
				    kvod_ioctl(self->dev, variant->cmd,
					       self->mem));
	}
}

/* Larger than the kernel's struct, tail zero: accepted, tail left zero. */
TEST_F(abi, size_larger_zero_tail)
{
	abi_fill(self, variant, self->mem, variant->ksize + 64,
		 variant->ksize + 64);
	ASSERT_EQ(0, kvod_ioctl(self->dev, variant->cmd, self->mem));
	EXPECT_TRUE(all_zero(self->mem + variant->ksize, 64));
	abi_expect_done(_metadata, self, variant, self->mem);
}

TEST_F(abi, size_page_zero_tail)
{
	/* The page after the argument is a canary: never written. */
	memset(self->mem + page_size, 0x5a, page_size);
	abi_fill(self, variant, self->mem, page_size, page_size);
	ASSERT_EQ(0, kvod_ioctl(self->dev, variant->cmd, self->mem));
	EXPECT_TRUE(all_zero(self->mem + variant->ksize,
			     page_size - variant->ksize));
	EXPECT_EQ(0x5a, self->mem[page_size]);
	abi_expect_done(_metadata, self, variant, self->mem);
}

TEST_F(abi, size_over_page)
{
	__u32 sizes[] = { page_size + 1, page_size + 8, 2 * page_size,
			  1U << 20, UINT32_MAX };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		abi_fill(self, variant, self->mem, 2 * page_size, sizes[i]);
		abi_expect_rejected(_metadata, self, E2BIG,
				    kvod_ioctl(self->dev, variant->cmd,
					       self->mem));
	}
}

TEST_F(abi, tail_nonzero_first_byte)
{
	abi_fill(self, variant, self->mem, variant->ksize + 8,
		 variant->ksize + 8);
	self->mem[variant->ksize] = 1;
	abi_expect_rejected(_metadata, self, E2BIG,
			    kvod_ioctl(self->dev, variant->cmd, self->mem));
}

TEST_F(abi, tail_nonzero_last_byte)
{
	abi_fill(self, variant, self->mem, page_size, page_size);
	self->mem[page_size - 1] = 0x80;
	abi_expect_rejected(_metadata, self, E2BIG,
			    kvod_ioctl(self->dev, variant->cmd, self->mem));
}

/*
 * Every bit the command does not know is refused, alone and beside the
 * bits it knows; those it knows are taken, and do what they are for.
 */
TEST_F(abi, flags_nonzero)
{
	int bit;

	for (bit = 0; bit < 32; bit++) {
		if (variant->flags & (1U << bit))
			continue;
		abi_fill(self, variant, self->mem, variant->ksize,
			 variant->ksize);
		((__u32 *)self->mem)[1] = 1U << bit;
		abi_expect_rejected(_metadata, self, EINVAL,
				    kvod_ioctl(self->dev, variant->cmd,
					       self->mem));
		if (!variant->flags)
			continue;
		((__u32 *)self->mem)[1] = variant->flags | 1U << bit;
		abi_expect_rejected(_metadata, self, EINVAL,
				    kvod_ioctl(self->dev, variant->cmd,
					       self->mem));
	}
	if (!variant->flags)
		return;
	abi_fill(self, variant, self->mem, variant->ksize, variant->ksize);
	((__u32 *)self->mem)[1] = variant->flags;
	ASSERT_EQ(0, kvod_ioctl(self->dev, variant->cmd, self->mem));
	abi_expect_done(_metadata, self, variant, self->mem);
}

/* The command's size bits do not matter; @size does. */
TEST_F(abi, cmd_size_bits_zero)
{
	unsigned long cmd = _IOC(_IOC_DIR(variant->cmd), KVOD_IOC_MAGIC,
				 _IOC_NR(variant->cmd), 0);

	abi_fill(self, variant, self->mem, variant->ksize, variant->ksize);
	ASSERT_EQ(0, kvod_ioctl(self->dev, cmd, self->mem));
	abi_expect_done(_metadata, self, variant, self->mem);
}

TEST_F(abi, cmd_size_bits_max)
{
	unsigned long cmd = _IOC(_IOC_DIR(variant->cmd), KVOD_IOC_MAGIC,
				 _IOC_NR(variant->cmd), _IOC_SIZEMASK);

	abi_fill(self, variant, self->mem, variant->ksize, variant->ksize);
	ASSERT_EQ(0, kvod_ioctl(self->dev, cmd, self->mem));
	abi_expect_done(_metadata, self, variant, self->mem);
}

TEST_F(abi, cmd_wrong_direction)
{
	static const unsigned int dirs[] = {
		_IOC_NONE, _IOC_READ, _IOC_WRITE, _IOC_READ | _IOC_WRITE,
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(dirs); i++) {
		unsigned long cmd = _IOC(dirs[i], KVOD_IOC_MAGIC,
					 _IOC_NR(variant->cmd),
					 _IOC_SIZE(variant->cmd));

		if (dirs[i] == _IOC_DIR(variant->cmd))
			continue;
		abi_fill(self, variant, self->mem, variant->ksize,
			 variant->ksize);
		abi_expect_rejected(_metadata, self, ENOTTY,
				    kvod_ioctl(self->dev, cmd, self->mem));
	}
}

TEST_F(abi, cmd_wrong_type)
{
	static const unsigned int types[] = {
		KVOD_IOC_MAGIC - 1, KVOD_IOC_MAGIC + 1, 0x00, 0xff,
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(types); i++) {
		unsigned long cmd = _IOC(_IOC_DIR(variant->cmd), types[i],
					 _IOC_NR(variant->cmd),
					 _IOC_SIZE(variant->cmd));

		abi_fill(self, variant, self->mem, variant->ksize,
			 variant->ksize);
		abi_expect_rejected(_metadata, self, ENOTTY,
				    kvod_ioctl(self->dev, cmd, self->mem));
	}
}

TEST_F(abi, arg_null)
{
	abi_expect_rejected(_metadata, self, EFAULT,
			    kvod_ioctl(self->dev, variant->cmd, NULL));
}

TEST_F(abi, arg_unmapped)
{
	abi_expect_rejected(_metadata, self, EFAULT,
			    kvod_ioctl(self->dev, variant->cmd,
				       self->mem + 2 * page_size));
}

TEST_F(abi, arg_kernel_address)
{
	abi_expect_rejected(_metadata, self, EFAULT,
			    kvod_ioctl(self->dev, variant->cmd,
				       (void *)(uintptr_t)0xffffffff81000000ULL));
}

/* @size and @flags readable, the rest of the struct in the guard page. */
TEST_F(abi, arg_crosses_into_guard)
{
	char *arg = self->mem + 2 * page_size - 8;

	abi_fill(self, variant, self->mem, 2 * page_size, variant->ksize);
	*(__u32 *)arg = variant->ksize;
	abi_expect_rejected(_metadata, self, EFAULT,
			    kvod_ioctl(self->dev, variant->cmd, arg));
}

/* A valid struct whose zero tail (size > ksize) runs into the guard page. */
TEST_F(abi, tail_crosses_into_guard)
{
	char *arg = self->mem + 2 * page_size - variant->ksize - 8;

	abi_fill(self, variant, arg, variant->ksize + 8, variant->ksize + 64);
	abi_expect_rejected(_metadata, self, EFAULT,
			    kvod_ioctl(self->dev, variant->cmd, arg));
}

/*
 * No more than @size bytes are written back, and a command without output
 * fields writes nothing back at all. The canary after @size is cleared
 * before the command's result is checked.
 */
static void abi_writes_at_most(struct __test_metadata *_metadata,
			       FIXTURE_DATA(abi) *self,
			       const FIXTURE_VARIANT(abi) *variant, __u32 size)
{
	char *sent = malloc(size);
	size_t i;

	ASSERT_NE(NULL, sent);
	memset(self->mem, 0xa5, 2 * page_size);
	abi_fill(self, variant, self->mem, size, size);
	memcpy(sent, self->mem, size);
	ASSERT_EQ(0, kvod_ioctl(self->dev, variant->cmd, self->mem));
	for (i = size; i < size + 256; i++)
		if ((unsigned char)self->mem[i] != 0xa5)
			break;
	EXPECT_EQ(size + 256, i) TH_LOG("byte %zu written", i);
	if (!variant->writes)
		EXPECT_EQ(0, memcmp(sent, self->mem, size))
			TH_LOG("an _IOW argument was written back");
	free(sent);
	memset(self->mem + size, 0, 256);
	abi_expect_done(_metadata, self, variant, self->mem);
}

TEST_F(abi, writes_at_most_size)
{
	abi_writes_at_most(_metadata, self, variant, variant->ksize);
}

/*
 * A caller built before the struct grew passes its first published size
 * (kvod_movie_info's live_swaps came with VER1, kvod_stats's mem,
 * graveyard and rdma_mr_pages with theirs).
 */
TEST_F(abi, size_ver0_leaves_the_rest)
{
	abi_writes_at_most(_metadata, self, variant, variant->ver0);
}

/*
 * An argument in read-only memory: commands with output fields fail with
 * EFAULT and change nothing; the others (_IOW) never write it back.
 */
TEST_F(abi, arg_readonly)
{
	int ret;

	abi_fill(self, variant, self->mem, variant->ksize, variant->ksize);
	ASSERT_EQ(0, mprotect(self->mem, page_size, PROT_READ));
	ret = kvod_ioctl(self->dev, variant->cmd, self->mem);
	if (variant->writes) {
		abi_expect_rejected(_metadata, self, EFAULT, ret);
	} else {
		ASSERT_EQ(0, ret);
		abi_expect_done(_metadata, self, variant, self->mem);
	}
}

/*
 * A caller without CAP_NET_ADMIN (on a file opened with it): changes fail
 * with EPERM, queries work; neither changes anything.
 */
TEST_F(abi, without_net_admin)
{
	int status;
	pid_t pid;

	abi_fill(self, variant, self->mem, variant->ksize, variant->ksize);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		if (drop_net_admin())
			_exit(255);
		_exit(kvod_ioctl(self->dev, variant->cmd, self->mem));
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_NE(255, WEXITSTATUS(status)) TH_LOG("cannot drop CAP_NET_ADMIN");
	EXPECT_EQ(variant->changes ? EPERM : 0, WEXITSTATUS(status));
	ASSERT_INTACT(self->dev, &self->before);
}

TEST_F(abi, reserved_nonzero)
{
	static const struct {
		enum cmd_kind kind;
		size_t off;
		size_t len;
	} fields[] = {
		{ K_ADD, offsetof(struct kvod_movie_add, reserved0), 4 },
		{ K_ADD, offsetof(struct kvod_movie_add, reserved), 32 },
		{ K_DEL, offsetof(struct kvod_movie_ref, reserved), 16 },
		{ K_LIST, offsetof(struct kvod_movie_list, reserved0), 4 },
		{ K_LIST, offsetof(struct kvod_movie_list, reserved), 16 },
		/* Output-only, but still reserved: the header's general rule. */
		{ K_INFO, offsetof(struct kvod_movie_info, live_reserved), 4 },
		{ K_STATS, offsetof(struct kvod_stats, reserved), 40 },
		{ K_LISTEN, offsetof(struct kvod_listen, reserved0), 4 },
		{ K_LISTEN, offsetof(struct kvod_listen, reserved), 32 },
		/* An IPv4 address: bytes past the first 4 and scope_id are 0. */
		{ K_LISTEN, offsetof(struct kvod_listen, addr.addr) + 4, 12 },
		{ K_LISTEN, offsetof(struct kvod_listen, addr.scope_id), 4 },
		{ K_UNLISTEN, offsetof(struct kvod_listen, reserved0), 4 },
		{ K_UNLISTEN, offsetof(struct kvod_listen, reserved), 32 },
		{ K_UNLISTEN, offsetof(struct kvod_listen, addr.addr) + 4, 12 },
		{ K_UNLISTEN, offsetof(struct kvod_listen, addr.scope_id), 4 },
		{ K_LISTENER_LIST, offsetof(struct kvod_movie_list, reserved0), 4 },
		{ K_LISTENER_LIST, offsetof(struct kvod_movie_list, reserved), 16 },
		{ K_PUSH_START, offsetof(struct kvod_push_start, reserved0), 4 },
		{ K_PUSH_START, offsetof(struct kvod_push_start, reserved), 32 },
		{ K_PUSH_START, offsetof(struct kvod_push_start, dst.addr) + 4, 12 },
		{ K_PUSH_START, offsetof(struct kvod_push_start, dst.scope_id), 4 },
		{ K_PUSH_STOP, offsetof(struct kvod_push_ref, reserved0), 4 },
		{ K_PUSH_STOP, offsetof(struct kvod_push_ref, reserved), 16 },
		{ K_PUSH_LIST, offsetof(struct kvod_movie_list, reserved0), 4 },
		{ K_PUSH_LIST, offsetof(struct kvod_movie_list, reserved), 16 },
		{ K_LIVE_CREATE, offsetof(struct kvod_live_create, reserved0), 4 },
		{ K_LIVE_CREATE, offsetof(struct kvod_live_create, reserved), 32 },
		{ K_LIVE_FEED, offsetof(struct kvod_live_feed, reserved0), 4 },
		{ K_LIVE_FEED, offsetof(struct kvod_live_feed, reserved), 16 },
	};
	size_t i, b;
	int tried = 0;

	for (i = 0; i < ARRAY_SIZE(fields); i++) {
		if (fields[i].kind != variant->kind)
			continue;
		/* First and last byte of each reserved field. */
		for (b = 0; b < fields[i].len; b += fields[i].len - 1) {
			abi_fill(self, variant, self->mem, variant->ksize,
				 variant->ksize);
			self->mem[fields[i].off + b] = 1;
			abi_expect_rejected(_metadata, self, EINVAL,
					    kvod_ioctl(self->dev, variant->cmd,
						       self->mem));
			tried++;
		}
	}
	EXPECT_LT(0, tried);
}

/*
 * Command numbers the header defines, whatever their direction. A new
 * command makes cmd_unknown_numbers fail on its number: add it here.
 */
static bool nr_known(unsigned int nr)
{
	static const unsigned long cmds[] = {
		KVOD_IOC_MOVIE_ADD, KVOD_IOC_MOVIE_DEL, KVOD_IOC_MOVIE_INFO,
		KVOD_IOC_MOVIE_LIST, KVOD_IOC_STATS,
#ifdef KVOD_IOC_LISTEN
		KVOD_IOC_LISTEN, KVOD_IOC_UNLISTEN, KVOD_IOC_LISTENER_LIST,
#endif
#ifdef KVOD_IOC_PUSH_START
		KVOD_IOC_PUSH_START, KVOD_IOC_PUSH_STOP, KVOD_IOC_PUSH_LIST,
#endif
		KVOD_IOC_LIVE_CREATE, KVOD_IOC_LIVE_FEED,
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cmds); i++)
		if (_IOC_NR(cmds[i]) == nr)
			return true;
	return false;
}

/* Unknown command numbers, any direction and size. */
TEST_F(kvod, cmd_unknown_numbers)
{
	static const unsigned int dirs[] = {
		_IOC_NONE, _IOC_READ, _IOC_WRITE, _IOC_READ | _IOC_WRITE,
	};
	char *buf = calloc(1, page_size);
	struct snap before;
	unsigned int nr, tried = 0;
	size_t d;

	ASSERT_NE(NULL, buf);
	add_keep(_metadata, self->dev);
	ASSERT_EQ(0, snap_take(self->dev, &before));
	*(__u32 *)buf = 128;
	for (nr = 0; nr <= 0xff; nr++) {
		if (nr_known(nr))
			continue;
		for (d = 0; d < ARRAY_SIZE(dirs); d++) {
			EXPECT_EQ(ENOTTY, kvod_ioctl(self->dev,
						     _IOC(dirs[d],
							  KVOD_IOC_MAGIC,
							  nr, 128), buf))
				TH_LOG("nr 0x%02x dir %u: a new command?",
				       nr, dirs[d]);
		}
		tried++;
	}
	EXPECT_LT(200U, tried);
	ASSERT_INTACT(self->dev, &before);
	free(buf);
}

/* ------------------------------------------------------------------ */

int main(int argc, char **argv)
{
	return catalog_main(argc, argv);
}
