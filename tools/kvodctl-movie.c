// SPDX-License-Identifier: GPL-2.0
/*
 * Movies and live channels in the catalog: the add, del and info
 * commands, and how an entry prints, as "key: value" lines, table rows and
 * JSON objects. add and del open the device read-write, need
 * CAP_NET_ADMIN and print nothing on success; info only reads. Each
 * kind's fields are listed once, with their JSON key and table heading,
 * so the three forms cannot drift apart. Numbers are exact integers
 * (bytes, bits/s), never rounded for humans: scripts parse them.
 *
 * Names from the kernel are read within their 64-byte field whether or
 * not they are NUL-terminated. Live channels are created and fed in
 * kvodctl-live.c.
 */
#include "kvodctl.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
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
 * add NAME FILE [--bitrate RATE] [--pin]: the kernel reads FILE through
 * the fd we pass, once, during the ioctl, or (the add_lazy test knob,
 * without --pin) keeps a reference to the open file; we close our fd
 * afterwards either way.
 */
int cmd_add(const struct kvodctl_args *a)
{
	const char *name = a->pos[0], *path = a->pos[1];
	struct kvod_movie_add req;
	int file, ret;

	memset(&req, 0, sizeof(req));
	req.size = sizeof(req);
	req.bitrate = a->bitrate;
	if (a->pin)
		req.flags = KVOD_ADD_PIN;
	ret = kvod_set_name(req.name, a->cmd, name);
	if (ret)
		return ret;

	file = open_movie_file(a->cmd, name, path);
	if (file < 0)
		return EXIT_RUNTIME;
	req.fd = file;
	ret = kvod_change(KVOD_IOC_MOVIE_ADD, &req, a->cmd, name);
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

static int name_len(const struct kvod_movie_info *m)
{
	return strnlen(m->name, sizeof(m->name));
}

void show_movie_kv(const struct kvod_movie_info *m)
{
	const struct kind_view *kv = view_of(m);
	__u64 v[MAX_NUMS];

	kv->nums(m, v);
	printf("name: %.*s\n", name_len(m), m->name);
	if (m->kind == KVOD_KIND_LIVE)
		printf("kind: live\n");
	show_nums_kv(kv->f, v, kv->n);
}

void show_movie_json(struct json *j, const char *key,
		     const struct kvod_movie_info *m)
{
	const struct kind_view *kv = view_of(m);
	__u64 v[MAX_NUMS];

	kv->nums(m, v);
	json_obj_begin(j, key);
	json_str(j, "name", m->name, name_len(m));
	show_nums_json(j, kv->f, v, kv->n);
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

/* info NAME [--json] */
int cmd_info(const struct kvodctl_args *a)
{
	const char *name = a->pos[0];
	struct kvod_movie_info m;
	struct json j;
	int ret;

	memset(&m, 0, sizeof(m));
	m.size = sizeof(m);
	ret = kvod_set_name(m.name, a->cmd, name);
	if (ret)
		return ret;

	ret = kvod_query(KVOD_IOC_MOVIE_INFO, &m, a->cmd, name);
	if (ret)
		return ret;

	if (a->json) {
		json_init(&j, stdout);
		show_movie_json(&j, NULL, &m);
		json_finish(&j);
	} else {
		show_movie_kv(&m);
	}
	return 0;
}
