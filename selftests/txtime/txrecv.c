// SPDX-License-Identifier: GPL-2.0
/*
 * txrecv: receive a test stream and measure when each packet arrived
 * (SO_TIMESTAMPNS, the kernel's receive time) against when it was due.
 *
 *   txrecv -p PORT [-n COUNT] [-t IDLE_MS] [-T TOTAL_MS] [-R PPS] [-o FILE]
 *          [-P FILE]
 *
 * Stops after COUNT packets, after IDLE ms without one (counted from the
 * start until the first comes), or after TOTAL ms. Without -R packets
 * carry a struct txt_hdr with their due time. With -R the stream is RTP
 * (kvod's push): the due time of packet k is taken as k / PPS after the
 * first, where k counts RTP sequence numbers; the RTP header and MPEG-TS
 * payload are checked too, and -P FILE writes the RTP payloads to FILE in
 * arrival order (to compare with the movie).
 *
 * Prints key=value pairs:
 *   received, in_order (arrivals in due-time order), bad (malformed),
 *   err_p50_us/err_p99_us/err_max_us: |arrival - due| (not with -R),
 *   jit_p50_us/jit_p99_us/jit_max_us: the same after removing the median
 *   of (arrival - due), i.e. the constant path delay,
 *   seq_dup/seq_gap (with -R): packets whose sequence number is not
 *   ahead of the previous one, and packets that skip numbers,
 *   first_ms/last_ms: first and last arrival relative to the first due,
 *   min_err_us: the smallest (arrival - due); negative means early.
 */
#include <arpa/inet.h>
#include <getopt.h>
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
	uint64_t seq;
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

int main(int argc, char **argv)
{
	long want = 0, idle = 1000, total = 60000, n = 0, cap = 1 << 16;
	long bad = 0, i, in_order = 1, rtp_k = -1, rtp_last = -1;
	long seq_dup = 0, seq_gap = 0;
	FILE *payload = NULL;
	struct rec *r = malloc(cap * sizeof(*r));
	const char *out = NULL;
	struct sockaddr_in sa = { .sin_family = AF_INET };
	int64_t start, *e, *j, med, first_due = 0, min_err = 0;
	double rtp_pps = 0;
	int fd, c, one = 1, rcvbuf = 16 << 20;
	unsigned char buf[65536];

	while ((c = getopt(argc, argv, "p:n:t:T:R:o:P:")) != -1) {
		switch (c) {
		case 'p': sa.sin_port = htons(atoi(optarg)); break;
		case 'n': want = atol(optarg); break;
		case 't': idle = atol(optarg); break;
		case 'T': total = atol(optarg); break;
		case 'R': rtp_pps = atof(optarg); break;
		case 'o': out = optarg; break;
		case 'P':
			payload = fopen(optarg, "w");
			if (!payload) {
				perror(optarg);
				return 1;
			}
			break;
		default: return 2;
		}
	}
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		perror("bind");
		return 1;
	}
	printf("listening\n");
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
		struct cmsghdr *cm;
		int64_t rx = 0;
		ssize_t len;

		if (left <= 0 || poll(&pfd, 1, left < idle ? left : idle) <= 0)
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
			cap *= 2;
			r = realloc(r, cap * sizeof(*r));
		}
		if (rtp_pps > 0) {
			long s = rtp_seq(buf, len);

			if (s < 0) {
				bad++;
				continue;
			}
			/* Unwrap the 16-bit sequence number. */
			if (rtp_last < 0) {
				rtp_k = 0;
			} else {
				uint16_t d = s - rtp_last;

				if (d == 0 || d >= 0x8000)
					seq_dup++;
				else if (d > 1)
					seq_gap++;
				rtp_k += d;
			}
			rtp_last = s;
			if (payload)
				fwrite(buf + 12, 1, len - 12, payload);
			r[n].seq = rtp_k;
			r[n].flow = 0;
			r[n].due = (int64_t)(rtp_k * 1e9 / rtp_pps);
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
			fprintf(f, "%u %llu %lld %lld\n", r[i].flow,
				(unsigned long long)r[i].seq,
				(long long)r[i].due, (long long)r[i].rx);
		if (f)
			fclose(f);
	}
	if (payload)
		fclose(payload);
	printf("received=%ld in_order=%ld bad=%ld\n", n, in_order, bad);
	if (rtp_pps > 0)
		printf("seq_dup=%ld seq_gap=%ld\n", seq_dup, seq_gap);
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
