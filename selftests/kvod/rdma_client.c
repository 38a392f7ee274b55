// SPDX-License-Identifier: GPL-2.0
/*
 * rdma_client: a hostile kvod RDMA client for the selftests. Each command
 * prints its exact outcome on stdout, one "key: value" line per step, and
 * exits 0 if it could run the step (whatever the outcome), 1 if not.
 *
 *   rdma_client [-p PORT] HOST raw HEX|-
 *	connect with HEX as the REQ private data ("-": none); prints
 *	"result: accepted size=N segments=K", "result: rejected status=S
 *	version=V", or "result: refused reason=R"
 *   rdma_client [-p PORT] HOST table NAME
 *	print the segment table: "seg: OFFSET ADDR LENGTH RKEY"
 *   rdma_client [-p PORT] HOST read NAME OFF LEN
 *	READ movie bytes [OFF, OFF+LEN) through the table, to stdout, one
 *	READ of at most 1 MiB at a time; with $KVOD_TRACE_MARKER set (to
 *	tracefs's trace_marker), write "rdma_client: setup done" there
 *	once the table is read and "rdma_client: transfer done" after the
 *	last READ, before disconnecting
 *   rdma_client [-p PORT] HOST cross NAME_A NAME_B
 *	connection A READs with connection B's rkey (at B's address): A's
 *	outcome, whether A's buffer was left untouched, then whether B still
 *	reads its own movie
 *   rdma_client [-p PORT] HOST stale NAME
 *	READ with the rkey of a connection that has been closed, on a new
 *	connection to the same movie; then the new connection's own rkey
 *   rdma_client [-p PORT] HOST pastend NAME
 *	READs just past the end of the movie, across its end, past the end
 *	of the table, each on a fresh connection
 *   rdma_client [-p PORT] HOST badstart NAME
 *	over iWARP, connect with a START whose magic is wrong; prints
 *	"result: ready" or "result: error ERR"
 *   rdma_client [-p PORT] HOST vanish NAME RETRY SECONDS
 *	connect asking for RETRY transport retries (1-7), read the table,
 *	move the QP to the error state, print "vanished: yes" and sleep
 *	SECONDS with the connection open: a client host that went away
 *	without a disconnect, as far as the server can tell
 *   rdma_client [-p PORT] HOST nostart NAME SECONDS
 *	over iWARP, connect and never send START (nor post READY's RECV):
 *	print "connected: yes" and hold the connection for SECONDS
 *   rdma_client [-p PORT] HOST idle NAME SECONDS FILE
 *	connect, read the table, print "connected: yes", do nothing for
 *	SECONDS or until SIGUSR1, then READ the movie's first 4 KiB (or
 *	less) into FILE: "idle_read: OUTCOME"
 *   rdma_client [-p PORT] HOST dereg NAME
 *	post READs of the movie's first 8 MiB (or less), 1 MiB each, into
 *	one MR, deregister the MR at once, with the READs in flight, and
 *	wait for each to end: "dereg: ok" (or the error), "reads: N
 *	posted, M ended", "first: OUTCOME" (the first completion's)
 *   rdma_client [-p PORT] HOST fence NAME
 *	post a READ of the movie's first 4 KiB and, right behind it, one
 *	of the next 4 KiB with IBV_SEND_FENCE; once both ended (or one did
 *	not within the timeout), a plain READ of the 4 KiB after: "plain:
 *	OUTCOME", "fenced: OUTCOME", "after: OUTCOME", with the library's
 *	reason in parentheses for a READ that did not end (what a device
 *	that cannot fence a READ does with one)
 *
 * Outcomes are ibv_wc_status_str() texts: "success", "remote access
 * error", ...
 */
#define _GNU_SOURCE
#include "lib/rdma.h"

#include <endian.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Per connect step and per READ; times $KVOD_TIMEOUT_SCALE (debug kernel). */
#define TIMEOUT_MS	(5000 * timeout_scale())
#define FILL		0x5a

static int timeout_scale(void)
{
	const char *s = getenv("KVOD_TIMEOUT_SCALE");
	int k = s ? atoi(s) : 1;

	return k > 0 && k <= 100 ? k : 1;
}

static const char *host, *port = "7471";

/* A connect's options, with @len bytes of private data at @pd. */
static struct kvod_conn_opts opts(const void *pd, size_t len)
{
	return (struct kvod_conn_opts) {
		.host = host,
		.port = port,
		.pdata = pd,
		.pdata_len = len,
		.depth = 16,
		.timeout_ms = TIMEOUT_MS,
	};
}

static int conn_open(struct kvod_conn *c, const void *pd, size_t len)
{
	struct kvod_conn_opts o = opts(pd, len);

	return kvod_connect(c, &o);
}

static int cmd_badstart(const char *name)
{
	struct kvod_rdma_start bad = {
		.magic = htobe32(KVOD_RDMA_MAGIC ^ 1),
		.version = KVOD_RDMA_VERSION,
	};
	char pd[KVOD_REQ_PDATA_MAX];
	struct kvod_conn_opts o = opts(pd, kvod_build_req(pd, sizeof(pd), name));
	struct kvod_conn c;

	o.start = &bad;
	if (!kvod_connect(&c, &o))
		printf("result: ready\n");
	else
		printf("result: error %s\n", c.err);
	kvod_close(&c);
	return 0;
}

static int cmd_nostart(const char *name, int secs)
{
	char pd[KVOD_REQ_PDATA_MAX];
	struct kvod_conn_opts o = opts(pd, kvod_build_req(pd, sizeof(pd), name));
	struct kvod_conn c;

	if (secs < 1)
		return 2;
	o.no_ready_recv = 1;	/* the connect ends at ESTABLISHED */
	if (kvod_connect(&c, &o)) {
		printf("connected: no (%s)\n", c.err);
		kvod_close(&c);
		return 1;
	}
	printf("connected: yes\n");
	sleep(secs);
	kvod_close(&c);
	return 0;
}

/*
 * Connect to movie @name asking for @retry transport retries (0: the
 * library's) and READ its table; on failure say why and close.
 */
static int open_movie_retry(struct kvod_conn *c, const char *name, int retry)
{
	char pd[KVOD_REQ_PDATA_MAX];
	size_t len = kvod_build_req(pd, sizeof(pd), name);
	struct kvod_conn_opts o = opts(pd, len);

	if (!len) {
		fprintf(stderr, "rdma_client: name too long\n");
		return -1;
	}
	o.retry_count = retry;
	if (kvod_connect(c, &o) || kvod_read_table(c, TIMEOUT_MS)) {
		fprintf(stderr, "rdma_client: %s: %s\n", name, c->err);
		kvod_close(c);
		return -1;
	}
	return 0;
}

static int open_movie(struct kvod_conn *c, const char *name)
{
	return open_movie_retry(c, name, 0);
}

static int cmd_vanish(const char *name, int retry, int secs)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_ERR };
	struct kvod_conn c;

	if (retry < 1 || retry > 7 || secs < 1)
		return 2;
	if (open_movie_retry(&c, name, retry))
		return 1;
	if (ibv_modify_qp(c.id->qp, &attr, IBV_QP_STATE)) {
		perror("rdma_client: ibv_modify_qp");
		kvod_close(&c);
		return 1;
	}
	printf("vanished: yes\n");
	sleep(secs);
	kvod_close(&c);
	return 0;
}

/*
 * One READ of @len bytes into a buffer filled with FILL. Returns the
 * completion status (or -1 if it could not be posted or timed out);
 * *untouched says whether the buffer still holds only FILL.
 */
static int try_read(struct kvod_conn *c, uint64_t raddr, uint32_t rkey,
		    uint32_t len, char **out, int *untouched)
{
	char *buf = malloc(len);
	struct ibv_mr *mr;
	struct ibv_wc wc;
	int n, st = -1;

	if (!buf)
		return -1;
	memset(buf, FILL, len);
	mr = kvod_reg(c, buf, len);
	if (!mr) {
		free(buf);
		return -1;
	}
	if (!kvod_post_read(c, buf, mr->lkey, raddr, rkey, len, 1)) {
		n = kvod_poll(c, &wc, 1, 10 * TIMEOUT_MS);
		if (n == 1)
			st = wc.status;
	}
	ibv_dereg_mr(mr);
	if (untouched) {
		uint32_t i;

		*untouched = 1;
		for (i = 0; i < len; i++)
			if ((unsigned char)buf[i] != FILL)
				*untouched = 0;
	}
	if (out && st == IBV_WC_SUCCESS)
		*out = buf;
	else
		free(buf);
	return st;
}

static const char *st_str(int st)
{
	return st < 0 ? "no completion" : ibv_wc_status_str(st);
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static int cmd_raw(const char *hex)
{
	unsigned char pd[256];
	size_t len = 0;
	struct kvod_conn c;

	if (strcmp(hex, "-")) {
		for (; hex[0] && hex[1]; hex += 2) {
			int hi = hexval(hex[0]), lo = hexval(hex[1]);

			if (hi < 0 || lo < 0 || len == sizeof(pd))
				return 2;
			pd[len++] = hi << 4 | lo;
		}
		if (*hex)
			return 2;
	}
	if (!conn_open(&c, len ? pd : NULL, len)) {
		printf("result: accepted size=%llu segments=%u",
		       (unsigned long long)c.movie_size, c.nr_segments);
		if (c.reply_flags)
			printf(" flags=0x%x", c.reply_flags);
		printf("\n");
	} else if (c.fail == KVOD_FAIL_REJECTED) {
		printf("result: rejected status=%d version=%d\n",
		       c.rej_status, c.rej_version);
	} else if (c.fail == KVOD_FAIL_REFUSED) {
		printf("result: refused reason=%d\n", c.cm_status);
	} else {
		printf("result: error %s\n", c.err);
		kvod_close(&c);
		return 1;
	}
	kvod_close(&c);
	return 0;
}

static int cmd_table(const char *name)
{
	struct kvod_conn c;
	uint32_t i;

	if (open_movie(&c, name))
		return 1;
	printf("size: %llu\ntable: addr=0x%llx rkey=0x%x len=%u\n",
	       (unsigned long long)c.movie_size,
	       (unsigned long long)c.table_addr, c.table_rkey, c.table_len);
	for (i = 0; i < c.nr_segments; i++)
		printf("seg: %llu 0x%llx %llu 0x%x\n",
		       (unsigned long long)c.segs[i].offset,
		       (unsigned long long)c.segs[i].addr,
		       (unsigned long long)c.segs[i].length, c.segs[i].rkey);
	kvod_close(&c);
	return 0;
}

static void on_usr1(int sig)
{
	(void)sig;
}

static int cmd_idle(const char *name, int secs, const char *file)
{
	struct sigaction sa = { .sa_handler = on_usr1 };
	struct kvod_conn c;
	char *buf = NULL;
	uint32_t len;
	FILE *f;
	int st;

	if (secs < 1)
		return 2;
	/* No SA_RESTART: SIGUSR1 ends the sleep() below. */
	if (sigaction(SIGUSR1, &sa, NULL))
		return 1;
	if (open_movie(&c, name))
		return 1;
	printf("connected: yes\n");
	fflush(stdout);
	sleep(secs);
	len = c.segs[0].length < 4096 ? c.segs[0].length : 4096;
	st = try_read(&c, c.segs[0].addr, c.segs[0].rkey, len, &buf, NULL);
	printf("idle_read: %s\n", st_str(st));
	kvod_close(&c);
	if (!buf)
		return 0;
	f = fopen(file, "w");
	if (!f || fwrite(buf, 1, len, f) != len || fclose(f)) {
		perror(file);
		free(buf);
		return 1;
	}
	free(buf);
	return 0;
}

/* A line in the ftrace buffer, if $KVOD_TRACE_MARKER names trace_marker. */
static void mark(const char *what)
{
	const char *path = getenv("KVOD_TRACE_MARKER");
	FILE *f;

	if (!path)
		return;
	f = fopen(path, "w");
	if (f) {
		fprintf(f, "rdma_client: %s\n", what);
		fclose(f);
	}
}

/* The most one READ of cmd_read() and cmd_dereg() takes. */
#define PIECE_MAX	(1 << 20)

/*
 * The piece of [@off, @end) that one READ takes: up to PIECE_MAX bytes,
 * within the segment that holds @off (*@seg). Its length, or 0 if no
 * segment holds @off.
 */
static uint64_t piece_at(const struct kvod_conn *c, uint64_t off,
			 uint64_t end, const struct kvod_seg **seg)
{
	long i = kvod_seg_find(c, off);
	uint64_t n;

	if (i < 0)
		return 0;
	*seg = &c->segs[i];
	n = (*seg)->offset + (*seg)->length - off;
	if (n > end - off)
		n = end - off;
	return n < PIECE_MAX ? n : PIECE_MAX;
}

static int cmd_read(const char *name, uint64_t off, uint64_t len)
{
	struct kvod_conn c;
	uint64_t end = off + len;

	if (open_movie(&c, name))
		return 1;
	mark("setup done");
	while (off < end) {
		const struct kvod_seg *s;
		uint64_t n = piece_at(&c, off, end, &s);
		char *buf = NULL;
		int st;

		if (!n) {
			fprintf(stderr, "rdma_client: offset %llu beyond the movie\n",
				(unsigned long long)off);
			kvod_close(&c);
			return 1;
		}
		st = try_read(&c, s->addr + off - s->offset, s->rkey, n, &buf,
			      NULL);
		if (st != IBV_WC_SUCCESS) {
			fprintf(stderr, "rdma_client: READ at %llu: %s\n",
				(unsigned long long)off, st_str(st));
			kvod_close(&c);
			return 1;
		}
		if (fwrite(buf, 1, n, stdout) != n) {
			free(buf);
			kvod_close(&c);
			return 1;
		}
		free(buf);
		off += n;
	}
	mark("transfer done");
	kvod_close(&c);
	return 0;
}

static int cmd_cross(const char *a_name, const char *b_name)
{
	struct kvod_conn a, b;
	const struct kvod_seg *bs;
	int st, untouched;

	if (open_movie(&a, a_name))
		return 1;
	if (open_movie(&b, b_name)) {
		kvod_close(&a);
		return 1;
	}
	bs = &b.segs[0];
	printf("rkeys: a=0x%x b=0x%x\n", a.segs[0].rkey, bs->rkey);
	st = try_read(&a, bs->addr, bs->rkey,
		      bs->length < 4096 ? bs->length : 4096, NULL, &untouched);
	printf("a_with_b_rkey: %s\n", st_str(st));
	printf("a_buffer_untouched: %s\n", untouched ? "yes" : "no");
	/* A's QP is in error now: try the table rkey on a fresh one. */
	kvod_close(&a);
	if (open_movie(&a, a_name)) {
		kvod_close(&b);
		return 1;
	}
	st = try_read(&a, b.table_addr, b.table_rkey, b.table_len, NULL,
		      &untouched);
	printf("a_with_b_table_rkey: %s\n", st_str(st));
	printf("a_table_buffer_untouched: %s\n", untouched ? "yes" : "no");
	st = try_read(&b, bs->addr, bs->rkey,
		      bs->length < 4096 ? bs->length : 4096, NULL, NULL);
	printf("b_own_rkey: %s\n", st_str(st));
	kvod_close(&a);
	kvod_close(&b);
	return 0;
}

static int cmd_stale(const char *name)
{
	struct kvod_conn c;
	struct kvod_seg old;
	int st, untouched;

	if (open_movie(&c, name))
		return 1;
	old = c.segs[0];
	kvod_close(&c);
	if (open_movie(&c, name))
		return 1;
	printf("rkeys: old=0x%x new=0x%x\n", old.rkey, c.segs[0].rkey);
	st = try_read(&c, old.addr, old.rkey,
		      old.length < 4096 ? old.length : 4096, NULL, &untouched);
	printf("stale_rkey: %s\n", st_str(st));
	printf("buffer_untouched: %s\n", untouched ? "yes" : "no");
	kvod_close(&c);
	if (open_movie(&c, name))
		return 1;
	st = try_read(&c, c.segs[0].addr, c.segs[0].rkey,
		      c.segs[0].length < 4096 ? c.segs[0].length : 4096, NULL,
		      NULL);
	printf("fresh_rkey: %s\n", st_str(st));
	kvod_close(&c);
	return 0;
}

static int cmd_pastend(const char *name)
{
	static const char *const what[] = {
		"past_end", "across_end", "past_table", "before_start",
	};
	unsigned int k;

	for (k = 0; k < 4; k++) {
		const struct kvod_seg *s;
		struct kvod_conn c;
		int st, untouched;

		if (open_movie(&c, name))
			return 1;
		s = &c.segs[c.nr_segments - 1];
		switch (k) {
		case 0:
			st = try_read(&c, s->addr + s->length, s->rkey, 4096,
				      NULL, &untouched);
			break;
		case 1:
			st = try_read(&c, s->addr + s->length - 100, s->rkey,
				      200, NULL, &untouched);
			break;
		case 2:
			st = try_read(&c, c.table_addr + c.table_len,
				      c.table_rkey, 4096, NULL, &untouched);
			break;
		default:
			s = &c.segs[0];
			st = try_read(&c, s->addr - 4096, s->rkey, 4096, NULL,
				      &untouched);
			break;
		}
		printf("%s: %s\n", what[k], st_str(st));
		printf("%s_untouched: %s\n", what[k], untouched ? "yes" : "no");
		kvod_close(&c);
	}
	return 0;
}

/* The most READs cmd_dereg() posts, of a piece each. */
#define DEREG_READS	8

static int cmd_dereg(const char *name)
{
	uint64_t len, off, n;
	int ret, posted = 0, ended = 0, first = -1;
	struct kvod_conn c;
	struct ibv_mr *mr;
	struct ibv_wc wc;
	char *buf;

	if (open_movie(&c, name))
		return 1;
	len = c.movie_size < DEREG_READS * PIECE_MAX ? c.movie_size :
						       DEREG_READS * PIECE_MAX;
	buf = malloc(len);
	mr = buf ? kvod_reg(&c, buf, len) : NULL;
	if (!mr) {
		fprintf(stderr, "rdma_client: %s\n", buf ? c.err : "out of memory");
		free(buf);
		kvod_close(&c);
		return 1;
	}
	for (off = 0; off < len; off += n) {
		const struct kvod_seg *s;

		n = piece_at(&c, off, len, &s);
		if (!n) {
			fprintf(stderr, "rdma_client: offset %llu beyond the movie\n",
				(unsigned long long)off);
			break;
		}
		if (kvod_post_read(&c, buf + off, mr->lkey,
				   s->addr + off - s->offset, s->rkey, n,
				   posted + 1)) {
			fprintf(stderr, "rdma_client: %s\n", c.err);
			break;
		}
		posted++;
	}
	ret = ibv_dereg_mr(mr);
	printf("dereg: %s\n", ret ? strerror(ret) : "ok");
	while (ended < posted && kvod_poll(&c, &wc, 1, 10 * TIMEOUT_MS) == 1) {
		if (first < 0)
			first = wc.status;
		ended++;
	}
	printf("reads: %d posted, %d ended\n", posted, ended);
	printf("first: %s\n", st_str(first));
	kvod_close(&c);
	/* The READs that ended wrote here, if they succeeded. */
	free(buf);
	return 0;
}

/* The READs of cmd_fence(): a plain one, a fenced one, a plain one. */
#define FENCE_PIECE	4096

/*
 * Wait for @n READs of cmd_fence(), their outcomes into @st by wr_id; if
 * one does not end, why is in c->err.
 */
static void fence_reap(struct kvod_conn *c, int n, int *st)
{
	struct ibv_wc wc;
	int k;

	while (n-- > 0) {
		k = kvod_poll(c, &wc, 1, TIMEOUT_MS);
		if (k != 1) {
			if (!k)
				snprintf(c->err, sizeof(c->err), "timed out");
			return;
		}
		if (wc.wr_id < 3)
			st[wc.wr_id] = wc.status;
	}
}

/* "WHAT: OUTCOME", with c->err for a READ that did not end. */
static void fence_print(const struct kvod_conn *c, const char *what, int st)
{
	if (st < 0)
		printf("%s: %s (%s)\n", what, st_str(st), c->err);
	else
		printf("%s: %s\n", what, st_str(st));
}

static int cmd_fence(const char *name)
{
	int st[3] = { -1, -1, -1 }, posted = 0, i;
	const struct kvod_seg *s;
	struct kvod_conn c;
	struct ibv_mr *mr;
	char *buf;

	if (open_movie(&c, name))
		return 1;
	s = &c.segs[0];
	buf = s->length >= 3 * FENCE_PIECE ? malloc(3 * FENCE_PIECE) : NULL;
	mr = buf ? kvod_reg(&c, buf, 3 * FENCE_PIECE) : NULL;
	if (!mr) {
		fprintf(stderr, "rdma_client: %s: %s\n", name,
			buf ? c.err : "no 12 KiB to READ, or out of memory");
		free(buf);
		kvod_close(&c);
		return 1;
	}
	/* The plain READ and the fenced one behind it, posted together. */
	for (i = 0; i < 2; i++)
		posted += !kvod_post_read_flags(&c, buf + i * FENCE_PIECE,
						mr->lkey,
						s->addr + i * FENCE_PIECE,
						s->rkey, FENCE_PIECE, i,
						i ? IBV_SEND_FENCE : 0);
	fence_reap(&c, posted, st);
	fence_print(&c, "plain", st[0]);
	fence_print(&c, "fenced", st[1]);
	/* Then a plain one: is the connection still served? */
	c.err[0] = 0;
	if (!kvod_post_read(&c, buf + 2 * FENCE_PIECE, mr->lkey,
			    s->addr + 2 * FENCE_PIECE, s->rkey, FENCE_PIECE, 2))
		fence_reap(&c, 1, st);
	fence_print(&c, "after", st[2]);
	ibv_dereg_mr(mr);
	kvod_close(&c);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	if (kvod_opt_port(&argc, &argv, &port) || argc < 3)
		goto usage;
	host = argv[0];
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(argv[1], "raw") && argc == 3) {
		int ret = cmd_raw(argv[2]);

		if (ret == 2)
			goto usage;
		return ret;
	}
	if (!strcmp(argv[1], "table") && argc == 3)
		return cmd_table(argv[2]);
	if (!strcmp(argv[1], "read") && argc == 5)
		return cmd_read(argv[2], strtoull(argv[3], NULL, 0),
				strtoull(argv[4], NULL, 0));
	if (!strcmp(argv[1], "cross") && argc == 4)
		return cmd_cross(argv[2], argv[3]);
	if (!strcmp(argv[1], "stale") && argc == 3)
		return cmd_stale(argv[2]);
	if (!strcmp(argv[1], "pastend") && argc == 3)
		return cmd_pastend(argv[2]);
	if (!strcmp(argv[1], "badstart") && argc == 3)
		return cmd_badstart(argv[2]);
	if (!strcmp(argv[1], "dereg") && argc == 3)
		return cmd_dereg(argv[2]);
	if (!strcmp(argv[1], "fence") && argc == 3)
		return cmd_fence(argv[2]);
	if (!strcmp(argv[1], "vanish") && argc == 5) {
		int ret = cmd_vanish(argv[2], atoi(argv[3]), atoi(argv[4]));

		if (ret != 2)
			return ret;
	}
	if (!strcmp(argv[1], "nostart") && argc == 4) {
		int ret = cmd_nostart(argv[2], atoi(argv[3]));

		if (ret != 2)
			return ret;
	}
	if (!strcmp(argv[1], "idle") && argc == 5) {
		int ret = cmd_idle(argv[2], atoi(argv[3]), argv[4]);

		if (ret != 2)
			return ret;
	}
usage:
	fprintf(stderr,
		"usage: rdma_client [-p PORT] HOST raw HEX|- | table NAME |\n"
		"       read NAME OFF LEN | cross NAME_A NAME_B | stale NAME |\n"
		"       pastend NAME | badstart NAME | dereg NAME | fence NAME |\n"
		"       vanish NAME RETRY SECONDS | nostart NAME SECONDS |\n"
		"       idle NAME SECONDS FILE\n");
	return 2;
}
