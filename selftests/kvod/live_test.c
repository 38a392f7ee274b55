// SPDX-License-Identifier: GPL-2.0
/*
 * Live channel ABI tests: KVOD_IOC_LIVE_CREATE and KVOD_IOC_LIVE_FEED,
 * every rejection the uapi header documents but ENOMEM (fault_ioctl_test.c
 * injects that), each leaving the catalog as it was, the feed fd's file
 * semantics, chunk completion as INFO shows it, DEL of a channel with a
 * writer (one stuck in a page fault too), and the resident accounting.
 *
 * Runs only inside the selftests/qemu/vm-run guest, on a module it loads itself
 * (kvod_main.h). What readers see is for live_http.sh.
 */
#define _GNU_SOURCE
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <dirent.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>

#include "kvod_util.h"
#include "kselftest_harness.h"
#include "kvod_main.h"

#define TS		188
#define CHUNK		(16 * TS)	/* 3008 bytes: one page per slot */
#define NCHUNKS		8

static char ko_path[PATH_MAX];

/* Open fds of this process. */
static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n - 1;	/* the DIR's own */
}

/* What a rejected call must leave as it was: stats and the whole list. */
struct snap {
	struct kvod_stats st;
	__u32 count;
	struct kvod_movie_info e[8];
};

static int snap_take(int dev, struct snap *s)
{
	__u32 filled;

	memset(s, 0, sizeof(*s));
	return kvod_stats(dev, &s->st) ?:
	       kvod_list(dev, s->e, 8, &s->count, &filled);
}

#define EXPECT_REJECTED(err, call) do {					\
	struct snap __before, __after;					\
	ASSERT_EQ(0, snap_take(self->dev, &__before));			\
	EXPECT_EQ(err, (call));						\
	ASSERT_EQ(0, snap_take(self->dev, &__after));			\
	EXPECT_EQ(0, memcmp(&__before, &__after, sizeof(__before)))	\
		TH_LOG("state changed by a rejected call");		\
} while (0)

FIXTURE(live) {
	int dev;
};

FIXTURE_SETUP(live)
{
	self->dev = open(KVOD_DEVICE, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->dev);
	ASSERT_EQ(0, kvod_catalog_clear(self->dev));
}

FIXTURE_TEARDOWN(live)
{
	struct kvod_stats st;

	EXPECT_EQ(0, kvod_catalog_clear(self->dev));
	/* Every fd is closed by now: nothing may stay resident. */
	EXPECT_EQ(0, kvod_stats(self->dev, &st));
	EXPECT_EQ(0ULL, st.resident);
	EXPECT_EQ(0U, st.zombies);
	close(self->dev);
}

TEST_F(live, create_info_fields)
{
	struct kvod_stats before, after;
	struct kvod_movie_info mi;

	ASSERT_EQ(0, kvod_stats(self->dev, &before));
	ASSERT_EQ(0, kvod_live_create(self->dev, "tv", KVOD_LIVE_TS, CHUNK,
				      NCHUNKS, 1500000));
	ASSERT_EQ(0, kvod_info(self->dev, "tv", &mi));
	EXPECT_EQ((__u32)KVOD_KIND_LIVE, mi.kind);
	EXPECT_EQ(KVOD_LIVE_TS, mi.live_opts);
	EXPECT_EQ((__u32)CHUNK, mi.live_chunk_size);
	EXPECT_EQ((__u32)NCHUNKS, mi.chunks);
	EXPECT_EQ(NCHUNKS * 4096ULL, mi.resident);
	EXPECT_EQ(1500000ULL, mi.bitrate);
	EXPECT_EQ(0ULL, mi.length);
	EXPECT_EQ(0ULL, mi.live_seq);
	EXPECT_EQ(0ULL, mi.live_overruns);
	EXPECT_EQ(0U, mi.active_clients);
	ASSERT_EQ(0, kvod_stats(self->dev, &after));
	EXPECT_EQ(before.movies + 1, after.movies);
	EXPECT_EQ(before.resident + mi.resident, after.resident);
}

TEST_F(live, create_sizes_round_to_pages)
{
	struct kvod_movie_info mi;

	/* Not MPEG-TS: any size; 5000 bytes take two pages a slot. */
	ASSERT_EQ(0, kvod_live_create(self->dev, "raw", 0, 5000, 3, 0));
	ASSERT_EQ(0, kvod_info(self->dev, "raw", &mi));
	EXPECT_EQ(0U, mi.live_opts);
	EXPECT_EQ(3 * 8192ULL, mi.resident);
	/* The largest chunk, 2 MiB, and the fewest chunks. */
	ASSERT_EQ(0, kvod_live_create(self->dev, "big", 0, KVOD_LIVE_CHUNK_MAX,
				      KVOD_LIVE_CHUNKS_MIN, 0));
	ASSERT_EQ(0, kvod_info(self->dev, "big", &mi));
	EXPECT_EQ(2ULL * KVOD_LIVE_CHUNK_MAX, mi.resident);
	/* The RDMA mirror: the ring again, and a page for 8 slot entries. */
	ASSERT_EQ(0, kvod_live_create(self->dev, "rd",
				      KVOD_LIVE_TS | KVOD_LIVE_RDMA,
				      CHUNK, 8, 0));
	ASSERT_EQ(0, kvod_info(self->dev, "rd", &mi));
	EXPECT_EQ(KVOD_LIVE_TS | KVOD_LIVE_RDMA, mi.live_opts);
	EXPECT_EQ(2 * 8 * 4096ULL + 4096, mi.resident);
	EXPECT_EQ(8U, mi.chunks);
}

FIXTURE(bad_create) {
	int dev;
};

FIXTURE_VARIANT(bad_create) {
	__u32 opts;
	__u32 size;
	__u32 nr;
	__u32 reserved0;
	__u64 reserved3;
	const char *name;
};

FIXTURE_VARIANT_ADD(bad_create, unknown_opt) {
	.opts = 0x4, .size = CHUNK, .nr = 4, .name = "x",
};
FIXTURE_VARIANT_ADD(bad_create, chunk_zero) {
	.size = 0, .nr = 4, .name = "x",
};
FIXTURE_VARIANT_ADD(bad_create, chunk_187) {
	.size = 187, .nr = 4, .name = "x",
};
FIXTURE_VARIANT_ADD(bad_create, chunk_over_max) {
	.size = KVOD_LIVE_CHUNK_MAX + 1, .nr = 4, .name = "x",
};
FIXTURE_VARIANT_ADD(bad_create, ts_not_whole_packets) {
	.opts = KVOD_LIVE_TS, .size = 1000, .nr = 4, .name = "x",
};
FIXTURE_VARIANT_ADD(bad_create, one_chunk) {
	.size = CHUNK, .nr = 1, .name = "x",
};
FIXTURE_VARIANT_ADD(bad_create, too_many_chunks) {
	.size = CHUNK, .nr = KVOD_LIVE_CHUNKS_MAX + 1, .name = "x",
};
FIXTURE_VARIANT_ADD(bad_create, reserved0) {
	.size = CHUNK, .nr = 4, .reserved0 = 1, .name = "x",
};
FIXTURE_VARIANT_ADD(bad_create, reserved) {
	.size = CHUNK, .nr = 4, .reserved3 = 1, .name = "x",
};
FIXTURE_VARIANT_ADD(bad_create, empty_name) {
	.size = CHUNK, .nr = 4, .name = "",
};
FIXTURE_VARIANT_ADD(bad_create, slash_name) {
	.size = CHUNK, .nr = 4, .name = "a/b",
};
FIXTURE_VARIANT_ADD(bad_create, dotdot_name) {
	.size = CHUNK, .nr = 4, .name = "..",
};

FIXTURE_SETUP(bad_create)
{
	self->dev = open(KVOD_DEVICE, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->dev);
	ASSERT_EQ(0, kvod_catalog_clear(self->dev));
	/* Something to stay intact. */
	ASSERT_EQ(0, kvod_live_create(self->dev, "keep", KVOD_LIVE_TS, CHUNK, 4,
				      0));
}

FIXTURE_TEARDOWN(bad_create)
{
	EXPECT_EQ(0, kvod_catalog_clear(self->dev));
	close(self->dev);
}

TEST_F(bad_create, einval)
{
	struct kvod_live_create c = {
		.size = sizeof(c),
		.opts = variant->opts,
		.chunk_size = variant->size,
		.nr_chunks = variant->nr,
		.reserved0 = variant->reserved0,
	};

	c.reserved[3] = variant->reserved3;
	kvod_set_name(c.name, variant->name);
	EXPECT_REJECTED(EINVAL, kvod_ioctl(self->dev, KVOD_IOC_LIVE_CREATE, &c));
}

TEST_F(live, create_name_taken)
{
	int fd = kvod_make_file(5000, 1);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, kvod_add(self->dev, "movie", fd, 0));
	ASSERT_EQ(0, kvod_live_create(self->dev, "tv", KVOD_LIVE_TS, CHUNK, 4,
				      0));
	EXPECT_REJECTED(EEXIST, kvod_live_create(self->dev, "movie",
						 KVOD_LIVE_TS,
						 CHUNK, 4, 0));
	EXPECT_REJECTED(EEXIST, kvod_live_create(self->dev, "tv", 0, 4096, 2,
						 0));
	/* And a movie cannot take a channel's name. */
	EXPECT_REJECTED(EEXIST, kvod_add(self->dev, "tv", fd, 0));
	close(fd);
}

TEST_F(live, create_over_cap)
{
	ASSERT_EQ(0, kvod_write_file(KVOD_PARAM_CAP, "1"));
	/* 1 MiB: 256 one-page slots fit, 257 do not. */
	EXPECT_REJECTED(ENOSPC, kvod_live_create(self->dev, "tv", KVOD_LIVE_TS,
						 CHUNK, 257, 0));
	EXPECT_EQ(0, kvod_live_create(self->dev, "tv", KVOD_LIVE_TS, CHUNK, 256,
				      0));
	EXPECT_EQ(0, kvod_write_file(KVOD_PARAM_CAP, "0"));
}

TEST_F(live, feed_completes_chunks)
{
	static char buf[3 * CHUNK];
	struct kvod_movie_info mi;
	int fd;

	ASSERT_EQ(0, kvod_live_create(self->dev, "tv", KVOD_LIVE_TS, CHUNK,
				      NCHUNKS, 0));
	ASSERT_EQ(0, kvod_live_feed(self->dev, "tv", &fd));
	ASSERT_EQ(0, kvod_info(self->dev, "tv", &mi));
	EXPECT_EQ(KVOD_LIVE_TS | KVOD_LIVE_WRITER, mi.live_opts);

	/* Chunk by chunk, in pieces that do not line up with them. */
	EXPECT_EQ(CHUNK - 1, write(fd, buf, CHUNK - 1));
	ASSERT_EQ(0, kvod_info(self->dev, "tv", &mi));
	EXPECT_EQ(0ULL, mi.live_seq);
	EXPECT_EQ(CHUNK - 1ULL, mi.length);
	EXPECT_EQ(CHUNK + 2, write(fd, buf, CHUNK + 2));
	ASSERT_EQ(0, kvod_info(self->dev, "tv", &mi));
	EXPECT_EQ(2ULL, mi.live_seq);
	EXPECT_EQ(2ULL * CHUNK + 1, mi.length);
	/* Around the ring more than once: writes never block. */
	for (int i = 0; i < 3 * NCHUNKS; i++)
		ASSERT_EQ(CHUNK, write(fd, buf, CHUNK));
	ASSERT_EQ(0, kvod_info(self->dev, "tv", &mi));
	EXPECT_EQ(2ULL + 3 * NCHUNKS, mi.live_seq);
	EXPECT_EQ(0ULL, mi.live_overruns);
	close(fd);
}

TEST_F(live, close_completes_whole_packets)
{
	static char buf[CHUNK];
	struct kvod_movie_info mi;
	int fd;

	ASSERT_EQ(0, kvod_live_create(self->dev, "tv", KVOD_LIVE_TS, CHUNK, 4,
				      0));
	ASSERT_EQ(0, kvod_live_create(self->dev, "raw", 0, 4096, 4, 0));

	/* 2 packets and a half: the close completes a chunk of 2. */
	ASSERT_EQ(0, kvod_live_feed(self->dev, "tv", &fd));
	EXPECT_EQ(2 * TS + 94, write(fd, buf, 2 * TS + 94));
	close(fd);
	ASSERT_EQ(0, kvod_info(self->dev, "tv", &mi));
	EXPECT_EQ(1ULL, mi.live_seq);
	EXPECT_EQ(0U, mi.live_opts & KVOD_LIVE_WRITER);
	/* Less than a packet: nothing to complete. */
	ASSERT_EQ(0, kvod_live_feed(self->dev, "tv", &fd));
	EXPECT_EQ(100, write(fd, buf, 100));
	close(fd);
	ASSERT_EQ(0, kvod_info(self->dev, "tv", &mi));
	EXPECT_EQ(1ULL, mi.live_seq);
	/* Not MPEG-TS: every byte counts. */
	ASSERT_EQ(0, kvod_live_feed(self->dev, "raw", &fd));
	EXPECT_EQ(100, write(fd, buf, 100));
	close(fd);
	ASSERT_EQ(0, kvod_info(self->dev, "raw", &mi));
	EXPECT_EQ(1ULL, mi.live_seq);
}

TEST_F(live, feed_fd_is_a_write_only_stream)
{
	char c = 0;
	int fd, flags;

	ASSERT_EQ(0, kvod_live_create(self->dev, "tv", KVOD_LIVE_TS, CHUNK, 4,
				      0));
	ASSERT_EQ(0, kvod_live_feed(self->dev, "tv", &fd));
	flags = fcntl(fd, F_GETFL);
	EXPECT_EQ(O_WRONLY, flags & O_ACCMODE);
	EXPECT_EQ(FD_CLOEXEC, fcntl(fd, F_GETFD));
	EXPECT_EQ(-1, read(fd, &c, 1));
	EXPECT_EQ(EBADF, errno);
	EXPECT_EQ(-1, lseek(fd, 0, SEEK_SET));
	EXPECT_EQ(ESPIPE, errno);
	EXPECT_EQ(-1, pwrite(fd, &c, 1, 0));
	EXPECT_EQ(ESPIPE, errno);
	close(fd);
}

TEST_F(live, feed_one_writer)
{
	int fd, fd2 = -1;

	ASSERT_EQ(0, kvod_live_create(self->dev, "tv", KVOD_LIVE_TS, CHUNK, 4,
				      0));
	ASSERT_EQ(0, kvod_live_feed(self->dev, "tv", &fd));
	EXPECT_REJECTED(EBUSY, kvod_live_feed(self->dev, "tv", &fd2));
	EXPECT_EQ(-1, fd2);
	close(fd);
	/* The next writer may come once the first is gone. */
	ASSERT_EQ(0, kvod_live_feed(self->dev, "tv", &fd2));
	close(fd2);
}

TEST_F(live, feed_rejects)
{
	struct kvod_live_feed f = { .size = sizeof(f) };
	int file = kvod_make_file(5000, 1);
	int fd = -1;

	ASSERT_LE(0, file);
	ASSERT_EQ(0, kvod_add(self->dev, "movie", file, 0));
	close(file);
	ASSERT_EQ(0, kvod_live_create(self->dev, "tv", KVOD_LIVE_TS, CHUNK, 4,
				      0));

	EXPECT_REJECTED(ENOENT, kvod_live_feed(self->dev, "nosuch", &fd));
	EXPECT_REJECTED(EINVAL, kvod_live_feed(self->dev, "movie", &fd));
	EXPECT_REJECTED(EINVAL, kvod_live_feed(self->dev, "a/b", &fd));
	kvod_set_name(f.name, "tv");
	f.reserved0 = 1;
	EXPECT_REJECTED(EINVAL, kvod_ioctl(self->dev, KVOD_IOC_LIVE_FEED, &f));
	f.reserved0 = 0;
	f.reserved[1] = 1;
	EXPECT_REJECTED(EINVAL, kvod_ioctl(self->dev, KVOD_IOC_LIVE_FEED, &f));
	EXPECT_EQ(-1, fd);
}

TEST_F(live, create_and_feed_need_cap_net_admin)
{
	struct snap before, after;
	pid_t pid;
	int status;

	ASSERT_EQ(0, kvod_live_create(self->dev, "tv", KVOD_LIVE_TS, CHUNK, 4,
				      0));
	ASSERT_EQ(0, snap_take(self->dev, &before));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		int fd = -1, bad = 0;

		/* The device stays open; the caller loses its capabilities. */
		if (setresuid(65534, 65534, 65534))
			_exit(2);
		bad |= kvod_live_create(self->dev, "tv2", KVOD_LIVE_TS, CHUNK,
					4,
					0) != EPERM;
		bad |= kvod_live_feed(self->dev, "tv", &fd) != EPERM;
		_exit(bad);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	/* No "tv2", and "tv" without a writer: all as it was. */
	ASSERT_EQ(0, snap_take(self->dev, &after));
	EXPECT_EQ(0, memcmp(&before, &after, sizeof(before)));
}

/* The fd cannot reach the caller: no fd is left, and no writer. */
TEST_F(live, feed_copy_out_fails)
{
	long psz = sysconf(_SC_PAGESIZE);
	struct kvod_live_feed *f;
	int before, fd;

	ASSERT_EQ(0, kvod_live_create(self->dev, "tv", KVOD_LIVE_TS, CHUNK, 4,
				      0));
	f = mmap(NULL, psz, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, f);
	f->size = sizeof(*f);
	kvod_set_name(f->name, "tv");
	ASSERT_EQ(0, mprotect(f, psz, PROT_READ));
	before = count_fds();
	EXPECT_EQ(EFAULT, kvod_ioctl(self->dev, KVOD_IOC_LIVE_FEED, f));
	EXPECT_EQ(before, count_fds());
	munmap(f, psz);
	ASSERT_EQ(0, kvod_live_feed(self->dev, "tv", &fd));
	close(fd);
}

/* With no free fd number the feed is refused and no writer is left. */
TEST_F(live, feed_no_free_fd)
{
	struct rlimit lim = { .rlim_cur = 64, .rlim_max = 64 };
	int fds[64], n = 0, fd;

	ASSERT_EQ(0, kvod_live_create(self->dev, "tv", KVOD_LIVE_TS, CHUNK, 4,
				      0));
	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &lim));
	while (n < 64 && (fds[n] = dup(self->dev)) >= 0)
		n++;
	ASSERT_EQ(EMFILE, errno);
	EXPECT_REJECTED(EMFILE, kvod_live_feed(self->dev, "tv", &fd));
	while (n)
		close(fds[--n]);
	ASSERT_EQ(0, kvod_live_feed(self->dev, "tv", &fd));
	close(fd);
}

TEST_F(live, write_fault)
{
	long psz = sysconf(_SC_PAGESIZE);
	struct kvod_movie_info mi;
	void *none;
	int fd;

	none = mmap(NULL, psz, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, none);
	ASSERT_EQ(0, kvod_live_create(self->dev, "tv", KVOD_LIVE_TS, CHUNK, 4,
				      0));
	ASSERT_EQ(0, kvod_live_feed(self->dev, "tv", &fd));
	EXPECT_EQ(-1, write(fd, none, 100));
	EXPECT_EQ(EFAULT, errno);
	ASSERT_EQ(0, kvod_info(self->dev, "tv", &mi));
	EXPECT_EQ(0ULL, mi.length);
	close(fd);
	munmap(none, psz);
}

TEST_F(live, del_ends_the_writer)
{
	static char buf[CHUNK];
	struct kvod_stats st;
	struct kvod_movie_info mi;
	int fd, fd2;

	ASSERT_EQ(0, kvod_live_create(self->dev, "tv", KVOD_LIVE_TS, CHUNK, 4,
				      0));
	ASSERT_EQ(0, kvod_live_feed(self->dev, "tv", &fd));
	ASSERT_EQ(CHUNK, write(fd, buf, CHUNK));
	ASSERT_EQ(0, kvod_del(self->dev, "tv"));
	EXPECT_EQ(ENOENT, kvod_info(self->dev, "tv", &mi));
	EXPECT_EQ(-1, write(fd, buf, CHUNK));
	EXPECT_EQ(EPIPE, errno);
	/* A write of no bytes too: a feeder may probe with one. */
	errno = 0;
	EXPECT_EQ(-1, write(fd, buf, 0));
	EXPECT_EQ(EPIPE, errno);
	/* The writer holds the ring until it closes. */
	ASSERT_EQ(0, kvod_stats(self->dev, &st));
	EXPECT_EQ(1U, st.zombies);
	EXPECT_EQ(4 * 4096ULL, st.resident);
	/* The name is free again, for a channel of its own. */
	ASSERT_EQ(0, kvod_live_create(self->dev, "tv", KVOD_LIVE_TS, CHUNK, 4,
				      0));
	ASSERT_EQ(0, kvod_live_feed(self->dev, "tv", &fd2));
	ASSERT_EQ(CHUNK, write(fd2, buf, CHUNK));
	ASSERT_EQ(0, kvod_info(self->dev, "tv", &mi));
	EXPECT_EQ(1ULL, mi.live_seq);
	close(fd2);
	close(fd);
	ASSERT_EQ(0, kvod_stats(self->dev, &st));
	EXPECT_EQ(0U, st.zombies);
	EXPECT_EQ(4 * 4096ULL, st.resident);
}

struct stuck_write {
	int fd;
	void *src;
	ssize_t ret;
	int err;
};

static void *stuck_write(void *arg)
{
	struct stuck_write *w = arg;

	w->ret = write(w->fd, w->src, CHUNK);
	w->err = errno;
	return NULL;
}

struct del_call {
	int dev;
	int ret;
	int done;
};

static void *del_call(void *arg)
{
	struct del_call *d = arg;

	d->ret = kvod_del(d->dev, "tv");
	__atomic_store_n(&d->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * A writer whose source page is missing (userfaultfd: a FUSE or network
 * file behaves alike) sits in the page fault as long as nobody resolves
 * it, in the middle of a chunk of a channel with the RDMA mirror. DEL
 * must not wait for it (it used to, uninterruptibly); the writer learns
 * of the end when it gets on.
 */
TEST_F(live, del_does_not_wait_for_a_faulting_writer)
{
	long psz = sysconf(_SC_PAGESIZE);
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_MISSING };
	struct uffdio_zeropage zero = { };
	struct stuck_write w = { .fd = -1 };
	struct del_call d = { .dev = self->dev };
	pthread_t writer, deleter;
	struct kvod_movie_info mi;
	struct uffd_msg msg;
	struct pollfd pfd;
	int uffd, i;
	void *src;

	uffd = syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (uffd < 0)
		SKIP(return, "no userfaultfd: %s", strerror(errno));
	ASSERT_EQ(0, ioctl(uffd, UFFDIO_API, &api));
	src = mmap(NULL, psz, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, src);
	reg.range.start = (unsigned long)src;
	reg.range.len = psz;
	ASSERT_EQ(0, ioctl(uffd, UFFDIO_REGISTER, &reg));

	ASSERT_EQ(0, kvod_live_create(self->dev, "tv",
				      KVOD_LIVE_TS | KVOD_LIVE_RDMA, CHUNK, 4,
				      0));
	ASSERT_EQ(0, kvod_live_feed(self->dev, "tv", &w.fd));
	w.src = src;
	ASSERT_EQ(0, pthread_create(&writer, NULL, stuck_write, &w));
	/* The writer is in the fault once userfaultfd reports it. */
	pfd = (struct pollfd){ .fd = uffd, .events = POLLIN };
	ASSERT_EQ(1, poll(&pfd, 1, 20000));
	ASSERT_EQ((ssize_t)sizeof(msg), read(uffd, &msg, sizeof(msg)));
	ASSERT_EQ(UFFD_EVENT_PAGEFAULT, msg.event);

	ASSERT_EQ(0, pthread_create(&deleter, NULL, del_call, &d));
	for (i = 0; i < 100 && !__atomic_load_n(&d.done, __ATOMIC_ACQUIRE);
	     i++)
		usleep(50000);
	EXPECT_EQ(1, __atomic_load_n(&d.done, __ATOMIC_ACQUIRE))
		TH_LOG("DEL still waits for the writer after 5 s");
	EXPECT_EQ(ENOENT, kvod_info(self->dev, "tv", &mi));

	/* Let the writer go: its chunk comes after the end, unpublished. */
	zero.range.start = (unsigned long)src;
	zero.range.len = psz;
	ASSERT_EQ(0, ioctl(uffd, UFFDIO_ZEROPAGE, &zero));
	ASSERT_EQ(0, pthread_join(writer, NULL));
	ASSERT_EQ(0, pthread_join(deleter, NULL));
	EXPECT_EQ(0, d.ret);
	EXPECT_TRUE(w.ret == CHUNK || (w.ret == -1 && w.err == EPIPE))
		TH_LOG("the stuck write returned %zd (%s)", w.ret,
		       strerror(w.err));
	EXPECT_EQ(-1, write(w.fd, src, CHUNK));
	EXPECT_EQ(EPIPE, errno);
	close(w.fd);
	close(uffd);
	munmap(src, psz);
}

TEST_F(live, listed_with_movies)
{
	struct kvod_movie_info e[4];
	__u32 count, filled;
	int fd = kvod_make_file(5000, 1);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, kvod_add(self->dev, "b-movie", fd, 0));
	close(fd);
	ASSERT_EQ(0, kvod_live_create(self->dev, "a-live", KVOD_LIVE_TS, CHUNK,
				      4, 0));
	ASSERT_EQ(0, kvod_live_create(self->dev, "c-live", 0, 4096, 2, 0));
	ASSERT_EQ(0, kvod_list(self->dev, e, 4, &count, &filled));
	ASSERT_EQ(3U, filled);
	EXPECT_STREQ("a-live", e[0].name);
	EXPECT_EQ((__u32)KVOD_KIND_LIVE, e[0].kind);
	EXPECT_STREQ("b-movie", e[1].name);
	EXPECT_EQ((__u32)KVOD_KIND_MOVIE, e[1].kind);
	EXPECT_EQ(5000ULL, e[1].length);
	EXPECT_STREQ("c-live", e[2].name);
	EXPECT_EQ((__u32)KVOD_KIND_LIVE, e[2].kind);
	EXPECT_EQ(4096U, e[2].live_chunk_size);
}

/*
 * A channel cannot loop, and push sends MPEG-TS only, loop or not
 * (live_rtp.sh pushes).
 */
TEST_F(live, push_rejects)
{
	struct kvod_push_start p = { .size = sizeof(p), .rate = 10000 };
	__u32 id;

	ASSERT_EQ(0, kvod_live_create(self->dev, "tv", KVOD_LIVE_TS, CHUNK, 4,
				      0));
	ASSERT_EQ(0, kvod_live_create(self->dev, "raw", 0, 4096, 4, 1000000));
	EXPECT_REJECTED(EINVAL, kvod_push_loop(self->dev, "tv", 9, &id));
	EXPECT_REJECTED(EINVAL, kvod_push_loop(self->dev, "raw", 9, &id));
	kvod_set_name(p.name, "raw");
	kvod_sockaddr_v4(&p.dst, "127.0.0.1", 9);
	EXPECT_REJECTED(EINVAL, kvod_ioctl(self->dev, KVOD_IOC_PUSH_START, &p));
}

/* An open feed fd pins the module; closing it lets the module go. */
TEST_F(live, feed_fd_pins_the_module)
{
	int fd;

	ASSERT_EQ(0, kvod_live_create(self->dev, "tv", KVOD_LIVE_TS, CHUNK, 4,
				      0));
	ASSERT_EQ(0, kvod_live_feed(self->dev, "tv", &fd));
	close(self->dev);
	EXPECT_EQ(EWOULDBLOCK, kvod_module_unload());
	EXPECT_TRUE(kvod_module_loaded());
	close(fd);
	self->dev = open(KVOD_DEVICE, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->dev);
}

int main(int argc, char **argv)
{
	kvod_ko_path(ko_path, sizeof(ko_path));
	return kvod_harness_main(argc, argv, ko_path, NULL);
}
