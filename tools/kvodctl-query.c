// SPDX-License-Identifier: GPL-2.0
/*
 * Commands that only read: info, list and stats. They open the device
 * read-only and print either text or, with --json, one JSON object.
 *
 * list gathers everything it shows into a struct snapshot first and then
 * prints it; an object type that list should show too (listeners, pushes)
 * is a field there, a fetch in snapshot_get() and a line in list_json().
 */
#include "kvodctl.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* info NAME [--json] */
int cmd_info(const struct kvodctl_args *a)
{
	const char *name = a->pos[0];
	struct kvod_movie_info m;
	struct json j;
	int dev, ret;

	memset(&m, 0, sizeof(m));
	m.size = sizeof(m);
	ret = kvod_set_name(m.name, a->cmd, name);
	if (ret)
		return ret;

	dev = kvod_open(O_RDONLY);
	if (dev < 0)
		return EXIT_RUNTIME;
	ret = kvod_ioctl(dev, KVOD_IOC_MOVIE_INFO, &m, a->cmd, name);
	close(dev);
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

static int get_stats(int dev, struct kvod_stats *st, const char *cmd)
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

/* The whole catalog into *@out (NULL if empty), *@n entries. */
static int get_movies(int dev, struct kvod_movie_info **out, size_t *n,
		      const char *cmd)
{
	return get_list(dev, KVOD_IOC_MOVIE_LIST, sizeof(**out), (void **)out,
			n, cmd);
}

/* Everything list shows, read before anything is printed. */
struct snapshot {
	struct kvod_movie_info *movies;
	size_t nr_movies;
	struct kvod_stats stats;
	struct kvod_listener_info *listeners;
	size_t nr_listeners;
	struct kvod_push_info *pushes;
	size_t nr_pushes;
};

static int snapshot_get(struct snapshot *s, const char *cmd)
{
	int dev, ret;

	memset(s, 0, sizeof(*s));
	dev = kvod_open(O_RDONLY);
	if (dev < 0)
		return EXIT_RUNTIME;
	ret = get_movies(dev, &s->movies, &s->nr_movies, cmd);
	if (!ret)
		ret = get_stats(dev, &s->stats, cmd);
	if (!ret)
		ret = get_listeners(dev, &s->listeners, &s->nr_listeners, cmd);
	if (!ret)
		ret = get_pushes(dev, &s->pushes, &s->nr_pushes, cmd);
	close(dev);
	return ret;
}

static void snapshot_free(struct snapshot *s)
{
	free(s->movies);
	free(s->listeners);
	free(s->pushes);
}

static void list_json(const struct snapshot *s)
{
	struct json j;
	size_t i;

	json_init(&j, stdout);
	json_obj_begin(&j, NULL);
	json_arr_begin(&j, "movies");
	for (i = 0; i < s->nr_movies; i++) {
		if (s->movies[i].kind != KVOD_KIND_LIVE)
			show_movie_json(&j, NULL, &s->movies[i]);
	}
	json_arr_end(&j);
	json_arr_begin(&j, "live");
	for (i = 0; i < s->nr_movies; i++) {
		if (s->movies[i].kind == KVOD_KIND_LIVE)
			show_movie_json(&j, NULL, &s->movies[i]);
	}
	json_arr_end(&j);
	show_stats_json(&j, "stats", &s->stats);
	show_listeners_json(&j, "listeners", s->listeners, s->nr_listeners);
	show_pushes_json(&j, "pushes", s->pushes, s->nr_pushes);
	json_obj_end(&j);
	json_finish(&j);
}

static void list_text(const struct snapshot *s)
{
	size_t i, live = 0;

	for (i = 0; i < s->nr_movies; i++)
		live += s->movies[i].kind == KVOD_KIND_LIVE;
	show_movie_table(s->movies, s->nr_movies);
	if (live) {
		putchar('\n');
		show_live_table(s->movies, s->nr_movies);
	}
	if (s->nr_listeners) {
		putchar('\n');
		show_listener_table(s->listeners, s->nr_listeners);
	}
	if (s->nr_pushes) {
		putchar('\n');
		show_push_table(s->pushes, s->nr_pushes);
	}
}

/*
 * list [--json]: as text, the movie table, then (only if there are any) an
 * empty line and the live channels, an empty line and the listener table,
 * and an empty line and the pushes.
 */
int cmd_list(const struct kvodctl_args *a)
{
	struct snapshot s;
	int ret;

	ret = snapshot_get(&s, a->cmd);
	if (!ret) {
		if (a->json)
			list_json(&s);
		else
			list_text(&s);
	}
	snapshot_free(&s);
	return ret;
}
