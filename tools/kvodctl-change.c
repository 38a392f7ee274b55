// SPDX-License-Identifier: GPL-2.0
/*
 * Commands that change the catalog: add and del. They open the device
 * read-write, need CAP_NET_ADMIN, and print nothing on success.
 */
#include "kvodctl.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

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

	file = open(path, O_RDONLY | O_CLOEXEC);
	if (file < 0) {
		err_msg("%s %s: %s: %s", a->cmd, name, path, strerror(errno));
		return EXIT_RUNTIME;
	}
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
