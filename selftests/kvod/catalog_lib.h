/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the ioctl ABI tests of /dev/kvod share: catalog_test.c (ADD, DEL,
 * INFO, LIST, STATS), listen_push_test.c (LISTEN and PUSH_START
 * rejections), abi_test.c (the rules every command follows) and
 * module_test.c (the resident cap, load and unload). Include it first.
 *
 * Each program runs only inside the selftests/qemu/vm-run guest (it skips
 * elsewhere). catalog_main() loads the RDMA core and kmod/kvod.ko (see
 * kvod_ko_path()) before the harness starts and removes kvod.ko at exit,
 * so each program is self-contained for run_guest.sh; KVOD_NO_LOAD=1 uses
 * the module already loaded instead. Each test runs in its own process
 * (the harness forks); fixtures leave the catalog empty, and the fixtures
 * that change the module parameter or reload the module restore a freshly
 * loaded module in their teardown.
 *
 * "State intact" means: STATS (movies, zombies, resident, mem, resident_max)
 * and the full movie LIST, LISTENER_LIST and PUSH_LIST are byte-for-byte
 * what they were before the rejected call, but for the counters a running
 * push moves on its own (see snap_take()).
 */
#ifndef _KVOD_CATALOG_LIB_H
#define _KVOD_CATALOG_LIB_H

#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/sysinfo.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <linux/capability.h>

#include "kvod_util.h"
#include "kselftest_harness.h"
#include "kvod_main.h"

#define SNAP_MAX	64
#define SNAP_NET_MAX	16	/* listeners and pushes in a snapshot */

static char ko_path[PATH_MAX];
static size_t page_size;

/* Everything a rejected call must leave unchanged. */
struct snap {
	struct kvod_stats st;
	__u32 count;
	__u32 filled;
	struct kvod_movie_info e[SNAP_MAX];
	__u32 nl;		/* listeners: count and filled */
	__u32 nl_filled;
	struct kvod_listener_info l[SNAP_NET_MAX];
	__u32 np;		/* pushes: count and filled */
	__u32 np_filled;
	struct kvod_push_info p[SNAP_NET_MAX];
};

/* A push's counters: they move packet by packet while it runs. */
static inline void push_mask_traffic(struct kvod_push_info *pi)
{
	pi->packets = 0;
	pi->bytes = 0;
	pi->loops = 0;
	pi->late = 0;
	pi->errors = 0;
	pi->icmp_errors = 0;
}

/*
 * What a running push changes by itself is left out of a snapshot
 * (zeroed): its own counters, and the bytes_served of a movie with
 * readers. The rest stays as listed, so a call that adds or drops a
 * reader, or serves bytes of a movie nobody reads, still shows.
 */
static inline void snap_mask_traffic(struct snap *s)
{
	__u32 i;

	for (i = 0; i < s->filled && i < SNAP_MAX; i++)
		if (s->e[i].active_clients)
			s->e[i].bytes_served = 0;
	for (i = 0; i < s->np_filled && i < SNAP_NET_MAX; i++)
		push_mask_traffic(&s->p[i]);
}

static inline int snap_take(int dev, struct snap *s)
{
	int ret;

	memset(s, 0, sizeof(*s));
	ret = kvod_stats(dev, &s->st) ?:
	      kvod_list(dev, s->e, SNAP_MAX, &s->count, &s->filled) ?:
	      kvod_list_of(dev, KVOD_IOC_LISTENER_LIST, s->l, sizeof(s->l[0]),
			   SNAP_NET_MAX, &s->nl, &s->nl_filled) ?:
	      kvod_list_of(dev, KVOD_IOC_PUSH_LIST, s->p, sizeof(s->p[0]),
			   SNAP_NET_MAX, &s->np, &s->np_filled);
	if (!ret)
		snap_mask_traffic(s);
	return ret;
}

static inline void expect_snap_eq(struct __test_metadata *_metadata,
			   const struct snap *a, const struct snap *b)
{
	EXPECT_EQ(a->st.movies, b->st.movies);
	EXPECT_EQ(a->st.zombies, b->st.zombies);
	EXPECT_EQ(a->st.resident, b->st.resident);
	EXPECT_EQ(a->st.mem, b->st.mem);
	EXPECT_EQ(a->st.resident_max, b->st.resident_max);
	EXPECT_EQ(a->count, b->count);
	EXPECT_EQ(a->filled, b->filled);
	EXPECT_EQ(0, memcmp(a->e, b->e, sizeof(a->e)))
		TH_LOG("LIST entries changed");
	EXPECT_EQ(a->nl, b->nl);
	EXPECT_EQ(a->nl_filled, b->nl_filled);
	EXPECT_EQ(0, memcmp(a->l, b->l, sizeof(a->l)))
		TH_LOG("LISTENER_LIST entries changed");
	EXPECT_EQ(a->np, b->np);
	EXPECT_EQ(a->np_filled, b->np_filled);
	EXPECT_EQ(0, memcmp(a->p, b->p, sizeof(a->p)))
		TH_LOG("PUSH_LIST entries changed");
}

#define ASSERT_INTACT(dev, before) do {					\
	struct snap __after;						\
	ASSERT_EQ(0, snap_take(dev, &__after));				\
	expect_snap_eq(_metadata, before, &__after);			\
} while (0)

static inline bool all_zero(const void *p, size_t len)
{
	const unsigned char *c = p;

	while (len--)
		if (*c++)
			return false;
	return true;
}

/* INFO as ADD left it: length and bitrate as given, memory accounted. */
static inline void expect_info_fresh(struct __test_metadata *_metadata,
			      const struct kvod_movie_info *mi,
			      const char *name, __u64 length, __u64 bitrate)
{
	ASSERT_LT(strnlen(mi->name, KVOD_NAME_MAX), (size_t)KVOD_NAME_MAX);
	EXPECT_STREQ(name, mi->name);
	EXPECT_EQ(0U, mi->flags);
	EXPECT_EQ(length, mi->length);
	EXPECT_EQ(bitrate, mi->bitrate);
	EXPECT_GE(mi->resident, mi->length);
	EXPECT_EQ(0ULL, mi->resident % 4096);
	/* Only the last chunk may be partly used. */
	EXPECT_LT(mi->resident - mi->length, KVOD_CHUNK_BYTES);
	EXPECT_GE(mi->chunks, 1U);
	EXPECT_LE(mi->resident, (__u64)mi->chunks * KVOD_CHUNK_BYTES);
	EXPECT_LE((__u64)mi->chunks, mi->resident / 4096);
	EXPECT_EQ(0U, mi->active_clients);
	EXPECT_EQ(0ULL, mi->bytes_served);
	EXPECT_EQ((__u32)KVOD_KIND_MOVIE, mi->kind);
	EXPECT_EQ(0U, mi->live_opts);
	EXPECT_EQ(0U, mi->live_chunk_size);
	EXPECT_EQ(0U, mi->live_reserved);
	EXPECT_EQ(0ULL, mi->live_seq);
	EXPECT_EQ(0ULL, mi->live_overruns);
	EXPECT_EQ(0ULL, mi->live_swaps);
}


static inline int read_param(unsigned long long *val)
{
	FILE *f = fopen(KVOD_PARAM_CAP, "r");
	int ret;

	if (!f)
		return errno;
	ret = fscanf(f, "%llu", val) == 1 ? 0 : EINVAL;
	fclose(f);
	return ret;
}

/* Puts back a freshly loaded module with default parameters. */
static inline int module_reload_default(void)
{
	int ret;

	if (getenv("KVOD_NO_LOAD"))
		return 0;
	if (kvod_module_loaded()) {
		ret = kvod_module_unload();
		if (ret)
			return ret;
	}
	return kvod_module_load(ko_path, "");
}

/*
 * Drops CAP_NET_ADMIN from the bounding, effective, permitted, inheritable
 * and ambient sets of the calling process; 0 or errno.
 */
static inline int drop_net_admin(void)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2];
	const __u32 bit = 1U << CAP_NET_ADMIN;

	if (prctl(PR_CAPBSET_DROP, CAP_NET_ADMIN, 0, 0, 0))
		return errno;
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0))
		return errno;
	if (syscall(SYS_capget, &hdr, data))
		return errno;
	data[0].effective &= ~bit;
	data[0].permitted &= ~bit;
	data[0].inheritable &= ~bit;
	if (syscall(SYS_capset, &hdr, data))
		return errno;
	if (syscall(SYS_capget, &hdr, data))
		return errno;
	return data[0].effective & bit ? EPERM : 0;
}

static inline int send_fd(int sock, int fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	char byte = 'x';
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);

	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	return sendmsg(sock, &msg, 0) == 1 ? 0 : errno;
}

static inline int recv_fd(int sock)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	char byte;
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *cm;
	int fd;

	if (recvmsg(sock, &msg, 0) != 1)
		return -1;
	cm = CMSG_FIRSTHDR(&msg);
	if (!cm || cm->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	return fd;
}

/* Three pages: two read-write, then one PROT_NONE guard. */
static inline char *map_guarded(void)
{
	char *p = mmap(NULL, 3 * page_size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	if (mprotect(p + 2 * page_size, page_size, PROT_NONE)) {
		munmap(p, 3 * page_size);
		return NULL;
	}
	return p;
}

/* ------------------------------------------------------------------ */
/* Plain catalog fixture: /dev/kvod open, catalog empty before and after. */

FIXTURE(kvod) {
	int dev;
};

FIXTURE_SETUP(kvod)
{
	struct kvod_stats st;

	self->dev = open(KVOD_DEVICE, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->dev) TH_LOG("open %s: %s", KVOD_DEVICE,
				       strerror(errno));
	ASSERT_EQ(0, kvod_catalog_clear(self->dev));
	ASSERT_EQ(0, kvod_stats(self->dev, &st));
	ASSERT_EQ(0U, st.movies);
	ASSERT_EQ(0ULL, st.resident);
}

FIXTURE_TEARDOWN(kvod)
{
	if (self->dev >= 0) {
		EXPECT_EQ(0, kvod_catalog_clear(self->dev));
		close(self->dev);
	}
}

/* Expects @ret == @err, the catalog unchanged and @name not registered. */
static inline void expect_rejected(struct __test_metadata *_metadata, int dev,
			    const struct snap *before, int err, int ret,
			    const char *name)
{
	struct kvod_movie_info mi;

	EXPECT_EQ(err, ret) TH_LOG("expected %s, got %s (%d)",
				   strerror(err), strerror(ret), ret);
	ASSERT_INTACT(dev, before);
	if (name)
		EXPECT_EQ(ENOENT, kvod_info(dev, name, &mi));
}

/* A catalog with one movie "keep" in it, so "unchanged" has content. */
static inline void add_keep(struct __test_metadata *_metadata, int dev)
{
	int fd = kvod_make_file(3 * 4096 + 1, 9);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, kvod_add(dev, "keep", fd, 777));
	close(fd);
}

static inline int catalog_main(int argc, char **argv)
{
	page_size = sysconf(_SC_PAGESIZE);
	kvod_ko_path(ko_path, sizeof(ko_path));
	return kvod_harness_main(argc, argv, ko_path, NULL);
}

#endif /* _KVOD_CATALOG_LIB_H */
