// SPDX-License-Identifier: GPL-2.0
/*
 * Commands that change the catalog: add and del. They open the device
 * read-write, need CAP_NET_ADMIN, and print nothing on success.
 */
#include "kvodctl.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * Open @path for the module to read: a non-empty regular file, or -1
 * after saying what it is not. O_NONBLOCK, because a plain open of a FIFO
 * waits for a writer, possibly forever; it is cleared again before the
 * kernel reads.
 */
static int open_movie_file(const char *cmd, const char *name,
			   const char *path)
{
	const char *why = NULL;
	struct stat st;
	int file;

	file = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (file < 0) {
		err_msg("%s %s: %s: %s", cmd, name, path, strerror(errno));
		return -1;
	}
	/* F_SETFL 0: O_NONBLOCK was the one status flag set. */
	if (fstat(file, &st))
		why = strerror(errno);
	else if (!S_ISREG(st.st_mode))
		why = "not a regular file";
	else if (!st.st_size)
		why = "empty file";
	else if (fcntl(file, F_SETFL, 0))
		why = strerror(errno);
	if (!why)
		return file;
	err_msg("%s %s: %s: %s", cmd, name, path, why);
	close(file);
	return -1;
}

/*
 * add NAME FILE [--bitrate RATE]: the kernel reads FILE through the fd we
 * pass, once, during the ioctl; we close our fd afterwards either way.
 */
int cmd_add(const struct kvodctl_args *a)
{
	const char *name = a->pos[0], *path = a->pos[1];
	struct kvod_movie_add req;
	int file, dev, ret;

	memset(&req, 0, sizeof(req));
	req.size = sizeof(req);
	req.bitrate = a->bitrate;
	ret = kvod_set_name(req.name, a->cmd, name);
	if (ret)
		return ret;

	file = open_movie_file(a->cmd, name, path);
	if (file < 0)
		return EXIT_RUNTIME;
	req.fd = file;

	dev = kvod_open(O_RDWR);
	if (dev < 0) {
		ret = EXIT_RUNTIME;
		goto out_file;
	}
	ret = kvod_ioctl(dev, KVOD_IOC_MOVIE_ADD, &req, a->cmd, name);
	close(dev);
out_file:
	close(file);
	return ret;
}

/* del NAME */
int cmd_del(const struct kvodctl_args *a)
{
	const char *name = a->pos[0];
	struct kvod_movie_ref req;
	int ret;

	memset(&req, 0, sizeof(req));
	req.size = sizeof(req);
	ret = kvod_set_name(req.name, a->cmd, name);
	return ret ?: kvod_change(KVOD_IOC_MOVIE_DEL, &req, a->cmd, name);
}
