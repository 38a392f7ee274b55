// SPDX-License-Identifier: GPL-2.0
/*
 * Live channels: "live create" and "live feed", and how a channel prints
 * in info and list.
 *
 * live feed asks the kernel for the channel's feed fd and copies standard
 * input into it until end of file: with splice(2) when standard input is
 * a pipe (the bytes go from the pipe's pages to the ring without passing
 * through kvodctl), with read(2) and write(2) otherwise.
 */
#define _GNU_SOURCE
#include "kvodctl.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FEED_BUF	(256 * 1024)

static void live_request(struct kvod_live_create *req,
			 const struct kvodctl_args *a)
{
	memset(req, 0, sizeof(*req));
	req->size = sizeof(*req);
	req->opts = (a->raw ? 0 : KVOD_LIVE_TS) | (a->rdma ? KVOD_LIVE_RDMA : 0);
	req->chunk_size = a->chunk_size ?: LIVE_CHUNK_DEFAULT;
	req->nr_chunks = a->nr_chunks ?: LIVE_CHUNKS_DEFAULT;
	req->bitrate = a->bitrate;
}

/*
 * live create NAME [--chunk SIZE] [--chunks N] [--bitrate RATE] [--raw]
 * [--rdma]
 */
int cmd_live_create(const struct kvodctl_args *a)
{
	const char *name = a->pos[0];
	struct kvod_live_create req;
	int ret;

	live_request(&req, a);
	if (!a->raw && req.chunk_size % 188) {
		err_msg("%s %s: chunk size %u is not a multiple of 188 bytes (MPEG-TS packets; --raw for other streams)",
			a->cmd, name, req.chunk_size);
		return EXIT_USAGE;
	}
	ret = kvod_set_name(req.name, a->cmd, name);
	return ret ?: kvod_change(KVOD_IOC_LIVE_CREATE, &req, a->cmd, name);
}

/* Copy with read() and write(); 0 at end of input, or an errno. */
static int feed_copy(int in, int out)
{
	static char buf[FEED_BUF];
	ssize_t n, w, off;

	for (;;) {
		n = read(in, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n ? errno : 0;
		for (off = 0; off < n; off += w) {
			w = write(out, buf + off, n - off);
			if (w < 0 && errno == EINTR)
				w = 0;
			else if (w < 0)
				return errno;
		}
	}
}

/*
 * Move a pipe's bytes into the feed fd with splice(); 0 at end of input,
 * EINVAL if @in is no pipe (the caller then copies), or an errno.
 */
static int feed_splice(int in, int out)
{
	ssize_t n;

	for (;;) {
		n = splice(in, NULL, out, NULL, FEED_BUF, SPLICE_F_MOVE);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n ? errno : 0;
	}
}

/* live feed NAME: standard input into the channel, until end of file. */
int cmd_live_feed(const struct kvodctl_args *a)
{
	const char *name = a->pos[0];
	struct kvod_live_feed req;
	int ret, err;

	memset(&req, 0, sizeof(req));
	req.size = sizeof(req);
	ret = kvod_set_name(req.name, a->cmd, name) ?:
	      kvod_change(KVOD_IOC_LIVE_FEED, &req, a->cmd, name);
	if (ret)
		return ret;

	err = feed_splice(STDIN_FILENO, req.fd);
	if (err == EINVAL)
		err = feed_copy(STDIN_FILENO, req.fd);
	close(req.fd);
	if (err == EPIPE) {
		err_msg("%s %s: the channel was deleted", a->cmd, name);
		return EXIT_RUNTIME;
	}
	if (err) {
		err_msg("%s %s: %s", a->cmd, name, strerror(err));
		return EXIT_RUNTIME;
	}
	return 0;
}
