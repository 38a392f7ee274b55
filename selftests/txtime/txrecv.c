// SPDX-License-Identifier: GPL-2.0
/*
 * txrecv: receive a test stream and measure when each packet arrived
 * (SO_TIMESTAMPNS, the kernel's receive time) against when it was due.
 *
 *   txrecv -p PORT [-a ADDR] [-n COUNT] [-t IDLE_MS] [-w FIRST_MS]
 *          [-T TOTAL_MS] [-R PPS] [-o FILE] [-P FILE]
 *
 * Binds UDP PORT (0: any free port) on IPv4 address ADDR (default all)
 * and prints "listening port=N" once it has. Stops after COUNT packets,
 * after IDLE ms without one (FIRST ms, default IDLE, until the first
 * comes), or after TOTAL ms. Its receive buffer is 16 MiB, past
 * net.core.rmem_max if it may (SO_RCVBUFFORCE, as root), so that a
 * reader slowed by a debug kernel loses no datagram to it. Without -R
 * packets carry a struct txt_hdr with their due time. With -R the stream
 * is RTP (kvod's push): the due time of packet k is taken as k / PPS
 * after the first, where k counts RTP sequence numbers (rtp_unwrap());
 * the RTP header and MPEG-TS payload (a sync byte 0x47 at every 188
 * bytes) are checked too, and -P FILE writes the payloads of the
 * well-formed packets to FILE in arrival order (to compare with the
 * movie). -o FILE writes one line per packet: flow, seq (k with -R), due
 * and arrival time in ns.
 *
 * Prints key=value pairs:
 *   received, in_order (arrivals in due-time order), bad (malformed),
 *   err_p50_us/err_p99_us/err_max_us: |arrival - due| (not with -R),
 *   jit_p50_us/jit_p99_us/jit_max_us: the same after removing the median
 *   of (arrival - due), i.e. the constant path delay,
 *   seq_dup/seq_gap (with -R): packets whose sequence number is not
 *   ahead of the newest one so far (duplicates and late packets), and
 *   packets that skip numbers; seq_late (with -R): those of seq_dup
 *   behind the newest rather than a repeat of it (a late packet, even
 *   one sent before the first that came); bytes (with -R): the payload
 *   bytes of the well-formed packets (what -P writes),
 *   first_ms/last_ms: first and last arrival relative to the first due,
 *   min_err_us: the smallest (arrival - due); negative means early.
 *
 * Exit status: 0, 1 if it cannot run (socket, memory, writing -P FILE),
 * 2 bad usage.
 * selftests/host/txrecv_test.sh tests it on the host's loopback.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "txtime.h"

struct rec {
	int64_t due;
	int64_t rx;
	uint32_t flow;
	int64_t seq;
};

/* The 16-bit RTP sequence numbers so far, unwrapped (rtp_unwrap()). */
struct rtp_seq_state {
	long k;			/* the newest packet's k, -1 before the first */
	long last;		/* its sequence number */
	long dup, gap, late;	/* seq_dup, seq_gap, seq_late */
};

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

static double pct(int64_t *v, long n, double p)
{
	long i = (long)ceil(p * n) - 1;

	if (n == 0)
		return 0;
	if (i < 0)
		i = 0;
	return v[i] / 1e3;
}

/* RTP: V=2, PT 33, 1..7 TS packets; returns the sequence number or -1. */
static long rtp_seq(const unsigned char *p, ssize_t n)
{
	int i, ts = (n - 12) / 188;

	if (n < 12 + 188 || n > 12 + 7 * 188 || (n - 12) % 188 ||
	    (p[0] >> 6) != 2 || (p[1] & 0x7f) != 33)
		return -1;
	for (i = 0; i < ts; i++)
		if (p[12 + 188 * i] != 0x47)
			return -1;
	return (p[2] << 8) | p[3];
}

/*
 * Packet k of the stream for sequence number @s: the signed 16-bit
 * distance from the newest number so far decides. A packet at or behind
 * it (a duplicate, or one overtaken on the way) is counted in dup and
 * gets its own k, but does not move the newest: otherwise one late packet
 * would add about 65536 to the k, and so to the due time, of every packet
 * after it; one behind it counts in late too. A packet ahead of it by
 * more than one counts in gap.
 */
static long rtp_unwrap(struct rtp_seq_state *st, long s)
{
	int16_t d;

	if (st->k < 0) {
		st->k = 0;
		st->last = s;
		return 0;
	}
	d = (int16_t)(uint16_t)(s - st->last);
	if (d <= 0) {
		st->dup++;
		st->late += d < 0;
		return st->k + d;
	}
	if (d > 1)
		st->gap++;
	st->k += d;
	st->last = s;
	return st->k;
}

/* A decimal number in [@min, @max], or -1. */
static int parse_long(const char *s, long min, long max, long *out)
{
	char *end;
	long v;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

struct opts {
	struct sockaddr_in sa;
	long want, idle, first, total;
	double rtp_pps;
	const char *out, *payload_path;
	FILE *payload;
};

static int usage(void)
{
	fprintf(stderr,
		"usage: txrecv -p PORT [-a ADDR] [-n COUNT] [-t IDLE_MS] [-w FIRST_MS]\n"
		"              [-T TOTAL_MS] [-R PPS] [-o FILE] [-P FILE]\n");
	return 2;
}

static int bad_arg(int c, const char *arg)
{
	fprintf(stderr, "txrecv: invalid -%c '%s'\n", c, arg);
	return 2;
}

/* 0, or the exit status after saying what is wrong. */
static int parse_opts(int argc, char **argv, struct opts *o)
{
	long v;
	char *end;
	int c, port = 0;

	while ((c = getopt(argc, argv, "p:a:n:t:w:T:R:o:P:")) != -1) {
		switch (c) {
		case 'p':
			if (parse_long(optarg, 0, 65535, &v))
				return bad_arg(c, optarg);
			o->sa.sin_port = htons(v);
			port = 1;
			break;
		case 'a':
			if (inet_pton(AF_INET, optarg, &o->sa.sin_addr) != 1)
				return bad_arg(c, optarg);
			break;
		case 'n':
			if (parse_long(optarg, 0, LONG_MAX, &o->want))
				return bad_arg(c, optarg);
			break;
		case 't':
			if (parse_long(optarg, 1, INT_MAX, &o->idle))
				return bad_arg(c, optarg);
			break;
		case 'w':
			if (parse_long(optarg, 1, INT_MAX, &o->first))
				return bad_arg(c, optarg);
			break;
		case 'T':
			if (parse_long(optarg, 1, INT_MAX, &o->total))
				return bad_arg(c, optarg);
			break;
		case 'R':
			errno = 0;
			o->rtp_pps = strtod(optarg, &end);
			if (errno || end == optarg || *end ||
			    !isfinite(o->rtp_pps) || o->rtp_pps <= 0)
				return bad_arg(c, optarg);
			break;
		case 'o':
			o->out = optarg;
			break;
		case 'P':
			o->payload_path = optarg;
			o->payload = fopen(optarg, "w");
			if (!o->payload) {
				perror(optarg);
				return 1;
			}
			break;
		default:
			return usage();
		}
	}
	if (!port || optind != argc)
		return usage();
	if (!o->first)
		o->first = o->idle;
	return 0;
}

/* The socket, bound, or -1 after saying why not. */
static int rx_socket(struct sockaddr_in *sa)
{
	int fd, one = 1, rcvbuf = 16 << 20;
	socklen_t len = sizeof(*sa);

	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0) {
		perror("socket");
		return -1;
	}
	/* Without receive times there is nothing to measure. */
	if (setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof(one))) {
		perror("SO_TIMESTAMPNS");
		goto err;
	}
	/* Past net.core.rmem_max if we may; else as much as it allows. */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf)))
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	if (bind(fd, (struct sockaddr *)sa, sizeof(*sa)) ||
	    getsockname(fd, (struct sockaddr *)sa, &len)) {
		perror("bind");
		goto err;
	}
	return fd;
err:
	close(fd);
	return -1;
}

int main(int argc, char **argv)
{
	struct opts o = {
		.sa = { .sin_family = AF_INET },
		.idle = 1000,
		.total = 60000,
	};
	struct rtp_seq_state rtp = { .k = -1 };
	long want, idle, first, total, n = 0, cap = 1 << 16;
	long bad = 0, i, in_order = 1;
	long long bytes = 0;
	FILE *payload;
	struct rec *r, *nr;
	const char *out;
	int64_t start, *e, *j, med, first_due = 0, min_err = 0;
	double rtp_pps;
	int fd, ret;
	unsigned char buf[65536];

	ret = parse_opts(argc, argv, &o);
	if (ret)
		return ret;
	want = o.want;
	idle = o.idle;
	first = o.first;
	total = o.total;
	rtp_pps = o.rtp_pps;
	out = o.out;
	payload = o.payload;
	r = malloc(cap * sizeof(*r));
	if (!r) {
		perror("txrecv");
		return 1;
	}
	fd = rx_socket(&o.sa);
	if (fd < 0)
		return 1;
	printf("listening port=%u\n", ntohs(o.sa.sin_port));
	fflush(stdout);

	start = txt_now(CLOCK_MONOTONIC);
	while (!want || n < want) {
		char ctl[256];
		struct iovec iov = { buf, sizeof(buf) };
		struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
				    .msg_control = ctl,
				    .msg_controllen = sizeof(ctl) };
		struct pollfd pfd = { fd, POLLIN, 0 };
		int64_t left = total - (txt_now(CLOCK_MONOTONIC) - start) / 1000000;
		long wait_ms = n ? idle : first;
		struct cmsghdr *cm;
		int64_t rx = 0;
		ssize_t len;

		if (left <= 0 || poll(&pfd, 1, left < wait_ms ? left : wait_ms) <= 0)
			break;
		len = recvmsg(fd, &m, 0);
		if (len < 0)
			break;
		for (cm = CMSG_FIRSTHDR(&m); cm; cm = CMSG_NXTHDR(&m, cm))
			if (cm->cmsg_level == SOL_SOCKET &&
			    cm->cmsg_type == SO_TIMESTAMPNS) {
				struct timespec ts;

				memcpy(&ts, CMSG_DATA(cm), sizeof(ts));
				rx = ts.tv_sec * 1000000000LL + ts.tv_nsec;
			}
		if (n == cap) {
			nr = realloc(r, 2 * cap * sizeof(*r));
			if (!nr) {
				perror("txrecv");
				return 1;
			}
			r = nr;
			cap *= 2;
		}
		if (rtp_pps > 0) {
			long s = rtp_seq(buf, len), k;

			if (s < 0) {
				bad++;
				continue;
			}
			k = rtp_unwrap(&rtp, s);
			bytes += len - 12;
			if (payload && fwrite(buf + 12, 1, len - 12, payload) !=
				       (size_t)(len - 12)) {
				perror(o.payload_path);
				return 1;
			}
			r[n].seq = k;
			r[n].flow = 0;
			r[n].due = (int64_t)(k * 1e9 / rtp_pps);
		} else {
			struct txt_hdr h;

			if (len < (ssize_t)sizeof(h)) {
				bad++;
				continue;
			}
			memcpy(&h, buf, sizeof(h));
			if (h.magic != TXT_MAGIC) {
				bad++;
				continue;
			}
			r[n].seq = h.seq;
			r[n].flow = h.flow;
			r[n].due = h.due_real;
		}
		r[n].rx = rx;
		n++;
	}

	e = calloc(n + 1, sizeof(*e));
	j = calloc(n + 1, sizeof(*j));
	if (!e || !j) {
		perror("txrecv");
		return 1;
	}
	for (i = 0; i < n; i++) {
		if (i && r[i].due < r[i - 1].due)
			in_order = 0;
		e[i] = r[i].rx - r[i].due;
		if (!i || e[i] < min_err)
			min_err = e[i];
		if (!i || r[i].due < first_due)
			first_due = r[i].due;
	}
	memcpy(j, e, n * sizeof(*e));
	qsort(j, n, sizeof(*j), cmp_i64);
	med = n ? j[n / 2] : 0;
	for (i = 0; i < n; i++) {
		j[i] = llabs(e[i] - med);
		e[i] = llabs(e[i]);
	}
	qsort(e, n, sizeof(*e), cmp_i64);
	qsort(j, n, sizeof(*j), cmp_i64);

	if (out) {
		FILE *f = fopen(out, "w");

		for (i = 0; f && i < n; i++)
			fprintf(f, "%u %lld %lld %lld\n", r[i].flow,
				(long long)r[i].seq,
				(long long)r[i].due, (long long)r[i].rx);
		if (f)
			fclose(f);
	}
	/* A payload cut short by a full disk must not pass for the stream. */
	if (payload && fclose(payload)) {
		perror(o.payload_path);
		return 1;
	}
	printf("received=%ld in_order=%ld bad=%ld\n", n, in_order, bad);
	if (rtp_pps > 0)
		printf("seq_dup=%ld seq_gap=%ld seq_late=%ld bytes=%lld\n",
		       rtp.dup, rtp.gap, rtp.late, bytes);
	/* RTP carries no absolute due time: only the jitter means something. */
	if (rtp_pps <= 0)
		printf("err_p50_us=%.1f err_p99_us=%.1f err_max_us=%.1f\n",
		       pct(e, n, 0.5), pct(e, n, 0.99), pct(e, n, 1.0));
	printf("jit_p50_us=%.1f jit_p99_us=%.1f jit_max_us=%.1f\n",
	       pct(j, n, 0.5), pct(j, n, 0.99), pct(j, n, 1.0));
	if (n && rtp_pps <= 0)
		printf("first_ms=%.1f last_ms=%.1f min_err_us=%.1f\n",
		       (r[0].rx - first_due) / 1e6,
		       (r[n - 1].rx - first_due) / 1e6, min_err / 1e3);
	return 0;
}
