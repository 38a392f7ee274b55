/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kvod-fetch: what its two transports share. kvod-fetch.c holds the
 * options, the player model (play position, seeks, when to wake) and the
 * RDMA transport; fetch-http.c the HTTP transport. Both count chunks and
 * late chunks the same way, so a player's figures over RDMA and over
 * HTTP compare.
 */
#ifndef KVOD_FETCH_H
#define KVOD_FETCH_H

#include "lib/rdma.h"

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#define EXIT_FAIL	1
#define EXIT_USAGE	2

#define CHUNK_DEFAULT	(256 * 1024)
#define CHUNK_MAX	(1U << 30)
#define DEPTH_DEFAULT	16
#define DEPTH_MAX	4096
/*
 * The most --duration and --seek-every take, in seconds (11.6 days): as
 * milliseconds well within the int of a poll().
 */
#define SECONDS_MAX	1000000

struct fetch_opts {
	const char *url;
	const char *out;
	uint64_t offset;
	uint64_t length;		/* UINT64_MAX: to the end */
	uint32_t chunk;
	unsigned int depth;
	uint64_t rate;			/* bits/s, 0: plain mode */
	uint64_t cache_ms;
	double seek_every;		/* seconds, 0: never */
	double duration;		/* seconds, 0: until the end */
	unsigned int seed;
	int timeout_ms;
	int poll_ms;			/* live: poll the head this often (ms);
					 * 0: ask for notes
					 */
	int note_wait_ms;		/* live, notes: READ the head after
					 * this long without one (ms)
					 */
	int fence;			/* live: post a slot entry's second
					 * READ with the bytes', fenced
					 */
	int quiet;
};

/* One READ in flight; slot i of the ring buffer. */
struct slot {
	uint64_t off;
	uint32_t len;
};

/* What fetch-http.c keeps per connection. */
struct fetch_http {
	int sock;			/* -1: none open */
	uint64_t size;			/* the movie's, from Content-Range */
	uint64_t chunk_off;		/* start of the chunk being received */
	char host_hdr[272];		/* the Host header's value */
	char *pend;			/* body bytes read with the header */
	size_t pend_len;
	char head[8192];
};

struct fetch {
	struct fetch_opts *o;
	char host[256], port[8], name[KVOD_NAME_MAX + 1];	/* the URL's */
	int fd;
	char *buf;
	uint64_t next_off;		/* next byte to READ or receive */
	uint64_t end;			/* end of the range */

	/* RDMA */
	struct kvod_conn c;
	struct ibv_mr *mr;
	struct slot *slots;
	uint64_t posted, done;		/* READs, as sequence numbers */
	double t_wait;			/* since when the oldest READ in
					 * flight is waited for: its post, or
					 * the end of the batch of completions
					 * before it, if that is later
					 */

	/* HTTP */
	struct fetch_http h;

	/* player mode */
	double rate_Bps;
	uint64_t cache_bytes;
	uint64_t play_start;		/* offset playback (re)starts at */
	double t_play;			/* when it starts */
	double t_seek;			/* next seek */
	int flushing;			/* a seek waits for the READs in flight */

	/* summary */
	uint64_t bytes, chunks, late, seeks;
	int pipe_closed;

	/* a live channel (fetch-live.c) */
	int live;
	uint64_t live_skipped;		/* chunks the ring overwrote first */
	uint64_t live_torn;		/* chunks overwritten while READ */
	uint64_t live_notes;		/* notes received */
};

/* The signal (SIGINT, SIGTERM) that asked kvod-fetch to stop, or 0. */
extern volatile sig_atomic_t fetch_stop;

/* kvod-fetch.c */
double fetch_now(void);
int fetch_write(struct fetch *f, const char *p, size_t len);
uint64_t fetch_play_pos(const struct fetch *f, double t);
void fetch_start_play(struct fetch *f, uint64_t off, double t);
void fetch_seek(struct fetch *f, double t);
int fetch_idle_ms(const struct fetch *f, double t);
int fetch_is_late(const struct fetch *f, uint64_t off, double t);

/* fetch-live.c */
int fetch_live_run(struct fetch *f, double t_end);

/* fetch-http.c */
int fetch_http_url(struct fetch *f);
int fetch_http_setup(struct fetch *f);
int fetch_http_run(struct fetch *f, double t_end);
void fetch_http_close(struct fetch *f);

#endif /* KVOD_FETCH_H */
