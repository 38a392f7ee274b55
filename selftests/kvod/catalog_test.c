// SPDX-License-Identifier: GPL-2.0
/*
 * kvod catalog ABI tests: every ioctl of /dev/kvod, every rejection the
 * uapi header documents, and that a rejected call changes nothing.
 *
 * Runs only inside the selftests/qemu/vm-run guest (it skips elsewhere). main()
 * loads the RDMA core and kmod/kvod.ko (see kvod_ko_path()) before the
 * harness starts and removes kvod.ko at exit, so the program is
 * self-contained for run_guest.sh; KVOD_NO_LOAD=1 uses the module already
 * loaded instead. Each test runs in its own process (the
 * harness forks); fixtures leave the catalog empty, and the fixtures that
 * change the module parameter or reload the module restore a freshly
 * loaded module in their teardown.
 *
 * "State intact" below means: STATS (movies, zombies, resident,
 * resident_max) and the full movie LIST, LISTENER_LIST and PUSH_LIST are
 * byte-for-byte what they were before the rejected call, but for the
 * counters a running push moves on its own (see snap_take()).
 */
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
static void push_mask_traffic(struct kvod_push_info *pi)
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
static void snap_mask_traffic(struct snap *s)
{
	__u32 i;

	for (i = 0; i < s->filled && i < SNAP_MAX; i++)
		if (s->e[i].active_clients)
			s->e[i].bytes_served = 0;
	for (i = 0; i < s->np_filled && i < SNAP_NET_MAX; i++)
		push_mask_traffic(&s->p[i]);
}

static int snap_take(int dev, struct snap *s)
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

static void expect_snap_eq(struct __test_metadata *_metadata,
			   const struct snap *a, const struct snap *b)
{
	EXPECT_EQ(a->st.movies, b->st.movies);
	EXPECT_EQ(a->st.zombies, b->st.zombies);
	EXPECT_EQ(a->st.resident, b->st.resident);
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

static bool all_zero(const void *p, size_t len)
{
	const unsigned char *c = p;

	while (len--)
		if (*c++)
			return false;
	return true;
}

/* INFO as ADD left it: length and bitrate as given, memory accounted. */
static void expect_info_fresh(struct __test_metadata *_metadata,
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


static int read_param(unsigned long long *val)
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
static int module_reload_default(void)
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
static int drop_net_admin(void)
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

static int send_fd(int sock, int fd)
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

static int recv_fd(int sock)
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
static char *map_guarded(void)
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
/* The device node.                                                    */

TEST(dev_node)
{
	struct stat st;

	ASSERT_EQ(0, stat(KVOD_DEVICE, &st));
	EXPECT_TRUE(S_ISCHR(st.st_mode));
	EXPECT_EQ(0600U, st.st_mode & 0777U);
	EXPECT_EQ(0U, st.st_uid);
	EXPECT_EQ(10U, major(st.st_rdev)) TH_LOG("not a misc device");
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

/* --- ADD success ---------------------------------------------------- */

static void add_and_check(struct __test_metadata *_metadata, int dev,
			  const char *name, unsigned long long len,
			  __u64 bitrate)
{
	struct kvod_movie_info mi;
	struct kvod_stats before, after;
	int fd = kvod_make_file(len, 1);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, kvod_stats(dev, &before));
	ASSERT_EQ(0, kvod_add(dev, name, fd, bitrate));
	close(fd);
	ASSERT_EQ(0, kvod_info(dev, name, &mi));
	expect_info_fresh(_metadata, &mi, name, len, bitrate);
	ASSERT_EQ(0, kvod_stats(dev, &after));
	EXPECT_EQ(before.movies + 1, after.movies);
	EXPECT_EQ(before.resident + mi.resident, after.resident);
	EXPECT_EQ(before.resident_max, after.resident_max);
	EXPECT_EQ(0U, after.zombies);
}

TEST_F(kvod, add_info_fields)
{
	add_and_check(_metadata, self->dev, "movie1", 3 * MiB + 123, 8700000);
}

TEST_F(kvod, add_one_byte)
{
	struct kvod_movie_info mi;

	add_and_check(_metadata, self->dev, "tiny", 1, 0);
	ASSERT_EQ(0, kvod_info(self->dev, "tiny", &mi));
	EXPECT_EQ(4096ULL, mi.resident);
	EXPECT_EQ(1U, mi.chunks);
}

TEST_F(kvod, add_exact_chunk)
{
	add_and_check(_metadata, self->dev, "two-mib", 2 * MiB, 1);
}

TEST_F(kvod, add_bitrate_max)
{
	add_and_check(_metadata, self->dev, "fast", 4096 * 3, UINT64_MAX);
}

TEST_F(kvod, add_several_stats_sum)
{
	struct kvod_movie_info mi;
	struct kvod_stats st;
	__u64 sum = 0;
	int i;

	for (i = 0; i < 3; i++) {
		char name[16];

		snprintf(name, sizeof(name), "m%d", i);
		add_and_check(_metadata, self->dev, name,
			      (i + 1) * MiB + 17 * i, 1000 * i);
		ASSERT_EQ(0, kvod_info(self->dev, name, &mi));
		sum += mi.resident;
	}
	ASSERT_EQ(0, kvod_stats(self->dev, &st));
	EXPECT_EQ(3U, st.movies);
	EXPECT_EQ(0U, st.zombies);
	EXPECT_EQ(sum, st.resident);
	EXPECT_TRUE(all_zero(st.reserved, sizeof(st.reserved)));
}

TEST_F(kvod, add_name_63_chars)
{
	char name[KVOD_NAME_MAX];
	const char *set = "abcXYZ0189._-";
	int i;

	for (i = 0; i < KVOD_NAME_MAX - 1; i++)
		name[i] = set[i % strlen(set)];
	name[KVOD_NAME_MAX - 1] = '\0';
	add_and_check(_metadata, self->dev, name, 5000, 0);
}

TEST_F(kvod, add_name_charset)
{
	static const char * const names[] = {
		"-", "_", "0", "...", ".a", "a.", "..a", "A-z_0.9",
		"Movie", "movie",
	};
	__u32 count, filled;
	struct kvod_movie_info e[16];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(names); i++)
		add_and_check(_metadata, self->dev, names[i], 100 + i, i);
	ASSERT_EQ(0, kvod_list(self->dev, e, 16, &count, &filled));
	EXPECT_EQ(ARRAY_SIZE(names), count);
}

TEST_F(kvod, add_source_changed_after)
{
	struct kvod_movie_info before, after;
	struct kvod_stats st0, st1;
	int fd = kvod_make_file(MiB + 5, 2);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, kvod_add(self->dev, "src", fd, 42));
	ASSERT_EQ(0, kvod_info(self->dev, "src", &before));
	ASSERT_EQ(0, kvod_stats(self->dev, &st0));
	ASSERT_EQ(0, ftruncate(fd, 0));
	ASSERT_EQ(4, pwrite(fd, "junk", 4, 3 * MiB));
	close(fd);
	ASSERT_EQ(0, kvod_info(self->dev, "src", &after));
	ASSERT_EQ(0, kvod_stats(self->dev, &st1));
	EXPECT_EQ(0, memcmp(&before, &after, sizeof(before)));
	EXPECT_EQ(MiB + 5, after.length);
	EXPECT_EQ(st0.resident, st1.resident);
	EXPECT_EQ(st0.movies, st1.movies);
}

TEST_F(kvod, add_ignores_file_position)
{
	struct kvod_movie_info mi;
	int fd = kvod_make_file(300000, 3);

	ASSERT_LE(0, fd);
	ASSERT_EQ(300000, lseek(fd, 0, SEEK_END));
	ASSERT_EQ(0, kvod_add(self->dev, "at-end", fd, 0));
	ASSERT_EQ(0, kvod_info(self->dev, "at-end", &mi));
	EXPECT_EQ(300000ULL, mi.length);
	ASSERT_EQ(1000, lseek(fd, 1000, SEEK_SET));
	ASSERT_EQ(0, kvod_add(self->dev, "mid", fd, 0));
	ASSERT_EQ(0, kvod_info(self->dev, "mid", &mi));
	EXPECT_EQ(300000ULL, mi.length);
	close(fd);
}

TEST_F(kvod, add_same_fd_twice)
{
	struct kvod_movie_info a, b;
	int fd = kvod_make_file(70000, 4);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, kvod_add(self->dev, "one", fd, 1));
	ASSERT_EQ(0, kvod_add(self->dev, "two", fd, 2));
	close(fd);
	ASSERT_EQ(0, kvod_info(self->dev, "one", &a));
	ASSERT_EQ(0, kvod_info(self->dev, "two", &b));
	expect_info_fresh(_metadata, &a, "one", 70000, 1);
	expect_info_fresh(_metadata, &b, "two", 70000, 2);
}

TEST_F(kvod, add_readonly_open_of_device)
{
	/* The open mode of /dev/kvod is not a permission: the creds are. */
	int ro = open(KVOD_DEVICE, O_RDONLY | O_CLOEXEC);
	int fd = kvod_make_file(4096, 5);
	struct kvod_movie_info mi;

	ASSERT_LE(0, ro);
	ASSERT_LE(0, fd);
	EXPECT_EQ(0, kvod_add(ro, "ro-dev", fd, 0));
	EXPECT_EQ(0, kvod_info(ro, "ro-dev", &mi));
	EXPECT_EQ(0, kvod_del(ro, "ro-dev"));
	close(fd);
	close(ro);
}

/* --- ADD rejections ------------------------------------------------- */

/* Expects @ret == @err, the catalog unchanged and @name not registered. */
static void expect_rejected(struct __test_metadata *_metadata, int dev,
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
static void add_keep(struct __test_metadata *_metadata, int dev)
{
	int fd = kvod_make_file(3 * 4096 + 1, 9);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, kvod_add(dev, "keep", fd, 777));
	close(fd);
}

static void add_fd_rejected(struct __test_metadata *_metadata, int dev,
			    int fd, int err)
{
	struct snap before;

	add_keep(_metadata, dev);
	ASSERT_EQ(0, snap_take(dev, &before));
	expect_rejected(_metadata, dev, &before, err,
			kvod_add(dev, "new", fd, 0), "new");
}

TEST_F(kvod, add_fd_minus_one)
{
	add_fd_rejected(_metadata, self->dev, -1, EBADF);
}

TEST_F(kvod, add_fd_closed)
{
	int fd = kvod_make_file(4096, 1);

	ASSERT_LE(0, fd);
	close(fd);
	ASSERT_EQ(-1, fcntl(fd, F_GETFD));
	add_fd_rejected(_metadata, self->dev, fd, EBADF);
}

TEST_F(kvod, add_fd_huge)
{
	add_fd_rejected(_metadata, self->dev, INT32_MAX, EBADF);
}

TEST_F(kvod, add_fd_wronly)
{
	int fd = kvod_make_file(4096, 1);
	int wr;

	ASSERT_LE(0, fd);
	wr = kvod_reopen(fd, O_WRONLY | O_CLOEXEC);
	ASSERT_LE(0, wr);
	add_fd_rejected(_metadata, self->dev, wr, EBADF);
	close(wr);
	close(fd);
}

TEST_F(kvod, add_fd_directory)
{
	int fd = open("/tmp", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	ASSERT_LE(0, fd);
	add_fd_rejected(_metadata, self->dev, fd, EINVAL);
	close(fd);
}

TEST_F(kvod, add_fd_pipe)
{
	int p[2];

	ASSERT_EQ(0, pipe(p));
	ASSERT_EQ(5, write(p[1], "hello", 5));
	add_fd_rejected(_metadata, self->dev, p[0], EINVAL);
	close(p[0]);
	close(p[1]);
}

TEST_F(kvod, add_fd_socket)
{
	int sv[2];

	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	ASSERT_EQ(5, write(sv[1], "hello", 5));
	add_fd_rejected(_metadata, self->dev, sv[0], EINVAL);
	close(sv[0]);
	close(sv[1]);
}

TEST_F(kvod, add_fd_chardev)
{
	int fd = open("/dev/zero", O_RDONLY | O_CLOEXEC);

	ASSERT_LE(0, fd);
	add_fd_rejected(_metadata, self->dev, fd, EINVAL);
	close(fd);
}

TEST_F(kvod, add_fd_empty_file)
{
	int fd = kvod_make_file(0, 1);

	ASSERT_LE(0, fd);
	add_fd_rejected(_metadata, self->dev, fd, EINVAL);
	close(fd);
}

TEST_F(kvod, add_fd_opath)
{
	int fd = kvod_make_file(4096, 1);
	int path;

	ASSERT_LE(0, fd);
	path = kvod_reopen(fd, O_PATH | O_CLOEXEC);
	ASSERT_LE(0, path);
	add_fd_rejected(_metadata, self->dev, path, EBADF);
	close(path);
	close(fd);
}

/* A sparse file one byte over the ABI's 1 TiB limit: EFBIG, no read. */
TEST_F(kvod, add_file_too_big)
{
	int fd = kvod_make_file(0, 1);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ftruncate(fd, (1LL << 40) + 1));
	add_fd_rejected(_metadata, self->dev, fd, EFBIG);
	close(fd);
}

/*
 * ADD interrupted, or its file shrinking, while it reads a 1 GiB file:
 * whatever the outcome, nothing half-made stays (no movie, no resident
 * bytes) unless the movie was registered whole. The disturbance comes
 * once STATS shows the ADD under way (its memory reserved, no movie
 * listed yet); an ADD that still got to the end is taken back and tried
 * again, and one of DISTURB_TRIES must have been cut short, or the test
 * saw no disturbance at all.
 */
#define DISTURB_TRIES	5

/* One try; true if the ADD was cut short. */
static bool add_disturbed_once(struct __test_metadata *_metadata, int dev,
			       int *ret, bool kill_it)
{
	const unsigned long long len = 1ULL << 30;
	struct kvod_movie_info mi;
	struct kvod_stats st;
	int fd = kvod_make_file(0, 1);
	int status, info, i;
	pid_t pid;

	EXPECT_LE(0, fd);
	if (fd < 0)
		return false;
	if (ftruncate(fd, len)) {
		EXPECT_EQ(0, errno);
		close(fd);
		return false;
	}
	*ret = -1;
	pid = fork();
	if (pid < 0) {
		EXPECT_EQ(0, errno);
		close(fd);
		return false;
	}
	if (!pid) {
		*ret = kvod_add(dev, "disturbed", fd, 0);
		_exit(0);
	}
	/* Under way: reserved, not listed (or over: the child is gone). */
	for (i = 0; i < 60000; i++) {
		if (!kvod_stats(dev, &st) && st.resident >= len && !st.movies)
			break;
		if (waitpid(pid, &status, WNOHANG) == pid) {
			pid = 0;
			break;
		}
		usleep(1000);
	}
	if (pid) {
		if (kill_it) {
			EXPECT_EQ(0, kill(pid, SIGKILL));
		} else {
			EXPECT_EQ(0, ftruncate(fd, 0));
		}
		EXPECT_EQ(pid, waitpid(pid, &status, 0));
	}
	close(fd);
	info = kvod_info(dev, "disturbed", &mi);
	EXPECT_EQ(0, kvod_stats(dev, &st));
	TH_LOG("disturbed %s, ADD %s, INFO %s", pid ? "under way" : "too late",
	       *ret < 0 ? "killed" : strerror(*ret), strerror(info));
	if (!info) {
		EXPECT_EQ(len, mi.length);
		EXPECT_EQ(1U, st.movies);
		EXPECT_EQ(mi.resident, st.resident);
		EXPECT_EQ(0, kvod_del(dev, "disturbed"));
		return false;
	}
	EXPECT_EQ(ENOENT, info);
	EXPECT_EQ(0U, st.movies);
	EXPECT_EQ(0ULL, st.resident);
	if (kill_it) {
		EXPECT_TRUE(*ret == -1 || *ret == EINTR);
	} else {
		EXPECT_TRUE(*ret == EIO || *ret == EINVAL)
			TH_LOG("ADD returned %d", *ret);
	}
	return true;
}

static void add_disturbed(struct __test_metadata *_metadata, int dev,
			  bool kill_it)
{
	int *ret = mmap(NULL, sizeof(int), PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	struct kvod_stats st;
	bool cut = false;
	int i;

	ASSERT_NE(MAP_FAILED, ret);
	ASSERT_EQ(0, kvod_stats(dev, &st));
	if (st.resident_max < 1ULL << 30)
		SKIP(return, "resident cap below 1 GiB");
	for (i = 0; i < DISTURB_TRIES && !cut && !_metadata->exit_code; i++)
		cut = add_disturbed_once(_metadata, dev, ret, kill_it);
	EXPECT_TRUE(cut)
		TH_LOG("no ADD of %d was cut short", DISTURB_TRIES);
	munmap(ret, sizeof(int));
}

TEST_F_TIMEOUT(kvod, add_killed_while_reading, 300)
{
	add_disturbed(_metadata, self->dev, true);
}

TEST_F_TIMEOUT(kvod, add_file_shrinks_while_reading, 300)
{
	add_disturbed(_metadata, self->dev, false);
}

/*
 * STATS while ADD reads a 1 GiB file: its memory is reserved (resident)
 * before it is listed, and it is no zombie (no movie was deleted).
 */
TEST_F_TIMEOUT(kvod, add_in_progress_is_no_zombie, 300)
{
	const unsigned long long len = 1ULL << 30;
	unsigned int seen = 0, zombies = 0;
	struct kvod_stats st;
	int fd = kvod_make_file(0, 1);
	int status;
	pid_t pid;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ftruncate(fd, len));
	ASSERT_EQ(0, kvod_stats(self->dev, &st));
	if (st.resident_max < len)
		SKIP(return, "resident cap below 1 GiB");
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(kvod_add(self->dev, "loading", fd, 0) ? 1 : 0);
	while (waitpid(pid, &status, WNOHANG) == 0) {
		ASSERT_EQ(0, kvod_stats(self->dev, &st));
		if (st.resident && !st.movies) {
			seen++;
			zombies += st.zombies;
		}
	}
	close(fd);
	TH_LOG("%u STATS while loading", seen);
	ASSERT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	EXPECT_LT(0U, seen);
	EXPECT_EQ(0U, zombies);
	ASSERT_EQ(0, kvod_stats(self->dev, &st));
	EXPECT_EQ(1U, st.movies);
	EXPECT_EQ(0U, st.zombies);
	ASSERT_EQ(0, kvod_del(self->dev, "loading"));
	ASSERT_EQ(0, kvod_stats(self->dev, &st));
	EXPECT_EQ(0U, st.zombies);
	EXPECT_EQ(0ULL, st.resident);
}

/*
 * A file whose reads end before its size: a sysfs attribute says 4096
 * bytes and reads as a few. The shrink test above races a truncate and
 * may see either outcome; this one is EIO every time.
 */
TEST_F(kvod, add_file_shorter_than_its_size)
{
	const char *path = "/sys/module/kvod/parameters/max_resident_mb";
	struct snap before;
	struct stat st;
	char buf[64];
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, fd) TH_LOG("%s: %s", path, strerror(errno));
	ASSERT_EQ(0, fstat(fd, &st));
	ASSERT_TRUE(S_ISREG(st.st_mode));
	n = pread(fd, buf, sizeof(buf), 0);
	ASSERT_LT(0, n);
	ASSERT_GT(st.st_size, n) TH_LOG("reads as long as its size");
	ASSERT_EQ(0, snap_take(self->dev, &before));
	expect_rejected(_metadata, self->dev, &before, EIO,
			kvod_add(self->dev, "short", fd, 0), "short");
	close(fd);
}

TEST_F(kvod, add_duplicate)
{
	struct kvod_movie_info orig, now;
	struct snap before;
	int fd = kvod_make_file(9000, 7);

	add_keep(_metadata, self->dev);
	ASSERT_EQ(0, kvod_info(self->dev, "keep", &orig));
	ASSERT_EQ(0, snap_take(self->dev, &before));
	ASSERT_LE(0, fd);
	expect_rejected(_metadata, self->dev, &before, EEXIST,
			kvod_add(self->dev, "keep", fd, 12345), NULL);
	close(fd);
	ASSERT_EQ(0, kvod_info(self->dev, "keep", &now));
	EXPECT_EQ(0, memcmp(&orig, &now, sizeof(orig)));
	EXPECT_EQ(3ULL * 4096 + 1, now.length);
	EXPECT_EQ(777ULL, now.bitrate);
}

/* --- Bad names: ADD, DEL and INFO each reject them ------------------ */

FIXTURE(bad_name) {
	int dev;
	int file;
	struct snap before;
};

FIXTURE_VARIANT(bad_name) {
	const char *name;	/* copied into the 64-byte field ... */
	size_t len;		/* ... this many bytes of it, no NUL added */
	const char *shadow;	/* a valid name a sloppy parser might see */
};

FIXTURE_VARIANT_ADD(bad_name, empty) {
	.name = "", .len = 1, .shadow = NULL,
};
FIXTURE_VARIANT_ADD(bad_name, unterminated) {
	.name = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
	.len = KVOD_NAME_MAX,
	.shadow = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
};
FIXTURE_VARIANT_ADD(bad_name, slash) {
	.name = "a/b", .len = 4, .shadow = "a",
};
FIXTURE_VARIANT_ADD(bad_name, space) {
	.name = "a b", .len = 4, .shadow = "a",
};
FIXTURE_VARIANT_ADD(bad_name, newline) {
	.name = "a\n", .len = 3, .shadow = "a",
};
FIXTURE_VARIANT_ADD(bad_name, high_byte) {
	.name = "a\x80" "b", .len = 4, .shadow = "a",
};
FIXTURE_VARIANT_ADD(bad_name, star) {
	.name = "a*", .len = 3, .shadow = "a",
};
FIXTURE_VARIANT_ADD(bad_name, backslash) {
	.name = "a\\b", .len = 4, .shadow = "a",
};
FIXTURE_VARIANT_ADD(bad_name, del_char) {
	.name = "a\x7f", .len = 3, .shadow = "a",
};
FIXTURE_VARIANT_ADD(bad_name, dot) {
	.name = ".", .len = 2, .shadow = NULL,
};
FIXTURE_VARIANT_ADD(bad_name, dotdot) {
	.name = "..", .len = 3, .shadow = NULL,
};

FIXTURE_SETUP(bad_name)
{
	self->dev = open(KVOD_DEVICE, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->dev);
	ASSERT_EQ(0, kvod_catalog_clear(self->dev));
	self->file = kvod_make_file(5000, 3);
	ASSERT_LE(0, self->file);
	add_keep(_metadata, self->dev);
	if (variant->shadow)
		ASSERT_EQ(0, kvod_add(self->dev, variant->shadow,
				      self->file, 5));
	ASSERT_EQ(0, snap_take(self->dev, &self->before));
}

FIXTURE_TEARDOWN(bad_name)
{
	EXPECT_EQ(0, kvod_catalog_clear(self->dev));
	close(self->file);
	close(self->dev);
}

TEST_F(bad_name, add)
{
	struct kvod_movie_add a = {
		.size = sizeof(a), .fd = self->file, .bitrate = 1,
	};

	memcpy(a.name, variant->name, variant->len);
	expect_rejected(_metadata, self->dev, &self->before, EINVAL,
			kvod_ioctl(self->dev, KVOD_IOC_MOVIE_ADD, &a), NULL);
}

TEST_F(bad_name, del)
{
	struct kvod_movie_ref r = { .size = sizeof(r) };

	memcpy(r.name, variant->name, variant->len);
	expect_rejected(_metadata, self->dev, &self->before, EINVAL,
			kvod_ioctl(self->dev, KVOD_IOC_MOVIE_DEL, &r), NULL);
}

TEST_F(bad_name, info)
{
	struct kvod_movie_info mi = { .size = sizeof(mi) };

	memcpy(mi.name, variant->name, variant->len);
	expect_rejected(_metadata, self->dev, &self->before, EINVAL,
			kvod_ioctl(self->dev, KVOD_IOC_MOVIE_INFO, &mi), NULL);
}

/* --- Capabilities --------------------------------------------------- */

struct cap_result {
	int setup;	/* errno of dropping the capability, or of unshare */
	int add, del, info, list, stats;
};

static void run_queries_and_changes(int dev, struct cap_result *r)
{
	struct kvod_movie_info mi, e[4];
	struct kvod_stats st;
	__u32 count, filled;
	int fd = kvod_make_file(4096, 11);

	r->add = fd < 0 ? -fd : kvod_add(dev, "new", fd, 0);
	r->del = kvod_del(dev, "keep");
	r->info = kvod_info(dev, "keep", &mi);
	r->list = kvod_list(dev, e, 4, &count, &filled);
	if (!r->list && (count != 1 || filled != 1))
		r->list = -1000;
	r->stats = kvod_stats(dev, &st);
	if (!r->stats && st.movies != 1)
		r->stats = -1000;
	if (fd >= 0)
		close(fd);
}

static struct cap_result *shared_result(void)
{
	struct cap_result *r = mmap(NULL, sizeof(*r), PROT_READ | PROT_WRITE,
				    MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	return r == MAP_FAILED ? NULL : r;
}

static void expect_changes_refused(struct __test_metadata *_metadata,
				   const struct cap_result *r)
{
	EXPECT_EQ(EPERM, r->add);
	EXPECT_EQ(EPERM, r->del);
	EXPECT_EQ(0, r->info);
	EXPECT_EQ(0, r->list);
	EXPECT_EQ(0, r->stats);
}

TEST_F(kvod, eperm_caller_without_cap)
{
	struct cap_result *r = shared_result();
	struct snap before;
	int status;
	pid_t pid;

	ASSERT_NE(NULL, r);
	add_keep(_metadata, self->dev);
	ASSERT_EQ(0, snap_take(self->dev, &before));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		/* The fd was opened with CAP_NET_ADMIN; the caller has none. */
		r->setup = drop_net_admin();
		if (!r->setup)
			run_queries_and_changes(self->dev, r);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_EQ(0, r->setup);
	expect_changes_refused(_metadata, r);
	expect_rejected(_metadata, self->dev, &before, EPERM, r->add, "new");
}

TEST_F(kvod, eperm_opener_without_cap)
{
	struct cap_result *r = shared_result();
	struct snap before;
	int sv[2], fd, status;
	pid_t pid;

	ASSERT_NE(NULL, r);
	add_keep(_metadata, self->dev);
	ASSERT_EQ(0, snap_take(self->dev, &before));
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		int dev;

		close(sv[0]);
		r->setup = drop_net_admin();
		dev = open(KVOD_DEVICE, O_RDWR);
		if (dev < 0 && !r->setup)
			r->setup = errno;
		if (!r->setup)
			r->setup = send_fd(sv[1], dev);
		_exit(0);
	}
	close(sv[1]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_EQ(0, r->setup);
	fd = recv_fd(sv[0]);
	close(sv[0]);
	ASSERT_LE(0, fd);
	/* We still hold CAP_NET_ADMIN; the file's opener did not. */
	run_queries_and_changes(fd, r);
	close(fd);
	expect_changes_refused(_metadata, r);
	expect_rejected(_metadata, self->dev, &before, EPERM, r->add, "new");
}

TEST_F(kvod, eperm_user_namespace)
{
	struct cap_result *r = shared_result();
	struct snap before;
	int status;
	pid_t pid;

	ASSERT_NE(NULL, r);
	add_keep(_metadata, self->dev);
	ASSERT_EQ(0, snap_take(self->dev, &before));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		/* Full capabilities, but in a child user namespace. */
		r->setup = unshare(CLONE_NEWUSER) ? errno : 0;
		if (!r->setup)
			run_queries_and_changes(self->dev, r);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	if (r->setup)
		SKIP(return, "unshare(CLONE_NEWUSER): %s", strerror(r->setup));
	expect_changes_refused(_metadata, r);
	expect_rejected(_metadata, self->dev, &before, EPERM, r->add, "new");
}

/* --- DEL ------------------------------------------------------------ */

TEST_F(kvod, del_unknown)
{
	struct snap before;

	add_keep(_metadata, self->dev);
	ASSERT_EQ(0, snap_take(self->dev, &before));
	expect_rejected(_metadata, self->dev, &before, ENOENT,
			kvod_del(self->dev, "nope"), "nope");
	expect_rejected(_metadata, self->dev, &before, ENOENT,
			kvod_del(self->dev, "kee"), NULL);
	expect_rejected(_metadata, self->dev, &before, ENOENT,
			kvod_del(self->dev, "keep0"), NULL);
	expect_rejected(_metadata, self->dev, &before, ENOENT,
			kvod_del(self->dev, "KEEP"), NULL);
}

TEST_F(kvod, del_empty_catalog)
{
	struct snap before;

	ASSERT_EQ(0, snap_take(self->dev, &before));
	expect_rejected(_metadata, self->dev, &before, ENOENT,
			kvod_del(self->dev, "nothing"), "nothing");
}

TEST_F(kvod, del_then_readd)
{
	struct kvod_movie_info mi, other;
	struct kvod_stats st0, st1;
	int fd = kvod_make_file(MiB + 1, 6);

	ASSERT_LE(0, fd);
	add_keep(_metadata, self->dev);
	ASSERT_EQ(0, kvod_info(self->dev, "keep", &other));
	ASSERT_EQ(0, kvod_stats(self->dev, &st0));
	ASSERT_EQ(0, kvod_add(self->dev, "gone", fd, 3));
	ASSERT_EQ(0, kvod_del(self->dev, "gone"));
	EXPECT_EQ(ENOENT, kvod_info(self->dev, "gone", &mi));
	ASSERT_EQ(0, kvod_stats(self->dev, &st1));
	EXPECT_EQ(st0.movies, st1.movies);
	EXPECT_EQ(st0.resident, st1.resident);
	EXPECT_EQ(0U, st1.zombies);
	ASSERT_EQ(0, kvod_info(self->dev, "keep", &mi));
	EXPECT_EQ(0, memcmp(&other, &mi, sizeof(mi)));
	/* The name is free again, and the new movie is the new file. */
	close(fd);
	fd = kvod_make_file(5555, 8);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, kvod_add(self->dev, "gone", fd, 4));
	close(fd);
	ASSERT_EQ(0, kvod_info(self->dev, "gone", &mi));
	expect_info_fresh(_metadata, &mi, "gone", 5555, 4);
}

TEST_F(kvod, del_twice)
{
	struct snap before;
	int fd = kvod_make_file(4096, 6);

	ASSERT_LE(0, fd);
	add_keep(_metadata, self->dev);
	ASSERT_EQ(0, kvod_add(self->dev, "once", fd, 3));
	close(fd);
	ASSERT_EQ(0, kvod_del(self->dev, "once"));
	ASSERT_EQ(0, snap_take(self->dev, &before));
	expect_rejected(_metadata, self->dev, &before, ENOENT,
			kvod_del(self->dev, "once"), "once");
}

/* --- INFO ----------------------------------------------------------- */

TEST_F(kvod, info_unknown)
{
	struct kvod_movie_info mi;
	struct snap before;

	add_keep(_metadata, self->dev);
	ASSERT_EQ(0, snap_take(self->dev, &before));
	expect_rejected(_metadata, self->dev, &before, ENOENT,
			kvod_info(self->dev, "nope", &mi), NULL);
	expect_rejected(_metadata, self->dev, &before, ENOENT,
			kvod_info(self->dev, "kee", &mi), NULL);
	expect_rejected(_metadata, self->dev, &before, ENOENT,
			kvod_info(self->dev, "Keep", &mi), NULL);
}

TEST_F(kvod, info_ignores_output_fields_on_input)
{
	struct kvod_movie_info mi, ref;

	add_keep(_metadata, self->dev);
	ASSERT_EQ(0, kvod_info(self->dev, "keep", &ref));
	memset(&mi, 0, sizeof(mi));
	mi.size = sizeof(mi);
	kvod_set_name(mi.name, "keep");
	mi.length = 1;
	mi.bitrate = 2;
	mi.resident = 3;
	mi.chunks = 4;
	mi.active_clients = 5;
	mi.bytes_served = 6;
	ASSERT_EQ(0, kvod_ioctl(self->dev, KVOD_IOC_MOVIE_INFO, &mi));
	EXPECT_EQ(0, memcmp(&ref, &mi, sizeof(mi)));
}

/*
 * PUSH_START's @id is output only: a struct reused from an earlier start,
 * stale id and all, starts another push (and gets a new id).
 */
TEST_F(kvod, push_start_ignores_id_on_input)
{
	struct kvod_push_start p = {
		.size = sizeof(p),
		.opts = KVOD_PUSH_LOOP,
		.rate = 10000,
		.id = 12345,
	};
	struct kvod_push_ref r = { .size = sizeof(r) };
	__u32 first;

	add_keep(_metadata, self->dev);
	kvod_set_name(p.name, "keep");
	kvod_sockaddr_v4(&p.dst, "127.0.0.1", 9);
	ASSERT_EQ(0, kvod_ioctl(self->dev, KVOD_IOC_PUSH_START, &p));
	ASSERT_NE(0U, p.id);
	first = p.id;
	ASSERT_EQ(0, kvod_ioctl(self->dev, KVOD_IOC_PUSH_START, &p));
	EXPECT_NE(first, p.id);
	r.id = first;
	EXPECT_EQ(0, kvod_ioctl(self->dev, KVOD_IOC_PUSH_STOP, &r));
	r.id = p.id;
	EXPECT_EQ(0, kvod_ioctl(self->dev, KVOD_IOC_PUSH_STOP, &r));
}

/*
 * An IPv6 scope belongs to link-local addresses only (the uapi header):
 * LISTEN and PUSH_START on ::1 with one are EINVAL and change nothing.
 */
TEST_F(kvod, ipv6_scope_only_where_needed)
{
	struct kvod_listen l = { .size = sizeof(l), .proto = KVOD_PROTO_HTTP };
	struct kvod_push_start p = { .size = sizeof(p), .rate = 10000 };
	struct kvod_listener_info li[2];
	struct kvod_push_info pi[2];
	__u32 count;

	add_keep(_metadata, self->dev);
	l.addr.family = AF_INET6;
	l.addr.port = 8094;
	l.addr.addr[15] = 1;
	l.addr.scope_id = 1;
	EXPECT_EQ(EINVAL, kvod_ioctl(self->dev, KVOD_IOC_LISTEN, &l));
	kvod_set_name(p.name, "keep");
	p.dst = l.addr;
	p.dst.port = 5094;
	EXPECT_EQ(EINVAL, kvod_ioctl(self->dev, KVOD_IOC_PUSH_START, &p));
	ASSERT_EQ(0, kvod_list_of(self->dev, KVOD_IOC_LISTENER_LIST, li,
				  sizeof(li[0]), 2, &count, NULL));
	EXPECT_EQ(0U, count);
	ASSERT_EQ(0, kvod_list_of(self->dev, KVOD_IOC_PUSH_LIST, pi,
				  sizeof(pi[0]), 2, &count, NULL));
	EXPECT_EQ(0U, count);
}

/*
 * LISTEN where a listener exists, or the port is taken by a socket of
 * somebody else's: EADDRINUSE, and nothing changes.
 */
TEST_F(kvod, listen_address_in_use)
{
	struct sockaddr_in sin = {
		.sin_family = AF_INET,
		.sin_port = htons(8095),
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	struct snap before;
	int sock;

	ASSERT_EQ(0, kvod_listen_v4(self->dev, true, KVOD_PROTO_HTTP,
				    "127.0.0.1", 8094));
	ASSERT_EQ(0, snap_take(self->dev, &before));
	EXPECT_EQ(EADDRINUSE, kvod_listen_v4(self->dev, true, KVOD_PROTO_HTTP,
					     "127.0.0.1", 8094));
	ASSERT_INTACT(self->dev, &before);

	sock = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ASSERT_LE(0, sock);
	ASSERT_EQ(0, bind(sock, (struct sockaddr *)&sin, sizeof(sin)));
	ASSERT_EQ(0, listen(sock, 1));
	EXPECT_EQ(EADDRINUSE, kvod_listen_v4(self->dev, true, KVOD_PROTO_HTTP,
					     "127.0.0.1", 8095));
	ASSERT_INTACT(self->dev, &before);
	close(sock);
	EXPECT_EQ(0, kvod_stop_all(self->dev));
}

/*
 * LISTEN on an address no interface of the namespace has (one of the
 * benchmarking range, 198.18.0.0/15, that nothing here uses), over HTTP
 * and RDMA: EADDRNOTAVAIL, and nothing changes.
 */
TEST_F(kvod, listen_address_not_local)
{
	struct snap before;

	ASSERT_EQ(0, snap_take(self->dev, &before));
	EXPECT_EQ(EADDRNOTAVAIL, kvod_listen_v4(self->dev, true,
						KVOD_PROTO_HTTP,
						"198.19.255.254", 8096));
	EXPECT_EQ(EADDRNOTAVAIL, kvod_listen_v4(self->dev, true,
						KVOD_PROTO_RDMA,
						"198.19.255.254", 8096));
	ASSERT_INTACT(self->dev, &before);
}

/*
 * RDMA LISTEN on 127.0.0.1 or ::1: rdma_cm would bind it as the wildcard
 * and accept requests for every address of every device, so it is
 * refused (EADDRNOTAVAIL) and nothing changes; HTTP there is fine.
 */
TEST_F(kvod, listen_rdma_loopback)
{
	struct kvod_listen l = { .size = sizeof(l), .proto = KVOD_PROTO_RDMA };
	struct snap before;

	l.addr.family = AF_INET6;
	l.addr.port = 8098;
	l.addr.addr[15] = 1;
	ASSERT_EQ(0, snap_take(self->dev, &before));
	EXPECT_EQ(EADDRNOTAVAIL, kvod_listen_v4(self->dev, true,
						KVOD_PROTO_RDMA,
						"127.0.0.1", 8098));
	EXPECT_EQ(EADDRNOTAVAIL, kvod_listen_v4(self->dev, true,
						KVOD_PROTO_RDMA,
						"127.0.0.2", 8098));
	EXPECT_EQ(EADDRNOTAVAIL, kvod_ioctl(self->dev, KVOD_IOC_LISTEN, &l));
	ASSERT_INTACT(self->dev, &before);
	EXPECT_EQ(0, kvod_listen_v4(self->dev, true, KVOD_PROTO_HTTP,
				    "127.0.0.1", 8098));
	EXPECT_EQ(0, kvod_stop_all(self->dev));
}

/*
 * LISTEN on a link-local address whose scope names no interface: the
 * bind says ENODEV, and nothing changes.
 */
TEST_F(kvod, listen_scope_no_such_interface)
{
	struct kvod_listen l = { .size = sizeof(l), .proto = KVOD_PROTO_HTTP };
	struct snap before;

	l.addr.family = AF_INET6;
	l.addr.port = 8097;
	l.addr.addr[0] = 0xfe;
	l.addr.addr[1] = 0x80;
	l.addr.addr[15] = 1;
	l.addr.scope_id = 999999;
	ASSERT_EQ(0, snap_take(self->dev, &before));
	EXPECT_EQ(ENODEV, kvod_ioctl(self->dev, KVOD_IOC_LISTEN, &l));
	ASSERT_INTACT(self->dev, &before);
}

/*
 * PUSH_START's values, one bad at a time, each EINVAL with nothing
 * changed; the request they are made from is then accepted.
 */
TEST_F(kvod, push_start_bad_values)
{
	struct kvod_push_start good = { .size = sizeof(good), .rate = 10000 };
	struct kvod_push_start p;
	struct snap before;
	int fd = kvod_make_file(100, 3);

	ASSERT_LE(0, fd);
	add_keep(_metadata, self->dev);
	ASSERT_EQ(0, kvod_add(self->dev, "tiny", fd, 0));	/* < 188 bytes */
	close(fd);
	kvod_set_name(good.name, "keep");
	kvod_sockaddr_v4(&good.dst, "127.0.0.1", 5096);
	ASSERT_EQ(0, snap_take(self->dev, &before));
#define BAD_PUSH(change) do {						\
	p = good;							\
	change;								\
	EXPECT_EQ(EINVAL, kvod_ioctl(self->dev, KVOD_IOC_PUSH_START, &p))\
		TH_LOG("%s", #change);					\
} while (0)
	BAD_PUSH(p.opts = 0x80000000U);
	BAD_PUSH(p.rate = 9999);
	BAD_PUSH(p.rate = 10000000001ULL);
	BAD_PUSH(p.window_ms = 2001);
	BAD_PUSH(p.dst.family = AF_UNIX);
	BAD_PUSH(p.dst.port = 0);
	BAD_PUSH(kvod_set_name(p.name, "a/b"));
	BAD_PUSH(kvod_set_name(p.name, "tiny"));
#undef BAD_PUSH
	ASSERT_INTACT(self->dev, &before);
	EXPECT_EQ(0, kvod_ioctl(self->dev, KVOD_IOC_PUSH_START, &good));
	EXPECT_EQ(0, kvod_stop_all(self->dev));
}

/*
 * LISTEN's and UNLISTEN's values, one bad at a time: EINVAL, nothing
 * changed; the request they are made from is then accepted.
 */
TEST_F(kvod, listen_bad_values)
{
	struct kvod_listen good = { .size = sizeof(good),
				    .proto = KVOD_PROTO_HTTP };
	struct kvod_listen l;
	struct snap before;

	kvod_sockaddr_v4(&good.addr, "127.0.0.1", 8098);
	ASSERT_EQ(0, snap_take(self->dev, &before));
#define BAD_LISTEN(change) do {						\
	l = good;							\
	change;								\
	EXPECT_EQ(EINVAL, kvod_ioctl(self->dev, KVOD_IOC_LISTEN, &l))	\
		TH_LOG("LISTEN: %s", #change);				\
	EXPECT_EQ(EINVAL, kvod_ioctl(self->dev, KVOD_IOC_UNLISTEN, &l))	\
		TH_LOG("UNLISTEN: %s", #change);			\
} while (0)
	BAD_LISTEN(l.proto = 0);
	BAD_LISTEN(l.proto = 3);
	BAD_LISTEN(l.addr.family = AF_UNIX);
	BAD_LISTEN(l.addr.port = 0);
#undef BAD_LISTEN
	ASSERT_INTACT(self->dev, &before);
	EXPECT_EQ(0, kvod_ioctl(self->dev, KVOD_IOC_LISTEN, &good));
	EXPECT_EQ(0, kvod_stop_all(self->dev));
}

/*
 * A push to a broadcast address: UDP's connect() refuses it without
 * SO_BROADCAST (EACCES), so no packet is sent and nothing changes.
 */
TEST_F(kvod, push_start_broadcast)
{
	struct kvod_push_start p = { .size = sizeof(p), .rate = 10000 };
	struct snap before;

	add_keep(_metadata, self->dev);
	ASSERT_EQ(0, snap_take(self->dev, &before));
	kvod_set_name(p.name, "keep");
	kvod_sockaddr_v4(&p.dst, "127.255.255.255", 5095);
	EXPECT_EQ(EACCES, kvod_ioctl(self->dev, KVOD_IOC_PUSH_START, &p));
	ASSERT_INTACT(self->dev, &before);
}

/* --- LIST ----------------------------------------------------------- */

static void add_names(struct __test_metadata *_metadata, int dev,
		      const char * const *names, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		int fd = kvod_make_file(1000 + 4096 * i, i);

		ASSERT_LE(0, fd);
		ASSERT_EQ(0, kvod_add(dev, names[i], fd, i * 10));
		close(fd);
	}
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char * const *)a, *(const char * const *)b);
}

/* Not in order; mixed case, digits and punctuation to pin strcmp order. */
static const char * const list_names[] = {
	"zeta", "Zeta", "alpha", "_under", "-dash", ".dot", "10", "9",
	"alpha.2", "alpha-2", "Alpha",
};

TEST_F(kvod, list_empty)
{
	struct kvod_movie_list l = {
		.size = sizeof(l), .count = 0, .entry_size = sizeof(struct kvod_movie_info),
	};

	l.filled = 0;
	ASSERT_EQ(0, kvod_ioctl(self->dev, KVOD_IOC_MOVIE_LIST, &l));
	EXPECT_EQ(0U, l.count);
	EXPECT_EQ(0U, l.filled);
}

TEST_F(kvod, list_room_zero)
{
	struct kvod_movie_list l = {
		.size = sizeof(l), .count = 0,
		.entry_size = sizeof(struct kvod_movie_info), .entries = 0,
	};

	add_names(_metadata, self->dev, list_names, 3);
	ASSERT_EQ(0, kvod_ioctl(self->dev, KVOD_IOC_MOVIE_LIST, &l));
	EXPECT_EQ(3U, l.count);
	EXPECT_EQ(0U, l.filled);
}

TEST_F(kvod, list_room_zero_entries_untouched)
{
	char *p = map_guarded();
	struct kvod_movie_list l = {
		.size = sizeof(l), .count = 0,
		.entry_size = sizeof(struct kvod_movie_info),
	};

	ASSERT_NE(NULL, p);
	l.entries = (uintptr_t)(p + 2 * page_size);
	add_names(_metadata, self->dev, list_names, 2);
	ASSERT_EQ(0, kvod_ioctl(self->dev, KVOD_IOC_MOVIE_LIST, &l));
	EXPECT_EQ(2U, l.count);
	EXPECT_EQ(0U, l.filled);
}

TEST_F(kvod, list_sorted_and_matches_info)
{
	const size_t n = ARRAY_SIZE(list_names);
	const char *sorted[ARRAY_SIZE(list_names)];
	struct kvod_movie_info e[SNAP_MAX], mi;
	__u32 count, filled;
	size_t i;

	add_names(_metadata, self->dev, list_names, n);
	memcpy(sorted, list_names, sizeof(sorted));
	qsort(sorted, n, sizeof(sorted[0]), cmp_str);
	ASSERT_EQ(0, kvod_list(self->dev, e, SNAP_MAX, &count, &filled));
	ASSERT_EQ(n, count);
	ASSERT_EQ(n, filled);
	for (i = 0; i < n; i++) {
		EXPECT_STREQ(sorted[i], e[i].name);
		EXPECT_EQ(sizeof(e[i]), e[i].size);
		ASSERT_EQ(0, kvod_info(self->dev, sorted[i], &mi));
		mi.size = e[i].size;
		EXPECT_EQ(0, memcmp(&mi, &e[i], sizeof(mi)))
			TH_LOG("LIST entry %zu differs from INFO %s", i,
			       sorted[i]);
	}
}

TEST_F(kvod, list_partial_room)
{
	const size_t n = ARRAY_SIZE(list_names);
	const char *sorted[ARRAY_SIZE(list_names)];
	struct kvod_movie_info e[4];
	__u32 count, filled;

	add_names(_metadata, self->dev, list_names, n);
	memcpy(sorted, list_names, sizeof(sorted));
	qsort(sorted, n, sizeof(sorted[0]), cmp_str);
	memset(e, 0xa5, sizeof(e));
	ASSERT_EQ(0, kvod_list(self->dev, e, 3, &count, &filled));
	EXPECT_EQ(n, count);
	EXPECT_EQ(3U, filled);
	EXPECT_STREQ(sorted[0], e[0].name);
	EXPECT_STREQ(sorted[1], e[1].name);
	EXPECT_STREQ(sorted[2], e[2].name);
	/* Slot 3 was not offered and must not be written. */
	EXPECT_EQ(0xa5, ((unsigned char *)&e[3])[0]);
	EXPECT_EQ(0xa5, ((unsigned char *)&e[3])[sizeof(e[3]) - 1]);
}

/*
 * The header's recipe: "If @count on return is larger than @filled, the
 * array was too small; call again with more room." Calling again with the
 * same struct (so @filled still holds the previous answer) must work.
 */
TEST_F(kvod, list_call_again_with_more_room)
{
	struct kvod_movie_info e[8];
	struct kvod_movie_list l = {
		.size = sizeof(l), .count = 1,
		.entry_size = sizeof(struct kvod_movie_info),
		.entries = (uintptr_t)e,
	};

	add_names(_metadata, self->dev, list_names, 3);
	ASSERT_EQ(0, kvod_ioctl(self->dev, KVOD_IOC_MOVIE_LIST, &l));
	ASSERT_EQ(3U, l.count);
	ASSERT_EQ(1U, l.filled);
	l.count = ARRAY_SIZE(e);
	ASSERT_EQ(0, kvod_ioctl(self->dev, KVOD_IOC_MOVIE_LIST, &l));
	EXPECT_EQ(3U, l.count);
	EXPECT_EQ(3U, l.filled);
}

TEST_F(kvod, list_more_room_than_movies)
{
	struct kvod_movie_info e[8];
	__u32 count, filled;

	add_names(_metadata, self->dev, list_names, 3);
	memset(e, 0xa5, sizeof(e));
	ASSERT_EQ(0, kvod_list(self->dev, e, 8, &count, &filled));
	EXPECT_EQ(3U, count);
	EXPECT_EQ(3U, filled);
	EXPECT_TRUE(e[3].size == 0xa5a5a5a5 && e[7].size == 0xa5a5a5a5)
		TH_LOG("entries past filled were written");
}

/*
 * LIST into entries of @esz bytes each: every entry at its stride, right,
 * with its size field set to @esz; bytes past the struct we know within
 * an entry zero; nothing written past the last entry. An @esz below
 * sizeof(struct kvod_movie_info) is a caller built before the struct
 * grew.
 */
static void list_at_stride(struct __test_metadata *_metadata, int dev,
			   __u32 esz)
{
	const size_t n = 4;
	const char *sorted[4];
	unsigned char *buf = malloc(esz * (n + 1));
	struct kvod_movie_list l = {
		.size = sizeof(l), .count = n, .entry_size = esz,
	};
	struct kvod_movie_info mi, *e;
	size_t i;

	ASSERT_NE(NULL, buf);
	add_names(_metadata, dev, list_names, n);
	memcpy(sorted, list_names, sizeof(sorted));
	qsort(sorted, n, sizeof(sorted[0]), cmp_str);
	memset(buf, 0, esz * n);
	memset(buf + esz * n, 0xa5, esz);
	l.entries = (uintptr_t)buf;
	ASSERT_EQ(0, kvod_ioctl(dev, KVOD_IOC_MOVIE_LIST, &l));
	EXPECT_EQ(n, l.count);
	EXPECT_EQ(n, l.filled);
	for (i = 0; i < n; i++) {
		e = (struct kvod_movie_info *)(buf + i * esz);
		EXPECT_EQ(esz, e->size);
		EXPECT_STREQ(sorted[i], e->name);
		ASSERT_EQ(0, kvod_info(dev, sorted[i], &mi));
		EXPECT_EQ(mi.length, e->length);
		EXPECT_EQ(mi.resident, e->resident);
		if (esz > sizeof(*e))
			EXPECT_TRUE(all_zero((char *)e + sizeof(*e),
					     esz - sizeof(*e)));
	}
	for (i = 0; i < esz; i++)
		if (buf[esz * n + i] != 0xa5)
			break;
	EXPECT_EQ(esz, i) TH_LOG("wrote past count * entry_size");
	free(buf);
}

TEST_F(kvod, list_entry_size_larger)
{
	list_at_stride(_metadata, self->dev, 256);
}

TEST_F(kvod, list_entry_size_ver0)
{
	list_at_stride(_metadata, self->dev, KVOD_MOVIE_INFO_SIZE_VER0);
}

TEST_F(kvod, list_entry_size_too_small)
{
	static const __u32 sizes[] = {
		0, 1, 8, KVOD_MOVIE_INFO_SIZE_VER0 - 8,
		KVOD_MOVIE_INFO_SIZE_VER0 - 1,
	};
	struct kvod_movie_info e[4];
	struct snap before;
	size_t i;

	add_names(_metadata, self->dev, list_names, 2);
	ASSERT_EQ(0, snap_take(self->dev, &before));
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		struct kvod_movie_list l = {
			.size = sizeof(l), .count = 4, .entry_size = sizes[i],
			.entries = (uintptr_t)e,
		};

		expect_rejected(_metadata, self->dev, &before, EINVAL,
				kvod_ioctl(self->dev, KVOD_IOC_MOVIE_LIST, &l),
				NULL);
	}
}

static void list_entries_fault(struct __test_metadata *_metadata, int dev,
			       void *entries, __u32 room)
{
	struct kvod_movie_list l = {
		.size = sizeof(l), .count = room,
		.entry_size = sizeof(struct kvod_movie_info),
		.entries = (uintptr_t)entries,
	};
	struct snap before;

	add_names(_metadata, dev, list_names, 3);
	ASSERT_EQ(0, snap_take(dev, &before));
	expect_rejected(_metadata, dev, &before, EFAULT,
			kvod_ioctl(dev, KVOD_IOC_MOVIE_LIST, &l), NULL);
}

TEST_F(kvod, list_entries_unmapped)
{
	char *p = map_guarded();

	ASSERT_NE(NULL, p);
	list_entries_fault(_metadata, self->dev, p + 2 * page_size, 4);
}

TEST_F(kvod, list_entries_null)
{
	list_entries_fault(_metadata, self->dev, NULL, 4);
}

TEST_F(kvod, list_entries_cross_into_guard)
{
	char *p = map_guarded();

	ASSERT_NE(NULL, p);
	/* The first entry fits, the second runs into the guard page. */
	list_entries_fault(_metadata, self->dev,
			   p + 2 * page_size - sizeof(struct kvod_movie_info) - 8,
			   3);
}

TEST_F(kvod, list_entries_readonly)
{
	char *p = map_guarded();

	ASSERT_NE(NULL, p);
	ASSERT_EQ(0, mprotect(p, 2 * page_size, PROT_READ));
	list_entries_fault(_metadata, self->dev, p, 4);
}

TEST_F(kvod, list_huge_room_unmapped)
{
	char *p = map_guarded();

	ASSERT_NE(NULL, p);
	list_entries_fault(_metadata, self->dev, p + 2 * page_size,
			   UINT32_MAX);
}

TEST_F(kvod, list_entries_kernel_address)
{
	list_entries_fault(_metadata, self->dev,
			   (void *)(uintptr_t)0xffffffff81000000ULL, 4);
}

/* --- STATS ---------------------------------------------------------- */

TEST_F(kvod, stats_empty)
{
	struct kvod_stats st;
	unsigned long long mb;

	ASSERT_EQ(0, kvod_stats(self->dev, &st));
	EXPECT_EQ(0U, st.movies);
	EXPECT_EQ(0U, st.zombies);
	EXPECT_EQ(0ULL, st.resident);
	EXPECT_LT(0ULL, st.resident_max);
	EXPECT_TRUE(all_zero(st.reserved, sizeof(st.reserved)));
	ASSERT_EQ(0, read_param(&mb));
	if (mb)
		EXPECT_EQ(mb << 20, st.resident_max);
}

/*
 * STATS is all output but @size and @flags: what the other fields hold
 * on input does not matter (they are neither flags nor reserved).
 */
TEST_F(kvod, stats_ignores_output_fields_on_input)
{
	struct kvod_stats st, ref;

	add_keep(_metadata, self->dev);
	ASSERT_EQ(0, kvod_stats(self->dev, &ref));
	memset(&st, 0, sizeof(st));
	st.size = sizeof(st);
	st.movies = 7;
	st.zombies = 8;
	st.resident = 9;
	st.resident_max = 10;
	ASSERT_EQ(0, kvod_ioctl(self->dev, KVOD_IOC_STATS, &st));
	EXPECT_EQ(0, memcmp(&ref, &st, sizeof(st)));
}

/* --- Parallel ADD/DEL ----------------------------------------------- */

#define PAR_THREADS	8
#define PAR_ITERS	200
#define PAR_NAMES	12

struct par_worker {
	pthread_t thread;
	int dev;
	int file;
	unsigned int seed;
	int adds, add_exists, dels, del_noent;
	int bad, bad_ret;
	const char *bad_op;
};

static atomic_int par_stop;

static void *par_run(void *arg)
{
	struct par_worker *w = arg;
	char name[KVOD_NAME_MAX];
	int i, ret;

	for (i = 0; i < PAR_ITERS; i++) {
		unsigned int r = rand_r(&w->seed);

		snprintf(name, sizeof(name), "par-%u", (r >> 4) % PAR_NAMES);
		if (r & 1) {
			ret = kvod_add(w->dev, name, w->file, r & 0xffff);
			if (!ret)
				w->adds++;
			else if (ret == EEXIST)
				w->add_exists++;
		} else {
			ret = kvod_del(w->dev, name);
			if (!ret)
				w->dels++;
			else if (ret == ENOENT)
				w->del_noent++;
		}
		if (ret && ret != EEXIST && ret != ENOENT && !w->bad++) {
			w->bad_ret = ret;
			w->bad_op = r & 1 ? "ADD" : "DEL";
		}
	}
	return NULL;
}

struct par_reader {
	pthread_t thread;
	int dev;
	int snapshots;
	int bad;
	char why[128];
};

/* Every LIST is a consistent snapshot: all of it, sorted, no duplicates. */
static void *par_read(void *arg)
{
	struct par_reader *rd = arg;
	struct kvod_movie_info e[PAR_NAMES + 4];
	__u32 count, filled, i;
	int ret;

	while (!atomic_load(&par_stop) && !rd->bad) {
		ret = kvod_list(rd->dev, e, PAR_NAMES + 4, &count, &filled);
		if (ret)
			snprintf(rd->why, sizeof(rd->why), "LIST: %s",
				 strerror(ret));
		else if (count != filled || count > PAR_NAMES)
			snprintf(rd->why, sizeof(rd->why),
				 "LIST count %u filled %u", count, filled);
		for (i = 1; !ret && !rd->why[0] && i < filled; i++)
			if (strcmp(e[i - 1].name, e[i].name) >= 0)
				snprintf(rd->why, sizeof(rd->why),
					 "LIST order: %s before %s",
					 e[i - 1].name, e[i].name);
		for (i = 0; !ret && !rd->why[0] && i < filled; i++)
			if (strncmp(e[i].name, "par-", 4) ||
			    e[i].length != 8192 + 1)
				snprintf(rd->why, sizeof(rd->why),
					 "LIST entry %s length %llu",
					 e[i].name,
					 (unsigned long long)e[i].length);
		rd->bad = rd->why[0] != '\0';
		rd->snapshots++;
	}
	return NULL;
}

TEST_F_TIMEOUT(kvod, parallel_add_del, 300)
{
	struct par_worker w[PAR_THREADS];
	struct par_reader rd = { .dev = self->dev };
	struct kvod_stats st;
	long adds = 0, dels = 0, removed = 0;
	char name[KVOD_NAME_MAX];
	int i, ret;

	memset(w, 0, sizeof(w));
	atomic_store(&par_stop, 0);
	for (i = 0; i < PAR_THREADS; i++) {
		w[i].dev = self->dev;
		w[i].seed = 1000 + i;
		w[i].file = kvod_make_file(8192 + 1, i);
		ASSERT_LE(0, w[i].file);
	}
	ASSERT_EQ(0, pthread_create(&rd.thread, NULL, par_read, &rd));
	for (i = 0; i < PAR_THREADS; i++)
		ASSERT_EQ(0, pthread_create(&w[i].thread, NULL, par_run, &w[i]));
	for (i = 0; i < PAR_THREADS; i++)
		ASSERT_EQ(0, pthread_join(w[i].thread, NULL));
	atomic_store(&par_stop, 1);
	ASSERT_EQ(0, pthread_join(rd.thread, NULL));

	for (i = 0; i < PAR_THREADS; i++) {
		EXPECT_EQ(0, w[i].bad) TH_LOG("thread %d: %s returned %s", i,
					       w[i].bad_op,
					       strerror(w[i].bad_ret));
		EXPECT_EQ(PAR_ITERS, w[i].adds + w[i].add_exists +
				     w[i].dels + w[i].del_noent);
		adds += w[i].adds;
		dels += w[i].dels;
		close(w[i].file);
	}
	EXPECT_EQ(0, rd.bad) TH_LOG("reader: %s", rd.why);
	TH_LOG("%ld adds, %ld dels, %d snapshots", adds, dels, rd.snapshots);
	EXPECT_LT(0, adds);
	EXPECT_LT(0, dels);

	/* Every successful ADD not undone by a successful DEL is still there. */
	ASSERT_EQ(0, kvod_stats(self->dev, &st));
	EXPECT_EQ(adds - dels, (long)st.movies);
	for (i = 0; i < PAR_NAMES; i++) {
		snprintf(name, sizeof(name), "par-%d", i);
		ret = kvod_del(self->dev, name);
		EXPECT_TRUE(ret == 0 || ret == ENOENT);
		removed += !ret;
	}
	EXPECT_EQ(adds - dels, removed);
	ASSERT_EQ(0, kvod_stats(self->dev, &st));
	EXPECT_EQ(0U, st.movies);
	EXPECT_EQ(0U, st.zombies);
	EXPECT_EQ(0ULL, st.resident);
}

/* --- A 1 GiB movie -------------------------------------------------- */

TEST_F_TIMEOUT(kvod, add_1gib, 600)
{
	static const unsigned long long marks[] = {
		0, MiB, 512 * MiB + 7, (1ULL << 30) - 4,
	};
	const unsigned long long len = 1ULL << 30;
	struct kvod_movie_info mi;
	struct kvod_stats st;
	char path[] = "/tmp/kvod-1g-XXXXXX";
	size_t i;
	int fd;

	fd = mkstemp(path);
	ASSERT_LE(0, fd);
	unlink(path);
	ASSERT_EQ(0, ftruncate(fd, len));
	for (i = 0; i < ARRAY_SIZE(marks); i++)
		ASSERT_EQ(4, pwrite(fd, "kvod", 4, marks[i]));
	ASSERT_EQ(0, kvod_stats(self->dev, &st));
	if (st.resident_max < len)
		SKIP(return, "resident cap %llu < 1 GiB (guest RAM too small)",
		     (unsigned long long)st.resident_max);
	ASSERT_EQ(0, kvod_add(self->dev, "big", fd, 8700000));
	close(fd);
	ASSERT_EQ(0, kvod_info(self->dev, "big", &mi));
	expect_info_fresh(_metadata, &mi, "big", len, 8700000);
	EXPECT_GE(mi.chunks, (__u32)(len / KVOD_CHUNK_BYTES));
	EXPECT_LE(mi.chunks, (__u32)(len / 4096));
	ASSERT_EQ(0, kvod_stats(self->dev, &st));
	EXPECT_EQ(1U, st.movies);
	EXPECT_EQ(mi.resident, st.resident);
	ASSERT_EQ(0, kvod_del(self->dev, "big"));
	ASSERT_EQ(0, kvod_stats(self->dev, &st));
	EXPECT_EQ(0U, st.movies);
	EXPECT_EQ(0ULL, st.resident);
}

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
};

/* The kernel's struct is the one the command number encodes. */
#define ABI_VARIANT(_name, _kind, _cmd, _ver0, _writes, _changes)	\
	FIXTURE_VARIANT_ADD(abi, _name) {				\
		.kind = (_kind), .cmd = (_cmd), .ver0 = (_ver0),	\
		.ksize = _IOC_SIZE(_cmd), .writes = (_writes),		\
		.changes = (_changes),					\
	}

ABI_VARIANT(add, K_ADD, KVOD_IOC_MOVIE_ADD,
	    KVOD_MOVIE_ADD_SIZE_VER0, false, true);
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

TEST_F(abi, flags_nonzero)
{
	int bit;

	for (bit = 0; bit < 32; bit++) {
		abi_fill(self, variant, self->mem, variant->ksize,
			 variant->ksize);
		((__u32 *)self->mem)[1] = 1U << bit;
		abi_expect_rejected(_metadata, self, EINVAL,
				    kvod_ioctl(self->dev, variant->cmd,
					       self->mem));
	}
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
 * (kvod_movie_info's live_swaps came with VER1).
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
/* The resident cap. The teardown reloads the module: a clean default.  */

FIXTURE(cap) {
	int dev;
};

FIXTURE_SETUP(cap)
{
	if (getenv("KVOD_NO_LOAD"))
		SKIP(return, "KVOD_NO_LOAD: will not reload the module");
	self->dev = open(KVOD_DEVICE, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->dev);
	ASSERT_EQ(0, kvod_catalog_clear(self->dev));
}

FIXTURE_TEARDOWN(cap)
{
	if (self->dev >= 0)
		close(self->dev);
	EXPECT_EQ(0, module_reload_default());
}

static void cap_set_mb(struct __test_metadata *_metadata, int dev,
		       unsigned int mb)
{
	struct kvod_stats st;
	unsigned long long now;
	char val[16];

	snprintf(val, sizeof(val), "%u", mb);
	ASSERT_EQ(0, kvod_write_file(KVOD_PARAM_CAP, val));
	ASSERT_EQ(0, read_param(&now));
	EXPECT_EQ(mb, now);
	ASSERT_EQ(0, kvod_stats(dev, &st));
	ASSERT_EQ((__u64)mb << 20, st.resident_max);
}

TEST_F(cap, sysfs_param_mode)
{
	struct stat st;

	ASSERT_EQ(0, stat(KVOD_PARAM_CAP, &st));
	EXPECT_TRUE(!!(st.st_mode & S_IWUSR));
	EXPECT_FALSE(!!(st.st_mode & (S_IWGRP | S_IWOTH)));
}

TEST_F(cap, enospc_exact_fill)
{
	struct kvod_movie_info mi;
	struct snap before;
	int full = kvod_make_file(4 * MiB, 1);
	int one = kvod_make_file(1, 2);

	ASSERT_LE(0, full);
	ASSERT_LE(0, one);
	cap_set_mb(_metadata, self->dev, 4);
	/* Exactly at the cap is allowed ... */
	ASSERT_EQ(0, kvod_add(self->dev, "full", full, 0));
	ASSERT_EQ(0, kvod_info(self->dev, "full", &mi));
	EXPECT_EQ(4 * MiB, mi.resident);
	ASSERT_EQ(0, snap_take(self->dev, &before));
	EXPECT_EQ(4 * MiB, before.st.resident);
	/* ... one more page is not. */
	expect_rejected(_metadata, self->dev, &before, ENOSPC,
			kvod_add(self->dev, "over", one, 0), "over");
	ASSERT_EQ(0, kvod_del(self->dev, "full"));
	EXPECT_EQ(0, kvod_add(self->dev, "over", one, 0));
	close(full);
	close(one);
}

TEST_F(cap, enospc_big_file)
{
	struct snap before;
	int fd = kvod_make_file(8 * MiB + 1, 3);

	ASSERT_LE(0, fd);
	cap_set_mb(_metadata, self->dev, 8);
	add_keep(_metadata, self->dev);
	ASSERT_EQ(0, snap_take(self->dev, &before));
	expect_rejected(_metadata, self->dev, &before, ENOSPC,
			kvod_add(self->dev, "huge", fd, 0), "huge");
	close(fd);
}

TEST_F(cap, lowered_below_usage_evicts_nothing)
{
	struct kvod_movie_info mi0, mi1;
	struct snap before, after;
	int big = kvod_make_file(6 * MiB, 4);
	int small = kvod_make_file(MiB, 5);

	ASSERT_LE(0, big);
	ASSERT_LE(0, small);
	cap_set_mb(_metadata, self->dev, 8);
	ASSERT_EQ(0, kvod_add(self->dev, "big", big, 0));
	ASSERT_EQ(0, kvod_info(self->dev, "big", &mi0));
	ASSERT_EQ(0, snap_take(self->dev, &before));
	cap_set_mb(_metadata, self->dev, 2);
	/* Only resident_max moved. */
	ASSERT_EQ(0, snap_take(self->dev, &after));
	EXPECT_EQ(before.st.movies, after.st.movies);
	EXPECT_EQ(before.st.resident, after.st.resident);
	EXPECT_EQ(2 * MiB, after.st.resident_max);
	EXPECT_EQ(0, memcmp(before.e, after.e, sizeof(before.e)));
	ASSERT_EQ(0, kvod_info(self->dev, "big", &mi1));
	EXPECT_EQ(0, memcmp(&mi0, &mi1, sizeof(mi0)));
	expect_rejected(_metadata, self->dev, &after, ENOSPC,
			kvod_add(self->dev, "small", small, 0), "small");
	/* Below the cap again: adds work. */
	ASSERT_EQ(0, kvod_del(self->dev, "big"));
	EXPECT_EQ(0, kvod_add(self->dev, "small", small, 0));
	close(big);
	close(small);
}

TEST_F(cap, raised_allows_more)
{
	struct snap before;
	int a = kvod_make_file(3 * MiB, 4);
	int b = kvod_make_file(3 * MiB, 5);

	ASSERT_LE(0, a);
	ASSERT_LE(0, b);
	cap_set_mb(_metadata, self->dev, 4);
	ASSERT_EQ(0, kvod_add(self->dev, "a", a, 0));
	ASSERT_EQ(0, snap_take(self->dev, &before));
	expect_rejected(_metadata, self->dev, &before, ENOSPC,
			kvod_add(self->dev, "b", b, 0), "b");
	cap_set_mb(_metadata, self->dev, 16);
	EXPECT_EQ(0, kvod_add(self->dev, "b", b, 0));
	close(a);
	close(b);
}

/* ------------------------------------------------------------------ */
/* Loading and unloading: each test reloads; the teardown restores.    */

FIXTURE(module) {
	int dev;
};

FIXTURE_SETUP(module)
{
	self->dev = -1;
	if (getenv("KVOD_NO_LOAD"))
		SKIP(return, "KVOD_NO_LOAD: will not reload the module");
}

FIXTURE_TEARDOWN(module)
{
	if (self->dev >= 0)
		close(self->dev);
	EXPECT_EQ(0, module_reload_default());
}

static void reload(struct __test_metadata *_metadata, const char *params)
{
	ASSERT_EQ(0, kvod_module_unload());
	ASSERT_EQ(0, kvod_module_load(ko_path, params))
		TH_LOG("insmod %s %s", ko_path, params);
}

static __u64 half_ram(void)
{
	struct sysinfo si;

	if (sysinfo(&si))
		return 0;
	return (__u64)si.totalram * si.mem_unit / 2;
}

static void expect_default_cap(struct __test_metadata *_metadata, int dev)
{
	struct kvod_stats st;
	__u64 half = half_ram();

	ASSERT_EQ(0, kvod_stats(dev, &st));
	ASSERT_LT(0ULL, half);
	EXPECT_LE(st.resident_max, half + MiB);
	EXPECT_GE(st.resident_max + MiB, half)
		TH_LOG("resident_max %llu, half of RAM %llu",
		       (unsigned long long)st.resident_max,
		       (unsigned long long)half);
}

TEST_F(module, load_default_cap_half_ram)
{
	reload(_metadata, "");
	self->dev = open(KVOD_DEVICE, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->dev);
	expect_default_cap(_metadata, self->dev);
}

TEST_F(module, load_param_zero_means_default)
{
	reload(_metadata, "max_resident_mb=0");
	self->dev = open(KVOD_DEVICE, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->dev);
	expect_default_cap(_metadata, self->dev);
}

TEST_F(module, load_param_cap)
{
	struct kvod_stats st;
	unsigned long long mb;
	struct snap before;
	int fd = kvod_make_file(2 * MiB, 1);

	ASSERT_LE(0, fd);
	reload(_metadata, "max_resident_mb=3");
	ASSERT_EQ(0, read_param(&mb));
	EXPECT_EQ(3ULL, mb);
	self->dev = open(KVOD_DEVICE, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->dev);
	ASSERT_EQ(0, kvod_stats(self->dev, &st));
	EXPECT_EQ(3 * MiB, st.resident_max);
	ASSERT_EQ(0, kvod_add(self->dev, "first", fd, 0));
	ASSERT_EQ(0, snap_take(self->dev, &before));
	expect_rejected(_metadata, self->dev, &before, ENOSPC,
			kvod_add(self->dev, "second", fd, 0), "second");
	close(fd);
}

TEST_F(module, unload_with_movies)
{
	struct kvod_stats st;
	int fd = kvod_make_file(3 * MiB, 1);

	ASSERT_LE(0, fd);
	self->dev = open(KVOD_DEVICE, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->dev);
	ASSERT_EQ(0, kvod_catalog_clear(self->dev));
	ASSERT_EQ(0, kvod_add(self->dev, "left1", fd, 0));
	ASSERT_EQ(0, kvod_add(self->dev, "left2", fd, 0));
	close(fd);
	/* An open /dev/kvod pins the module. */
	EXPECT_NE(0, kvod_module_unload());
	EXPECT_TRUE(kvod_module_loaded());
	close(self->dev);
	self->dev = -1;
	ASSERT_EQ(0, kvod_module_unload());
	EXPECT_NE(0, access(KVOD_DEVICE, F_OK));
	EXPECT_FALSE(kvod_module_loaded());
	/* A fresh load starts with an empty catalog. */
	ASSERT_EQ(0, kvod_module_load(ko_path, ""));
	self->dev = open(KVOD_DEVICE, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->dev);
	ASSERT_EQ(0, kvod_stats(self->dev, &st));
	EXPECT_EQ(0U, st.movies);
	EXPECT_EQ(0ULL, st.resident);
}

/* ------------------------------------------------------------------ */

int main(int argc, char **argv)
{
	page_size = sysconf(_SC_PAGESIZE);
	kvod_ko_path(ko_path, sizeof(ko_path));
	return kvod_harness_main(argc, argv, ko_path, NULL);
}
