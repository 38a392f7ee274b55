/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kvodctl: the control tool for /dev/kvod. Declarations shared by its
 * files, grouped by the file that owns them.
 *
 * Every command runs in three steps: main() looks the command up in the
 * table in kvodctl.c, parse_args() checks the command line against that
 * table row, and the command's run() does one or two ioctls and prints.
 * Errors are one line on stderr; see err_msg() for the format.
 */
#ifndef KVODCTL_H
#define KVODCTL_H

/* __u64 is unsigned long long on every architecture: print with %llu. */
#define __SANE_USERSPACE_TYPES__

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <linux/kvod.h>

#define KVODCTL_VERSION		"0.1"

#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))

/* Exit statuses besides 0. */
#define EXIT_RUNTIME	1	/* the device, a file or the kernel refused */
#define EXIT_USAGE	2	/* bad command line */

/* kvodctl.c: the command table, usage and error messages */

/* Options a command accepts (struct kvodctl_cmd.opts). */
#define OPT_JSON	(1U << 0)	/* --json */
#define OPT_BITRATE	(1U << 1)	/* --bitrate RATE */
#define OPT_PUSH	(1U << 2)	/* --rate RATE --loop --window MS --tai */
#define OPT_LIVE	(1U << 3)	/* --chunk SIZE --chunks N --raw --rdma */
#define OPT_PIN		(1U << 4)	/* --pin */

struct kvodctl_args;

struct kvodctl_cmd {
	const char *name;
	int (*run)(const struct kvodctl_args *a);
	unsigned int opts;
	const char *const *pos;	/* positional argument names, NULL-ended */
};

void usage(FILE *f);
void err_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* kvodctl-args.c: one command's command line */

struct kvodctl_args {
	const char *cmd;	/* the command's name, for messages */
	char **pos;		/* exactly as many as the command names */
	bool json;
	uint64_t bitrate;	/* 0 if not given */
	uint64_t rate;		/* push: 0 if not given */
	__u32 window_ms;	/* push: 0 if not given */
	bool loop;		/* push */
	bool tai;		/* push */
	__u32 chunk_size;	/* live create: 0 if not given */
	__u32 nr_chunks;	/* live create: 0 if not given */
	bool raw;		/* live create: not MPEG-TS */
	bool rdma;		/* live create: keep a mirror for RDMA */
	bool pin;		/* add: read the file into memory now */
};

/* parse_args() returns this when it printed the help: exit 0. */
#define ARGS_HELP		(-1)

int parse_args(const struct kvodctl_cmd *c, int argc, char **argv,
	       struct kvodctl_args *a);

/* kvodctl-dev.c: the device and its errors */

int kvod_open(int flags);
int get_list(int dev, unsigned long req_nr, size_t esize, void **out,
	     size_t *n, const char *cmd);
/* get_list() into *@out, a pointer to the entry type of list @req_nr. */
#define get_entries(dev, req_nr, out, n, cmd) \
	get_list(dev, req_nr, sizeof(**(out)), (void **)(out), n, cmd)
int kvod_ioctl(int dev, unsigned long req, void *arg, const char *cmd,
	       const char *what);
int kvod_change(unsigned long req, void *arg, const char *cmd,
		const char *what);
int kvod_query(unsigned long req, void *arg, const char *cmd,
	       const char *what);
int kvod_set_name(char name[KVOD_NAME_MAX], const char *cmd,
		  const char *what);

/* kvodctl-json.c: a minimal JSON writer */

struct json {
	FILE *f;
	unsigned int depth;
	unsigned long long later;	/* bit per depth: a comma is due */
};

void json_init(struct json *j, FILE *f);
void json_obj_begin(struct json *j, const char *key);
void json_obj_end(struct json *j);
void json_arr_begin(struct json *j, const char *key);
void json_arr_end(struct json *j);
void json_u64(struct json *j, const char *key, __u64 v);
void json_str(struct json *j, const char *key, const char *s, size_t len);
void json_finish(struct json *j);

/* A printed field: its JSON key (and "key: value" key), table heading. */
struct field {
	const char *key;	/* JSON key, and key of "key: value" lines */
	const char *head;	/* table heading */
};
void show_nums_kv(const struct field *f, const __u64 *v, size_t n);
void show_nums_json(struct json *j, const struct field *f, const __u64 *v,
		    size_t n);

/* kvodctl-movie.c: catalog entries (add, del, info; shown by list) */

int cmd_add(const struct kvodctl_args *a);
int cmd_del(const struct kvodctl_args *a);
int cmd_info(const struct kvodctl_args *a);
void show_movie_kv(const struct kvod_movie_info *m);
void show_movie_json(struct json *j, const char *key,
		     const struct kvod_movie_info *m);
void show_movie_table(const struct kvod_movie_info *v, size_t n);
void show_live_table(const struct kvod_movie_info *v, size_t n);

/* kvodctl-stats.c: the module's statistics (stats; shown by list) */

int cmd_stats(const struct kvodctl_args *a);
int get_stats(int dev, struct kvod_stats *st, const char *cmd);
void show_stats_kv(const struct kvod_stats *st);
void show_stats_json(struct json *j, const char *key,
		     const struct kvod_stats *st);

/* kvodctl-list.c: every object at once (list) */

int cmd_list(const struct kvodctl_args *a);

/* kvodctl-live.c: live channels (live create, live feed) */

#define LIVE_CHUNK_DEFAULT	(348 * 188)	/* 65424 bytes, 16 pages */
#define LIVE_CHUNKS_DEFAULT	64

int cmd_live_create(const struct kvodctl_args *a);
int cmd_live_feed(const struct kvodctl_args *a);

/* kvodctl-listen.c: listeners (listen, unlisten; shown by list) */

int cmd_listen(const struct kvodctl_args *a);
int cmd_unlisten(const struct kvodctl_args *a);
void show_listener_table(const struct kvod_listener_info *v, size_t n);
void show_listeners_json(struct json *j, const char *key,
			 const struct kvod_listener_info *v, size_t n);

/* kvodctl-push.c: pushes (push, stop; shown by list) */

int cmd_push(const struct kvodctl_args *a);
int cmd_stop(const struct kvodctl_args *a);
void show_push_table(const struct kvod_push_info *v, size_t n);
void show_pushes_json(struct json *j, const char *key,
		      const struct kvod_push_info *v, size_t n);

#endif /* KVODCTL_H */
