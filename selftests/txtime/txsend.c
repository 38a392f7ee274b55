// SPDX-License-Identifier: GPL-2.0
/*
 * txsend: send a paced UDP stream in one of several ways, for the tsock
 * tests and the benchmark. Every packet carries a struct txt_hdr with its
 * intended departure time so txrecv can measure the error.
 *
 *   txsend -d ADDR:PORT -m MODE [-r PPS] [-n COUNT] [-l LEN] [-c mono|tai]
 *          [-F FLOWS] [-D DELAY_MS] [-W WINDOW_MS] [-o forward|reverse|flows]
 *          [-b BURST -g GAP_MS]
 *
 * Modes:
 *   busy    spin on clock_gettime() until each packet is due (accurate, 100% CPU)
 *   sleep   clock_nanosleep(TIMER_ABSTIME) until each packet is due
 *   txtime  SO_TXTIME: stamp each packet and send it up to WINDOW early;
 *           wake every WINDOW/2 (the qdisc does the timing)
 *   fq      SO_MAX_PACING_RATE at the stream's rate, sent in WINDOW/2
 *           bursts (sch_fq does the timing)
 *   plain   no stamps, everything at once
 *   batch   stamp everything and send it at once, in ORDER
 *
 * The schedule starts DELAY ms from now (negative: in the past); packet i
 * is due at start + i / PPS and goes out on flow i % FLOWS (one socket,
 * one source port per flow). With -b, the schedule pauses GAP ms after
 * every BURST packets (packet i is GAP * (i / BURST) later). Prints its
 * CPU time at the end.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <linux/net_tstamp.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "txtime.h"

#ifndef SO_TXTIME
#define SO_TXTIME 61
#define SCM_TXTIME SO_TXTIME
#endif

enum mode { M_BUSY, M_SLEEP, M_TXTIME, M_FQ, M_PLAIN, M_BATCH };

static struct {
	struct sockaddr_in dst;
	enum mode mode;
	double pps;
	long count;
	int len;
	clockid_t clock;
	int flows;
	double delay_ms;
	double window_ms;
	const char *order;
	long burst;
	double gap_ms;
	int *fds;
	int64_t start;		/* in @clock */
	int64_t real_off;	/* CLOCK_REALTIME - @clock */
	long errors;
} cfg = {
	.mode = M_TXTIME, .pps = 1000, .count = 1000, .len = 200,
	.clock = CLOCK_MONOTONIC, .flows = 1, .delay_ms = 50, .window_ms = 20,
	.order = "forward",
};

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static int64_t due(long i)
{
	int64_t t = cfg.start + (int64_t)(i * 1e9 / cfg.pps);

	if (cfg.burst)
		t += i / cfg.burst * (int64_t)(cfg.gap_ms * 1e6);
	return t;
}

static void send_one(long i, int stamped)
{
	char buf[65536] = { 0 };
	struct txt_hdr *h = (struct txt_hdr *)buf;
	char ctl[CMSG_SPACE(sizeof(uint64_t))] = { 0 };
	struct iovec iov = { buf, cfg.len };
	struct msghdr msg = {
		.msg_name = &cfg.dst, .msg_namelen = sizeof(cfg.dst),
		.msg_iov = &iov, .msg_iovlen = 1,
	};

	h->magic = TXT_MAGIC;
	h->flow = i % cfg.flows;
	h->seq = i;
	h->due_real = due(i) + cfg.real_off;
	if (stamped) {
		struct cmsghdr *cm;
		uint64_t t = due(i);

		h->stamp = t;
		msg.msg_control = ctl;
		msg.msg_controllen = sizeof(ctl);
		cm = CMSG_FIRSTHDR(&msg);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_TXTIME;
		cm->cmsg_len = CMSG_LEN(sizeof(t));
		memcpy(CMSG_DATA(cm), &t, sizeof(t));
	}
	if (sendmsg(cfg.fds[h->flow], &msg, 0) < 0)
		cfg.errors++;
}

static void open_sockets(void)
{
	int f;

	cfg.fds = calloc(cfg.flows, sizeof(int));
	for (f = 0; f < cfg.flows; f++) {
		int fd = socket(AF_INET, SOCK_DGRAM, 0);
		int sndbuf = 8 << 20;

		if (fd < 0)
			die("socket");
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
		if (cfg.mode == M_TXTIME || cfg.mode == M_BATCH) {
			struct sock_txtime st = { .clockid = cfg.clock };

			if (setsockopt(fd, SOL_SOCKET, SO_TXTIME, &st, sizeof(st)))
				die("SO_TXTIME");
		}
		if (cfg.mode == M_FQ) {
			unsigned long long rate = cfg.pps * (cfg.len + 42);

			if (setsockopt(fd, SOL_SOCKET, SO_MAX_PACING_RATE,
				       &rate, sizeof(rate)))
				die("SO_MAX_PACING_RATE");
		}
		cfg.fds[f] = fd;
	}
}

static void sleep_until(int64_t t)
{
	struct timespec ts = txt_ts(t);

	while (clock_nanosleep(cfg.clock, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

/* Send what is due before now + window; sleep half a window; repeat. */
static void run_windowed(int stamped)
{
	int64_t w = cfg.window_ms * 1e6;
	long i = 0;

	while (i < cfg.count) {
		int64_t now = txt_now(cfg.clock);

		while (i < cfg.count && due(i) <= now + (stamped ? w : 0))
			send_one(i++, stamped);
		if (i < cfg.count)
			sleep_until(stamped ? now + w / 2 :
				    due(i) > now + w / 2 ? due(i) : now + w / 2);
	}
}

static void run_batch(void)
{
	long i, f;

	if (!strcmp(cfg.order, "reverse")) {
		for (i = cfg.count - 1; i >= 0; i--)
			send_one(i, 1);
	} else if (!strcmp(cfg.order, "flows")) {
		/* Flow by flow, the last flow first. */
		for (f = cfg.flows - 1; f >= 0; f--)
			for (i = f; i < cfg.count; i += cfg.flows)
				send_one(i, 1);
	} else {
		for (i = 0; i < cfg.count; i++)
			send_one(i, 1);
	}
}

static void run(void)
{
	long i;

	switch (cfg.mode) {
	case M_BUSY:
		for (i = 0; i < cfg.count; i++) {
			while (txt_now(cfg.clock) < due(i))
				;
			send_one(i, 0);
		}
		break;
	case M_SLEEP:
		for (i = 0; i < cfg.count; i++) {
			sleep_until(due(i));
			send_one(i, 0);
		}
		break;
	case M_TXTIME:
		run_windowed(1);
		break;
	case M_FQ:
		run_windowed(0);
		break;
	case M_PLAIN:
		for (i = 0; i < cfg.count; i++)
			send_one(i, 0);
		break;
	case M_BATCH:
		run_batch();
		break;
	}
}

static void parse_dst(const char *s)
{
	char host[64];
	const char *colon = strrchr(s, ':');

	if (!colon || colon - s >= (long)sizeof(host))
		die("bad -d ADDR:PORT");
	memcpy(host, s, colon - s);
	host[colon - s] = 0;
	cfg.dst.sin_family = AF_INET;
	cfg.dst.sin_port = htons(atoi(colon + 1));
	if (inet_pton(AF_INET, host, &cfg.dst.sin_addr) != 1)
		die("bad -d address");
}

static enum mode parse_mode(const char *s)
{
	static const char *const names[] = {
		"busy", "sleep", "txtime", "fq", "plain", "batch",
	};
	unsigned int i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(s, names[i]))
			return i;
	fprintf(stderr, "unknown mode %s\n", s);
	exit(1);
}

int main(int argc, char **argv)
{
	struct rusage ru;
	int64_t t0, t1;
	int c;

	while ((c = getopt(argc, argv, "d:m:r:n:l:c:F:D:W:o:b:g:")) != -1) {
		switch (c) {
		case 'd': parse_dst(optarg); break;
		case 'm': cfg.mode = parse_mode(optarg); break;
		case 'r': cfg.pps = atof(optarg); break;
		case 'n': cfg.count = atol(optarg); break;
		case 'l': cfg.len = atoi(optarg); break;
		case 'c':
			cfg.clock = !strcmp(optarg, "tai") ? CLOCK_TAI :
							     CLOCK_MONOTONIC;
			break;
		case 'F': cfg.flows = atoi(optarg); break;
		case 'D': cfg.delay_ms = atof(optarg); break;
		case 'W': cfg.window_ms = atof(optarg); break;
		case 'o': cfg.order = optarg; break;
		case 'b': cfg.burst = atol(optarg); break;
		case 'g': cfg.gap_ms = atof(optarg); break;
		default:
			fprintf(stderr, "usage: see the comment in txsend.c\n");
			return 2;
		}
	}
	if (!cfg.dst.sin_port || cfg.pps <= 0 || cfg.flows < 1 ||
	    cfg.burst < 0 || cfg.gap_ms < 0 ||
	    cfg.len < (int)sizeof(struct txt_hdr) || cfg.len > 65000) {
		fprintf(stderr, "txsend: bad arguments\n");
		return 2;
	}

	open_sockets();
	cfg.real_off = txt_now(CLOCK_REALTIME) - txt_now(cfg.clock);
	t0 = txt_now(CLOCK_MONOTONIC);
	cfg.start = txt_now(cfg.clock) + (int64_t)(cfg.delay_ms * 1e6);
	run();
	t1 = txt_now(CLOCK_MONOTONIC);
	getrusage(RUSAGE_SELF, &ru);
	printf("sent=%ld errors=%ld wall_ms=%.1f cpu_ms=%.1f\n",
	       cfg.count - cfg.errors, cfg.errors, (t1 - t0) / 1e6,
	       (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3);
	return 0;
}
