// SPDX-License-Identifier: GPL-2.0
/*
 * kvod-fetch: read a movie from a kvod server with RDMA READs (or over
 * HTTP, fetch-http.c, with the same player model).
 *
 *   kvod-fetch {rdma|http}://HOST[:PORT]/NAME [-o FILE] [--offset N] [--length N]
 *	[--chunk SIZE] [--depth N] [--rate RATE --cache MS]
 *	[--seek-every SEC] [--duration SEC] [--seed N] [--timeout MS] [-q]
 *
 * Plain mode pulls [offset, offset + length) as fast as the link allows:
 * --depth READs of --chunk bytes are kept outstanding, none crossing a
 * segment of the server's table, and each is written out as it completes
 * (an RC send queue completes in order, so the output is in order).
 *
 * Player mode (--rate) models the thesis's VLC module (Block/Seek): a
 * consumer plays the bytes at RATE bits/s, starting --cache MS after the
 * start or a seek (VLC's caching delay), and READs are posted only up to
 * MS worth of bytes ahead of the play position. A chunk is late if it
 * completes after the consumer needed its first byte. Every --seek-every
 * SEC a seek to a random offset waits for the READs in flight, throws
 * their data away and refills the cache from the new offset. A seeking
 * player given --duration plays on until then: at the end of the range it
 * waits for its next seek.
 *
 * Exit status: 0 done; 1 refused, rejected, unreachable or failed
 * transfer; 2 bad usage; 128 + the signal's number when SIGINT or SIGTERM
 * stops a movie before its end (a live channel ends with 0 there). See
 * Documentation/kvod-fetch.1.
 */
#define _GNU_SOURCE
#include "kvod-fetch.h"
#include "lib/options.h"
#include "lib/rate.h"
#include "lib/seconds.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

volatile sig_atomic_t fetch_stop;

/*
 * No SA_RESTART: the signal ends the poll() kvod-fetch sleeps in, and the
 * loops around every poll() look at fetch_stop (the RDMA library's
 * through kvod_conn_opts.stop).
 */
static void on_signal(int sig)
{
	fetch_stop = sig;
}

double fetch_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: kvod-fetch {rdma|http}://HOST[:PORT]/NAME [-o FILE] [--offset N] [--length N]\n"
		"                  [--chunk SIZE] [--depth N] [--rate RATE --cache MS]\n"
		"                  [--seek-every SEC] [--duration SEC] [--seed N]\n"
		"                  [--timeout MS] [--poll MS] [--note-wait MS] [--fence] [-q]\n"
		"  HOST is a name, an IPv4 address or [IPv6]; PORT defaults to %d\n"
		"  for rdma://, 80 for http://.\n"
		"  SIZE and N take k/K, M, G suffixes (powers of 1024); RATE is in bits/s\n"
		"  with k/M/G suffixes (powers of 1000): 8.7M is 8700000. SEC is seconds,\n"
		"  digits with an optional fraction (2.5), at most %d.\n",
		KVOD_RDMA_PORT, SECONDS_MAX);
}

static int parse_args(int argc, char **argv, struct fetch_opts *o)
{
	const struct kvod_opt opts[] = {
		KVOD_OPT("output", required_argument, 'o'),
		KVOD_NUM("offset", 'O', 0, UINT64_MAX, o->offset),
		KVOD_NUM("length", 'l', 1, UINT64_MAX, o->length),
		KVOD_NUM("chunk", 'c', 1, CHUNK_MAX, o->chunk),
		KVOD_NUM("depth", 'd', 1, DEPTH_MAX, o->depth),
		KVOD_OPT("rate", required_argument, 'r'),
		KVOD_OPT("cache", required_argument, 'C'),
		KVOD_OPT("seek-every", required_argument, 's'),
		KVOD_OPT("duration", required_argument, 'D'),
		KVOD_NUM("seed", 'S', 0, UINT32_MAX, o->seed),
		KVOD_NUM("timeout", 't', 1, 600000, o->timeout_ms),
		KVOD_NUM("poll", 'P', 1, 60000, o->poll_ms),
		KVOD_NUM("note-wait", 'N', 1, 3600 * 1000, o->note_wait_ms),
		KVOD_OPT("fence", no_argument, 'F'),
		KVOD_OPT("quiet", no_argument, 'q'),
		KVOD_OPT("help", no_argument, 'h'),
		{ }
	};
	struct kvod_cmdline cl = {
		.shortopts = "o:qh",
		.opts = opts,
		.usage = usage,
	};
	int opt, cache_set = 0;

	while ((opt = kvod_getopt(&cl, argc, argv)) != -1) {
		switch (opt) {
		case 'o':
			o->out = optarg;
			break;
		case 'r':
			if (kvod_parse_rate(optarg, &o->rate))
				goto bad;
			break;
		case 'C':
			if (kvod_parse_range(optarg, 1, 3600 * 1000, &o->cache_ms))
				goto bad;
			cache_set = 1;
			break;
		case 's':
			if (kvod_parse_seconds(optarg, SECONDS_MAX,
					       &o->seek_every))
				goto bad_seconds;
			break;
		case 'D':
			if (kvod_parse_seconds(optarg, SECONDS_MAX,
					       &o->duration))
				goto bad_seconds;
			break;
		case 'F':
			o->fence = 1;
			break;
		case 'q':
			o->quiet = 1;
			break;
		case KVOD_OPT_BAD:
			goto bad;
		default:
			return -1;	/* kvod_getopt() printed the usage */
		}
	}
	o->url = argv[optind];
	if (cache_set && !o->rate) {
		fprintf(stderr, "kvod-fetch: --cache needs --rate\n");
		return -1;
	}
	if (o->seek_every && !o->rate) {
		fprintf(stderr, "kvod-fetch: --seek-every needs --rate\n");
		return -1;
	}
	return 0;
bad:
	fprintf(stderr, "kvod-fetch: invalid argument to --%s: '%s'\n",
		kvod_opt_name(&cl), optarg);
	return -1;
bad_seconds:
	fprintf(stderr, "kvod-fetch: invalid argument to --%s: '%s' (seconds: digits with an optional fraction, more than 0 and at most %d)\n",
		kvod_opt_name(&cl), optarg, SECONDS_MAX);
	return -1;
}

int fetch_write(struct fetch *f, const char *p, size_t len)
{
	while (len) {
		ssize_t n;

		/*
		 * A signal ends a movie here too, where a stalled reader of
		 * the output would block it; a live channel's chunk is
		 * written whole, and its loop stops after it.
		 */
		if (fetch_stop && !f->live)
			return -1;
		n = write(f->fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EPIPE) {
			f->pipe_closed = 1;
			return -1;
		}
		if (n < 0) {
			fprintf(stderr, "kvod-fetch: write %s: %s\n",
				f->o->out ? f->o->out : "stdout", strerror(errno));
			return -1;
		}
		p += n;
		len -= n;
	}
	return 0;
}

/* Where the consumer is at time @t (player mode). */
uint64_t fetch_play_pos(const struct fetch *f, double t)
{
	double ahead = t > f->t_play ? (t - f->t_play) * f->rate_Bps : 0;

	return f->play_start + (uint64_t)ahead;
}

/* Whether the next READ may go out now (depth, range, read-ahead). */
static int may_post(const struct fetch *f, double t)
{
	if (f->flushing || f->next_off >= f->end ||
	    f->posted - f->done >= f->o->depth)
		return 0;
	if (!f->o->rate)
		return 1;
	return f->next_off < fetch_play_pos(f, t) + f->cache_bytes;
}

static int post_next(struct fetch *f, double t)
{
	struct kvod_conn *c = &f->c;
	long i = kvod_seg_find(c, f->next_off);
	const struct kvod_seg *s = &c->segs[i];
	struct slot *sl = &f->slots[f->posted % f->o->depth];
	uint64_t len = f->o->chunk;
	char *buf = f->buf + (f->posted % f->o->depth) * (size_t)f->o->chunk;

	if (len > f->end - f->next_off)
		len = f->end - f->next_off;
	if (len > s->offset + s->length - f->next_off)
		len = s->offset + s->length - f->next_off;
	sl->off = f->next_off;
	sl->len = len;
	if (kvod_post_read(c, buf, f->mr->lkey,
			   s->addr + (f->next_off - s->offset), s->rkey, len,
			   f->posted)) {
		fprintf(stderr, "kvod-fetch: %s\n", c->err);
		return -1;
	}
	/* The first READ in flight: its wait starts now. */
	if (f->posted == f->done)
		f->t_wait = t;
	f->posted++;
	f->next_off += len;
	return 0;
}

void fetch_start_play(struct fetch *f, uint64_t off, double t)
{
	f->play_start = off;
	f->next_off = off;
	f->t_play = t + f->o->cache_ms / 1000.0;
}

void fetch_seek(struct fetch *f, double t)
{
	uint64_t span = f->end - f->o->offset;
	uint64_t r = ((uint64_t)random() << 31) ^ (uint64_t)random();

	fetch_start_play(f, f->o->offset + r % span, t);
	f->flushing = 0;
	f->seeks++;
	f->t_seek = t + f->o->seek_every;
}

/*
 * Take the completion of the oldest outstanding READ, counted in f->done
 * whatever it brings (drain() waits for the rest): 0, or -1 after saying
 * what went wrong.
 */
static int complete(struct fetch *f, const struct ibv_wc *wc, double t)
{
	const struct slot *sl = &f->slots[f->done % f->o->depth];
	const char *buf = f->buf + (f->done % f->o->depth) * (size_t)f->o->chunk;
	uint64_t expect = f->done++;

	if (wc->status != IBV_WC_SUCCESS) {
		fprintf(stderr, "kvod-fetch: READ of %u bytes at offset %" PRIu64 ": %s%s\n",
			sl->len, sl->off, ibv_wc_status_str(wc->status),
			f->c.disconnected ? " (the server disconnected)" : "");
		return -1;
	}
	if (wc->wr_id != expect) {
		fprintf(stderr, "kvod-fetch: completion %" PRIu64 " out of order (expected %" PRIu64 ")\n",
			(uint64_t)wc->wr_id, expect);
		return -1;
	}
	if (f->flushing)
		return 0;	/* a seek throws it away */
	if (fetch_is_late(f, sl->off, t))
		f->late++;
	f->chunks++;
	f->bytes += sl->len;
	return fetch_write(f, buf, sl->len);
}

/*
 * Whether the chunk that starts at @off and completed at @t came after the
 * consumer needed its first byte (player mode).
 */
int fetch_is_late(const struct fetch *f, uint64_t off, double t)
{
	return f->o->rate &&
	       t > f->t_play + (off - f->play_start) / f->rate_Bps;
}

/* Milliseconds to sleep for when nothing can be posted (player mode). */
int fetch_idle_ms(const struct fetch *f, double t)
{
	double wake = 1e18;

	if (f->o->rate && f->next_off < f->end && !f->flushing) {
		uint64_t need = f->next_off - f->play_start;

		need = need > f->cache_bytes ? need - f->cache_bytes : 0;
		wake = f->t_play + need / f->rate_Bps;
	}
	/* While flushing, the seek is under way: only completions matter. */
	if (f->o->seek_every && !f->flushing && f->t_seek < wake)
		wake = f->t_seek;
	if (wake > 1e17)
		return -1;
	return kvod_ms_until(wake, t);
}

/*
 * Whether the oldest READ in flight has waited longer than --timeout.
 * Checked whenever a sleep ends with no completion, whatever ended it: a
 * player wakes to post more, and must not put the check off until all
 * its slots are in flight (minutes, with a big --depth and a stalled
 * server).
 */
static int overdue(const struct fetch *f, double t)
{
	return f->posted != f->done &&
	       t >= f->t_wait + f->o->timeout_ms / 1000.0;
}

/*
 * How long run() may sleep in kvod_poll(): until the oldest READ in
 * flight is overdue, a player's next post or seek, or --duration's end;
 * -1, forever, if none of them is due.
 */
static int plan_wait(const struct fetch *f, double t, double t_end)
{
	int wait = -1;

	if (f->posted != f->done)
		wait = kvod_ms_until(f->t_wait + f->o->timeout_ms / 1000.0, t);
	/*
	 * A player may wake early to post more, unless all its slots are
	 * in flight: then only a completion lets it post, and waking for
	 * the clock would spin (a player that fell behind has its next post
	 * due at once).
	 */
	if (f->o->rate && f->posted - f->done < f->o->depth)
		wait = kvod_ms_min(wait, fetch_idle_ms(f, t));
	if (t_end)
		wait = kvod_ms_min(wait, kvod_ms_until(t_end, t));
	return wait;
}

/* Returns 0 done (range or --duration), -1 failed or stopped by a signal. */
static int run(struct fetch *f, double t_end)
{
	struct ibv_wc wc[32];

	for (;;) {
		double t = fetch_now();
		int n, i;

		if (fetch_stop)
			return -1;	/* main() says so */
		if (t_end && t >= t_end)
			break;
		if (f->c.disconnected && f->posted == f->done) {
			fprintf(stderr, "kvod-fetch: the server disconnected\n");
			return -1;
		}
		if (f->o->seek_every && t >= f->t_seek && !f->flushing)
			f->flushing = 1;
		if (f->flushing && f->posted == f->done)
			fetch_seek(f, t);
		while (may_post(f, t))
			if (post_next(f, t))
				return -1;
		/* All of it; a seeking player plays on until --duration. */
		if (f->posted == f->done && f->next_off >= f->end &&
		    !(f->o->seek_every && t_end))
			break;

		n = kvod_poll(&f->c, wc, 32, plan_wait(f, t, t_end));
		if (n < 0) {
			if (f->c.fail != KVOD_FAIL_STOPPED)
				fprintf(stderr, "kvod-fetch: %s\n", f->c.err);
			return -1;
		}
		t = fetch_now();
		/* None, not even the oldest's, which would come first. */
		if (!n && overdue(f, t)) {
			fprintf(stderr, "kvod-fetch: no completion within %d ms\n",
				f->o->timeout_ms);
			return -1;
		}
		for (i = 0; i < n; i++) {
			if (complete(f, &wc[i], t)) {
				/* Account for this batch, or drain() waits. */
				f->done += n - i - 1;
				return -1;
			}
		}
		/*
		 * The next READ's wait starts now that this batch is written
		 * out: a slow reader of the output is no stalled server.
		 */
		if (n)
			f->t_wait = fetch_now();
	}
	return 0;
}

/* Drain what is in flight so the QP can be torn down quietly. */
static void drain(struct fetch *f)
{
	struct ibv_wc wc[32];

	while (f->posted != f->done) {
		int n = kvod_poll(&f->c, wc, 32, f->o->timeout_ms);

		if (n <= 0)
			break;
		f->done += n;
	}
}

static int setup(struct fetch *f)
{
	const char *name = f->name;
	struct fetch_opts *o = f->o;
	char pdata[KVOD_REQ_PDATA_MAX];
	struct kvod_conn_opts co = {
		.host = f->host,
		.port = f->port,
		.pdata = pdata,
		.depth = o->depth,
		.timeout_ms = o->timeout_ms,
		.live_ok = 1,
		/* a live channel's notes, unless --poll; a movie ignores them */
		.notes = o->poll_ms ? 0 : KVOD_NOTES_AUTO,
		/* a signal ends the connect at once */
		.stop = &fetch_stop,
	};
	size_t bytes;

	co.pdata_len = kvod_build_req(pdata, sizeof(pdata), name);
	if (kvod_connect(&f->c, &co) && f->c.fail == KVOD_FAIL_TOOLONG) {
		fprintf(stderr,
			"kvod-fetch: movie name '%s' is %zu bytes; over IB and RoCE (connect requests of %d bytes) names are at most %d\n",
			name, strlen(name), KVOD_REQ_PDATA_IB,
			KVOD_REQ_NAME_MAX_IB);
		return -1;
	}
	if (f->c.fail || kvod_read_table(&f->c, o->timeout_ms)) {
		if (f->c.fail != KVOD_FAIL_STOPPED)
			fprintf(stderr, "kvod-fetch: %s: %s\n", name, f->c.err);
		return -1;
	}
	if (f->c.reply_flags & KVOD_RDMA_LIVE) {
		/*
		 * fetch-live.c sets up the rest. A signal is how a live
		 * channel's play ends: its loop looks at fetch_stop after
		 * each chunk, and the READ or note it waits for meanwhile
		 * comes within --timeout, or a second.
		 */
		f->live = 1;
		f->c.stop = NULL;
		return 0;
	}

	if (o->offset >= f->c.movie_size ||
	    (o->length != UINT64_MAX &&
	     o->length > f->c.movie_size - o->offset)) {
		fprintf(stderr, "kvod-fetch: %s: range beyond the movie's %" PRIu64 " bytes\n",
			name, f->c.movie_size);
		return -1;
	}
	f->end = o->length == UINT64_MAX ? f->c.movie_size : o->offset + o->length;

	bytes = (size_t)o->depth * o->chunk;
	if (posix_memalign((void **)&f->buf, 4096, bytes)) {
		fprintf(stderr, "kvod-fetch: out of memory for %zu bytes of buffers\n",
			bytes);
		return -1;
	}
	f->slots = calloc(o->depth, sizeof(*f->slots));
	f->mr = f->slots ? kvod_reg(&f->c, f->buf, bytes) : NULL;
	if (!f->mr) {
		fprintf(stderr, "kvod-fetch: %s\n",
			f->slots ? f->c.err : "out of memory");
		return -1;
	}
	return 0;
}

static void summary(const struct fetch *f, double secs)
{
	if (f->o->quiet)
		return;
	if (f->live) {
		fprintf(stderr,
			"kvod-fetch: live: %" PRIu64 " bytes in %.3f s, %" PRIu64 " chunks, %" PRIu64 " skipped, %" PRIu64 " torn, %" PRIu64 " notes%s\n",
			f->bytes, secs, f->chunks, f->live_skipped,
			f->live_torn, f->live_notes,
			f->pipe_closed ? " (output closed early)" : "");
		return;
	}
	fprintf(stderr,
		"kvod-fetch: %" PRIu64 " bytes in %.3f s, %.2f MB/s, %" PRIu64 " chunks, %" PRIu64 " late, %" PRIu64 " seeks%s\n",
		f->bytes, secs, secs > 0 ? f->bytes / secs / 1e6 : 0.0,
		f->chunks, f->late, f->seeks,
		f->pipe_closed ? " (output closed early)" : "");
}

/* Split the URL into f->host, f->port and f->name; which transport. */
static int parse_url(struct fetch *f, int *http)
{
	const char *url = f->o->url;

	*http = !strncmp(url, "http://", 7);
	if (*http ? fetch_http_url(f) :
		    kvod_parse_url(url, f->host, sizeof(f->host), f->port,
				   sizeof(f->port), f->name, sizeof(f->name))) {
		fprintf(stderr, "kvod-fetch: bad URL '%s' (rdma://HOST[:PORT]/NAME or http://HOST[:PORT]/NAME)\n",
			url);
		return -1;
	}
	if (strlen(f->name) >= KVOD_NAME_MAX) {
		fprintf(stderr, "kvod-fetch: movie name too long\n");
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct fetch_opts o = {
		.length = UINT64_MAX,
		.chunk = CHUNK_DEFAULT,
		.depth = DEPTH_DEFAULT,
		.cache_ms = 400,
		.timeout_ms = 5000,
		.note_wait_ms = 1000,
		.seed = (unsigned int)time(NULL) ^ (unsigned int)getpid(),
	};
	struct fetch f = { .o = &o, .fd = STDOUT_FILENO, .h.sock = -1 };
	struct sigaction sa = { .sa_handler = on_signal };
	double t0, t_end = 0;
	int ret = EXIT_FAIL, http, r = -1;

	if (parse_args(argc, argv, &o) ||
	    parse_url(&f, &http))
		return EXIT_USAGE;
	srandom(o.seed);
	signal(SIGPIPE, SIG_IGN);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (o.out) {
		f.fd = open(o.out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (f.fd < 0) {
			fprintf(stderr, "kvod-fetch: %s: %s\n", o.out, strerror(errno));
			return EXIT_FAIL;
		}
	}

	if (http ? fetch_http_setup(&f) : setup(&f))
		goto out;
	if (o.rate) {
		f.rate_Bps = o.rate / 8.0;
		f.cache_bytes = (uint64_t)(f.rate_Bps * o.cache_ms / 1000);
		if (f.cache_bytes < o.chunk)
			f.cache_bytes = o.chunk;
	}
	t0 = fetch_now();
	if (o.duration)
		t_end = t0 + o.duration;
	fetch_start_play(&f, o.offset, t0);
	f.t_seek = t0 + o.seek_every;
	r = http ? fetch_http_run(&f, t_end) :
	    f.live ? fetch_live_run(&f, t_end) : run(&f, t_end);
	if (!r || f.pipe_closed)
		ret = 0;
	summary(&f, fetch_now() - t0);
	if (!http)
		drain(&f);
out:
	/*
	 * A movie that a signal cut short, in the connect or the transfer,
	 * is not done: the output holds only part of it. A live channel
	 * has no end of its own, and a signal is one way to end it.
	 */
	if (r && fetch_stop && !f.live) {
		fprintf(stderr, "kvod-fetch: interrupted by SIG%s\n",
			sigabbrev_np(fetch_stop));
		ret = 128 + fetch_stop;
	}
	if (f.mr)
		ibv_dereg_mr(f.mr);
	if (http)
		fetch_http_close(&f);
	else
		kvod_close(&f.c);
	free(f.buf);
	free(f.slots);
	if (o.out && close(f.fd) && !ret) {
		fprintf(stderr, "kvod-fetch: %s: %s\n", o.out, strerror(errno));
		ret = EXIT_FAIL;
	}
	return ret;
}
