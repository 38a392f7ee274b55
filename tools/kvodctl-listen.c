// SPDX-License-Identifier: GPL-2.0
/*
 * Listeners: the listen and unlisten commands, and how list shows them.
 *
 * An endpoint is written as tools/lib/endpoint.c reads it, [ADDR:]PORT:
 * "8080" (every IPv4 address), "127.0.0.1:8080", "[::1]:8080",
 * "[::]:8080" (IPv6 only) or "[fe80::1%eth0]:8080". The listener lives in
 * the network namespace kvodctl runs in (ip netns exec NS kvodctl
 * listen ...).
 */
#include "kvodctl.h"
#include "lib/counters.h"
#include "lib/endpoint.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char *const proto_names[] = {
	[KVOD_PROTO_HTTP] = "http",
	[KVOD_PROTO_RDMA] = "rdma",
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

/* listen|unlisten PROTO [ADDR:]PORT */
static int listen_cmd(const struct kvodctl_args *a, unsigned long req)
{
	struct kvod_listen l;

	memset(&l, 0, sizeof(l));
	l.size = sizeof(l);
	if (parse_proto(a->pos[0], &l.proto)) {
		err_msg("%s %s: unknown protocol (http or rdma)", a->cmd,
			a->pos[0]);
		return EXIT_USAGE;
	}
	if (kvod_parse_endpoint(a->pos[1], false, &l.addr)) {
		err_msg("%s %s: not [ADDR:]PORT", a->cmd, a->pos[1]);
		return EXIT_USAGE;
	}
	return kvod_change(req, &l, a->cmd, a->pos[1]);
}

int cmd_listen(const struct kvodctl_args *a)
{
	return listen_cmd(a, KVOD_IOC_LISTEN);
}

int cmd_unlisten(const struct kvodctl_args *a)
{
	return listen_cmd(a, KVOD_IOC_UNLISTEN);
}

/* The non-zero counters without a column, as "name:value ...". */
static void print_other(const struct kvod_listener_info *l)
{
	const char *sep = "";
	int i;

	for (i = TABLE_COUNTERS; i < KVOD_LC_NR; i++) {
		if (!l->counters[i])
			continue;
		printf("%s%s:%llu", sep, kvod_counter_names[i], l->counters[i]);
		sep = " ";
	}
	if (!*sep)
		putchar('-');
}

void show_listener_table(const struct kvod_listener_info *v, size_t n)
{
	char ep[KVOD_ENDPOINT_MAX];
	size_t i;

	printf("%-5s  %-24s  %10s  %8s  %6s  %7s  %14s  %s\n", "PROTO",
	       "ADDRESS", "NETNS", "ACCEPTED", "ACTIVE", "REFUSED", "BYTES",
	       "OTHER");
	for (i = 0; i < n; i++) {
		kvod_format_endpoint(&v[i].addr, ep, sizeof(ep));
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
	char ep[KVOD_ENDPOINT_MAX];
	const char *p;
	size_t i;
	int k;

	json_arr_begin(j, key);
	for (i = 0; i < n; i++) {
		json_obj_begin(j, NULL);
		p = proto_name(v[i].proto);
		json_str(j, "proto", p, strlen(p));
		kvod_format_endpoint(&v[i].addr, ep, sizeof(ep));
		json_str(j, "address", ep, strlen(ep));
		json_u64(j, "netns", v[i].netns);
		json_obj_begin(j, "counters");
		for (k = 0; k < KVOD_LC_NR; k++)
			json_u64(j, kvod_counter_names[k], v[i].counters[k]);
		json_obj_end(j);
		json_obj_end(j);
	}
	json_arr_end(j);
}
