// SPDX-License-Identifier: GPL-2.0
/*
 * Pushes: the push and stop commands, and how list shows them.
 *
 *   kvodctl push NAME udp://HOST:PORT [--rate RATE] [--loop] [--window MS]
 *                [--tai]
 *
 * HOST is a numeric IPv4 address or a bracketed IPv6 address
 * ("udp://[2001:db8::1]:5004"). The push sends from the network namespace
 * kvodctl runs in. push prints the new push's id; stop ID ends it.
 */
#include "kvodctl.h"
#include "lib/endpoint.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* udp://ENDPOINT (tools/lib/endpoint.c; a host is needed) into @sa. */
static int parse_udp_url(const char *s, struct kvod_sockaddr *sa)
{
	if (strncmp(s, "udp://", 6))
		return -1;
	return kvod_parse_endpoint(s + 6, true, sa);
}

static void format_url(const struct kvod_sockaddr *sa, char *buf, size_t size)
{
	char ep[KVOD_ENDPOINT_MAX];

	kvod_format_endpoint(sa, ep, sizeof(ep));
	snprintf(buf, size, "udp://%s", ep);
}

/* push NAME udp://HOST:PORT [--rate RATE] [--loop] [--window MS] [--tai] */
int cmd_push(const struct kvodctl_args *a)
{
	struct kvod_push_start p;
	int ret;

	memset(&p, 0, sizeof(p));
	p.size = sizeof(p);
	ret = kvod_set_name(p.name, a->cmd, a->pos[0]);
	if (ret)
		return ret;
	if (parse_udp_url(a->pos[1], &p.dst)) {
		err_msg("%s %s: not udp://HOST:PORT", a->cmd, a->pos[1]);
		return EXIT_USAGE;
	}
	p.rate = a->rate;
	p.window_ms = a->window_ms;
	p.opts = (a->loop ? KVOD_PUSH_LOOP : 0) | (a->tai ? KVOD_PUSH_TAI : 0);

	ret = kvod_change(KVOD_IOC_PUSH_START, &p, a->cmd, a->pos[0]);
	if (!ret)
		printf("%u\n", p.id);
	return ret;
}

/* stop ID */
int cmd_stop(const struct kvodctl_args *a)
{
	struct kvod_push_ref r;
	unsigned long id;
	char *end;

	errno = 0;
	id = strtoul(a->pos[0], &end, 10);
	if (a->pos[0][0] < '0' || a->pos[0][0] > '9' || errno || *end ||
	    !id || id > UINT32_MAX) {
		err_msg("%s %s: not a push id", a->cmd, a->pos[0]);
		return EXIT_USAGE;
	}
	memset(&r, 0, sizeof(r));
	r.size = sizeof(r);
	r.id = id;
	return kvod_change(KVOD_IOC_PUSH_STOP, &r, a->cmd, a->pos[0]);
}

static const char *push_opts(__u32 opts)
{
	switch (opts & KVOD_PUSH_OPTS) {
	case KVOD_PUSH_LOOP:
		return "loop";
	case KVOD_PUSH_TAI:
		return "tai";
	case KVOD_PUSH_LOOP | KVOD_PUSH_TAI:
		return "loop,tai";
	default:
		return "-";
	}
}

void show_push_table(const struct kvod_push_info *v, size_t n)
{
	char url[KVOD_ENDPOINT_MAX + 8];
	size_t i;

	printf("%-4s  %-20s  %-30s  %10s  %12s  %10s  %5s  %6s  %s\n", "PUSH",
	       "MOVIE", "DESTINATION", "NETNS", "RATE", "PACKETS", "LOOPS",
	       "LATE", "OPTS");
	for (i = 0; i < n; i++) {
		format_url(&v[i].dst, url, sizeof(url));
		printf("%-4u  %-20.*s  %-30s  %10u  %12llu  %10llu  %5llu  %6llu  %s\n",
		       v[i].id, (int)strnlen(v[i].name, KVOD_NAME_MAX),
		       v[i].name, url, v[i].netns, v[i].rate,
		       v[i].packets, v[i].loops, v[i].late,
		       push_opts(v[i].opts));
	}
}

void show_pushes_json(struct json *j, const char *key,
		      const struct kvod_push_info *v, size_t n)
{
	char url[KVOD_ENDPOINT_MAX + 8];
	size_t i;

	json_arr_begin(j, key);
	for (i = 0; i < n; i++) {
		json_obj_begin(j, NULL);
		json_u64(j, "id", v[i].id);
		json_str(j, "movie", v[i].name, strnlen(v[i].name, KVOD_NAME_MAX));
		format_url(&v[i].dst, url, sizeof(url));
		json_str(j, "destination", url, strlen(url));
		json_u64(j, "netns", v[i].netns);
		json_u64(j, "rate", v[i].rate);
		json_u64(j, "window_ms", v[i].window_ms);
		json_u64(j, "loop", !!(v[i].opts & KVOD_PUSH_LOOP));
		json_u64(j, "tai", !!(v[i].opts & KVOD_PUSH_TAI));
		json_u64(j, "packets", v[i].packets);
		json_u64(j, "bytes", v[i].bytes);
		json_u64(j, "loops", v[i].loops);
		json_u64(j, "late", v[i].late);
		json_u64(j, "errors", v[i].errors);
		json_u64(j, "icmp_errors", v[i].icmp_errors);
		json_obj_end(j);
	}
	json_arr_end(j);
}
