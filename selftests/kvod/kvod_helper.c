// SPDX-License-Identifier: GPL-2.0
/*
 * kvod_helper: the few ioctls the shell tests need, without depending on
 * tools/kvodctl (which has tests of its own). Not a test itself.
 *
 *   kvod_helper add NAME FILE	register FILE as NAME
 *   kvod_helper del NAME
 *   kvod_helper stats		movies zombies resident resident_max
 *   kvod_helper rtprecv PORT FILE IDLE_MS
 *				receive kvod's RTP push on UDP PORT (any
 *				local address of this namespace) and write
 *				each packet's payload, in arrival order, to
 *				FILE; stop IDLE_MS after the last packet (30 s
 *				before the first). Prints "listening" once
 *				bound, then "packets N bytes N bad N seqgaps N
 *				dups N" (bad: not RTP/MP2T; seqgaps: sequence
 *				numbers that skipped ahead or back; dups: the
 *				previous packet's number again)
 *
 * Exit 0 on success; 1 with one line on stderr on failure; 2 on misuse.
 */
#include "kvod_util.h"

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

static int fail(const char *what, const char *name, int err)
{
	fprintf(stderr, "kvod_helper: %s %s: %s\n", what, name, strerror(err));
	return 1;
}

/*
 * An RTP/MP2T packet as kvod pushes it: V=2, PT 33, 1..7 TS packets. The
 * payload is not checked: test movies are random bytes, not MPEG-TS.
 */
static int rtp_ok(const unsigned char *p, ssize_t n)
{
	return n >= 12 + 188 && n <= 12 + 7 * 188 && (n - 12) % 188 == 0 &&
	       (p[0] >> 6) == 2 && (p[1] & 0x7f) == 33;
}

static int rtprecv(const char *port, const char *file, const char *idle_ms)
{
	struct sockaddr_in sa = {
		.sin_family = AF_INET,
		.sin_port = htons(atoi(port)),
	};
	unsigned long long packets = 0, bytes = 0, bad = 0, gaps = 0, dups = 0;
	int rcvbuf = 16 << 20, idle = atoi(idle_ms), fd, last = -1;
	unsigned char buf[65536];
	FILE *out;

	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return fail("socket", port, errno);
	/* Past net.core.rmem_max if we may (root in the guest). */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf)))
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)))
		return fail("bind", port, errno);
	out = fopen(file, "w");
	if (!out)
		return fail("open", file, errno);
	printf("listening\n");
	fflush(stdout);
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		ssize_t n;
		int seq;

		if (poll(&pfd, 1, packets ? idle : 30000) <= 0)
			break;
		n = recv(fd, buf, sizeof(buf), 0);
		if (n < 0)
			break;
		if (!rtp_ok(buf, n)) {
			bad++;
			continue;
		}
		seq = (buf[2] << 8) | buf[3];
		if (seq == last)
			dups++;
		else if (last >= 0 && seq != ((last + 1) & 0xffff))
			gaps++;
		last = seq;
		packets++;
		bytes += n - 12;
		if (fwrite(buf + 12, 1, n - 12, out) != (size_t)(n - 12))
			return fail("write", file, errno);
	}
	if (fclose(out))
		return fail("write", file, errno);
	printf("packets %llu bytes %llu bad %llu seqgaps %llu dups %llu\n",
	       packets, bytes, bad, gaps, dups);
	return 0;
}

int main(int argc, char **argv)
{
	struct kvod_stats st;
	int dev, fd, ret;

	if (argc < 2)
		goto usage;
	/* Needs no module: a receiver runs where /dev/kvod may not exist. */
	if (!strcmp(argv[1], "rtprecv") && argc == 5)
		return rtprecv(argv[2], argv[3], argv[4]);
	dev = open(KVOD_DEVICE, O_RDWR | O_CLOEXEC);
	if (dev < 0)
		return fail("open", KVOD_DEVICE, errno);
	if (!strcmp(argv[1], "add") && argc == 4) {
		fd = open(argv[3], O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return fail("open", argv[3], errno);
		ret = kvod_add(dev, argv[2], fd, 0);
		return ret ? fail("add", argv[2], ret) : 0;
	}
	if (!strcmp(argv[1], "del") && argc == 3) {
		ret = kvod_del(dev, argv[2]);
		return ret ? fail("del", argv[2], ret) : 0;
	}
	if (!strcmp(argv[1], "stats") && argc == 2) {
		ret = kvod_stats(dev, &st);
		if (ret)
			return fail("stats", "", ret);
		printf("%u %u %llu %llu\n", st.movies, st.zombies,
		       (unsigned long long)st.resident,
		       (unsigned long long)st.resident_max);
		return 0;
	}
usage:
	fprintf(stderr, "usage: kvod_helper add NAME FILE | del NAME | stats | rtprecv PORT FILE IDLE_MS\n");
	return 2;
}
