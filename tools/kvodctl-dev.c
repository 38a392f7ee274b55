// SPDX-License-Identifier: GPL-2.0
/*
 * The device: where it is, opening it, and turning a failed ioctl into
 * one line that says what the kernel meant.
 */
#include "kvodctl.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

/* kvod_name_valid(): the module's own rule, kmod/name.c, in lib/name.o. */
#include "lib/name.h"

/* $KVOD_DEVICE lets tests point kvodctl elsewhere. */
static const char *kvod_path(void)
{
	const char *path = getenv("KVOD_DEVICE");

	return path && *path ? path : KVOD_DEVICE;
}

/**
 * kvod_open() - open the device
 * @flags: O_RDONLY for queries, O_RDWR for changes
 *
 * Returns the fd, or -1 after printing why not.
 */
int kvod_open(int flags)
{
	const char *path = kvod_path();
	int dev, err;

	dev = open(path, flags | O_CLOEXEC);
	if (dev >= 0)
		return dev;
	err = errno;
	err_msg("%s: %s%s", path, strerror(err),
		err == ENOENT || err == ENODEV || err == ENXIO ?
		" (is the kvod module loaded?)" : "");
	return -1;
}

#define OVER_CAP "No space left: over the resident memory cap (max_resident_mb)"

/* What an errno means coming from an ioctl, where the kernel is specific. */
static const struct {
	unsigned long req;	/* KVOD_IOC_*; 0: any */
	int err;
	const char *why;
} kvod_errors[] = {
	{ 0, EPERM, "Operation not permitted (needs CAP_NET_ADMIN)" },
	{ KVOD_IOC_MOVIE_ADD, ENOSPC, OVER_CAP },
	{ KVOD_IOC_MOVIE_DEL, ENOENT, "no such movie" },
	{ KVOD_IOC_MOVIE_INFO, ENOENT, "no such movie" },
	{ KVOD_IOC_PUSH_START, ENOENT, "no such movie" },
	{ KVOD_IOC_PUSH_STOP, ENOENT, "no such push" },
	{ KVOD_IOC_PUSH_START, ENOSPC, "too many pushes (at most 64 at once)" },
	{ KVOD_IOC_LIVE_CREATE, ENOSPC, OVER_CAP },
	{ KVOD_IOC_LIVE_FEED, ENOENT, "no such channel" },
	/* The other EINVAL, a bad name, kvod_set_name() has ruled out. */
	{ KVOD_IOC_LIVE_FEED, EINVAL, "not a live channel" },
	{ KVOD_IOC_UNLISTEN, ENOENT, "no such listener" },
	{ KVOD_IOC_LIVE_FEED, EBUSY, "the channel has a writer already" },
};

/* What @err means coming from ioctl @req. */
static const char *kvod_strerror(unsigned long req, int err)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(kvod_errors); i++)
		if (kvod_errors[i].err == err &&
		    (!kvod_errors[i].req || kvod_errors[i].req == req))
			return kvod_errors[i].why;
	return strerror(err);
}

/**
 * kvod_ioctl() - issue an ioctl, and say why if it fails
 * @dev: from kvod_open()
 * @req: KVOD_IOC_*
 * @arg: its argument struct
 * @cmd: the kvodctl command, for the message
 * @what: what it acts on (a movie's name), or NULL
 *
 * Returns 0 or EXIT_RUNTIME.
 */
int kvod_ioctl(int dev, unsigned long req, void *arg, const char *cmd,
	       const char *what)
{
	const char *why;

	if (!ioctl(dev, req, arg))
		return 0;
	why = kvod_strerror(req, errno);
	if (what)
		err_msg("%s %s: %s", cmd, what, why);
	else
		err_msg("%s: %s", cmd, why);
	return EXIT_RUNTIME;
}

/* One ioctl on the device opened with @flags just for it. */
static int ioctl_once(int flags, unsigned long req, void *arg,
		      const char *cmd, const char *what)
{
	int dev = kvod_open(flags), ret;

	if (dev < 0)
		return EXIT_RUNTIME;
	ret = kvod_ioctl(dev, req, arg, cmd, what);
	close(dev);
	return ret;
}

/**
 * kvod_change() - one ioctl that changes state, on a device opened for it
 * @req: KVOD_IOC_*
 * @arg: its argument struct
 * @cmd: the kvodctl command, for the message
 * @what: what it acts on, or NULL
 *
 * Returns 0 or EXIT_RUNTIME, after saying why.
 */
int kvod_change(unsigned long req, void *arg, const char *cmd,
		const char *what)
{
	return ioctl_once(O_RDWR, req, arg, cmd, what);
}

/* kvod_change() for an ioctl that only reads: the device read-only. */
int kvod_query(unsigned long req, void *arg, const char *cmd,
	       const char *what)
{
	return ioctl_once(O_RDONLY, req, arg, cmd, what);
}

/*
 * Copy movie name @what into an ABI name field, if it is a valid name.
 * The kernel checks with the same rule, but answers EINVAL, which for
 * LIVE_FEED also means "not a live channel": checking here first lets
 * each message say which. The name is echoed with its unprintable bytes
 * as '?', so that the error stays one line.
 */
int kvod_set_name(char name[KVOD_NAME_MAX], const char *cmd, const char *what)
{
	size_t len = strlen(what), i;
	char shown[KVOD_NAME_MAX];

	if (len >= KVOD_NAME_MAX) {
		err_msg("%s %s: name too long (at most %d bytes)", cmd, what,
			KVOD_NAME_MAX - 1);
		return EXIT_USAGE;
	}
	memcpy(name, what, len + 1);
	if (kvod_name_valid(name))
		return 0;
	for (i = 0; i <= len; i++)
		shown[i] = what[i] && (what[i] < ' ' || what[i] > '~') ?
			   '?' : what[i];
	err_msg("%s: invalid name '%s': 1..%d bytes of [A-Za-z0-9._-], not . or ..",
		cmd, shown, KVOD_NAME_MAX - 1);
	return EXIT_USAGE;
}

/**
 * get_list() - read a whole kernel list (movies, listeners, pushes)
 * @dev: open /dev/kvod
 * @req_nr: the LIST ioctl
 * @esize: sizeof one entry
 * @out: set to a malloc()ed array, NULL if empty
 * @n: set to its number of entries
 * @cmd: for error messages
 *
 * Ask how many there are with room for none, then make room; if entries
 * were added in between, the kernel says so (count > filled) and we ask
 * again.
 */
int get_list(int dev, unsigned long req_nr, size_t esize, void **out,
	     size_t *n, const char *cmd)
{
	struct kvod_movie_list req;
	void *v = NULL, *nv;
	__u32 room = 0;
	int ret;

	for (;;) {
		memset(&req, 0, sizeof(req));
		req.size = sizeof(req);
		req.count = room;
		req.entry_size = esize;
		req.entries = (uintptr_t)v;
		ret = kvod_ioctl(dev, req_nr, &req, cmd, NULL);
		if (ret)
			goto err;
		if (req.count <= req.filled)
			break;
		room = req.count;
		nv = reallocarray(v, room, esize);
		if (!nv) {
			err_msg("%s: %s", cmd, strerror(ENOMEM));
			ret = EXIT_RUNTIME;
			goto err;
		}
		v = nv;
	}
	*out = v;
	*n = req.filled < room ? req.filled : room;
	return 0;
err:
	free(v);
	return ret;
}
