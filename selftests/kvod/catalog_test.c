// SPDX-License-Identifier: GPL-2.0
/*
 * The catalog's ioctls of /dev/kvod: ADD, DEL, INFO, LIST and STATS,
 * every rejection the uapi header documents for them (and that a
 * rejected call leaves the state intact), the capabilities they need,
 * parallel ADD and DEL, and a 1 GiB movie. catalog_lib.h says how the
 * program runs.
 */
#include "catalog_lib.h"

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
	/* Without RDMA the movies are all the memory kvod holds. */
	EXPECT_EQ(sum, st.mem);
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

/* ADD of a file reopened with @flags is refused with EBADF. */
static void add_reopened_rejected(struct __test_metadata *_metadata, int dev,
				  int flags)
{
	int fd = kvod_make_file(4096, 1);
	int re;

	ASSERT_LE(0, fd);
	re = kvod_reopen(fd, flags);
	ASSERT_LE(0, re);
	add_fd_rejected(_metadata, dev, re, EBADF);
	close(re);
	close(fd);
}

TEST_F(kvod, add_fd_wronly)
{
	add_reopened_rejected(_metadata, self->dev, O_WRONLY | O_CLOEXEC);
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
	add_reopened_rejected(_metadata, self->dev, O_PATH | O_CLOEXEC);
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

#define BAD_NAME(variant, n, l, sh)				\
	FIXTURE_VARIANT_ADD(bad_name, variant) {		\
		.name = n, .len = l, .shadow = sh }

BAD_NAME(empty, "", 1, NULL);
BAD_NAME(unterminated,
	 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
	 KVOD_NAME_MAX,
	 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
BAD_NAME(slash, "a/b", 4, "a");
BAD_NAME(space, "a b", 4, "a");
BAD_NAME(newline, "a\n", 3, "a");
BAD_NAME(high_byte, "a\x80" "b", 4, "a");
BAD_NAME(star, "a*", 3, "a");
BAD_NAME(backslash, "a\\b", 4, "a");
BAD_NAME(del_char, "a\x7f", 3, "a");
BAD_NAME(dot, ".", 2, NULL);
BAD_NAME(dotdot, "..", 3, NULL);

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

/*
 * With "keep" in the catalog (@before: the state), a child that gives up
 * its rights with @lose() (0 or an errno) tries every command on @dev.
 * Returns what it got, in shared memory; r->setup is @lose()'s result.
 */
static struct cap_result *try_in_child(struct __test_metadata *_metadata,
				       int dev, struct snap *before,
				       int (*lose)(void))
{
	struct cap_result *r = shared_result();
	int status;
	pid_t pid;

	ASSERT_NE(NULL, r);
	add_keep(_metadata, dev);
	ASSERT_EQ(0, snap_take(dev, before));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		r->setup = lose();
		if (!r->setup)
			run_queries_and_changes(dev, r);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	return r;
}

TEST_F(kvod, eperm_caller_without_cap)
{
	struct cap_result *r;
	struct snap before;

	/* The fd was opened with CAP_NET_ADMIN; the caller has none. */
	r = try_in_child(_metadata, self->dev, &before, drop_net_admin);
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

/* Full capabilities, but in a child user namespace. */
static int enter_user_ns(void)
{
	return unshare(CLONE_NEWUSER) ? errno : 0;
}

TEST_F(kvod, eperm_user_namespace)
{
	struct cap_result *r;
	struct snap before;

	r = try_in_child(_metadata, self->dev, &before, enter_user_ns);
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

/*
 * ioctl @req on @arg, its output fields filled with junk, succeeds and
 * answers exactly @ref: the junk was not read as input.
 */
static void expect_answer(struct __test_metadata *_metadata, int dev,
			  unsigned long req, void *arg, const void *ref,
			  size_t len)
{
	ASSERT_EQ(0, kvod_ioctl(dev, req, arg));
	EXPECT_EQ(0, memcmp(ref, arg, len));
}

TEST_F(kvod, info_ignores_output_fields_on_input)
{
	struct kvod_movie_info mi, ref;

	add_keep(_metadata, self->dev);
	ASSERT_EQ(0, kvod_info(self->dev, "keep", &ref));
	mi = (struct kvod_movie_info){
		.size = sizeof(mi), .length = 1, .bitrate = 2, .resident = 3,
		.chunks = 4, .active_clients = 5, .bytes_served = 6,
	};
	kvod_set_name(mi.name, "keep");
	expect_answer(_metadata, self->dev, KVOD_IOC_MOVIE_INFO, &mi, &ref,
		      sizeof(mi));
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
	st = (struct kvod_stats){
		.size = sizeof(st), .movies = 7, .zombies = 8, .resident = 9,
		.resident_max = 10,
	};
	expect_answer(_metadata, self->dev, KVOD_IOC_STATS, &st, &ref,
		      sizeof(st));
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

int main(int argc, char **argv)
{
	return catalog_main(argc, argv);
}
