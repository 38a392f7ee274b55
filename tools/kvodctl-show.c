// SPDX-License-Identifier: GPL-2.0
/*
 * How objects print: as "key: value" lines, as table rows and as JSON
 * objects. Each object's fields are listed once, with their JSON key and
 * table heading, so the three forms cannot drift apart. Numbers are exact
 * integers (bytes, bits/s), never rounded for humans: scripts parse them.
 *
 * Names from the kernel are read within their 64-byte field whether or
 * not they are NUL-terminated.
 */
#include "kvodctl.h"

#include <string.h>

struct field {
	const char *key;	/* JSON key, and key of "key: value" lines */
	const char *head;	/* table heading */
};

static const struct field movie_fields[] = {
	{ "size",		"SIZE" },
	{ "bitrate",		"BITRATE" },
	{ "resident",		"RESIDENT" },
	{ "chunks",		"CHUNKS" },
	{ "active_clients",	"CLIENTS" },
	{ "bytes_served",	"SERVED" },
};

#define MOVIE_NUMS	ARRAY_SIZE(movie_fields)

/* @m's numbers, in the order of movie_fields[]. */
static void movie_nums(const struct kvod_movie_info *m, __u64 *v)
{
	v[0] = m->length;
	v[1] = m->bitrate;
	v[2] = m->resident;
	v[3] = m->chunks;
	v[4] = m->active_clients;
	v[5] = m->bytes_served;
}

static const struct field live_fields[] = {
	{ "written",		"WRITTEN" },
	{ "chunks_done",	"DONE" },
	{ "chunk_size",		"CHUNK" },
	{ "chunks",		"RING" },
	{ "resident",		"RESIDENT" },
	{ "bitrate",		"BITRATE" },
	{ "writer",		"WRITER" },
	{ "active_clients",	"CLIENTS" },
	{ "overruns",		"OVERRUNS" },
	{ "bytes_served",	"SERVED" },
	{ "swaps",		"SWAPS" },
};

#define LIVE_NUMS	ARRAY_SIZE(live_fields)

/* A live channel's numbers, in the order of live_fields[]. */
static void live_nums(const struct kvod_movie_info *m, __u64 *v)
{
	v[0] = m->length;
	v[1] = m->live_seq;
	v[2] = m->live_chunk_size;
	v[3] = m->chunks;
	v[4] = m->resident;
	v[5] = m->bitrate;
	v[6] = !!(m->live_opts & KVOD_LIVE_WRITER);
	v[7] = m->active_clients;
	v[8] = m->live_overruns;
	v[9] = m->bytes_served;
	v[10] = m->live_swaps;
}

/* Which fields an entry of the catalog prints, by its kind. */
struct kind_view {
	const struct field *f;
	size_t n;
	void (*nums)(const struct kvod_movie_info *m, __u64 *v);
};

#define MAX_NUMS	LIVE_NUMS

static const struct kind_view movie_view = {
	movie_fields, MOVIE_NUMS, movie_nums
};
static const struct kind_view live_view = {
	live_fields, LIVE_NUMS, live_nums
};

static const struct kind_view *view_of(const struct kvod_movie_info *m)
{
	return m->kind == KVOD_KIND_LIVE ? &live_view : &movie_view;
}

static const struct field stats_fields[] = {
	{ "movies",		"MOVIES" },
	{ "zombies",		"ZOMBIES" },
	{ "resident",		"RESIDENT" },
	{ "resident_max",	"RESIDENT_MAX" },
	{ "rdma_maps",		"RDMA_MAPS" },
	{ "rdma_map_bytes",	"RDMA_MAP_BYTES" },
	{ "rdma_conn_bytes",	"RDMA_CONN_BYTES" },
};

#define STATS_NUMS	ARRAY_SIZE(stats_fields)

static void stats_nums(const struct kvod_stats *st, __u64 v[STATS_NUMS])
{
	v[0] = st->movies;
	v[1] = st->zombies;
	v[2] = st->resident;
	v[3] = st->resident_max;
	v[4] = st->rdma_maps;
	v[5] = st->rdma_map_bytes;
	v[6] = st->rdma_conn_bytes;
}

static int name_len(const struct kvod_movie_info *m)
{
	return strnlen(m->name, sizeof(m->name));
}

static void kv_nums(const struct field *f, const __u64 *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		printf("%s: %llu\n", f[i].key, v[i]);
}

static void json_nums(struct json *j, const struct field *f, const __u64 *v,
		      size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		json_u64(j, f[i].key, v[i]);
}

void show_movie_kv(const struct kvod_movie_info *m)
{
	const struct kind_view *kv = view_of(m);
	__u64 v[MAX_NUMS];

	kv->nums(m, v);
	printf("name: %.*s\n", name_len(m), m->name);
	if (m->kind == KVOD_KIND_LIVE)
		printf("kind: live\n");
	kv_nums(kv->f, v, kv->n);
}

void show_movie_json(struct json *j, const char *key,
		     const struct kvod_movie_info *m)
{
	const struct kind_view *kv = view_of(m);
	__u64 v[MAX_NUMS];

	kv->nums(m, v);
	json_obj_begin(j, key);
	json_str(j, "name", m->name, name_len(m));
	json_nums(j, kv->f, v, kv->n);
	json_obj_end(j);
}

static int max_int(int a, int b)
{
	return a > b ? a : b;
}

/*
 * Column widths of the entries of @m of @kv's kind: w[0] for the name,
 * w[1 + i] for field i.
 */
static void table_widths(const struct kind_view *kv,
			 const struct kvod_movie_info *m, size_t n,
			 int w[1 + MAX_NUMS])
{
	__u64 v[MAX_NUMS];
	size_t i, k;
	int len;

	w[0] = strlen("NAME");
	for (k = 0; k < kv->n; k++)
		w[1 + k] = strlen(kv->f[k].head);
	for (i = 0; i < n; i++) {
		if (view_of(&m[i]) != kv)
			continue;
		kv->nums(&m[i], v);
		w[0] = max_int(w[0], name_len(&m[i]));
		for (k = 0; k < kv->n; k++) {
			len = snprintf(NULL, 0, "%llu", v[k]);
			w[1 + k] = max_int(w[1 + k], len);
		}
	}
}

/* A heading line, then a line per entry of @kv's kind in @m. */
static void show_table(const struct kind_view *kv,
		       const struct kvod_movie_info *m, size_t n)
{
	int w[1 + MAX_NUMS];
	__u64 v[MAX_NUMS];
	size_t i, k;

	table_widths(kv, m, n, w);
	printf("%-*s", w[0], "NAME");
	for (k = 0; k < kv->n; k++)
		printf("  %*s", w[1 + k], kv->f[k].head);
	putchar('\n');

	for (i = 0; i < n; i++) {
		if (view_of(&m[i]) != kv)
			continue;
		kv->nums(&m[i], v);
		printf("%-*.*s", w[0], name_len(&m[i]), m[i].name);
		for (k = 0; k < kv->n; k++)
			printf("  %*llu", w[1 + k], v[k]);
		putchar('\n');
	}
}

/* The movies of the catalog snapshot @m; live channels are left out. */
void show_movie_table(const struct kvod_movie_info *m, size_t n)
{
	show_table(&movie_view, m, n);
}

/* The live channels of the catalog snapshot @m. */
void show_live_table(const struct kvod_movie_info *m, size_t n)
{
	show_table(&live_view, m, n);
}

void show_stats_kv(const struct kvod_stats *st)
{
	__u64 v[STATS_NUMS];

	stats_nums(st, v);
	kv_nums(stats_fields, v, STATS_NUMS);
}

void show_stats_json(struct json *j, const char *key,
		     const struct kvod_stats *st)
{
	__u64 v[STATS_NUMS];

	stats_nums(st, v);
	json_obj_begin(j, key);
	json_nums(j, stats_fields, v, STATS_NUMS);
	json_obj_end(j);
}
