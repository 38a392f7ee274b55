/* SPDX-License-Identifier: GPL-2.0 */
/* A reader's walk of a movie's bytes, for HTTP and push (cursor.c). */
#ifndef _KVOD_CURSOR_H
#define _KVOD_CURSOR_H

#include <linux/fs.h>
#include <linux/pagevec.h>
#include <linux/types.h>
#include <linux/workqueue.h>

struct bio_vec;
struct kvod_image;
struct kvod_io_wait;
struct kvod_movie;

/**
 * struct kvod_cursor - one reader's walk of a movie's bytes
 * @movie: the movie, which the reader holds (kvod_movie_open()); the
 *	cursor takes no reference on it
 * @image: the image it serves from: a reference of the cursor's own, from
 *	kvod_cursor_init() to kvod_cursor_release(); NULL for a movie served
 *	from the page cache
 * @wake: runs the reader again once a fill that returned -EIOCBQUEUED
 *	may succeed (DOC: Cursor waits); called under a spinlock, so it
 *	only queues the reader's work
 * @fb: the page-cache folios the last fill described, a reference each,
 *	until kvod_cursor_sent()
 * @prev_end: the movie offset past the last fill, for folio aging
 * @io_work: reads ahead and arms the wait, on the ``kvod_io`` workqueue
 * @ra: the reader's readahead state; @io_work's only
 * @io_index: the page @io_work is for; set by the fill that queues it
 * @io_ra: likewise, a folio marked for readahead, a reference, or NULL
 * @io_retried: the page @io_work last read with ->read_folio; its own
 * @io_failed: a page that stayed not uptodate after that read
 * @io_flags: CURSOR_IO_BUSY: @io_work is queued or running, or its wait
 *	armed, and wakes the reader when done
 * @wait: the armed wait, or NULL; under ``kvod_io_lock``
 * @stopped: kvod_cursor_stop() ran: nothing wakes the reader any more;
 *	under ``kvod_io_lock``
 *
 * See DOC: The cursor. Zeroed, it is a released cursor.
 */
struct kvod_cursor {
	struct kvod_movie *movie;
	struct kvod_image *image;
	void (*wake)(struct kvod_cursor *c);
	struct folio_batch fb;
	u64 prev_end;
	struct work_struct io_work;
	struct file_ra_state ra;
	pgoff_t io_index;
	struct folio *io_ra;
	pgoff_t io_retried;
	pgoff_t io_failed;
	unsigned long io_flags;
	struct kvod_io_wait *wait;
	bool stopped;
};

void kvod_cursor_init(struct kvod_cursor *c, struct kvod_movie *movie,
		      void (*wake)(struct kvod_cursor *c));
ssize_t kvod_cursor_fill(struct kvod_cursor *c, u64 off, size_t len,
			 struct bio_vec *bv, unsigned int max,
			 unsigned int *nr, bool whole);
void kvod_cursor_sent(struct kvod_cursor *c);
void kvod_cursor_stop(struct kvod_cursor *c);
void kvod_cursor_release(struct kvod_cursor *c);
int kvod_cursors_init(void);
void kvod_cursors_exit(void);

#endif /* _KVOD_CURSOR_H */
