/* SPDX-License-Identifier: GPL-2.0 */
/* A reader's walk of a movie's bytes, for HTTP and push (cursor.c). */
#ifndef _KVOD_CURSOR_H
#define _KVOD_CURSOR_H

#include <linux/types.h>

struct bio_vec;
struct kvod_image;
struct kvod_movie;

/**
 * struct kvod_cursor - one reader's walk of a movie's bytes
 * @movie: the movie, which the reader holds (kvod_movie_open()); the
 *	cursor takes no reference on it
 * @image: the image it serves from: a reference of the cursor's own, from
 *	kvod_cursor_init() to kvod_cursor_release()
 *
 * See DOC: The cursor. Zeroed, it is a released cursor.
 */
struct kvod_cursor {
	struct kvod_movie *movie;
	struct kvod_image *image;
};

void kvod_cursor_init(struct kvod_cursor *c, struct kvod_movie *movie);
ssize_t kvod_cursor_fill(struct kvod_cursor *c, u64 off, size_t len,
			 struct bio_vec *bv, unsigned int max,
			 unsigned int *nr);
void kvod_cursor_release(struct kvod_cursor *c);

#endif /* _KVOD_CURSOR_H */
