/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Small helpers shared by the kvod selftest programs: ioctl wrappers that
 * return 0 or a positive errno (never -1), temporary movie files, and
 * loading and unloading kvod.ko.
 */
#ifndef _KVOD_UTIL_H
#define _KVOD_UTIL_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <arpa/inet.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/kvod.h>
#include <linux/module.h>

#define KVOD_MODULE		"kvod"
#define KVOD_PARAM_CAP		"/sys/module/kvod/parameters/max_resident_mb"
#define KVOD_CHUNK_BYTES	(2ULL << 20)
#define MiB			(1ULL << 20)

/*
 * 0 on success, else the errno. A positive return from ioctl() (which the
 * ABI never produces) comes back as a negative number so that it cannot
 * be mistaken for either.
 */
static inline int kvod_ioctl(int dev, unsigned long cmd, void *arg)
{
	int ret = ioctl(dev, cmd, arg);

	if (ret == -1)
		return errno;
	return ret ? -ret : 0;
}

/* Copies up to KVOD_NAME_MAX bytes and zero-fills the rest of the field. */
static inline void kvod_set_name(char dst[KVOD_NAME_MAX], const char *src)
{
	size_t n = strlen(src);

	memset(dst, 0, KVOD_NAME_MAX);
	memcpy(dst, src, n < KVOD_NAME_MAX ? n : KVOD_NAME_MAX);
}

static inline int kvod_add(int dev, const char *name, int fd, __u64 bitrate)
{
	struct kvod_movie_add a = {
		.size = sizeof(a),
		.fd = fd,
		.bitrate = bitrate,
	};

	kvod_set_name(a.name, name);
	return kvod_ioctl(dev, KVOD_IOC_MOVIE_ADD, &a);
}

static inline int kvod_del(int dev, const char *name)
{
	struct kvod_movie_ref r = { .size = sizeof(r) };

	kvod_set_name(r.name, name);
	return kvod_ioctl(dev, KVOD_IOC_MOVIE_DEL, &r);
}

static inline int kvod_info(int dev, const char *name,
			    struct kvod_movie_info *mi)
{
	memset(mi, 0, sizeof(*mi));
	mi->size = sizeof(*mi);
	kvod_set_name(mi->name, name);
	return kvod_ioctl(dev, KVOD_IOC_MOVIE_INFO, mi);
}

/* Write @s to the file @path (a sysfs or debugfs knob): 0 or the errno. */
static inline int kvod_write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;
	int err;

	if (fd < 0)
		return errno;
	n = write(fd, s, strlen(s));
	err = n == (ssize_t)strlen(s) ? 0 : (n < 0 ? errno : EIO);
	close(fd);
	return err;
}

/* @a set to the IPv4 address @ip, port @port. */
static inline void kvod_sockaddr_v4(struct kvod_sockaddr *a, const char *ip,
				    __u16 port)
{
	memset(a, 0, sizeof(*a));
	a->family = AF_INET;
	a->port = port;
	inet_pton(AF_INET, ip, a->addr);
}

static inline int kvod_stats(int dev, struct kvod_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->size = sizeof(*st);
	return kvod_ioctl(dev, KVOD_IOC_STATS, st);
}

/*
 * One of the three LISTs (@cmd: MOVIE_LIST, LISTENER_LIST or PUSH_LIST)
 * into @room entries of @esize bytes at @entries. On success @count and
 * @filled (either may be NULL) are set as the kernel returned them.
 */
static inline int kvod_list_of(int dev, unsigned long cmd, void *entries,
			       __u32 esize, __u32 room, __u32 *count,
			       __u32 *filled)
{
	struct kvod_movie_list l = {
		.size = sizeof(l),
		.count = room,
		.entry_size = esize,
		.entries = (uintptr_t)entries,
	};
	int ret = kvod_ioctl(dev, cmd, &l);

	if (!ret && count)
		*count = l.count;
	if (!ret && filled)
		*filled = l.filled;
	return ret;
}

static inline int kvod_list(int dev, struct kvod_movie_info *entries,
			    __u32 room, __u32 *count, __u32 *filled)
{
	return kvod_list_of(dev, KVOD_IOC_MOVIE_LIST, entries,
			    sizeof(*entries), room, count, filled);
}

/* Deletes every movie and live channel; 0 or the first error. */
static inline int kvod_catalog_clear(int dev)
{
	struct kvod_movie_info e[32];
	__u32 count, filled, i;
	int ret;

	do {
		ret = kvod_list(dev, e, 32, &count, &filled);
		if (ret)
			return ret;
		for (i = 0; i < filled; i++) {
			ret = kvod_del(dev, e[i].name);
			if (ret)
				return ret;
		}
	} while (count > filled);
	return 0;
}

/* LISTEN (@on) or UNLISTEN @proto on the IPv4 address @ip, port @port. */
static inline int kvod_listen_v4(int dev, bool on, __u32 proto,
				 const char *ip, __u16 port)
{
	struct kvod_listen l = { .size = sizeof(l), .proto = proto };

	kvod_sockaddr_v4(&l.addr, ip, port);
	return kvod_ioctl(dev, on ? KVOD_IOC_LISTEN : KVOD_IOC_UNLISTEN, &l);
}

/*
 * A push of @name to 127.0.0.1:@port that loops until it is stopped, at
 * the lowest rate (a packet a second, whatever the movie's bitrate); its
 * id in @id.
 */
static inline int kvod_push_loop(int dev, const char *name, __u16 port,
				 __u32 *id)
{
	struct kvod_push_start p = {
		.size = sizeof(p),
		.opts = KVOD_PUSH_LOOP,
		.rate = 10000,
	};
	int ret;

	kvod_set_name(p.name, name);
	kvod_sockaddr_v4(&p.dst, "127.0.0.1", port);
	ret = kvod_ioctl(dev, KVOD_IOC_PUSH_START, &p);
	if (!ret)
		*id = p.id;
	return ret;
}

static inline int kvod_push_stop(int dev, __u32 id)
{
	struct kvod_push_ref r = { .size = sizeof(r), .id = id };

	return kvod_ioctl(dev, KVOD_IOC_PUSH_STOP, &r);
}

static inline int kvod_live_create(int dev, const char *name, __u32 opts,
				   __u32 size, __u32 nr, __u64 bitrate)
{
	struct kvod_live_create c = {
		.size = sizeof(c),
		.opts = opts,
		.chunk_size = size,
		.nr_chunks = nr,
		.bitrate = bitrate,
	};

	kvod_set_name(c.name, name);
	return kvod_ioctl(dev, KVOD_IOC_LIVE_CREATE, &c);
}

/* The feed fd of live channel @name in *@fd; 0 or the errno. */
static inline int kvod_live_feed(int dev, const char *name, int *fd)
{
	struct kvod_live_feed f = { .size = sizeof(f), .fd = -1 };
	int ret;

	kvod_set_name(f.name, name);
	ret = kvod_ioctl(dev, KVOD_IOC_LIVE_FEED, &f);
	if (!ret)
		*fd = f.fd;
	return ret;
}

/* The inode number of the caller's network namespace (0 if unknown). */
static inline __u32 kvod_netns(void)
{
	struct stat st;

	return stat("/proc/self/ns/net", &st) ? 0 : (__u32)st.st_ino;
}

/*
 * Stops every push, and every listener of the caller's network namespace
 * (UNLISTEN cannot reach the others); 0 or the first error. A push that
 * ended by itself after it was listed is no error.
 */
static inline int kvod_stop_all(int dev)
{
	struct kvod_listener_info l[16];
	struct kvod_push_info p[16];
	__u32 netns = kvod_netns();
	__u32 count, filled, i, done;
	int ret;

	do {
		ret = kvod_list_of(dev, KVOD_IOC_PUSH_LIST, p, sizeof(p[0]),
				   16, &count, &filled);
		for (i = 0; !ret && i < filled; i++) {
			ret = kvod_push_stop(dev, p[i].id);
			if (ret == ENOENT)
				ret = 0;
		}
	} while (!ret && count > filled);
	if (ret)
		return ret;

	do {
		ret = kvod_list_of(dev, KVOD_IOC_LISTENER_LIST, l, sizeof(l[0]),
				   16, &count, &filled);
		for (i = 0, done = 0; !ret && i < filled; i++) {
			struct kvod_listen u = {
				.size = sizeof(u),
				.proto = l[i].proto,
				.addr = l[i].addr,
			};

			if (l[i].netns != netns)
				continue;
			ret = kvod_ioctl(dev, KVOD_IOC_UNLISTEN, &u);
			done++;
		}
	} while (!ret && count > filled && done);
	return ret;
}

/*
 * A regular file of @size bytes of a non-zero pattern derived from @seed,
 * unlinked at once; returns an O_RDWR fd or -errno. The directory is
 * $TMPDIR or /tmp (tmpfs in the guest).
 */
static inline int kvod_make_file(unsigned long long size, unsigned int seed)
{
	const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	char path[PATH_MAX];
	unsigned char buf[65536];
	unsigned long long off = 0;
	size_t i;
	int fd, err;

	snprintf(path, sizeof(path), "%s/kvod-test-XXXXXX", dir);
	fd = mkstemp(path);
	if (fd < 0)
		return -errno;
	unlink(path);
	for (i = 0; i < sizeof(buf); i++)
		buf[i] = (unsigned char)(seed * 131 + i * 7) | 1;
	while (off < size) {
		size_t n = size - off < sizeof(buf) ? size - off : sizeof(buf);
		ssize_t w = pwrite(fd, buf, n, off);

		if (w <= 0) {
			err = w < 0 ? errno : EIO;
			close(fd);
			return -err;
		}
		off += w;
	}
	return fd;
}

/* Reopens an fd (even of an unlinked file) with other open flags. */
static inline int kvod_reopen(int fd, int flags)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	return open(path, flags);
}

/*
 * A module that is not a plain .ko (make install's kvod.ko.xz, on a kernel
 * that compresses modules) is the kernel's to decompress.
 */
static inline int kvod_module_load(const char *ko, const char *params)
{
	const char *ext = strrchr(ko, '.');
	int flags = ext && strcmp(ext, ".ko") ? MODULE_INIT_COMPRESSED_FILE : 0;
	int fd = open(ko, O_RDONLY | O_CLOEXEC);
	int ret;

	if (fd < 0)
		return errno;
	ret = syscall(SYS_finit_module, fd, params, flags) ? errno : 0;
	close(fd);
	return ret;
}

static inline int kvod_module_unload(void)
{
	return syscall(SYS_delete_module, KVOD_MODULE, O_NONBLOCK) ? errno : 0;
}

static inline int kvod_module_loaded(void)
{
	return access("/sys/module/" KVOD_MODULE, F_OK) == 0;
}

/* The same test as selftests/lib/guest.sh: vm-run's marker and virtme's. */
static inline bool kvod_in_guest(void)
{
	const char *env = getenv("KVOD_IN_GUEST");
	char cmdline[4096] = "";
	FILE *f = fopen("/proc/cmdline", "r");

	if (f) {
		if (!fgets(cmdline, sizeof(cmdline), f))
			cmdline[0] = '\0';
		fclose(f);
	}
	return env && !strcmp(env, "1") && strstr(cmdline, "virtme_");
}

/* KVOD_TEST_HOST=1: the owner's word that this host is disposable (guest.sh). */
static inline bool kvod_test_host(void)
{
	const char *env = getenv("KVOD_TEST_HOST");

	return env && !strcmp(env, "1");
}

/* Where modinfo finds kvod.ko for the running kernel (make install's). */
static inline void kvod_installed_ko(char *buf, size_t len)
{
	FILE *p = popen("modinfo -n " KVOD_MODULE " 2>/dev/null", "r");

	if (!p || !fgets(buf, len, p))
		snprintf(buf, len, "modinfo -n %s: none", KVOD_MODULE);
	buf[strcspn(buf, "\n")] = '\0';
	if (p)
		pclose(p);
}

/*
 * Where kvod.ko is: in $KVOD_KMOD_DIR (make test-debug's build), else in
 * $KVOD_REPO/kmod (selftests/qemu/vm-run sets it), else, for a program of a
 * kselftest install tree (the kernel's kselftest/ beside its kvod/), where
 * modinfo finds it, else in kmod/ two levels above this program
 * (selftests/kvod/), as selftests/lib/ktap.sh's kmod_path().
 */
static inline void kvod_ko_path(char *buf, size_t len)
{
	char exe[PATH_MAX - 32];
	ssize_t n;
	char *slash;
	int i;

	if (getenv("KVOD_KMOD_DIR")) {
		snprintf(buf, len, "%s/kvod.ko", getenv("KVOD_KMOD_DIR"));
		return;
	}
	if (getenv("KVOD_REPO")) {
		snprintf(buf, len, "%s/kmod/kvod.ko", getenv("KVOD_REPO"));
		return;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = '\0';
	/* Two levels up: selftests/, or the root of an install tree. */
	for (i = 0; i < 2; i++) {
		slash = strrchr(exe, '/');
		if (slash)
			*slash = '\0';
	}
	snprintf(buf, len, "%s/kselftest/ktap_helpers.sh", exe);
	if (!access(buf, R_OK)) {
		kvod_installed_ko(buf, len);
		return;
	}
	slash = strrchr(exe, '/');
	if (slash)
		*slash = '\0';
	snprintf(buf, len, "%s/kmod/kvod.ko", exe);
}

#endif /* _KVOD_UTIL_H */
