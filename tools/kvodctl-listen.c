// SPDX-License-Identifier: GPL-2.0
/*
 * Listeners: the listen and unlisten commands, and how list shows them.
 *
 * An endpoint is written [ADDR:]PORT: "8080" (every IPv4 address),
 * "127.0.0.1:8080", "[::1]:8080" or "[::]:8080" (IPv6 only). The listener
 * lives in the network namespace kvodctl runs in (ip netns exec NS
 * kvodctl listen ...).
 */
#include "kvodctl.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static const char *const proto_names[] = {
	[KVOD_PROTO_HTTP] = "http",
	[KVOD_PROTO_RDMA] = "rdma",
};

/* enum kvod_listener_counter, as list names them */
static const char *const counter_names[KVOD_LC_NR] = {
	[KVOD_LC_ACCEPTED] = "accepted",
	[KVOD_LC_ACTIVE] = "active",
	[KVOD_LC_REFUSED] = "refused",
	[KVOD_LC_BYTES] = "bytes",
	[KVOD_LC_HTTP_200] = "200",
	[KVOD_LC_HTTP_206] = "206",
	[KVOD_LC_HTTP_400] = "400",
	[KVOD_LC_HTTP_404] = "404",
	[KVOD_LC_HTTP_405] = "405",
	[KVOD_LC_HTTP_408] = "408",
	[KVOD_LC_HTTP_416] = "416",
	[KVOD_LC_HTTP_431] = "431",
	[KVOD_LC_HTTP_503] = "503",
	[KVOD_LC_HTTP_505] = "505",
	[KVOD_LC_TIMEOUTS] = "timeouts",
	[KVOD_LC_REJ_NOT_FOUND] = "rej_not_found",
	[KVOD_LC_REJ_BUSY] = "rej_busy",
	[KVOD_LC_REJ_VERSION] = "rej_version",
	[KVOD_LC_REJ_BAD_REQUEST] = "rej_bad_request",
	[KVOD_LC_DEVICES] = "devices",
};

/* The counters the table has columns for; the rest go in OTHER. */
#define TABLE_COUNTERS	4	/* accepted, active, refused, bytes */

static const char *proto_name(__u32 proto)
{
	if (proto < ARRAY_SIZE(proto_names) && proto_names[proto])
		return proto_names[proto];
	return "?";
}

static int parse_proto(const char *s, __u32 *proto)
{
	__u32 p;

	for (p = 0; p < ARRAY_SIZE(proto_names); p++) {
		if (proto_names[p] && !strcmp(s, proto_names[p])) {
			*proto = p;
			return 0;
		}
	}
	return -1;
}

static int parse_port(const char *s, __u16 *port)
{
	char *end;
	unsigned long v;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v == 0 || v > 65535)
		return -1;
	*port = v;
	return 0;
}

/* [ADDR:]PORT into @sa; see the top of the file. */
static int parse_endpoint(const char *s, struct kvod_sockaddr *sa)
{
	char host[INET6_ADDRSTRLEN + IF_NAMESIZE + 2];
	const char *colon, *pct;
	size_t len;

	memset(sa, 0, sizeof(*sa));
	if (*s == '[') {
		colon = strstr(s, "]:");
		if (!colon || (size_t)(colon - s - 1) >= sizeof(host))
			return -1;
		len = colon - s - 1;
		memcpy(host, s + 1, len);
		host[len] = '\0';
		pct = strchr(host, '%');
		if (pct) {
			sa->scope_id = if_nametoindex(pct + 1);
			if (!sa->scope_id)
				return -1;
			host[pct - host] = '\0';
		}
		sa->family = AF_INET6;
		if (inet_pton(AF_INET6, host, sa->addr) != 1)
			return -1;
		return parse_port(colon + 2, &sa->port);
	}
	sa->family = AF_INET;
	colon = strrchr(s, ':');
	if (!colon)
		return parse_port(s, &sa->port);
	len = colon - s;
	if (len >= sizeof(host))
		return -1;
	memcpy(host, s, len);
	host[len] = '\0';
	if (inet_pton(AF_INET, host, sa->addr) != 1)
		return -1;
	return parse_port(colon + 1, &sa->port);
}

static void format_endpoint(const struct kvod_sockaddr *sa, char *buf,
			    size_t size)
{
	char host[INET6_ADDRSTRLEN];

	if (sa->family == AF_INET6) {
		inet_ntop(AF_INET6, sa->addr, host, sizeof(host));
		snprintf(buf, size, "[%s]:%u", host, sa->port);
	} else {
		inet_ntop(AF_INET, sa->addr, host, sizeof(host));
		snprintf(buf, size, "%s:%u", host, sa->port);
	}
}

/* listen|unlisten PROTO [ADDR:]PORT */
static int listen_cmd(const struct kvodctl_args *a, unsigned long req)
{
	struct kvod_listen l;
	int dev, ret;

	memset(&l, 0, sizeof(l));
	l.size = sizeof(l);
	if (parse_proto(a->pos[0], &l.proto)) {
		err_msg("%s %s: unknown protocol (http or rdma)", a->cmd,
			a->pos[0]);
		return EXIT_USAGE;
	}
	if (parse_endpoint(a->pos[1], &l.addr)) {
		err_msg("%s %s: not [ADDR:]PORT", a->cmd, a->pos[1]);
		return EXIT_USAGE;
	}
	dev = kvod_open(O_RDWR);
	if (dev < 0)
		return EXIT_RUNTIME;
	ret = kvod_ioctl(dev, req, &l, a->cmd, a->pos[1]);
	close(dev);
	return ret;
}

int cmd_listen(const struct kvodctl_args *a)
{
	return listen_cmd(a, KVOD_IOC_LISTEN);
}

int cmd_unlisten(const struct kvodctl_args *a)
{
	return listen_cmd(a, KVOD_IOC_UNLISTEN);
}

/* Every listener into *@out (NULL if none), *@n entries. */
int get_listeners(int dev, struct kvod_listener_info **out, size_t *n,
		  const char *cmd)
{
	return get_list(dev, KVOD_IOC_LISTENER_LIST, sizeof(**out),
			(void **)out, n, cmd);
}

/* The non-zero counters without a column, as "name:value ...". */
static void print_other(const struct kvod_listener_info *l)
{
	const char *sep = "";
	int i;

	for (i = TABLE_COUNTERS; i < KVOD_LC_NR; i++) {
		if (!l->counters[i])
			continue;
		printf("%s%s:%llu", sep, counter_names[i], l->counters[i]);
		sep = " ";
	}
	if (!*sep)
		putchar('-');
}

void show_listener_table(const struct kvod_listener_info *v, size_t n)
{
	char ep[INET6_ADDRSTRLEN + 16];
	size_t i;

	printf("%-5s  %-24s  %10s  %8s  %6s  %7s  %14s  %s\n", "PROTO",
	       "ADDRESS", "NETNS", "ACCEPTED", "ACTIVE", "REFUSED", "BYTES",
	       "OTHER");
	for (i = 0; i < n; i++) {
		format_endpoint(&v[i].addr, ep, sizeof(ep));
		printf("%-5s  %-24s  %10u  %8llu  %6llu  %7llu  %14llu  ",
		       proto_name(v[i].proto), ep, v[i].netns,
		       v[i].counters[KVOD_LC_ACCEPTED],
		       v[i].counters[KVOD_LC_ACTIVE],
		       v[i].counters[KVOD_LC_REFUSED],
		       v[i].counters[KVOD_LC_BYTES]);
		print_other(&v[i]);
		putchar('\n');
	}
}

void show_listeners_json(struct json *j, const char *key,
			 const struct kvod_listener_info *v, size_t n)
{
	char ep[INET6_ADDRSTRLEN + 16];
	const char *p;
	size_t i;
	int k;

	json_arr_begin(j, key);
	for (i = 0; i < n; i++) {
		json_obj_begin(j, NULL);
		p = proto_name(v[i].proto);
		json_str(j, "proto", p, strlen(p));
		format_endpoint(&v[i].addr, ep, sizeof(ep));
		json_str(j, "address", ep, strlen(ep));
		json_u64(j, "netns", v[i].netns);
		json_obj_begin(j, "counters");
		for (k = 0; k < KVOD_LC_NR; k++)
			json_u64(j, counter_names[k], v[i].counters[k]);
		json_obj_end(j);
		json_obj_end(j);
	}
	json_arr_end(j);
}
