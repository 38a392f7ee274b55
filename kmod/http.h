/* SPDX-License-Identifier: GPL-2.0 */
/* The HTTP server's internals, shared by http*.c only. */
#ifndef _KVOD_HTTP_H
#define _KVOD_HTTP_H

#include <linux/kref.h>
#include <linux/list.h>
#include <linux/socket.h>
#include <linux/timer.h>
#include <linux/types.h>
#include <linux/workqueue.h>

#include "cursor.h"
#include "http_parse.h"
#include "kvod.h"

/* Longest response header we build; ours are well under half of it. */
#define HTTP_RESP_MAX		512

/* sendmsg() calls per work run, so one fast client cannot hog a worker. */
#define HTTP_SEND_CALLS		8

/* A power of 2 (DOC: HTTP live queue bound). */
#define HTTP_LIVE_QUEUED	1024

/* The phases a connection's one timer can be armed for. */
enum http_phase {
	HTTP_PH_HEADER,		/* reading a request head: header deadline */
	HTTP_PH_IDLE,		/* keep-alive, nothing received: idle timeout */
	HTTP_PH_SEND,		/* a response: send timeout without progress */
	HTTP_PH_LINGER,		/* an error answer, or closing: a moment only */
};

enum http_state {
	HTTP_NEW,		/* accepted; the work has not taken it over */
	HTTP_READ,		/* waiting for or parsing a request */
	HTTP_SEND,		/* queueing a response */
	HTTP_DRAIN,		/* all queued: waiting for its acknowledgment */
	HTTP_LINGER,		/* delivered, write side shut, draining input */
	HTTP_DEAD,		/* socket released */
};

struct http_server;

/**
 * struct http_live_tx - the body of a response from a live channel
 * @watch: on the channel while the response has a body
 * @page: the chunk being sent, held (kvod_live_take()); NULL between chunks
 * @seq: that chunk, or the next one wanted
 * @len: its bytes
 * @off: its bytes TCP took so far
 * @frame: chunked coding to send before the chunk's bytes: the CRLF that
 *	ends the previous chunk, the size line; or the last chunk
 * @frame_len: bytes in @frame
 * @frame_sent: bytes of @frame TCP took so far
 * @chunked: Transfer-Encoding: chunked (HTTP/1.1), not close-delimited
 * @started: a chunk went out, so the next size line needs a CRLF first
 * @ending: @frame holds the last chunk: the body is done once it is sent
 * @waiting: the last attempt found no chunk ready (DOC: HTTP send progress)
 * @ends: TCP's sequence number past each chunk maybe not yet acknowledged,
 *	oldest at @ends[@first % N] (DOC: HTTP live queue bound)
 * @first: index of the oldest
 * @queued: entries of @ends in use
 */
struct http_live_tx {
	struct kvod_live_watcher watch;
	struct page *page;
	u64 seq;
	u32 len;
	u32 off;
	char frame[24];
	u32 frame_len;
	u32 frame_sent;
	bool chunked;
	bool started;
	bool ending;
	bool waiting;
	u32 *ends;
	u32 first;
	u32 queued;
};

/**
 * struct http_tx - the response being sent
 * @hdr: status line and header fields
 * @hdr_len: bytes in @hdr
 * @hdr_sent: bytes of @hdr TCP took so far
 * @movie: the movie of the body, a reference; NULL if no body
 * @cursor: the walk of @movie's bytes when it is a movie, from
 *	kvod_http_respond() to kvod_http_tx_done(); zeroed otherwise
 * @pos: next movie offset to send: the progress counter
 * @end: movie offset one past the last byte to send
 * @status: the status code, for counters
 * @close: close the connection once the response is out
 * @live: the body's state when @movie is a live channel (http_live.c);
 *	@pos then counts the body's bytes and @end is unused
 */
struct http_tx {
	char hdr[HTTP_RESP_MAX];
	u32 hdr_len;
	u32 hdr_sent;
	struct kvod_movie *movie;
	struct kvod_cursor cursor;
	u64 pos;
	u64 end;
	u16 status;
	bool close;
	struct http_live_tx live;
};

/**
 * struct http_conn - one accepted TCP connection
 * @ref: see DOC: HTTP connection lifetimes
 * @srv: the listener's HTTP state
 * @sock: the socket; NULL once released
 * @node: on srv->conns, under srv->lock
 * @peer: the client's address; in srv->peers[] while it counts, under srv->lock
 * @work: runs the state machine (DOC: HTTP connection work)
 * @timer: the deadline of @phase
 * @deadline: jiffies at which @phase expires
 * @acked: the socket's snd_una when the phase's deadline was armed
 * @need: HTTP_DRAIN: bytes the client must acknowledge per send timeout
 * @flags: HTTP_CONN_*
 * @state: enum http_state
 * @phase: enum http_phase
 * @served: responses queued in full on this connection
 * @rx_parse: @rx may hold a whole head (or a fatal byte): parse it
 * @rx_len: bytes in @rx
 * @tx: the response in flight (state HTTP_SEND)
 * @data_ready: the socket's own callback (a plain TCP socket's), restored
 *	by conn_close()
 * @write_space: likewise
 * @state_change: likewise
 * @rx: HTTP_HDR_MAX bytes for received, not yet parsed bytes; pipelined
 *	requests wait here
 */
struct http_conn {
	struct kref ref;
	struct http_server *srv;
	struct socket *sock;
	struct list_head node;
	struct kvod_peer peer;
	struct work_struct work;
	struct timer_list timer;
	unsigned long deadline;
	u32 acked;
	u32 need;
	unsigned long flags;
	u8 state;
	u8 phase;
	u32 served;
	bool rx_parse;
	u32 rx_len;
	struct http_tx tx;
	void (*data_ready)(struct sock *sk);
	void (*write_space)(struct sock *sk);
	void (*state_change)(struct sock *sk);
	char *rx;
};

/* http_conn.flags */
#define HTTP_CONN_STOP		0	/* the listener is going away: abort */
#define HTTP_CONN_REFUSE	1	/* over a limit: answer 503 and close */
#define HTTP_CONN_DRAIN		2	/* HTTP_DRAIN: wake on full delivery only */

/* http.c */
struct kvod_listener *kvod_http_listener(const struct http_conn *conn);
void kvod_http_conn_queue(struct http_conn *conn);

/* http_live.c */
void kvod_http_live_begin(struct http_conn *conn, bool http10, u32 *ends);
int kvod_http_live_send(struct http_conn *conn);
void kvod_http_live_done(struct http_conn *conn);

/* http_send.c */
void kvod_http_respond(struct http_conn *conn, const struct http_request *req);
void kvod_http_respond_error(struct http_conn *conn, u16 status);
int kvod_http_send(struct http_conn *conn);
int kvod_http_send_copy(struct socket *sock, const char *buf, u32 len,
			u32 *sent, bool more);
void kvod_http_tx_done(struct http_conn *conn);

#endif /* _KVOD_HTTP_H */
