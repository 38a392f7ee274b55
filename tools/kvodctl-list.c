// SPDX-License-Identifier: GPL-2.0
/*
 * The list command: every object at once, as text or, with --json, one
 * JSON object. It opens the device read-only and gathers everything it
 * shows into a struct snapshot first and then prints it; an object type
 * that list should show too (listeners, pushes) is a field there, a fetch
 * in snapshot_get() and a line in list_json() and list_text(), while the
 * object's own file says how it prints.
 */
#include "kvodctl.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
	ret = get_entries(dev, KVOD_IOC_MOVIE_LIST, &s->movies, &s->nr_movies,
			  cmd);
	if (!ret)
		ret = get_stats(dev, &s->stats, cmd);
	if (!ret)
		ret = get_entries(dev, KVOD_IOC_LISTENER_LIST, &s->listeners,
				  &s->nr_listeners, cmd);
	if (!ret)
		ret = get_entries(dev, KVOD_IOC_PUSH_LIST, &s->pushes,
				  &s->nr_pushes, cmd);
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
