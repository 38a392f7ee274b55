// SPDX-License-Identifier: GPL-2.0
/*
 * note_sink: many RDMA connections to one live channel that ask for notes
 * (KVOD_RDMA_REQ_NOTIFY) and do nothing but take them: the fan-out the
 * thesis measured ("under 5% CPU for sending notifications to 1000
 * clients"), for live_rdma.sh and bench/pair-live.sh.
 *
 *   note_sink [-p PORT] [--vanish | --stall] HOST NAME N SECONDS
 *
 * Opens N connections, up to WINDOW of them at a time (their setup is
 * the slow part), prints "connected: N", then
 * takes notes on all of them (each receive posted again at once, and
 * sleeping on their completion channels between notes) until every
 * connection got the channel's end or SECONDS passed, and prints
 *
 *   notes: TOTAL min=MIN max=MAX ended=E early=X
 *
 * with MIN and MAX the fewest and most notes one connection got (its end
 * included; "early" ones, during the connect, are not counted) and E the
 * connections that got the end. Exit 0 if all N connected, 1 if not.
 *
 * --vanish: once connected, move every QP to the error state, print
 * "vanished: N" and do nothing more for SECONDS: a client host that went
 * away, as far as the server can tell. Its QPs answer nothing, and as
 * the connections stay open here no disconnect reaches the server until
 * the process exits.
 *
 * --stall: once connected, print "stalled: N" and take no note for
 * SECONDS, posting no receive again: a client that asked for 7 RNR
 * retries (as every kvod client does) and stopped taking notes. Its QPs
 * answer, so the server's notes wait in receiver-not-ready retries.
 */
#define _GNU_SOURCE
#include "lib/rdma.h"

#include <endian.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define TIMEOUT_MS	20000
#define WINDOW		16	/* connects in progress at once */

struct sink {
	struct kvod_conn c;
	int up;			/* connected, with notes granted */
	unsigned long notes;
	int ended;
	int lost;
	int armed;		/* its CQ will signal its completion channel */
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int sink_start(struct sink *s, const char *host, const char *port,
		      const char *name)
{
	char pd[KVOD_REQ_PDATA_MAX];
	struct kvod_conn_opts o = {
		.host = host,
		.port = port,
		.pdata = pd,
		.pdata_len = kvod_build_req(pd, sizeof(pd), name),
		.depth = 1,
		.timeout_ms = TIMEOUT_MS,
		.live_ok = 1,
		.notes = 1,
	};

	return kvod_connect_start(&s->c, &o);
}

/* Drive a connect on: 1 while in progress, 0 once up, -1 if it failed. */
static int sink_step(struct sink *s)
{
	int r = kvod_connect_step(&s->c);

	if (r)
		return r;
	if (!(s->c.reply_flags & KVOD_RDMA_NOTIFY)) {
		snprintf(s->c.err, sizeof(s->c.err), "no notes granted");
		return -1;
	}
	s->up = 1;
	return 0;
}

/*
 * Open @n sinks, WINDOW connects at a time; stop at the first failure
 * (said on stderr) once those in progress are done. Returns how many are
 * up (->up). A sink stays where it is: its receives point into it.
 */
static int sinks_open(struct sink *s, int n, const char *host,
		      const char *port, const char *name)
{
	int started = 0, busy = 0, up = 0, failed = 0, i, r, moved;

	while (busy || (!failed && started < n)) {
		while (!failed && started < n && busy < WINDOW) {
			if (sink_start(&s[started], host, port, name)) {
				fprintf(stderr, "note_sink: connection %d: %s\n",
					started + 1, s[started].c.err);
				kvod_close(&s[started].c);
				failed = 1;
				break;
			}
			started++;
			busy++;
		}
		moved = 0;
		for (i = 0; i < started; i++) {
			if (s[i].up || s[i].lost)
				continue;
			r = sink_step(&s[i]);
			if (r == 1)
				continue;
			moved = 1;
			busy--;
			if (!r)
				continue;
			fprintf(stderr, "note_sink: connection %d: %s\n", i + 1,
				s[i].c.err);
			kvod_close(&s[i].c);
			s[i].lost = 1;	/* not up: closed, left out */
			failed = 1;
		}
		if (!moved)
			usleep(1000);
	}
	for (i = 0; i < started; i++)
		up += s[i].up;
	return up;
}

/* Take what @s has; 1 if it got anything, -1 on error. */
static int sink_poll(struct sink *s)
{
	struct ibv_wc wc[16];
	int n, i;

	if (s->ended || s->lost)
		return 0;
	n = kvod_poll_cq(&s->c, wc, 16);
	if (n < 0)
		return -1;
	for (i = 0; i < n; i++) {
		int k = kvod_note_slot(wc[i].wr_id);

		if (k < 0 || wc[i].status != IBV_WC_SUCCESS) {
			s->lost = 1;	/* flushed: the connection is gone */
			return 0;
		}
		s->notes++;
		if (be32toh(s->c.notes[k].flags) & KVOD_RDMA_LIVE_ENDED)
			s->ended = 1;
		if (kvod_note_repost(&s->c, k))
			return -1;
	}
	return n > 0;
}

/*
 * Sleep until a sink may have a note, as a client does: arm the CQ of
 * every sink still taking notes (taking what came before it was armed),
 * then wait on their completion channels, at most 100 ms so the caller
 * sees its deadline. Polling every CQ every millisecond instead kept
 * note_sink busy 35 to 40% of a vCPU in a debug kernel's guest (ps),
 * which the notes' own work on the server needs. 1 if a sink got
 * something, 0 if not, -1 on an error (said on stderr).
 */
static int sinks_wait(struct sink *s, int n, struct pollfd *pfd)
{
	int i, k;

	for (i = 0; i < n; i++) {
		pfd[i].fd = -1;		/* poll() skips it */
		pfd[i].events = POLLIN;
		if (!s[i].up || s[i].ended || s[i].lost)
			continue;
		if (!s[i].armed) {
			if (ibv_req_notify_cq(s[i].c.cq, 0)) {
				fprintf(stderr,
					"note_sink: connection %d: ibv_req_notify_cq failed\n",
					i + 1);
				return -1;
			}
			s[i].armed = 1;
			k = sink_poll(&s[i]);
			if (k < 0)
				fprintf(stderr, "note_sink: %s\n", s[i].c.err);
			if (k)
				return k;
		}
		pfd[i].fd = s[i].c.cc->fd;
	}
	k = poll(pfd, n, 100);
	if (k < 0)
		return 0;	/* EINTR: the caller looks again */
	for (i = 0; k > 0 && i < n; i++) {
		struct ibv_cq *cq;
		void *ctx;

		if (pfd[i].fd < 0 || !(pfd[i].revents & POLLIN))
			continue;
		if (!ibv_get_cq_event(s[i].c.cc, &cq, &ctx))
			ibv_ack_cq_events(cq, 1);
		s[i].armed = 0;
	}
	return 0;
}

/* Silence every connection that is up, without a word to the server. */
static int sinks_vanish(struct sink *s, int n)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_ERR };
	int i, gone = 0;

	for (i = 0; i < n; i++) {
		if (!s[i].up)
			continue;
		if (ibv_modify_qp(s[i].c.id->qp, &attr, IBV_QP_STATE)) {
			perror("note_sink: ibv_modify_qp");
			continue;
		}
		gone++;
	}
	return gone;
}

int main(int argc, char **argv)
{
	const char *port = "7471";
	struct rlimit rl;
	unsigned long total = 0, min = ~0UL, max = 0, early = 0;
	int n, up, secs, i, ended = 0, ret = 0, vanish = 0, stall = 0;
	struct sink *s;
	struct pollfd *pfd;
	double t_end;

	/* --vanish or --stall, anywhere before the arguments; then -p */
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--vanish"))
			vanish = 1;
		else if (!strcmp(argv[i], "--stall"))
			stall = 1;
		else
			continue;
		memmove(&argv[i], &argv[i + 1], (argc - i) * sizeof(*argv));
		argc--;
		break;
	}
	if (kvod_opt_port(&argc, &argv, &port) || argc != 4)
		goto usage;
	n = atoi(argv[2]);
	secs = atoi(argv[3]);
	if (n < 1 || n > 100000 || secs < 1)
		goto usage;
	/* Two fds a connection (rdma_cm and completion channels). */
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	s = calloc(n, sizeof(*s));
	pfd = calloc(n, sizeof(*pfd));
	if (!s || !pfd) {
		fprintf(stderr, "note_sink: out of memory\n");
		return 1;
	}
	up = sinks_open(s, n, argv[0], port, argv[1]);
	if (up < n)
		ret = 1;
	printf("connected: %d\n", up);
	t_end = now() + secs;
	if (vanish || stall) {
		if (vanish)
			printf("vanished: %d\n", sinks_vanish(s, n));
		else
			printf("stalled: %d\n", up);
		while (now() < t_end)
			sleep(1);
		goto out;
	}
	while (ended < up && now() < t_end) {
		int got = 0, k;

		ended = 0;
		for (i = 0; i < n; i++) {
			if (!s[i].up)
				continue;
			k = sink_poll(&s[i]);
			if (k < 0) {
				fprintf(stderr, "note_sink: %s\n", s[i].c.err);
				ret = 1;
				goto out;
			}
			got |= k;
			ended += s[i].ended || s[i].lost;
		}
		if (!got && ended < up && sinks_wait(s, n, pfd) < 0) {
			ret = 1;
			goto out;
		}
	}
out:
	ended = 0;
	for (i = 0; i < n; i++) {
		if (!s[i].up)
			continue;
		total += s[i].notes;
		min = s[i].notes < min ? s[i].notes : min;
		max = s[i].notes > max ? s[i].notes : max;
		early += s[i].c.notes_early;
		ended += s[i].ended;
		kvod_close(&s[i].c);
	}
	printf("notes: %lu min=%lu max=%lu ended=%d early=%lu\n", total,
	       up ? min : 0, max, ended, early);
	free(pfd);
	free(s);
	return ret;
usage:
	fprintf(stderr,
		"usage: note_sink [-p PORT] [--vanish | --stall] HOST NAME N SECONDS\n");
	return 2;
}
