// SPDX-License-Identifier: GPL-2.0
/*
 * rdma_ctl: the ioctls the RDMA shell tests need, without depending on
 * tools/kvodctl. Not a test itself.
 *
 *   rdma_ctl listen ADDR PORT		KVOD_IOC_LISTEN, proto RDMA
 *   rdma_ctl unlisten ADDR PORT
 *   rdma_ctl counter ADDR PORT NAME	one counter of that RDMA listener,
 *	named as kvodctl names it (tools/lib/counters.c): accepted, active,
 *	rej_busy, devices, ...
 *   rdma_ctl counters			every RDMA listener, one line each
 *   rdma_ctl clients NAME		the movie's active_clients
 *
 * ADDR is an IPv4 or IPv6 literal (0.0.0.0 or :: for the wildcard).
 * Exit 0 on success; 1 with one line on stderr on failure; 2 on misuse.
 */
#include "kvod_util.h"
#include "lib/counters.h"

#include <arpa/inet.h>
#include <sys/socket.h>

/* What "counters" prints: the counters an RDMA listener keeps. */
static const enum kvod_listener_counter rdma_counters[] = {
	KVOD_LC_ACCEPTED, KVOD_LC_ACTIVE, KVOD_LC_REFUSED, KVOD_LC_BYTES,
	KVOD_LC_REJ_NOT_FOUND, KVOD_LC_REJ_BUSY, KVOD_LC_REJ_VERSION,
	KVOD_LC_REJ_BAD_REQUEST, KVOD_LC_DEVICES,
};

static int fail(const char *what, int err)
{
	fprintf(stderr, "rdma_ctl: %s: %s\n", what, strerror(err));
	return 1;
}

static int parse_addr(const char *addr, const char *port,
		      struct kvod_sockaddr *ka)
{
	memset(ka, 0, sizeof(*ka));
	ka->port = atoi(port);
	if (inet_pton(AF_INET, addr, ka->addr) == 1)
		ka->family = AF_INET;
	else if (inet_pton(AF_INET6, addr, ka->addr) == 1)
		ka->family = AF_INET6;
	else
		return -1;
	return 0;
}

static int listeners(int dev, struct kvod_listener_info **out, __u32 *nr)
{
	struct kvod_movie_list l = {
		.size = sizeof(l),
		.entry_size = sizeof(struct kvod_listener_info),
	};
	struct kvod_listener_info *li = NULL;
	int ret;

	for (;;) {
		ret = kvod_ioctl(dev, KVOD_IOC_LISTENER_LIST, &l);
		if (ret) {
			free(li);
			return ret;
		}
		if (l.filled == l.count)
			break;
		free(li);
		li = calloc(l.count, sizeof(*li));
		if (!li)
			return ENOMEM;
		for (__u32 i = 0; i < l.count; i++)
			li[i].size = sizeof(*li);
		l.entries = (uintptr_t)li;
	}
	*out = li;
	*nr = l.filled;
	return 0;
}

static void print_listener(const struct kvod_listener_info *li)
{
	char buf[INET6_ADDRSTRLEN];

	inet_ntop(li->addr.family, li->addr.addr, buf, sizeof(buf));
	printf("%s %u", buf, li->addr.port);
	for (size_t i = 0; i < sizeof(rdma_counters) / sizeof(*rdma_counters);
	     i++)
		printf(" %s=%llu", kvod_counter_names[rdma_counters[i]],
		       (unsigned long long)li->counters[rdma_counters[i]]);
	printf("\n");
}

static int counter(int dev, const struct kvod_sockaddr *ka, const char *name)
{
	struct kvod_listener_info *li = NULL;
	int c = kvod_counter_index(name);
	__u32 nr = 0, i;
	int ret;

	if (c < 0)
		return 2;
	ret = listeners(dev, &li, &nr);
	if (ret)
		return fail("listener list", ret);
	for (i = 0; i < nr; i++) {
		if (li[i].proto == KVOD_PROTO_RDMA &&
		    li[i].addr.family == ka->family &&
		    li[i].addr.port == ka->port &&
		    !memcmp(li[i].addr.addr, ka->addr, sizeof(ka->addr))) {
			printf("%llu\n", (unsigned long long)
			       li[i].counters[c]);
			free(li);
			return 0;
		}
	}
	free(li);
	return fail("counter", ENOENT);
}

int main(int argc, char **argv)
{
	struct kvod_listen lr = { .size = sizeof(lr), .proto = KVOD_PROTO_RDMA };
	struct kvod_listener_info *li;
	struct kvod_movie_info mi;
	__u32 nr, i;
	int dev, ret;

	if (argc < 2)
		goto usage;
	dev = open(KVOD_DEVICE, O_RDWR | O_CLOEXEC);
	if (dev < 0)
		return fail(KVOD_DEVICE, errno);

	if ((!strcmp(argv[1], "listen") || !strcmp(argv[1], "unlisten")) &&
	    argc == 4) {
		if (parse_addr(argv[2], argv[3], &lr.addr))
			goto usage;
		ret = kvod_ioctl(dev, argv[1][0] == 'l' ? KVOD_IOC_LISTEN :
				 KVOD_IOC_UNLISTEN, &lr);
		return ret ? fail(argv[1], ret) : 0;
	}
	if (!strcmp(argv[1], "counter") && argc == 5) {
		if (parse_addr(argv[2], argv[3], &lr.addr))
			goto usage;
		ret = counter(dev, &lr.addr, argv[4]);
		if (ret == 2)
			goto usage;
		return ret;
	}
	if (!strcmp(argv[1], "counters") && argc == 2) {
		ret = listeners(dev, &li, &nr);
		if (ret)
			return fail("listener list", ret);
		for (i = 0; i < nr; i++)
			if (li[i].proto == KVOD_PROTO_RDMA)
				print_listener(&li[i]);
		free(li);
		return 0;
	}
	if (!strcmp(argv[1], "clients") && argc == 3) {
		ret = kvod_info(dev, argv[2], &mi);
		if (ret)
			return fail(argv[2], ret);
		printf("%u\n", mi.active_clients);
		return 0;
	}
usage:
	fprintf(stderr,
		"usage: rdma_ctl listen|unlisten ADDR PORT | counter ADDR PORT NAME |\n"
		"       counters | clients NAME\n");
	return 2;
}
