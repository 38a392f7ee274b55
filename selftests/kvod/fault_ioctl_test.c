// SPDX-License-Identifier: GPL-2.0
/*
 * kvod fault injection, control path: every allocation an ioctl makes
 * fails once, and the call must end cleanly.
 *
 * For each ioctl (ADD of a one-chunk and of a many-chunk movie, DEL, INFO,
 * STATS, the three LISTs, LISTEN and UNLISTEN for HTTP and RDMA, PUSH and
 * STOP, LIVE_CREATE of a plain and of a mirrored channel, LIVE_FEED) a
 * fail-nth sweep (Documentation/fault-injection/
 * fault-injection.rst, "Fault injection via /proc/<pid>/fail-nth") makes
 * the n-th allocation of the call fail, for n = 1, 2, ... until the call
 * succeeds without consuming the injected fault. Allocations are counted
 * by failslab and fail_page_alloc (every order, sleeping ones included:
 * ignore-gfp-wait is turned off), in the whole call, including the
 * subsystems kvod calls (rdma_cm, the socket layer). At each point:
 *
 *  - the call fails with an errno that says "out of resources", never one
 *    that blames the caller (EINVAL, ENOENT, EEXIST, ...), or else it
 *    absorbs the failure (a chunk falls back to a smaller order) and then
 *    did exactly what a plain call does;
 *  - the catalog, the listeners and the pushes are exactly as before
 *    (STATS and the three LISTs, minus traffic counters);
 *  - the same call without a fault then succeeds, and undoing it restores
 *    the state once more.
 *
 * After the last sweep (the harness may run the tests in any order), the
 * teardown scans kmemleak (when the kernel has it) and fails on any new
 * leak whose allocation trace goes through kvod.
 *
 * The kernel needs CONFIG_FAULT_INJECTION, FAILSLAB, FAIL_PAGE_ALLOC and
 * FAULT_INJECTION_DEBUG_FS: Debian's does not have them, and there every
 * test reports "SKIP no fault injection in this kernel". Runs only inside
 * the selftests/qemu/vm-run guest (or where KVOD_TEST_HOST=1): main() loads
 * the RDMA core, sets up Soft-RoCE (as selftests/lib/rdma.sh does) and
 * kvod.ko, and removes them at exit.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/wait.h>

#include "kvod_util.h"
#include "kselftest_harness.h"

#define DEBUGFS		"/sys/kernel/debug"
#define FAILSLAB	DEBUGFS "/failslab/"
#define FAILPAGE	DEBUGFS "/fail_page_alloc/"
#define KMEMLEAK	DEBUGFS "/kmemleak"
#define FAIL_NTH	"/proc/thread-self/fail-nth"
#define NO_FAULT	"no fault injection in this kernel"
#define SWEEP_MAX	5000U	/* no call of kvod's makes that many allocations */
#define ROOM		16

#define SMALL_BYTES	(64 * 1024 + 17)
#define ONE_CHUNK_BYTES	(2 * 1024 * 1024)
#define MANY_BYTES	(9 * 1024 * 1024 + 12345)

#define RXE_ADDR	"198.18.0.1"
#define RXE_SETUP							\
	"{ modprobe -q -a ib_core ib_uverbs rdma_cm rdma_ucm rdma_rxe || "	\
	"[ -d /sys/class/infiniband_verbs ]; } && "			\
	"ip link add kvodr0 type veth peer name kvodr1 && "		\
	"ip addr add " RXE_ADDR "/24 dev kvodr0 && "			\
	"ip link set kvodr1 up && ip link set kvodr0 up && "		\
	"rdma link add kvod_rxe0 type rxe netdev kvodr0 && "		\
	"for i in $(seq 50); do rdma link show kvod_rxe0/1 | "		\
	"grep -q 'state ACTIVE' && exit 0; sleep 0.1; done; exit 1"
#define RXE_TEARDOWN							\
	"rdma link del kvod_rxe0 2>/dev/null; ip link del kvodr0 2>/dev/null"

/* The TEST_F(fault, ...) below; the last to end checks for leaks. */
#define NR_SWEEP_TESTS	12

static char ko_path[PATH_MAX];
static bool have_fault, have_rxe;
static pid_t main_pid;
static unsigned int *sweeps_done;	/* shared by the tests' processes */

/*
 * Count every allocation for fail-nth: sleeping ones too, pages of every
 * order, whatever the stack (fail-nth honours the stack-trace filter);
 * print nothing per injected failure (a stack dump would read as a
 * warning in the guest's kernel log). probability stays 0, so nothing
 * fails but what fail-nth picks.
 */
static bool fault_knobs(bool on)
{
	const char *wait = on ? "N" : "Y";

	/* The filter's defaults; absent without the stack-trace filter. */
	kvod_write_file(FAILSLAB "require-start", "0");
	kvod_write_file(FAILSLAB "require-end", "18446744073709551615");
	kvod_write_file(FAILPAGE "require-start", "0");
	kvod_write_file(FAILPAGE "require-end", "18446744073709551615");
	if (kvod_write_file(FAILSLAB "probability", "0") ||
	    kvod_write_file(FAILPAGE "probability", "0") ||
	    kvod_write_file(FAILSLAB "ignore-gfp-wait", wait) ||
	    kvod_write_file(FAILSLAB "verbose", on ? "0" : "2") ||
	    kvod_write_file(FAILPAGE "ignore-gfp-wait", wait) ||
	    kvod_write_file(FAILPAGE "verbose", on ? "0" : "2") ||
	    kvod_write_file(FAILPAGE "min-order", on ? "0" : "1"))
		return false;
	return true;
}

static bool fault_available(void)
{
	if (access(DEBUGFS "/failslab", F_OK))
		mount("debugfs", DEBUGFS, "debugfs", 0, NULL);
	return !access(FAIL_NTH, W_OK) && !access(FAILSLAB, F_OK) &&
	       !access(FAILPAGE, F_OK) && fault_knobs(true);
}

/* ------------------------------------------------------------------ */
/* fail-nth of the calling thread.                                     */

static int nth_set(int fd, unsigned int n)
{
	char buf[16];
	int len = snprintf(buf, sizeof(buf), "%u", n);

	return pwrite(fd, buf, len, 0) == len ? 0 : errno;
}

/* What is left of the count: 0 means the fault was injected. */
static long nth_get(int fd)
{
	char buf[16];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return strtol(buf, NULL, 10);
}

/* ------------------------------------------------------------------ */
/* The state a failed call must leave as it was.                       */

struct state {
	struct kvod_stats st;
	__u32 nm, nl, np;
	struct kvod_movie_info m[ROOM];
	struct kvod_listener_info l[ROOM];
	struct kvod_push_info p[ROOM];
};

static int list_of(int dev, unsigned long cmd, void *entries, __u32 esize,
		   __u32 *count)
{
	return kvod_list_of(dev, cmd, entries, esize, ROOM, count, NULL);
}

static int state_take(int dev, struct state *s)
{
	memset(s, 0, sizeof(*s));
	return kvod_stats(dev, &s->st) ?:
	       list_of(dev, KVOD_IOC_MOVIE_LIST, s->m, sizeof(s->m[0]), &s->nm) ?:
	       list_of(dev, KVOD_IOC_LISTENER_LIST, s->l, sizeof(s->l[0]),
		       &s->nl) ?:
	       list_of(dev, KVOD_IOC_PUSH_LIST, s->p, sizeof(s->p[0]), &s->np);
}

/*
 * Compare all but what traffic changes on its own: bytes served, a push's
 * packet counters, a listener's byte and response counters.
 */
static const char *state_diff(const struct state *a, const struct state *b)
{
	__u32 i;

	if (a->st.movies != b->st.movies || a->st.zombies != b->st.zombies ||
	    a->st.resident != b->st.resident)
		return "STATS";
	if (a->nm != b->nm || a->nl != b->nl || a->np != b->np)
		return "the number of movies, listeners or pushes";
	for (i = 0; i < a->nm && i < ROOM; i++) {
		const struct kvod_movie_info *x = &a->m[i], *y = &b->m[i];

		if (strcmp(x->name, y->name) || x->length != y->length ||
		    x->bitrate != y->bitrate || x->resident != y->resident ||
		    x->chunks != y->chunks ||
		    x->active_clients != y->active_clients ||
		    x->live_opts != y->live_opts ||
		    x->live_chunk_size != y->live_chunk_size ||
		    x->live_seq != y->live_seq)
			return "a movie";
	}
	for (i = 0; i < a->nl && i < ROOM; i++) {
		const struct kvod_listener_info *x = &a->l[i], *y = &b->l[i];

		if (x->proto != y->proto || x->netns != y->netns ||
		    memcmp(&x->addr, &y->addr, sizeof(x->addr)) ||
		    x->counters[KVOD_LC_ACTIVE] != y->counters[KVOD_LC_ACTIVE] ||
		    x->counters[KVOD_LC_DEVICES] != y->counters[KVOD_LC_DEVICES])
			return "a listener";
	}
	for (i = 0; i < a->np && i < ROOM; i++) {
		const struct kvod_push_info *x = &a->p[i], *y = &b->p[i];

		if (x->id != y->id || x->opts != y->opts ||
		    x->rate != y->rate || x->window_ms != y->window_ms ||
		    x->netns != y->netns || strcmp(x->name, y->name) ||
		    memcmp(&x->dst, &y->dst, sizeof(x->dst)))
			return "a push";
	}
	return NULL;
}

/* ------------------------------------------------------------------ */
/* The calls.                                                          */

/* Remove every push, listener (of this namespace) and movie. */
static int state_clear(int dev)
{
	struct state s;
	__u32 i;
	int ret = kvod_stop_all(dev) ?: state_take(dev, &s);

	for (i = 0; !ret && i < s.nm && i < ROOM; i++)
		ret = kvod_del(dev, s.m[i].name);
	return ret;
}

/*
 * The whole of kmemleak's report, or NULL. Reports are never cleared
 * (selftests/qemu/vm-run's scans after the last program see them again), so main()
 * keeps the report from before the tests and only reports not in it count.
 */
static char *leaks_before;

static char *kmemleak_read(void)
{
	char *report = NULL;
	size_t cap = 0;
	FILE *f = fopen(KMEMLEAK, "r");

	if (!f)
		return NULL;
	if (getdelim(&report, &cap, '\0', f) < 0) {
		free(report);
		report = strdup("");
	}
	fclose(f);
	return report;
}

/*
 * After the last sweep: kmemleak reports an object once it has been
 * unreferenced for 5 s, so wait, scan twice (as the kernel's docs advise)
 * and look for new reports whose allocation trace goes through kvod.
 */
static void leak_check(struct __test_metadata *_metadata)
{
	char *report, *p, *end, *nl;
	unsigned int leaks = 0, ours = 0;
	size_t len;

	if (access(KMEMLEAK, R_OK) || !leaks_before) {
		ksft_print_msg("no kmemleak in this kernel: leaks not checked\n");
		return;
	}
	sleep(6);
	ASSERT_EQ(0, kvod_write_file(KMEMLEAK, "scan"));
	ASSERT_EQ(0, kvod_write_file(KMEMLEAK, "scan"));
	report = kmemleak_read();
	ASSERT_NE(NULL, report);
	for (p = strstr(report, "unreferenced object"); p; p = end) {
		end = strstr(p + 1, "unreferenced object");
		len = end ? (size_t)(end - p) : strlen(p);
		nl = memchr(p, '\n', len);
		leaks++;
		/* Known before: its first line is in the old report. */
		if (nl) {
			*nl = '\0';
			if (strstr(leaks_before, p)) {
				*nl = '\n';
				continue;
			}
			*nl = '\n';
		}
		if (memmem(p, len, "kvod", 4)) {
			ours++;
			printf("# %.*s", (int)len, p);
		}
	}
	free(report);
	ksft_print_msg("kmemleak after the last sweep: %u report(s), %u new through kvod\n",
		       leaks, ours);
	EXPECT_EQ(0U, ours);
}

FIXTURE(fault) {
	int dev;
	int nth;
	int small, one, many;	/* movie files */
	__u32 push;		/* a push the test may stop */
	int feed;		/* a live channel's feed fd, or -1 */
};

/*
 * Every test starts from the same populated state, so that LISTs have
 * something to copy and a failed call has something to disturb: two
 * movies, an HTTP and (with Soft-RoCE) an RDMA listener, a slow push.
 */
FIXTURE_SETUP(fault)
{
	self->dev = self->nth = self->small = self->one = self->many = -1;
	self->feed = -1;
	if (!have_fault)
		SKIP(return, NO_FAULT);
	self->dev = open(KVOD_DEVICE, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->dev);
	self->nth = open(FAIL_NTH, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->nth);
	self->small = kvod_make_file(SMALL_BYTES, 1);
	self->one = kvod_make_file(ONE_CHUNK_BYTES, 2);
	self->many = kvod_make_file(MANY_BYTES, 3);
	ASSERT_LE(0, self->small);
	ASSERT_LE(0, self->one);
	ASSERT_LE(0, self->many);
	ASSERT_EQ(0, state_clear(self->dev));
	ASSERT_EQ(0, kvod_add(self->dev, "base1", self->small, 1000000));
	ASSERT_EQ(0, kvod_add(self->dev, "base2", self->small, 0));
	ASSERT_EQ(0, kvod_listen_v4(self->dev, true, KVOD_PROTO_HTTP,
				    "127.0.0.1", 8081));
	if (have_rxe)
		ASSERT_EQ(0, kvod_listen_v4(self->dev, true, KVOD_PROTO_RDMA,
					    RXE_ADDR, 7481));
	ASSERT_EQ(0, kvod_push_loop(self->dev, "base1", 5010, &self->push));
}

FIXTURE_TEARDOWN(fault)
{
	bool last = sweeps_done &&
		    __atomic_add_fetch(sweeps_done, 1, __ATOMIC_SEQ_CST) ==
		    NR_SWEEP_TESTS;

	if (self->nth >= 0) {
		nth_set(self->nth, 0);
		close(self->nth);
	}
	if (self->feed >= 0)
		close(self->feed);
	if (self->dev >= 0) {
		EXPECT_EQ(0, state_clear(self->dev));
		close(self->dev);
	}
	if (self->small >= 0)
		close(self->small);
	if (self->one >= 0)
		close(self->one);
	if (self->many >= 0)
		close(self->many);
	if (last)
		leak_check(_metadata);
}

typedef FIXTURE_DATA(fault) fault_t;

/*
 * One call under test: @op makes it, @undo takes back its effect (NULL
 * when it has none), @check verifies a success (NULL: nothing to check).
 * @below is an errno that a layer below kvod returns for a failed
 * allocation, and that kvod cannot tell from the real thing (0: none).
 * @least is the fewest allocations the call must make (the objects it
 * creates): a sweep that counts fewer injected nowhere, and tested
 * nothing. 0 for a call that may make none.
 */
struct call {
	const char *name;
	int (*op)(fault_t *f);
	int (*undo)(fault_t *f);
	int (*check)(fault_t *f);
	int below;
	unsigned int least;
};

/* Errnos that blame the caller: a failed allocation must not say these. */
static bool misleading(int err)
{
	switch (err) {
	case EINVAL: case ENOENT: case EEXIST: case EPERM: case EBADF:
	case EFAULT: case E2BIG: case ENOTTY: case EADDRINUSE:
	case EADDRNOTAVAIL: case EFBIG: case EIO:
	case ENETUNREACH:
		return true;
	default:
		return false;
	}
}

static void sweep(struct __test_metadata *_metadata, fault_t *f,
		  const struct call *c)
{
	struct state before, after;
	unsigned int n, failed = 0, absorbed = 0, errs[8] = { 0 }, nerr = 0, i;
	const char *diff;
	long left;
	int ret;

	for (n = 1; n <= SWEEP_MAX; n++) {
		ASSERT_EQ(0, state_take(f->dev, &before));
		ASSERT_EQ(0, nth_set(f->nth, n));
		ret = c->op(f);
		left = nth_get(f->nth);
		ASSERT_EQ(0, nth_set(f->nth, 0));
		ASSERT_LE(0, left);

		if (left) {
			/* No fault left to inject: the call made n - 1. */
			ASSERT_EQ(0, ret) TH_LOG("%s: plain call failed: %s",
						 c->name, strerror(ret));
			if (c->check)
				ASSERT_EQ(0, c->check(f));
			if (c->undo)
				ASSERT_EQ(0, c->undo(f));
			break;
		}
		if (!ret) {
			/* Absorbed: it must have done what a plain call does. */
			absorbed++;
			if (c->check)
				ASSERT_EQ(0, c->check(f))
					TH_LOG("%s: wrong result after absorbing allocation %u",
					       c->name, n);
			if (c->undo)
				ASSERT_EQ(0, c->undo(f));
		} else {
			failed++;
			EXPECT_FALSE(misleading(ret) && ret != c->below)
				TH_LOG("%s: allocation %u failed, the call says %s",
				       c->name, n, strerror(ret));
			for (i = 0; i < nerr && errs[i] != (unsigned int)ret; i++)
				;
			if (i == nerr && nerr < 8)
				errs[nerr++] = ret;
		}
		ASSERT_EQ(0, state_take(f->dev, &after));
		diff = state_diff(&before, &after);
		ASSERT_EQ(NULL, diff)
			TH_LOG("%s: allocation %u %s (%s): %s changed", c->name,
			       n, ret ? "failed the call" : "was absorbed",
			       strerror(ret), diff);

		/* The next plain call works, and can be undone. */
		if (ret) {
			ASSERT_EQ(0, c->op(f))
				TH_LOG("%s: plain call after failure %u", c->name, n);
			if (c->check)
				ASSERT_EQ(0, c->check(f));
			if (c->undo)
				ASSERT_EQ(0, c->undo(f));
			ASSERT_EQ(0, state_take(f->dev, &after));
			ASSERT_EQ(NULL, state_diff(&before, &after))
				TH_LOG("%s: call and undo after failure %u",
				       c->name, n);
		}
	}
	ASSERT_GE(SWEEP_MAX, n) TH_LOG("%s: no end to its allocations", c->name);
	ASSERT_LE(c->least, n - 1)
		TH_LOG("%s: %u allocations counted, it makes at least %u: no fault injected?",
		       c->name, n - 1, c->least);
	ksft_print_msg("%s: %u allocations; %u failed the call, %u absorbed; errnos:",
		       c->name, n - 1, failed, absorbed);
	for (i = 0; i < nerr; i++)
		printf(" %s", strerror(errs[i]));
	printf("\n");
}

/* --- ADD ---------------------------------------------------------------- */

static int add_one(fault_t *f)
{
	return kvod_add(f->dev, "m", f->one, 0);
}

static int add_many(fault_t *f)
{
	return kvod_add(f->dev, "m", f->many, 0);
}

static int del_m(fault_t *f)
{
	return kvod_del(f->dev, "m");
}

/* "m" is there with the right length and resident size. */
static int check_m(fault_t *f, unsigned long long len)
{
	struct kvod_movie_info mi;
	int ret = kvod_info(f->dev, "m", &mi);

	if (ret)
		return ret;
	if (mi.length != len || mi.resident != (len + 4095) / 4096 * 4096 ||
	    !mi.chunks)
		return -1;
	return 0;
}

static int check_one(fault_t *f)
{
	return check_m(f, ONE_CHUNK_BYTES);
}

static int check_many(fault_t *f)
{
	return check_m(f, MANY_BYTES);
}

TEST_F_TIMEOUT(fault, add_one_chunk, 600)
{
	const struct call c = { "ADD (one chunk)", add_one, del_m, check_one,
				0, 3 };

	sweep(_metadata, self, &c);
}

TEST_F_TIMEOUT(fault, add_many_chunks, 600)
{
	const struct call c = { "ADD (many chunks)", add_many, del_m, check_many,
				0, 7 };

	sweep(_metadata, self, &c);
}

/* --- DEL, INFO, STATS, LISTs --------------------------------------------- */

static int del_base2(fault_t *f)
{
	return kvod_del(f->dev, "base2");
}

static int add_base2(fault_t *f)
{
	return kvod_add(f->dev, "base2", f->small, 0);
}

TEST_F_TIMEOUT(fault, del, 600)
{
	const struct call c = { "DEL", del_base2, add_base2, NULL, 0, 0 };

	sweep(_metadata, self, &c);
}

static int info(fault_t *f)
{
	struct kvod_movie_info mi;

	return kvod_info(f->dev, "base1", &mi);
}

static int stats(fault_t *f)
{
	struct kvod_stats st;

	return kvod_stats(f->dev, &st);
}

TEST_F_TIMEOUT(fault, info_and_stats, 600)
{
	const struct call i = { "INFO", info, NULL, NULL, 0, 0 };
	const struct call s = { "STATS", stats, NULL, NULL, 0, 0 };

	sweep(_metadata, self, &i);
	sweep(_metadata, self, &s);
}

static int list_check(int dev, unsigned long cmd, __u32 esize, __u32 want)
{
	static struct kvod_listener_info buf[ROOM];	/* the largest entry */
	__u32 count;
	int ret = list_of(dev, cmd, buf, esize, &count);

	return ret ?: (count == want ? 0 : -1);
}

static int list_movies(fault_t *f)
{
	return list_check(f->dev, KVOD_IOC_MOVIE_LIST,
			  sizeof(struct kvod_movie_info), 2);
}

static int list_listeners(fault_t *f)
{
	return list_check(f->dev, KVOD_IOC_LISTENER_LIST,
			  sizeof(struct kvod_listener_info), have_rxe ? 2 : 1);
}

static int list_pushes(fault_t *f)
{
	return list_check(f->dev, KVOD_IOC_PUSH_LIST,
			  sizeof(struct kvod_push_info), 1);
}

TEST_F_TIMEOUT(fault, lists, 600)
{
	const struct call m = { "MOVIE_LIST", list_movies, NULL, NULL, 0, 1 };
	const struct call l = { "LISTENER_LIST", list_listeners, NULL, NULL, 0, 1 };
	const struct call p = { "PUSH_LIST", list_pushes, NULL, NULL, 0, 1 };

	sweep(_metadata, self, &m);
	sweep(_metadata, self, &l);
	sweep(_metadata, self, &p);
}

/* --- LISTEN and UNLISTEN -------------------------------------------------- */

/* The listener that @port names serves: HTTP accepts a TCP connection. */
static int check_http(__u16 port)
{
	struct sockaddr_in sa = {
		.sin_family = AF_INET,
		.sin_port = htons(port),
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int ret;

	if (fd < 0)
		return errno;
	ret = connect(fd, (struct sockaddr *)&sa, sizeof(sa)) ? errno : 0;
	close(fd);
	return ret;
}

/* RDMA devices on the system. */
static unsigned int rdma_devices(void)
{
	unsigned int n = 0;
	struct dirent *d;
	DIR *dir = opendir("/sys/class/infiniband");

	while (dir && (d = readdir(dir)))
		n += d->d_name[0] != '.';
	if (dir)
		closedir(dir);
	return n;
}

/*
 * An RDMA listener on @port is bound to as many devices as it should:
 * every device (wildcard, @want < 0) or @want.
 */
static int check_rdma(fault_t *f, __u16 port, int want)
{
	struct state s;
	__u32 i;
	int ret = state_take(f->dev, &s);

	if (ret)
		return ret;
	for (i = 0; i < s.nl && i < ROOM; i++) {
		if (s.l[i].proto != KVOD_PROTO_RDMA || s.l[i].addr.port != port)
			continue;
		if (want < 0)
			want = rdma_devices();
		if (s.l[i].counters[KVOD_LC_DEVICES] != (__u64)want) {
			fprintf(stderr, "# rdma listener on port %u: %llu devices\n",
				port, (unsigned long long)s.l[i].counters[KVOD_LC_DEVICES]);
			return -1;
		}
		return 0;
	}
	return ENOENT;
}

static int check_http_on(fault_t *f)
{
	return check_http(8082);
}

static int check_rdma_any(fault_t *f)
{
	return check_rdma(f, 7482, -1);
}

/* Without Soft-RoCE, whether 127.0.0.1 maps to a device is not ours. */
static int check_rdma_addr(fault_t *f)
{
	return check_rdma(f, 7483, 1);
}

static int http_on(fault_t *f)
{
	return kvod_listen_v4(f->dev, true, KVOD_PROTO_HTTP, "127.0.0.1",
			      8082);
}

static int http_off(fault_t *f)
{
	return kvod_listen_v4(f->dev, false, KVOD_PROTO_HTTP, "127.0.0.1",
			      8082);
}

static int rdma_any_on(fault_t *f)
{
	return kvod_listen_v4(f->dev, true, KVOD_PROTO_RDMA, "0.0.0.0", 7482);
}

static int rdma_any_off(fault_t *f)
{
	return kvod_listen_v4(f->dev, false, KVOD_PROTO_RDMA, "0.0.0.0", 7482);
}

static int rdma_addr_on(fault_t *f)
{
	return kvod_listen_v4(f->dev, true, KVOD_PROTO_RDMA, RXE_ADDR, 7483);
}

static int rdma_addr_off(fault_t *f)
{
	return kvod_listen_v4(f->dev, false, KVOD_PROTO_RDMA, RXE_ADDR, 7483);
}

/*
 * inet_bind() says EADDRINUSE when the TCP bind bucket cannot be
 * allocated (inet_csk_get_port()).
 */
TEST_F_TIMEOUT(fault, http_listen_unlisten, 600)
{
	const struct call on = { "LISTEN http", http_on, http_off,
				 check_http_on, EADDRINUSE, 2 };
	const struct call off = { "UNLISTEN http", http_off, http_on, NULL, 0, 0 };

	sweep(_metadata, self, &on);
	ASSERT_EQ(0, http_on(self));
	sweep(_metadata, self, &off);
}

TEST_F_TIMEOUT(fault, rdma_listen_unlisten_any, 600)
{
	const struct call on = { "LISTEN rdma 0.0.0.0", rdma_any_on,
				 rdma_any_off, check_rdma_any, 0, 2 };
	const struct call off = { "UNLISTEN rdma 0.0.0.0", rdma_any_off,
				  rdma_any_on, NULL, 0, 0 };

	sweep(_metadata, self, &on);
	ASSERT_EQ(0, rdma_any_on(self));
	sweep(_metadata, self, &off);
}

TEST_F_TIMEOUT(fault, rdma_listen_unlisten_addr, 600)
{
	const struct call on = { "LISTEN rdma ADDR", rdma_addr_on,
				 rdma_addr_off, check_rdma_addr, 0, 2 };
	const struct call off = { "UNLISTEN rdma ADDR", rdma_addr_off,
				  rdma_addr_on, NULL, 0, 0 };

	if (!have_rxe)	/* loopback is refused for RDMA */
		SKIP(return, "no Soft-RoCE: no address has an RDMA device");
	sweep(_metadata, self, &on);
	ASSERT_EQ(0, rdma_addr_on(self));
	sweep(_metadata, self, &off);
}

/* --- PUSH and STOP ---------------------------------------------------------- */

static int push_on(fault_t *f)
{
	return kvod_push_loop(f->dev, "base2", 5012, &f->push);
}

static int push_off(fault_t *f)
{
	return kvod_push_stop(f->dev, f->push);
}

TEST_F_TIMEOUT(fault, push_start_stop, 600)
{
	const struct call on = { "PUSH_START", push_on, push_off, NULL, 0, 2 };
	const struct call off = { "PUSH_STOP", push_off, push_on, NULL, 0, 0 };

	sweep(_metadata, self, &on);
	ASSERT_EQ(0, push_on(self));
	sweep(_metadata, self, &off);
}

/* --- LIVE_CREATE and LIVE_FEED ---------------------------------------------- */

/*
 * A ring of 8 chunks of 64 TS packets (12032 bytes, so 16 KiB slots), and
 * with KVOD_LIVE_RDMA its mirror: 8 more slots and a page of slot entries.
 */
#define LIVE_CHUNK	(64 * 188)
#define LIVE_SLOT	16384ULL
#define LIVE_NR		8

static int live_plain(fault_t *f)
{
	return kvod_live_create(f->dev, "live", KVOD_LIVE_TS, LIVE_CHUNK,
				LIVE_NR, 0);
}

static int live_mirrored(fault_t *f)
{
	return kvod_live_create(f->dev, "live", KVOD_LIVE_TS | KVOD_LIVE_RDMA,
				LIVE_CHUNK, LIVE_NR, 0);
}

static int live_del(fault_t *f)
{
	return kvod_del(f->dev, "live");
}

/* "live" is there, empty, with the ring (and mirror) resident. */
static int check_live(fault_t *f, __u32 opts, unsigned long long resident)
{
	struct kvod_movie_info mi;
	int ret = kvod_info(f->dev, "live", &mi);

	if (ret)
		return ret;
	if (mi.live_opts != opts || mi.live_chunk_size != LIVE_CHUNK ||
	    mi.live_seq || mi.resident != resident) {
		fprintf(stderr, "# live: opts %#x chunk %u seq %llu resident %llu\n",
			mi.live_opts, mi.live_chunk_size,
			(unsigned long long)mi.live_seq,
			(unsigned long long)mi.resident);
		return -1;
	}
	return 0;
}

static int check_plain(fault_t *f)
{
	return check_live(f, KVOD_LIVE_TS, LIVE_NR * LIVE_SLOT);
}

static int check_mirrored(fault_t *f)
{
	return check_live(f, KVOD_LIVE_TS | KVOD_LIVE_RDMA,
			  2 * LIVE_NR * LIVE_SLOT + 4096);
}

TEST_F_TIMEOUT(fault, live_create_del, 600)
{
	const struct call on = { "LIVE_CREATE", live_plain, live_del,
				 check_plain, 0, 3 };
	const struct call off = { "DEL of a channel", live_del, live_plain,
				  NULL, 0, 0 };

	sweep(_metadata, self, &on);
	ASSERT_EQ(0, live_plain(self));
	sweep(_metadata, self, &off);
}

TEST_F_TIMEOUT(fault, live_create_mirrored, 600)
{
	const struct call on = { "LIVE_CREATE --rdma", live_mirrored,
				 live_del, check_mirrored, 0, 3 };

	sweep(_metadata, self, &on);
}

static int feed_on(fault_t *f)
{
	return kvod_live_feed(f->dev, "live", &f->feed);
}

/*
 * The writer leaves with the last reference to its file, at close(); a
 * new channel in place of the old one starts again from chunk 0.
 */
static int feed_off(fault_t *f)
{
	int ret = close(f->feed) ? errno : 0;

	f->feed = -1;
	return ret ?: live_del(f) ?: live_mirrored(f);
}

/* The fd writes into the channel: one whole chunk completes it. */
static int check_feed(fault_t *f)
{
	static char chunk[LIVE_CHUNK];
	struct kvod_movie_info mi;
	unsigned int i;
	int ret;

	for (i = 0; i < sizeof(chunk); i += 188)
		chunk[i] = 0x47;
	if (write(f->feed, chunk, sizeof(chunk)) != sizeof(chunk))
		return errno ?: -1;
	ret = kvod_info(f->dev, "live", &mi);
	if (ret)
		return ret;
	if (!(mi.live_opts & KVOD_LIVE_WRITER) || mi.live_seq != 1)
		return -1;
	return 0;
}

/*
 * A failed LIVE_FEED must leave no writer (live_opts, compared by
 * state_diff, would say KVOD_LIVE_WRITER) and no fd behind; the write
 * check drives the mirror's copy too.
 */
TEST_F_TIMEOUT(fault, live_feed, 600)
{
	const struct call on = { "LIVE_FEED", feed_on, feed_off, check_feed,
				 0, 1 };

	ASSERT_EQ(0, live_mirrored(self));
	sweep(_metadata, self, &on);
}

/* --- Leaks ------------------------------------------------------------------ */

/* ------------------------------------------------------------------ */

static void unload_at_exit(void)
{
	if (getpid() != main_pid)
		return;
	kvod_module_unload();
	if (have_rxe && system(RXE_TEARDOWN))
		fprintf(stderr, "# cannot remove Soft-RoCE\n");
	if (have_fault)
		fault_knobs(false);
}

int main(int argc, char **argv)
{
	bool list_only = false;
	int i, ret;

	kvod_ko_path(ko_path, sizeof(ko_path));
	for (i = 1; i < argc; i++)
		if (!strcmp(argv[i], "-l") || !strcmp(argv[i], "-h"))
			list_only = true;
	if (list_only)
		return test_harness_run(argc, argv);
	if (!kvod_in_guest() && !kvod_test_host()) {
		ksft_print_header();
		ksft_exit_skip("not inside a selftests/qemu/vm-run guest, and no KVOD_TEST_HOST=1; refusing to load modules here\n");
	}
	have_fault = fault_available();
	if (!have_fault)	/* every test says why it skips */
		return test_harness_run(argc, argv);

	if (kvod_module_loaded() && kvod_module_unload()) {
		ksft_print_header();
		ksft_exit_fail_msg("cannot remove a stale %s\n", KVOD_MODULE);
	}
	/* What a test that died left behind, then a fresh Soft-RoCE. */
	ret = system(RXE_TEARDOWN);
	have_rxe = !system(RXE_SETUP);
	if (!have_rxe)
		ret = system(RXE_TEARDOWN);
	/*
	 * kvod.ko needs the RDMA core, which insmod does not load. The debug
	 * kernel has it built in and no modules directory, so modprobe may
	 * fail there: insmod says so if the core is really missing.
	 */
	ret = system("modprobe -q -a ib_core rdma_cm 2>/dev/null");
	ret = kvod_module_load(ko_path, "");
	if (ret) {
		ksft_print_header();
		ksft_exit_fail_msg("insmod %s: %s\n", ko_path, strerror(ret));
	}
	main_pid = getpid();
	atexit(unload_at_exit);
	leaks_before = kmemleak_read();
	sweeps_done = mmap(NULL, sizeof(*sweeps_done), PROT_READ | PROT_WRITE,
			   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sweeps_done == MAP_FAILED)
		sweeps_done = NULL;
	return test_harness_run(argc, argv);
}
