/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kvod-proxy: an HTTP/1.1 server on the viewer's machine that answers
 * GET and HEAD for /NAME by pulling the bytes from a kvod server with RDMA
 * READs. What its files share, each calling only those below it:
 *
 *	kvod-proxy.c	options, the epoll loop, timeouts
 *	proxy-client.c	accept, and one HTTP connection: parse
 *			(kmod/http_parse.c, the module's own parser),
 *			answer, send the body
 *	proxy-movie.c	one RDMA connection per open movie, shared by every
 *			player of it; its connect, READs and their
 *			completions, reported up as struct movie_events
 *	proxy-log.c	the clock and the log
 *
 * Lifetimes. The loop is one thread; nothing here is locked. A client
 * lives from accept until client_free(); once its socket is closed it
 * stays, "gone", until its READs in flight have completed, since they
 * write into its buffer. A movie lives while it is open on the server:
 * from the first request for it until it has been unused for --linger
 * seconds or its connection fails ("dead": no new READs, new requests open
 * a new connection); it is freed once no client uses it and no READ is in
 * flight on it. Both are free()d only after the batch of epoll events
 * that ended them, which may still name them. A client holds its movie
 * (pmovie.users) while it waits for the movie's connect (client.wait)
 * and from the response head to the end of the body, and its buffer
 * stays registered on that movie's protection domain (client.mr_movie,
 * which pins the movie too). A movie's connect runs in the loop like
 * everything else (kvod_connect_step() on its channels' events and at
 * its wake time), so a player waiting for one stalls no other.
 */
#ifndef KVOD_PROXY_H
#define KVOD_PROXY_H

#include <stddef.h>
#include <stdint.h>

#include "lib/kshim.h"
#include "lib/rdma.h"
#include "../kmod/http_parse.h"
#include "../kmod/http_proto.h"

#define PROXY_RESP_MAX	512

/* What an epoll event's data.ptr points at: the first member of each. */
enum proxy_ev {
	PEV_LISTEN,
	PEV_CLIENT,
	PEV_MOVIE_CQ,
	PEV_MOVIE_CM,
};

struct proxy_opts {
	const char *listen;		/* HOST:PORT */
	char host[256];			/* the kvod server */
	char port[8];
	uint32_t chunk;			/* bytes per READ */
	unsigned int depth;		/* READs in flight per player */
	unsigned int qp_depth;		/* READs in flight per movie */
	unsigned int max_clients;
	int timeout_ms;			/* per RDMA connect step */
	int send_timeout_s;		/* no progress on a response */
	int idle_timeout_s;		/* keep-alive, or a head coming */
	int linger_s;			/* an unused movie stays open */
	int foreground;
};

struct pmovie {
	enum proxy_ev cq_ev;		/* PEV_MOVIE_CQ */
	enum proxy_ev cm_ev;		/* PEV_MOVIE_CM */
	struct pmovie *next;
	struct proxy *p;
	char name[KVOD_NAME_MAX];
	struct kvod_conn c;
	unsigned int users;		/* clients answering from it */
	unsigned int regs;		/* client buffers registered on it */
	unsigned int inflight;		/* READs posted, not completed */
	/* players that found the send queue full, first come first */
	struct client *room_first, *room_last;
	int connecting;			/* kvod_connect_step() until done */
	int cc_watched;			/* c.cc's fd is in the epoll set */
	int dead;
	int fail_status;		/* dead from its connect: HTTP status */
	char why[256];			/* and the reason */
	int freed;			/* on proxy.reap_movies */
	int64_t unused_since;		/* ms; users fell to 0 */
};

enum slot_state {
	SLOT_FREE,
	SLOT_POSTED,
	SLOT_READY,
};

/* One READ's part of a client's buffer; wr_id is its address. */
struct pslot {
	struct client *cl;
	uint64_t off;
	uint32_t len;
	uint32_t sent;
	int state;
	int failed;
};

struct client {
	enum proxy_ev ev;		/* PEV_CLIENT */
	struct client *next, *prev;
	struct proxy *p;
	int fd;
	int gone;			/* socket closed, READs in flight */
	int lingering;			/* write side shut: reading to EOF */
	int acked;			/* ... the response all acknowledged */
	int unacked;			/* ... bytes not yet, at the last tick */
	int can_write;			/* no EAGAIN since the last EPOLLOUT */
	int64_t deadline;		/* ms, of the idle or send timeout */

	char in[HTTP_HDR_MAX];		/* received, not parsed */
	size_t in_len;

	char head[PROXY_RESP_MAX];	/* the response head being sent */
	size_t head_len, head_sent;
	int close_after;		/* close once the response is out */
	int responding;			/* a response (head or body) is on */

	struct pmovie *wait;		/* connecting for the request in pending */
	struct http_request pending;
	struct pmovie *m;		/* the body's movie, or NULL */
	uint64_t read_off;		/* next byte to READ */
	uint64_t end;			/* one past the body's last byte */

	struct pmovie *mr_movie;	/* where buf is registered */
	char *buf;			/* nslots * chunk bytes */
	struct ibv_mr *mr;
	struct pslot *slots;
	unsigned int nslots;
	uint64_t posted, written;	/* slot sequence numbers */
	unsigned int inflight;
	int room_queued;		/* on m's room queue */
	struct client *room_next;
};

/**
 * struct movie_events - what the RDMA side tells the players' side
 * @ready: @m's connect has ended (m->dead says how): answer the players
 *	waiting for it
 * @lost: @m's connection failed: cut its players short, deregister the
 *	buffers on it
 * @slot_done: the READ of slot @s completed, @ok or not
 * @room: completions freed room in @m's send queue: its players go on
 * @unused: @m is dead and nobody plays it: deregister the buffers still
 *	on it
 * @fds_freed: a movie closed, and its descriptors are free
 *
 * proxy-movie.c calls lib/rdma.c below it and its users only through
 * these, which proxy-client.c provides (client_movie_events).
 */
struct movie_events {
	void (*ready)(struct pmovie *m);
	void (*lost)(struct pmovie *m);
	void (*slot_done)(struct pslot *s, int ok);
	void (*room)(struct pmovie *m);
	void (*unused)(struct pmovie *m);
	void (*fds_freed)(struct proxy *p);
};

struct proxy {
	struct proxy_opts o;
	const struct movie_events *mev;
	int epfd;
	enum proxy_ev listen_ev;	/* PEV_LISTEN */
	int lfd;
	struct pmovie *movies;
	struct client *clients;
	unsigned int nclients;
	/*
	 * Freed during a batch of epoll events, which may still name them:
	 * free()d after the batch (proxy_reap()).
	 */
	struct client *reap_clients;
	struct pmovie *reap_movies;
	/*
	 * Out of descriptors or memory, accept4() fails and leaves the
	 * player in the backlog: lfd is out of the epoll set until a
	 * descriptor is freed (proxy_accept_pause()).
	 */
	int accept_paused;
	int64_t paused_at;		/* ms */
	int64_t accept_logged_at;	/* ms; accept errors are rate-limited */
	unsigned long accept_errors;	/* since the last one logged */
};

/* proxy-log.c */
int64_t proxy_now_ms(void);
void proxy_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void proxy_log_to_syslog(void);

/* proxy-client.c */
extern const struct movie_events client_movie_events;
void client_accept(struct proxy *p);
void client_accept_retry(struct proxy *p, int64_t now);
void client_event(struct client *cl, uint32_t events);
void client_movie_lost(struct client *cl);
void client_tick(struct client *cl, int64_t now);

/* proxy-movie.c */
struct pmovie *movie_open(struct proxy *p, const char *name, int *status,
			  char *why, size_t wlen);
void movie_use(struct pmovie *m);
void movie_unuse(struct pmovie *m);
void movie_cq_event(struct pmovie *m);
void movie_cm_event(struct pmovie *m);
int movie_post(struct pmovie *m, struct pslot *s, void *buf, uint32_t lkey);
int64_t movie_tick(struct proxy *p, int64_t now);
int64_t movie_wake(const struct proxy *p);
void movie_maybe_free(struct pmovie *m);

#endif /* KVOD_PROXY_H */
