// SPDX-License-Identifier: GPL-2.0
/*
 * The module's statistics: the stats command, and how they print (list
 * shows them too).
 */
#include "kvodctl.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const struct field stats_fields[] = {
	{ "movies",		"MOVIES" },
	{ "zombies",		"ZOMBIES" },
	{ "mem",		"MEM" },
	{ "resident",		"RESIDENT" },
	{ "resident_max",	"RESIDENT_MAX" },
	{ "graveyard",		"GRAVEYARD" },
	{ "rdma_maps",		"RDMA_MAPS" },
	{ "rdma_map_bytes",	"RDMA_MAP_BYTES" },
	{ "rdma_conn_bytes",	"RDMA_CONN_BYTES" },
	{ "rdma_mr_pages",	"RDMA_MR_PAGES" },
};

#define STATS_NUMS	ARRAY_SIZE(stats_fields)

static void stats_nums(const struct kvod_stats *st, __u64 v[STATS_NUMS])
{
	v[0] = st->movies;
	v[1] = st->zombies;
	v[2] = st->mem;
	v[3] = st->resident;
	v[4] = st->resident_max;
	v[5] = st->graveyard;
	v[6] = st->rdma_maps;
	v[7] = st->rdma_map_bytes;
	v[8] = st->rdma_conn_bytes;
	v[9] = st->rdma_mr_pages;
}

void show_stats_kv(const struct kvod_stats *st)
{
	__u64 v[STATS_NUMS];

	stats_nums(st, v);
	show_nums_kv(stats_fields, v, STATS_NUMS);
}

void show_stats_json(struct json *j, const char *key,
		     const struct kvod_stats *st)
{
	__u64 v[STATS_NUMS];

	stats_nums(st, v);
	json_obj_begin(j, key);
	show_nums_json(j, stats_fields, v, STATS_NUMS);
	json_obj_end(j);
}

/* The module's statistics from @dev. */
int get_stats(int dev, struct kvod_stats *st, const char *cmd)
{
	memset(st, 0, sizeof(*st));
	st->size = sizeof(*st);
	return kvod_ioctl(dev, KVOD_IOC_STATS, st, cmd, NULL);
}

/* stats [--json] */
int cmd_stats(const struct kvodctl_args *a)
{
	struct kvod_stats st;
	struct json j;
	int dev, ret;

	dev = kvod_open(O_RDONLY);
	if (dev < 0)
		return EXIT_RUNTIME;
	ret = get_stats(dev, &st, a->cmd);
	close(dev);
	if (ret)
		return ret;

	if (a->json) {
		json_init(&j, stdout);
		show_stats_json(&j, NULL, &st);
		json_finish(&j);
	} else {
		show_stats_kv(&st);
	}
	return 0;
}
