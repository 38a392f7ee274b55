// SPDX-License-Identifier: GPL-2.0
/*
 * kvod ioctl fuzzer: several threads call /dev/kvod at random for a
 * bounded time; then everything is deleted and the module must unload.
 *
 * Each call picks a command and builds its struct one of six ways: valid
 * (names from a small shared pool, real files, 127.0.0.1 and the Soft-RoCE
 * address 198.18.0.1, pool ports, slow rates); valid with one or two
 * 32-bit words set to an edge value; random bytes; a bad pointer (NULL, a
 * guard page, a kernel address, a struct running into the guard page); a
 * read-only struct, whose result cannot be copied out; or a command number
 * kvod does not know (unknown numbers, known ones in the wrong direction).
 * A fifth of the known commands carry random bits in the _IOC_SIZE field,
 * which kvod ignores. All threads share the names, ports and push ids, so
 * one deletes, unlistens or stops what another is using. The fds of
 * successful LIVE_FEEDs are written to and closed at random.
 *
 * Every return must be success or an errno the uapi header documents for
 * what was passed: a valid struct only the errnos its state explains
 * (ENOENT, EEXIST, ...), EFAULT only where memory was bad, ENOTTY only for
 * unknown commands. The kernel log is the runner's to check. Afterwards
 * STATS and LIST must answer and every command must have succeeded at
 * least once; then (test "unload") after deleting everything the catalog is
 * empty, rmmod is refused while a child holds /dev/kvod open and calls it,
 * and succeeds once it closed it.
 *
 * $KVOD_FUZZ_SECONDS (default 20) bounds the run and $KVOD_FUZZ_SEED
 * (printed) seeds the threads: each thread's choices repeat, their
 * interleaving does not. Addresses are only ever 127.0.0.1 and
 * 198.18.0.0/15, pushes go to 127.0.0.1 only, at 100 kbit/s at most, and
 * kvod is loaded with max_resident_mb=64, which bounds what random sizes
 * can allocate. Runs only inside the selftests/qemu/vm-run guest.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <libgen.h>
#include <pthread.h>
#include <stddef.h>
#include <time.h>
#include <netinet/in.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "kvod_util.h"
#include "kselftest_harness.h"
#include "kvod_main.h"

#define THREADS		4
#define SEED_DEFAULT	0x6b766f64U
#define ERRS		134		/* errnos counted one by one */
#define ROOM		64
#define ENTRIES_BYTES	(4U << 20)	/* any count of LIST entries fits */
#define FEEDS		2
#define VIOL_MAX	8
#define KERNEL_PTR	0xffffffff81000000ULL

#define RXE_ADDR	"198.18.0.1"	/* selftests/lib/rdma.sh's */

/* Indices of cmds[] and of the counters. */
enum {
	C_ADD, C_DEL, C_INFO, C_LIST, C_STATS, C_LISTEN, C_UNLISTEN,
	C_LLIST, C_PUSH, C_STOP, C_PLIST, C_LIVE, C_FEED, NR_CMDS,
	OTHER = NR_CMDS,	/* unknown commands */
	FEED,			/* write()s to feed fds */
};

enum mode { M_VALID, M_MUTATED, M_GARBAGE, M_UNKNOWN, M_READONLY, M_BADPTR };
static const char *const mode_names[] = {
	"valid", "mutated", "garbage", "unknown", "read-only", "bad pointer",
};

struct cmd {
	const char *name;
	unsigned long nr;
	unsigned short ksize, ver0, esize;	/* esize: a LIST's entry */
	/* Fields that need care, by offset (0: none). */
	unsigned char name_at, addr_at, ptr_at, fd_at, rate_at;
	const int *valid;	/* besides 0 and ENOMEM, for a valid call */
	const int *more;	/* and besides EINVAL and E2BIG, else */
};

struct worker {
	unsigned int idx;
	__u64 rng;
	int dev;
	int cur;		/* the command in flight, for a hang report */
	char *mem;		/* 2 pages of arg, a read-only page, a guard */
	char *entries;		/* ENTRIES_BYTES, then a guard page */
	bool bad_mem;		/* this call passes memory kvod may not use */
	int feeds[FEEDS];
	pthread_t thread;
};

static char ko_path[PATH_MAX];
static bool have_rxe;
static size_t page_size;
static unsigned int seed;
static struct timespec deadline;

/* Shared by the workers. */
static int files[4], bad_fds[6];
static __u32 push_ids[16];
static unsigned long calls[FEED + 1], oks[FEED + 1];
static unsigned long errs[FEED + 1][ERRS + 1];
static unsigned int nr_viols;
static unsigned long rdma_loopbacks;

static const char *const names[] = {
	"fz0", "fz1", "fz2", "fz3", "fz4", "fz5", "l.-_9",
	"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
};

static const char *const bad_names[] = {
	"", ".", "..", "a/b", "a b", "\xc3\xa9", "x\n", "fz0\x01",
};

static const __u16 ports[] = { 18080, 18081, 18082, 18083 };
static const __u16 push_ports[] = { 15004, 15006 };
/* Slow, or too fast to be valid: never a push of many packets. */
static const __u64 rates[] = { 0, 10000, 50000, 100000 };
static const __u64 bad_rates[] = { 9999, 10000000001ULL, ~0ULL };
static const __u32 edges[] = {
	0, 1, 2, 3, 4, 187, 188, 189, 1316, 2000, 2001, 4096, 65536, 65537,
	2U << 20, (2U << 20) + 1, 0x7fffffff, 0x80000000, 0xffffffff,
};

/* ------------------------------------------------------------------ */
/* The commands.                                                       */

static const int e_none[] = { 0 };
static const int e_add[] = { EEXIST, ENOSPC, 0 };
static const int x_add[] = { EBADF, EFBIG, 0 };
static const int e_noent[] = { ENOENT, 0 };
static const int e_listen[] = { EADDRINUSE, 0 };
static const int x_listen[] = {
	EADDRNOTAVAIL, ENODEV, EADDRINUSE, EAFNOSUPPORT, 0
};

/* A movie under 188 bytes, a live channel and LOOP, rate 0 and bitrate 0. */
static const int e_push[] = { ENOENT, EINVAL, ENOSPC, 0 };
static const int x_push[] = {
	ENETUNREACH, EADDRNOTAVAIL, EAFNOSUPPORT, 0
};

static const int e_live[] = { EEXIST, ENOSPC, 0 };
static const int e_feed[] = { ENOENT, EINVAL, EBUSY, EMFILE, 0 };

#define AT(t, m)	offsetof(struct t, m)
#define CMD(n, t, v0)	.name = #n, .nr = KVOD_IOC_##n,			\
			.ksize = sizeof(struct t), .ver0 = v0
#define LIST(n, t)	CMD(n, kvod_movie_list, KVOD_MOVIE_LIST_SIZE_VER0), \
			.esize = sizeof(struct t),			\
			.ptr_at = AT(kvod_movie_list, entries),		\
			.valid = e_none, .more = e_none

static const struct cmd cmds[NR_CMDS] = {
	[C_ADD] = { CMD(MOVIE_ADD, kvod_movie_add, KVOD_MOVIE_ADD_SIZE_VER0),
		    .name_at = AT(kvod_movie_add, name),
		    .fd_at = AT(kvod_movie_add, fd),
		    .rate_at = AT(kvod_movie_add, bitrate),
		    .valid = e_add, .more = x_add },
	[C_DEL] = { CMD(MOVIE_DEL, kvod_movie_ref, KVOD_MOVIE_REF_SIZE_VER0),
		    .name_at = AT(kvod_movie_ref, name),
		    .valid = e_noent, .more = e_none },
	[C_INFO] = { CMD(MOVIE_INFO, kvod_movie_info,
			 KVOD_MOVIE_INFO_SIZE_VER0),
		     .name_at = AT(kvod_movie_info, name),
		     .valid = e_noent, .more = e_none },
	[C_LIST] = { LIST(MOVIE_LIST, kvod_movie_info) },
	[C_STATS] = { CMD(STATS, kvod_stats, KVOD_STATS_SIZE_VER0),
		      .valid = e_none, .more = e_none },
	[C_LISTEN] = { CMD(LISTEN, kvod_listen, KVOD_LISTEN_SIZE_VER0),
		       .addr_at = AT(kvod_listen, addr),
		       .valid = e_listen, .more = x_listen },
	[C_UNLISTEN] = { CMD(UNLISTEN, kvod_listen, KVOD_LISTEN_SIZE_VER0),
			 .addr_at = AT(kvod_listen, addr),
			 .valid = e_noent, .more = e_none },
	[C_LLIST] = { LIST(LISTENER_LIST, kvod_listener_info) },
	[C_PUSH] = { CMD(PUSH_START, kvod_push_start,
			 KVOD_PUSH_START_SIZE_VER0),
		     .name_at = AT(kvod_push_start, name),
		     .addr_at = AT(kvod_push_start, dst),
		     .rate_at = AT(kvod_push_start, rate),
		     .valid = e_push, .more = x_push },
	[C_STOP] = { CMD(PUSH_STOP, kvod_push_ref, KVOD_PUSH_REF_SIZE_VER0),
		     .valid = e_noent, .more = e_none },
	[C_PLIST] = { LIST(PUSH_LIST, kvod_push_info) },
	[C_LIVE] = { CMD(LIVE_CREATE, kvod_live_create,
			 KVOD_LIVE_CREATE_SIZE_VER0),
		     .name_at = AT(kvod_live_create, name),
		     .rate_at = AT(kvod_live_create, bitrate),
		     .valid = e_live, .more = e_none },
	[C_FEED] = { CMD(LIVE_FEED, kvod_live_feed, KVOD_LIVE_FEED_SIZE_VER0),
		     .name_at = AT(kvod_live_feed, name),
		     .valid = e_feed, .more = e_none },
};

static __u64 rnd(struct worker *w)
{
	w->rng ^= w->rng >> 12;
	w->rng ^= w->rng << 25;
	w->rng ^= w->rng >> 27;
	return w->rng * 0x2545f4914f6cdd1dULL;
}

#define PICK(w, a)	((a)[rnd(w) % ARRAY_SIZE(a)])

static void put(char *p, __u64 v, unsigned int len)
{
	__u32 v32 = v;

	memcpy(p, len == 8 ? (void *)&v : &v32, len);
}

static void count(unsigned long *c)
{
	__atomic_fetch_add(c, 1, __ATOMIC_RELAXED);
}

/* ------------------------------------------------------------------ */
/* Values.                                                             */

static void pick_name(struct worker *w, char *name)
{
	if (rnd(w) % 4)
		kvod_set_name(name, PICK(w, names));
	else if (rnd(w) % 9)
		kvod_set_name(name, PICK(w, bad_names));
	else
		memset(name, 'y', KVOD_NAME_MAX);	/* no NUL */
}

/*
 * Never another address than 127.0.0.1 or 198.18.0.0/15, and pushes to
 * 127.0.0.1 only. @any: also addresses the guest does not have.
 */
static void set_addr(struct worker *w, struct kvod_sockaddr *a, bool push,
		     bool any)
{
	static const char *const ips[] = {
		"127.0.0.1", RXE_ADDR, "198.18.0.77", "198.19.255.255",
	};
	unsigned int n = push ? 1 : any ? 4 : have_rxe ? 2 : 1;

	kvod_sockaddr_v4(a, ips[rnd(w) % n],
			 push ? PICK(w, push_ports) : PICK(w, ports));
}

/* One edit of an address that keeps it on the allowed ones. */
static void mutate_addr(struct worker *w, struct kvod_sockaddr *a, bool push)
{
	static const __u16 families[] = { 0, AF_UNIX, AF_INET6, 0xffff };
	static const __u16 odd_ports[] = { 0, 1, 65535 };

	set_addr(w, a, push, true);
	switch (rnd(w) % 5) {
	case 0:
		a->family = PICK(w, families);
		if (a->family == AF_INET6) {	/* ::ffff:a.b.c.d */
			memmove(a->addr + 12, a->addr, 4);
			memset(a->addr, 0, 10);
			a->addr[10] = 0xff;
			a->addr[11] = 0xff;
		}
		break;
	case 1:
		a->port = PICK(w, odd_ports);
		break;
	case 2:
		a->scope_id = rnd(w) | 1;
		break;
	case 3:
		a->addr[4 + rnd(w) % 12] = rnd(w) | 1;
		break;
	default:
		if (push)
			memset(a->addr, 0, 4);	/* the wildcard */
	}
}

/* Good, unaligned, or memory kvod may not write. */
static __u64 pick_entries(struct worker *w)
{
	char *end = w->entries + ENTRIES_BYTES;
	const __u64 ptrs[] = {
		0, (uintptr_t)end, (uintptr_t)(end - 100), KERNEL_PTR,
		(uintptr_t)w->entries + 1, (uintptr_t)w->entries,
	};
	__u64 p = PICK(w, ptrs);

	w->bad_mem |= !p || p >= (uintptr_t)end - 100;
	return p;
}

static bool within(unsigned int off, unsigned int at, unsigned int len)
{
	return at && off >= at && off < at + len;
}

/* Set the word at @off, or the field it is part of, to an edge value. */
static void mutate(struct worker *w, unsigned int cmd, char *arg,
		   unsigned int off)
{
	const struct cmd *c = &cmds[cmd];
	const __u32 sizes[] = {
		0, 8, c->ver0 - 1, c->ver0, c->ksize, c->ksize + 8,
		page_size, page_size + 1, 0xffffffff, rnd(w) % page_size,
	};

	if (!off)
		put(arg, PICK(w, sizes), 4);
	else if (within(off, c->name_at, KVOD_NAME_MAX))
		pick_name(w, arg + c->name_at);
	else if (within(off, c->addr_at, sizeof(struct kvod_sockaddr)))
		mutate_addr(w, (void *)(arg + c->addr_at), cmd == C_PUSH);
	else if (within(off, c->ptr_at, 8))
		put(arg + c->ptr_at, pick_entries(w), 8);
	else if (within(off, c->fd_at, 4))
		put(arg + c->fd_at, rnd(w) % 2 ? PICK(w, files) :
				    PICK(w, bad_fds), 4);
	else if (within(off, c->rate_at, 8))
		put(arg + c->rate_at, rnd(w) % 2 ? PICK(w, rates) :
				      PICK(w, bad_rates), 8);
	else
		put(arg + off, rnd(w) % 4 ? PICK(w, edges) : rnd(w), 4);
}

/* A valid-looking struct of command @cmd. */
static void make(struct worker *w, unsigned int cmd, char *arg)
{
	const struct cmd *c = &cmds[cmd];
	struct kvod_movie_list *l = (void *)arg;
	struct kvod_push_start *p = (void *)arg;
	struct kvod_live_create *lc = (void *)arg;
	static const __u32 ts[] = { 188, 7 * 188, 70 * 188, 350 * 188 };
	static const __u32 raw[] = { 188, 1000, 4096, 65536 };
	static const __u32 nrs[] = { 2, 3, 16, 64 }, rooms[] = { 0, 1, ROOM };
	static const __u32 windows[] = { 0, 1, 50, 2000 };
	const __u32 esizes[] = { c->esize, c->esize + 8, page_size };

	put(arg, c->ksize, 4);
	if (c->name_at)
		kvod_set_name(arg + c->name_at, PICK(w, names));
	if (c->addr_at)
		set_addr(w, (void *)(arg + c->addr_at), cmd == C_PUSH, false);
	if (c->fd_at)
		put(arg + c->fd_at, PICK(w, files), 4);
	if (c->rate_at)
		put(arg + c->rate_at, PICK(w, rates), 8);
	if (c->ptr_at) {
		l->count = PICK(w, rooms);
		l->entry_size = PICK(w, esizes);
		l->entries = (uintptr_t)w->entries;
	}
	switch (cmd) {
	case C_LISTEN:
	case C_UNLISTEN:
		((struct kvod_listen *)arg)->proto = rnd(w) % 2 + 1;
		break;
	case C_PUSH:
		p->opts = rnd(w) % 4;
		p->window_ms = PICK(w, windows);
		break;
	case C_STOP:
		((struct kvod_push_ref *)arg)->id =
			__atomic_load_n(&PICK(w, push_ids), __ATOMIC_RELAXED);
		break;
	case C_LIVE:
		lc->opts = rnd(w) % 4;
		lc->chunk_size = lc->opts & KVOD_LIVE_TS ? PICK(w, ts) :
							   PICK(w, raw);
		lc->nr_chunks = PICK(w, nrs);
		break;
	}
}

static const char *cmd_name(unsigned int cmd)
{
	return cmd < NR_CMDS ? cmds[cmd].name :
	       cmd == OTHER ? "unknown cmd" : "feed write()";
}

static bool nr_known(unsigned long nr)
{
	unsigned int i;

	for (i = 0; i < NR_CMDS; i++)
		if ((cmds[i].nr & ~IOCSIZE_MASK) == (nr & ~IOCSIZE_MASK))
			return true;
	return false;
}

/* Unknown: another number, or a known one in another direction. */
static unsigned long unknown_nr(struct worker *w, const struct cmd *c)
{
	unsigned long nr;

	do {
		if (rnd(w) % 2)
			nr = c->nr ^ ((rnd(w) % 3 + 1) << _IOC_DIRSHIFT);
		else
			nr = _IOC(rnd(w) % 4, KVOD_IOC_MAGIC, rnd(w) % 256,
				  rnd(w) % (_IOC_SIZEMASK + 1));
	} while (nr_known(nr));
	return nr;
}

/* ------------------------------------------------------------------ */
/* One call and its verdict.                                           */

static bool in(const int *list, int err)
{
	for (; *list; list++)
		if (*list == err)
			return true;
	return false;
}

static bool allowed(const struct worker *w, const struct cmd *c,
		    enum mode how, int ret)
{
	bool out = _IOC_DIR(c->nr) & _IOC_READ;

	if (how == M_UNKNOWN)
		return ret == ENOTTY;
	if (how == M_BADPTR)
		return ret == EFAULT;
	if (ret == EFAULT)
		return w->bad_mem || (how == M_READONLY && out);
	if (!ret)	/* a result that could not be copied out is no success */
		return how != M_READONLY || !out;
	if (ret == ENOMEM || in(c->valid, ret))
		return true;
	if (how == M_VALID || how == M_READONLY)
		return false;
	return ret == EINVAL || ret == E2BIG || in(c->more, ret);
}

/* Reported as they happen, the first VIOL_MAX of them, with the struct. */
static void violation(struct worker *w, unsigned int cmd, unsigned long nr,
		      enum mode how, int ret)
{
	const struct cmd *c = &cmds[cmd < NR_CMDS ? cmd : C_STATS];
	const struct kvod_sockaddr *a = (void *)(w->mem + c->addr_at);
	char name[KVOD_NAME_MAX] = "", ip[INET6_ADDRSTRLEN] = "";
	unsigned char ch;
	__u32 word[4];
	unsigned int i;

	if (__atomic_fetch_add(&nr_viols, 1, __ATOMIC_RELAXED) >= VIOL_MAX)
		return;
	memcpy(word, w->mem, sizeof(word));
	if (cmd == FEED)
		memset(word, 0, sizeof(word));
	for (i = 0; c->name_at && i < KVOD_NAME_MAX - 1; i++) {
		ch = w->mem[c->name_at + i];
		name[i] = isprint(ch) || !ch ? ch : '?';
	}
	if (c->addr_at)
		inet_ntop(a->family == AF_INET6 ? AF_INET6 : AF_INET, a->addr,
			  ip, sizeof(ip));
	ksft_print_msg("not allowed: thread %u, %s (%s, cmd 0x%08lx; "
		       "%08x %08x %08x %08x name \"%s\" family %u %s port %u): %s\n",
		       w->idx, cmd_name(cmd), mode_names[how], nr, word[0],
		       word[1], word[2], word[3], name,
		       c->addr_at ? a->family : 0, ip, c->addr_at ? a->port : 0,
		       ret < 0 ? "a positive return" : strerror(ret));
}

/*
 * rdma_cm would bind a loopback address as the wildcard (cma_any_addr()),
 * listening on every device, so kvod refuses RDMA listeners on 127.0.0.1
 * with EADDRNOTAVAIL. A valid LISTEN rdma there: true, and *@ok says
 * whether it got that; counted apart.
 */
static bool rdma_loopback(struct worker *w, unsigned int cmd, enum mode how,
			  int ret, bool *ok)
{
	const struct kvod_listen *l = (void *)w->mem;
	struct in_addr lo = { htonl(INADDR_LOOPBACK) };

	if (cmd != C_LISTEN || (how != M_VALID && how != M_READONLY) ||
	    l->proto != KVOD_PROTO_RDMA || l->addr.family != AF_INET ||
	    memcmp(l->addr.addr, &lo, sizeof(lo)))
		return false;
	*ok = ret == EADDRNOTAVAIL || ret == ENOMEM;
	return true;
}

/* Where a bad-memory call passes its struct (copied from @arg). */
static char *place(struct worker *w, enum mode how, const char *arg,
		   unsigned int len)
{
	char *ro = w->mem + 2 * page_size, *guard = ro + page_size;
	const uintptr_t bad[] = { 0, (uintptr_t)guard, KERNEL_PTR };
	char *dst = how == M_READONLY ? ro : guard - 8;

	if (how == M_BADPTR && rnd(w) % 4)
		return (char *)PICK(w, bad);
	/* Read-only, or only @size and @flags before the guard page. */
	mprotect(ro, page_size, PROT_READ | PROT_WRITE);
	memcpy(dst, arg, how == M_READONLY ? len : 8);
	mprotect(ro, page_size, PROT_READ);
	return dst;
}

static void after_success(struct worker *w, unsigned int cmd, char *arg)
{
	int i = rnd(w) % FEEDS;

	if (cmd == C_PUSH) {
		__atomic_store_n(&PICK(w, push_ids),
				 ((struct kvod_push_start *)arg)->id,
				 __ATOMIC_RELAXED);
	} else if (cmd == C_FEED) {
		if (w->feeds[i] >= 0)
			close(w->feeds[i]);
		w->feeds[i] = ((struct kvod_live_feed *)arg)->fd;
	}
}

static void one_call(struct worker *w)
{
	unsigned int cmd = rnd(w) % NR_CMDS, r = rnd(w) % 100, i;
	const struct cmd *c = &cmds[cmd];
	const unsigned int at[] = { c->name_at, c->addr_at, c->ptr_at,
				    c->fd_at, c->rate_at };
	unsigned long nr = c->nr;
	char *arg = w->mem;
	enum mode how;
	bool lo_ok;
	int ret;

	memset(arg, 0, 2 * page_size);
	w->bad_mem = false;
	make(w, cmd, arg);
	how = r < 50 ? M_VALID : r < 80 ? M_MUTATED : r < 90 ? M_GARBAGE :
	      r < 94 ? M_UNKNOWN : r < 97 ? M_READONLY : M_BADPTR;
	if (how == M_MUTATED) {
		for (i = rnd(w) % 4 ? 1 : 2; i; i--)
			mutate(w, cmd, arg, rnd(w) % (c->ksize / 4) * 4);
	} else if (how == M_GARBAGE) {
		for (i = 0; i < c->ksize + 64u; i++)
			arg[i] = rnd(w);
		/* Only what is safe to pass at random stays random. */
		mutate(w, cmd, arg, 0);
		for (i = 0; i < ARRAY_SIZE(at); i++)
			if (at[i])
				mutate(w, cmd, arg, at[i]);
	} else if (how == M_UNKNOWN) {
		nr = unknown_nr(w, c);
	}
	if (how != M_UNKNOWN && rnd(w) % 5 == 0)
		nr = (nr & ~IOCSIZE_MASK) |
		     (rnd(w) % (_IOC_SIZEMASK + 1)) << _IOC_SIZESHIFT;
	if (how == M_BADPTR || how == M_READONLY)
		arg = place(w, how, arg, c->ksize);

	__atomic_store_n(&w->cur, cmd, __ATOMIC_RELAXED);
	ret = kvod_ioctl(w->dev, nr, arg);
	__atomic_store_n(&w->cur, -1, __ATOMIC_RELAXED);
	if (how == M_UNKNOWN)
		cmd = OTHER;
	count(&calls[cmd]);
	count(ret ? &errs[cmd][ret > 0 && ret < ERRS ? ret : ERRS] : &oks[cmd]);
	if (rdma_loopback(w, cmd, how, ret, &lo_ok)) {
		count(&rdma_loopbacks);
		if (!lo_ok)
			violation(w, cmd, nr, how, ret);
	} else if (!allowed(w, c, how, ret))
		violation(w, cmd, nr, how, ret);
	else if (!ret)
		after_success(w, cmd, arg);
}

/* Whole MPEG-TS packets into a feed; now and then close it. */
static void feed_step(struct worker *w)
{
	int *fd = &w->feeds[rnd(w) % FEEDS];
	char ts[7 * 188] = { 0 };
	ssize_t n;
	int i;

	if (*fd < 0)
		return;
	for (i = 0; i < 7; i++)
		ts[i * 188] = 0x47;
	n = write(*fd, ts, (rnd(w) % 7 + 1) * 188);
	count(&calls[FEED]);
	count(n < 0 ? &errs[FEED][errno < ERRS ? errno : ERRS] : &oks[FEED]);
	if (n < 0 && errno != EPIPE && errno != ENOMEM)
		violation(w, FEED, 0, M_VALID, errno);
	if (n < 0 || rnd(w) % 8 == 0) {
		close(*fd);
		*fd = -1;
	}
}

static bool past(const struct timespec *t)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec > t->tv_sec ||
	       (now.tv_sec == t->tv_sec && now.tv_nsec >= t->tv_nsec);
}

static void *worker_run(void *p)
{
	struct worker *w = p;
	int i;

	while (!past(&deadline)) {
		one_call(w);
		if (rnd(w) % 4 == 0)
			feed_step(w);
	}
	for (i = 0; i < FEEDS; i++)
		if (w->feeds[i] >= 0)
			close(w->feeds[i]);
	return NULL;
}

/* ------------------------------------------------------------------ */

static unsigned long env_ul(const char *name, unsigned long def)
{
	const char *s = getenv(name);

	return s && *s ? strtoul(s, NULL, 0) : def;
}

static void report(void)
{
	unsigned int i, e;
	char line[512];
	int len;

	for (i = 0; i <= FEED; i++) {
		len = snprintf(line, sizeof(line), "%-13s %7lu calls %6lu ok",
			       cmd_name(i), calls[i], oks[i]);
		for (e = 1; e <= ERRS && len < (int)sizeof(line) - 32; e++)
			if (errs[i][e])
				len += snprintf(line + len, sizeof(line) - len,
						", %s %lu", e < ERRS ?
						strerrorname_np(e) : "other",
						errs[i][e]);
		ksft_print_msg("%s\n", line);
	}
	ksft_print_msg("LISTEN rdma on 127.0.0.1: %lu, refused, see rdma_loopback()\n",
		       rdma_loopbacks);
}

FIXTURE(fuzz) {
	int dev, sinks[2];
	int pipe[2], dir, wronly;
};

FIXTURE_SETUP(fuzz)
{
	static const unsigned long long sizes[] = {
		1, 20 * 7 * 188, (2 << 20) + 5, (3 << 20) + 100,
	};
	struct sockaddr_in sin = { .sin_family = AF_INET };
	unsigned int i;

	self->dev = open(KVOD_DEVICE, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->dev);
	for (i = 0; i < ARRAY_SIZE(files); i++) {
		files[i] = kvod_make_file(sizes[i], i + 1);
		ASSERT_LE(0, files[i]);
	}
	ASSERT_EQ(0, pipe2(self->pipe, O_CLOEXEC));
	self->dir = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	self->wronly = kvod_reopen(files[1], O_WRONLY | O_CLOEXEC);
	ASSERT_LE(0, self->dir);
	ASSERT_LE(0, self->wronly);
	/* No file, not regular, not readable: nothing ADD may take. */
	bad_fds[0] = -1;
	bad_fds[1] = 0x7fffffff;
	bad_fds[2] = self->dev;
	bad_fds[3] = self->pipe[0];
	bad_fds[4] = self->dir;
	bad_fds[5] = self->wronly;
	/* Pushes land in sockets, not in ICMP errors. */
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	for (i = 0; i < ARRAY_SIZE(push_ports); i++) {
		self->sinks[i] = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		ASSERT_LE(0, self->sinks[i]);
		sin.sin_port = htons(push_ports[i]);
		ASSERT_EQ(0, bind(self->sinks[i], (void *)&sin, sizeof(sin)));
	}
}

FIXTURE_TEARDOWN(fuzz)
{
	if (self->dev >= 0)
		close(self->dev);
}

static void worker_init(struct __test_metadata *_metadata, struct worker *w,
			unsigned int idx)
{
	w->idx = idx;
	w->rng = (seed + 1ULL) * 0x9e3779b97f4a7c15ULL ^ (idx + 1);
	w->cur = -1;
	w->feeds[0] = -1;
	w->feeds[1] = -1;
	w->dev = open(KVOD_DEVICE, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, w->dev);
	w->mem = mmap(NULL, 4 * page_size, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	w->entries = mmap(NULL, ENTRIES_BYTES + page_size,
			  PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	ASSERT_NE(MAP_FAILED, w->mem);
	ASSERT_NE(MAP_FAILED, w->entries);
	ASSERT_EQ(0, mprotect(w->mem + 2 * page_size, page_size, PROT_READ));
	ASSERT_EQ(0, mprotect(w->mem + 3 * page_size, page_size, PROT_NONE));
	ASSERT_EQ(0, mprotect(w->entries + ENTRIES_BYTES, page_size,
			      PROT_NONE));
}

TEST_F_TIMEOUT(fuzz, ioctls, 3600)
{
	unsigned long secs = env_ul("KVOD_FUZZ_SECONDS", 20);
	unsigned long grace = 60 * env_ul("KVOD_TIMEOUT_SCALE", 1);
	struct worker w[THREADS] = { 0 };
	struct kvod_movie_info mi[ROOM];
	struct timespec until;
	char cmd[128];
	struct kvod_stats st;
	unsigned long total = 0;
	unsigned int i;
	void *ret;
	int cur;

	ksft_print_msg("seed %u (KVOD_FUZZ_SEED=%u repeats it), %u threads, %lu s%s\n",
		       seed, seed, THREADS, secs,
		       have_rxe ? "" : ", no Soft-RoCE: no RDMA listener");
	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += secs;
	for (i = 0; i < THREADS; i++)
		worker_init(_metadata, &w[i], i);
	for (i = 0; i < THREADS; i++)
		ASSERT_EQ(0, pthread_create(&w[i].thread, NULL, worker_run,
					    &w[i]));

	/* A call stuck in the kernel: say which, and where. */
	until = deadline;
	until.tv_sec += grace;
	for (i = 0; i < THREADS; i++) {
		if (!pthread_clockjoin_np(w[i].thread, &ret, CLOCK_MONOTONIC,
					  &until))
			continue;
		cur = __atomic_load_n(&w[i].cur, __ATOMIC_RELAXED);
		snprintf(cmd, sizeof(cmd),
			 "for f in /proc/%d/task/*/stack; do sed \"s|^|# $f: |\" $f; done",
			 getpid());
		if (system(cmd))
			ksft_print_msg("no kernel stacks\n");
		ASSERT_TRUE(false) TH_LOG("thread %u stuck for %lu s in %s",
					  i, grace, cur < 0 ? "write()" :
					  cmd_name(cur));
	}
	report();
	for (i = 0; i <= FEED; i++)
		total += calls[i];
	ksft_print_msg("%lu calls, %u not allowed\n", total, nr_viols);
	EXPECT_EQ(0U, nr_viols);
	for (i = 0; i < NR_CMDS; i++) {
		if (!oks[i])
			ksft_print_msg("%s never succeeded\n", cmd_name(i));
		EXPECT_LT(0UL, oks[i]);
	}
	/* Still answering. */
	EXPECT_EQ(0, kvod_stats(self->dev, &st));
	EXPECT_EQ(0, kvod_list(self->dev, mi, ROOM, NULL, NULL));
	for (i = 0; i < THREADS; i++)
		close(w[i].dev);
}

/* ------------------------------------------------------------------ */
/* Empty, then unload: refused while a child calls, done after.        */

static void rmmod_while_open(struct __test_metadata *_metadata)
{
	int go[2], halt[2], status, ret = 0;
	unsigned int i;
	pid_t pid;
	char c;

	ASSERT_EQ(0, pipe2(go, O_CLOEXEC));
	ASSERT_EQ(0, pipe2(halt, O_CLOEXEC | O_NONBLOCK));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		int dev = open(KVOD_DEVICE, O_RDWR | O_CLOEXEC);
		struct kvod_stats st;
		unsigned long bad = 0;

		if (dev < 0 || write(go[1], "g", 1) != 1)
			_exit(2);
		while (read(halt[0], &c, 1) < 0)
			bad += kvod_stats(dev, &st) != 0;
		close(dev);
		_exit(bad ? 1 : 0);
	}
	ASSERT_EQ(1, read(go[0], &c, 1));
	for (i = 0; i < 20; i++) {
		ret = kvod_module_unload();
		if (ret != EAGAIN && ret != EBUSY)
			break;
		usleep(10000);
	}
	EXPECT_EQ(20U, i) TH_LOG("rmmod with /dev/kvod open: %s",
				 ret ? strerror(ret) : "done");
	ASSERT_EQ(1, write(halt[1], "h", 1));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
		TH_LOG("the child's STATS failed around rmmod (status 0x%x)",
		       status);
	if (kvod_module_loaded())
		EXPECT_EQ(0, kvod_module_unload());
	EXPECT_FALSE(kvod_module_loaded());
}

/* A fixture of its own: the harness runs fixtures in order, after fuzz. */
FIXTURE(unload) {
	int dev;
};

FIXTURE_SETUP(unload)
{
	self->dev = open(KVOD_DEVICE, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->dev);
}

FIXTURE_TEARDOWN(unload)
{
	if (self->dev >= 0)
		close(self->dev);
}

TEST_F_TIMEOUT(unload, after_fuzz, 600)
{
	unsigned long i, limit = 300 * env_ul("KVOD_TIMEOUT_SCALE", 1);
	struct kvod_stats st;
	int ret = 0;
	__u32 n;

	ASSERT_EQ(0, kvod_stop_all(self->dev));
	ASSERT_EQ(0, kvod_catalog_clear(self->dev));
	ASSERT_EQ(0, kvod_stats(self->dev, &st));
	EXPECT_EQ(0U, st.movies);
	ASSERT_EQ(0, kvod_list(self->dev, NULL, 0, &n, NULL));
	EXPECT_EQ(0U, n);
	ASSERT_EQ(0, kvod_list_of(self->dev, KVOD_IOC_LISTENER_LIST, NULL,
				  sizeof(struct kvod_listener_info), 0, &n,
				  NULL));
	EXPECT_EQ(0U, n);
	ASSERT_EQ(0, kvod_list_of(self->dev, KVOD_IOC_PUSH_LIST, NULL,
				  sizeof(struct kvod_push_info), 0, &n, NULL));
	EXPECT_EQ(0U, n);
	/* Stopped pushes let go of deleted movies in their own time. */
	for (i = 0; i < limit; i++) {
		ret = kvod_stats(self->dev, &st);
		if (ret || (!st.zombies && !st.resident))
			break;
		usleep(100000);
	}
	ASSERT_EQ(0, ret);
	EXPECT_EQ(0U, st.zombies);
	EXPECT_EQ(0ULL, st.resident);
	close(self->dev);
	self->dev = -1;
	rmmod_while_open(_metadata);
}

/* rxe_setup or rxe_teardown of selftests/lib/rdma.sh: 0 on success. */
static int rdma_topology(const char *fn)
{
	char exe[PATH_MAX] = "", cmd[2 * PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	exe[n > 0 ? n : 0] = '\0';
	snprintf(cmd, sizeof(cmd), "bash -c '. \"%s/../lib/rdma.sh\" && %s' >/dev/null 2>&1",
		 dirname(exe), fn);
	return system(cmd);
}

/* Soft-RoCE for the RDMA listeners, if this guest can have it. */
static void rxe_up(void)
{
	have_rxe = !rdma_topology("rxe_setup");
	if (!have_rxe)
		rdma_topology("rxe_teardown");
}

static void rxe_down(void)
{
	if (have_rxe && rdma_topology("rxe_teardown"))
		fprintf(stderr, "# cannot remove Soft-RoCE\n");
}

int main(int argc, char **argv)
{
	static const struct kvod_main_opts opts = {
		.params = "max_resident_mb=64",
		.setup = rxe_up,
		.teardown = rxe_down,
	};

	page_size = sysconf(_SC_PAGESIZE);
	seed = env_ul("KVOD_FUZZ_SEED", SEED_DEFAULT);
	kvod_ko_path(ko_path, sizeof(ko_path));
	return kvod_harness_main(argc, argv, ko_path, &opts);
}
