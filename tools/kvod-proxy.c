// SPDX-License-Identifier: GPL-2.0
/*
 * kvod-proxy: let any HTTP player stream from a kvod RDMA server.
 *
 *   kvod-proxy [-f] [--listen ENDPOINT] [--chunk SIZE] [--depth N]
 *	[--qp-depth N] [--max-clients N] [--timeout MS] [--send-timeout SEC]
 *	[--idle-timeout SEC] [--linger SEC] rdma://HOST[:PORT]
 *
 * Runs on the viewer's machine (default 127.0.0.1:8554): a player asks
 * for http://127.0.0.1:8554/NAME and the proxy answers with the movie's
 * bytes, READ from the server. One thread, one epoll loop over the
 * listening socket, the players' sockets and each open movie's completion
 * and rdma_cm channels. kvod-proxy.h says how the parts fit and live.
 * Documentation/kvod-proxy.1 is the manual.
 *
 * Exit status: 0 on SIGINT or SIGTERM, 1 if it cannot start, 2 bad usage.
 */
#define _GNU_SOURCE
#include "kvod-proxy.h"
#include "lib/endpoint.h"
#include "lib/options.h"

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#define EXIT_FAIL	1
#define EXIT_USAGE	2

/*
 * Descriptors besides the players' sockets: stdio, epoll, the listening
 * socket, syslog, and per open movie its rdma_cm and completion channels
 * and verbs device (about 16 movies).
 */
#define FD_SPARE	64

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: kvod-proxy [-f] [--listen ENDPOINT] [--chunk SIZE] [--depth N]\n"
		"                  [--qp-depth N] [--max-clients N] [--timeout MS]\n"
		"                  [--send-timeout SEC] [--idle-timeout SEC] [--linger SEC]\n"
		"                  rdma://HOST[:PORT]\n"
		"  ENDPOINT is IPV4:PORT, [IPV6]:PORT or PORT (default 127.0.0.1:8554).\n"
		"  HOST is a name, an IPv4 address or [IPv6]; PORT defaults to %d.\n"
		"  SIZE and N take k/K, M, G suffixes (powers of 1024).\n",
		KVOD_RDMA_PORT);
}

static int parse_args(int argc, char **argv, struct proxy_opts *o)
{
	const struct kvod_opt opts[] = {
		KVOD_OPT("foreground", no_argument, 'f'),
		KVOD_OPT("listen", required_argument, 'l'),
		KVOD_NUM("chunk", 'c', 4096, 64 << 20, o->chunk),
		KVOD_NUM("depth", 'd', 1, 256, o->depth),
		KVOD_NUM("qp-depth", 'Q', 1, 4096, o->qp_depth),
		KVOD_NUM("max-clients", 'm', 1, 1 << 20, o->max_clients),
		KVOD_NUM("timeout", 't', 1, 600000, o->timeout_ms),
		KVOD_NUM("send-timeout", 's', 1, 86400, o->send_timeout_s),
		KVOD_NUM("idle-timeout", 'i', 1, 86400, o->idle_timeout_s),
		KVOD_NUM("linger", 'L', 0, 86400, o->linger_s),
		KVOD_OPT("help", no_argument, 'h'),
		{ }
	};
	struct kvod_cmdline cl = {
		.shortopts = "fh",
		.opts = opts,
		.usage = usage,
	};
	const char *url;
	size_t n;
	int opt;

	while ((opt = kvod_getopt(&cl, argc, argv)) != -1) {
		switch (opt) {
		case 'f':
			o->foreground = 1;
			break;
		case 'l':
			o->listen = optarg;
			break;
		case KVOD_OPT_BAD:
			fprintf(stderr, "kvod-proxy: bad value '%s' for --%s\n",
				optarg, kvod_opt_name(&cl));
			return -1;
		default:
			return -1;	/* kvod_getopt() printed the usage */
		}
	}
	url = argv[optind];
	n = strlen(url);
	if (n > 7 && url[n - 1] == '/')
		n--;
	if (strncmp(url, "rdma://", 7) || n <= 7 || memchr(url + 7, '/', n - 7) ||
	    kvod_parse_server(url + 7, n - 7, o->host, sizeof(o->host),
			      o->port, sizeof(o->port))) {
		fprintf(stderr, "kvod-proxy: '%s' is not rdma://HOST[:PORT]\n",
			url);
		return -1;
	}
	return 0;
}

/*
 * Room for --max-clients players and FD_SPARE more descriptors. The soft
 * RLIMIT_NOFILE is often 1024, no more than the default --max-clients, so
 * raise it as far as the hard limit allows: the loop uses epoll, not
 * select(), so descriptors above 1024 are safe. If the hard limit is too
 * low, say so: the players past it wait in the listen backlog
 * (accept_pause() in proxy-client.c); unlike those past --max-clients,
 * they get no 503.
 */
static void fit_nofile(const struct proxy_opts *o)
{
	rlim_t need = (rlim_t)o->max_clients + FD_SPARE;
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur == RLIM_INFINITY ||
	    rl.rlim_cur >= need)
		return;
	if (rl.rlim_max == RLIM_INFINITY || rl.rlim_max >= need) {
		rl.rlim_cur = need;
		if (!setrlimit(RLIMIT_NOFILE, &rl))
			return;
	}
	proxy_log("kvod-proxy: --max-clients %u needs about %llu descriptors, but RLIMIT_NOFILE is %llu: players past that wait until others leave",
		  o->max_clients, (unsigned long long)need,
		  (unsigned long long)rl.rlim_cur);
}

static int listen_on(struct proxy *p)
{
	struct epoll_event e = { .events = EPOLLIN, .data.ptr = &p->listen_ev };
	struct sockaddr_storage ss = { 0 };
	struct kvod_sockaddr ka;
	socklen_t len;
	int one = 1;

	if (kvod_parse_endpoint(p->o.listen, false, &ka)) {
		fprintf(stderr, "kvod-proxy: '%s' is not an endpoint\n",
			p->o.listen);
		return -1;
	}
	if (ka.family == AF_INET6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;

		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(ka.port);
		s6->sin6_scope_id = ka.scope_id;
		memcpy(&s6->sin6_addr, ka.addr, 16);
		len = sizeof(*s6);
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;

		s4->sin_family = AF_INET;
		s4->sin_port = htons(ka.port);
		memcpy(&s4->sin_addr, ka.addr, 4);
		len = sizeof(*s4);
	}
	p->listen_ev = PEV_LISTEN;
	p->lfd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
			0);
	if (p->lfd < 0 ||
	    setsockopt(p->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(p->lfd, (struct sockaddr *)&ss, len) ||
	    listen(p->lfd, 128) ||
	    epoll_ctl(p->epfd, EPOLL_CTL_ADD, p->lfd, &e)) {
		fprintf(stderr, "kvod-proxy: cannot listen on %s: %s\n",
			p->o.listen, strerror(errno));
		return -1;
	}
	return 0;
}

static void dispatch(struct proxy *p, struct epoll_event *e)
{
	enum proxy_ev *ev = e->data.ptr;

	switch (*ev) {
	case PEV_LISTEN:
		client_accept(p);
		break;
	case PEV_CLIENT:
		client_event((struct client *)ev, e->events);
		break;
	case PEV_MOVIE_CQ: {
		struct pmovie *m = (struct pmovie *)ev;

		if (!m->freed)
			movie_cq_event(m);
		break;
	}
	case PEV_MOVIE_CM: {
		struct pmovie *m = (struct pmovie *)
			((char *)ev - offsetof(struct pmovie, cm_ev));

		if (!m->freed)
			movie_cm_event(m);
		break;
	}
	}
}

/* Timeouts; returns when a connect is due next (movie_tick()). */
static int64_t tick(struct proxy *p)
{
	int64_t now = proxy_now_ms();
	struct client *cl, *next;

	for (cl = p->clients; cl; cl = next) {
		next = cl->next;
		client_tick(cl, now);
	}
	client_accept_retry(p, now);
	return movie_tick(p, now);
}

/* After a batch of events: free what it ended. */
static void reap(struct proxy *p)
{
	while (p->reap_movies) {
		struct pmovie *m = p->reap_movies;

		p->reap_movies = m->next;
		free(m);
	}
	while (p->reap_clients) {
		struct client *cl = p->reap_clients;

		p->reap_clients = cl->next;
		free(cl);
	}
}

/* Close the players; exit releases the RDMA resources with the process. */
static void shut_down(struct proxy *p)
{
	while (p->clients)
		client_movie_lost(p->clients);
	reap(p);
}

int main(int argc, char **argv)
{
	struct proxy p = {
		.mev = &client_movie_events,
		.o = {
			.listen = "127.0.0.1:8554",
			.chunk = 256 * 1024,
			.depth = 8,
			.qp_depth = 64,
			.max_clients = 1024,
			.timeout_ms = 5000,
			.send_timeout_s = 60,
			.idle_timeout_s = 60,
			.linger_s = 30,
		},
	};
	struct epoll_event ev[64];
	int64_t next_tick = 0, wake = INT64_MAX;

	if (parse_args(argc, argv, &p.o))
		return EXIT_USAGE;
	fit_nofile(&p.o);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	p.epfd = epoll_create1(EPOLL_CLOEXEC);
	if (p.epfd < 0 || listen_on(&p))
		return EXIT_FAIL;
	if (!p.o.foreground) {
		if (daemon(0, 0)) {
			fprintf(stderr, "kvod-proxy: daemon: %s\n",
				strerror(errno));
			return EXIT_FAIL;
		}
		proxy_log_to_syslog();
	}
	proxy_log("kvod-proxy: serving %s from rdma://%s:%s", p.o.listen,
		  p.o.host, p.o.port);

	while (!stop) {
		int64_t left = wake - proxy_now_ms();
		int n, i;

		n = epoll_wait(p.epfd, ev, 64, left < 0 ? 0 :
			       left < 1000 ? (int)left : 1000);
		if (n < 0 && errno != EINTR) {
			proxy_log("kvod-proxy: epoll_wait: %s", strerror(errno));
			break;
		}
		for (i = 0; i < n; i++)
			dispatch(&p, &ev[i]);
		/* A connect started or stepped meanwhile has its own time. */
		wake = movie_wake(&p);
		if (proxy_now_ms() >= next_tick || proxy_now_ms() >= wake) {
			wake = tick(&p);
			next_tick = proxy_now_ms() + 1000;
		}
		reap(&p);
	}
	shut_down(&p);
	close(p.lfd);
	close(p.epfd);
	return 0;
}
