// SPDX-License-Identifier: GPL-2.0
/* The cursor: the one walk of a movie's bytes that HTTP and push share. */

/**
 * DOC: The cursor
 *
 * HTTP and push hand a movie's pages to TCP and UDP by reference
 * (``MSG_SPLICE_PAGES``, DOC: Movie memory), and find them with a struct
 * kvod_cursor: one per HTTP response with a body from a movie, one per
 * push of a movie. Readers of a live channel take its chunks instead
 * (``live.rst``). Each send is a kvod_cursor_fill(), which points socket
 * vectors at up to the bytes asked for, then the sendmsg(), after which
 * the socket holds what it took by page references of its own. A fill
 * that fails describes nothing (there is nothing at that offset): HTTP
 * then resets the connection, and a push ends.
 *
 * The reader holds the movie (kvod_movie_open()) for the cursor's whole
 * life. The cursor holds the image it serves from, by a reference of its
 * own from kvod_cursor_init() to kvod_cursor_release(), so the chunks it
 * reads stay whole whoever else lets go of the image. A reader releases
 * its cursor right before it closes the movie; while a movie holds its
 * image, the image is then still freed by the movie's last put.
 *
 * A cursor is its reader's alone: an HTTP response's is touched by the
 * connection's work only (DOC: HTTP connection work); a push's by
 * PUSH_START, then the push's work and, once that cannot run, the push's
 * teardown (DOC: Push lifetimes and locking). So it takes no lock. Init
 * and fill do not sleep; release may, as the image's last put does
 * (kvod_image_put()), so readers release their cursor where they close
 * the movie, which may sleep for the same reason: in process context, never
 * from a socket callback, a timer or a connection's last kref_put().
 */
#include <linux/bug.h>
#include <linux/errno.h>
#include <linux/limits.h>
#include <linux/minmax.h>

#include "cursor.h"
#include "kvod.h"

/**
 * kvod_cursor_init() - start a reader's walk of a movie
 * @c: the cursor
 * @movie: a movie (not a live channel) that the caller holds until it
 *	released @c
 *
 * Takes the cursor's reference on the movie's image.
 *
 * Context: any; does not sleep.
 */
void kvod_cursor_init(struct kvod_cursor *c, struct kvod_movie *movie)
{
	c->movie = movie;
	c->image = kvod_image_get(kvod_movie_image(movie));
}

/**
 * kvod_cursor_fill() - describe a movie's bytes for a send
 * @c: the cursor
 * @off: the first byte, a movie offset
 * @len: bytes wanted, at least 1
 * @bv: filled with one vector per chunk touched, pointing into the
 *	movie's pages (nothing is copied)
 * @max: room in @bv, at least 1
 * @nr: set to the vectors used
 *
 * Context: any; does not sleep.
 *
 * Return: the bytes described, from 1 up to @len (less where @bv or the
 * movie ran out); -ENODATA if @off is at or past the movie's end; -EINVAL
 * if nothing was asked for. On error @bv and @nr are untouched and there
 * is nothing to send.
 */
ssize_t kvod_cursor_fill(struct kvod_cursor *c, u64 off, size_t len,
			 struct bio_vec *bv, unsigned int max,
			 unsigned int *nr)
{
	if (off >= c->movie->length)
		return -ENODATA;
	if (WARN_ON_ONCE(!len || !max))
		return -EINVAL;
	len = min_t(size_t, len, SSIZE_MAX);	/* fits the return value */
	return kvod_image_bvecs(c->image, off, len, bv, max, nr);
}

/**
 * kvod_cursor_release() - end a reader's walk
 * @c: the cursor: initialised, or zeroed, or released already (then
 *	this does nothing)
 *
 * Puts the cursor's image reference. The caller closes the movie only
 * afterwards.
 *
 * Context: process context, no spinlock or RCU read lock held, as the put
 * may be the image's last (kvod_image_put()).
 */
void kvod_cursor_release(struct kvod_cursor *c)
{
	kvod_image_put(c->image);
	c->image = NULL;
	c->movie = NULL;
}
