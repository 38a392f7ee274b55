// SPDX-License-Identifier: GPL-2.0
/* HTTP responses from live channels: a body without end, never copied. */

/**
 * DOC: HTTP live responses
 *
 * A response starts at the channel's newest complete chunk, or at the
 * first chunk if none is complete yet (kvod_live_newest()). For each chunk
 * it holds the chunk's page (kvod_live_take()), sends the chunked coding's
 * size line, a few bytes that TCP copies, then hands the chunk to TCP
 * with ``MSG_SPLICE_PAGES`` as http_send.c does for movies. It lets go of
 * the page once TCP took all of it, as TCP's own page references keep it
 * from the writer ("Overwrite without tearing"); a response that fell a
 * ring behind skips ahead between chunks, so a client gets whole chunks,
 * each as written.
 *
 * From kvod_http_live_begin() to kvod_http_live_done() (the end of the
 * response, or of its connection) the response watches the channel
 * (kvod_live_watch()), so a completed chunk or the channel's end queues
 * the connection's work; a full socket wakes it as for movies. When the
 * channel ends (DEL), the body ends with the last chunk of the chunked
 * coding (HTTP/1.1), so the client sees a complete response, or with the
 * connection (HTTP/1.0). A client that closes its side while the channel
 * is idle is let go at once.
 */

/**
 * DOC: HTTP live queue bound
 *
 * A response keeps at most ``HTTP_LIVE_QUEUED`` chunks in TCP's queue, as
 * each of them pins its whole slot page, outside the cap (counted in the
 * graveyard once the writer swaps it out: "Overwrite without tearing").
 * It records TCP's sequence number past each chunk it hands
 * over (``ends``), forgets those the client acknowledged, and with
 * ``HTTP_LIVE_QUEUED`` left it waits, as on a full socket, for the client
 * to acknowledge the oldest. The send timeout applies to that wait as to a
 * full socket's, and to a wait for the writer ("HTTP send progress"). A
 * response pins at most ``HTTP_LIVE_QUEUED`` + 1 chunk pages, besides what
 * TCP's send buffer limits anyway.
 */
#include <linux/bvec.h>
#include <linux/kernel.h>
#include <linux/mm.h>
#include <linux/net.h>
#include <linux/uio.h>
#include <linux/slab.h>
#include <net/sock.h>
#include <net/tcp.h>
#include <net/tcp_states.h>

#include "http.h"

static void live_notify(struct kvod_live_watcher *w,
			const struct kvod_live_event *ev)
{
	struct http_conn *conn = container_of(w, struct http_conn,
					      tx.live.watch);

	kvod_http_conn_queue(conn);
}

/**
 * kvod_http_live_begin() - start the body of a live response
 * @conn: the connection; conn->tx.movie is the channel, opened
 * @http10: the request was HTTP/1.0: no chunked coding
 * @ends: HTTP_LIVE_QUEUED entries for @conn->tx.live.ends, which keeps
 *	them until kvod_http_live_done()
 */
void kvod_http_live_begin(struct http_conn *conn, bool http10, u32 *ends)
{
	struct http_live_tx *lt = &conn->tx.live;
	struct kvod_live *ch = conn->tx.movie->live;

	lt->ends = ends;
	lt->chunked = !http10;
	lt->seq = kvod_live_newest(ch);
	kvod_live_watch(ch, &lt->watch, live_notify);
}

/**
 * kvod_http_live_done() - let go of the channel's ring, sent or not
 * @conn: the connection, whose conn->tx.movie is still the channel
 */
void kvod_http_live_done(struct http_conn *conn)
{
	struct http_live_tx *lt = &conn->tx.live;

	kvod_live_unwatch(conn->tx.movie->live, &lt->watch);
	if (lt->page)
		put_page(lt->page);
	lt->page = NULL;
	kfree(lt->ends);
	lt->ends = NULL;
}

/* Forget the chunks the client acknowledged; true if one more may go. */
static bool queue_room(struct http_live_tx *lt, const struct sock *sk)
{
	u32 una = READ_ONCE(tcp_sk(sk)->snd_una);

	while (lt->queued &&
	       !after(lt->ends[lt->first % HTTP_LIVE_QUEUED], una)) {
		lt->first++;
		lt->queued--;
	}
	return lt->queued < HTTP_LIVE_QUEUED;
}

/*
 * Wait as on a full socket (DOC: HTTP live queue bound). SOCK_NOSPACE is
 * set before the last look, so that an acknowledgment in between is not
 * missed.
 */
static bool queue_full(struct http_conn *conn)
{
	struct http_live_tx *lt = &conn->tx.live;
	struct socket *sock = conn->sock;

	if (queue_room(lt, sock->sk))
		return false;
	set_bit(SOCK_NOSPACE, &sock->flags);
	smp_mb__after_atomic();	/* pairs with tcp_check_space() */
	return !queue_room(lt, sock->sk);
}

static int send_frame(struct http_conn *conn)
{
	struct http_live_tx *lt = &conn->tx.live;

	/* unless this is the last frame, the chunk follows */
	return kvod_http_send_copy(conn->sock, lt->frame, lt->frame_len,
				   &lt->frame_sent, !lt->ending);
}

/* Hand the rest of the held chunk to TCP; 0 once all of it is there. */
static int send_chunk(struct http_conn *conn)
{
	struct http_live_tx *lt = &conn->tx.live;
	struct msghdr msg = {
		.msg_flags = MSG_SPLICE_PAGES | MSG_DONTWAIT,
	};
	struct bio_vec bv;
	u32 left = lt->len - lt->off;
	int ret;

	bvec_set_page(&bv, lt->page, left, lt->off);
	iov_iter_bvec(&msg.msg_iter, ITER_SOURCE, &bv, 1, left);
	ret = sock_sendmsg(conn->sock, &msg);
	if (ret <= 0)
		return ret ?: -EAGAIN;

	lt->off += ret;
	conn->tx.pos += ret;
	atomic64_add(ret, &conn->tx.movie->bytes_served);
	kvod_lc_add(kvod_http_listener(conn), KVOD_LC_BYTES, ret);
	if (ret < left)
		return -EAGAIN;	/* TCP set SOCK_NOSPACE */
	/* The chunk's page is TCP's until the client acknowledges this. */
	lt->ends[(lt->first + lt->queued++) % HTTP_LIVE_QUEUED] =
		READ_ONCE(tcp_sk(conn->sock->sk)->write_seq);
	put_page(lt->page);
	lt->page = NULL;
	lt->seq++;
	return 0;
}

static void set_frame(struct http_live_tx *lt, const char *fmt, u32 len)
{
	lt->frame_len = scnprintf(lt->frame, sizeof(lt->frame), fmt,
				  lt->started ? "\r\n" : "", len);
	lt->frame_sent = 0;
}

/*
 * Take the next chunk and frame it, or, once the channel ended, frame the
 * last chunk. Return: 0, 1 when the body is complete, -EAGAIN when the
 * next chunk is not written yet, -ENOBUFS when TCP holds as many chunks
 * of the response as it may.
 */
static int next_chunk(struct http_conn *conn)
{
	struct http_live_tx *lt = &conn->tx.live;
	int ret;

	if (queue_full(conn))
		return -ENOBUFS;
	ret = kvod_live_take(conn->tx.movie->live, &lt->seq, &lt->page,
			     &lt->len);
	if (ret == -EPIPE) {
		if (!lt->chunked)
			return 1;
		set_frame(lt, "%s%x\r\n\r\n", 0);
		lt->ending = true;
		return 0;
	}
	if (ret)
		return ret;
	lt->off = 0;
	if (lt->chunked)
		set_frame(lt, "%s%x\r\n", lt->len);
	lt->started = true;
	return 0;
}

/*
 * A body without end has no use for a client that closed its side, and
 * while the channel is idle nothing would be sent to find that out: its
 * FIN (or a reset) wakes the connection, and this ends the response.
 */
static bool client_gone(const struct http_conn *conn)
{
	const struct sock *sk = conn->sock->sk;

	return READ_ONCE(sk->sk_err) ||
	       READ_ONCE(sk->sk_state) != TCP_ESTABLISHED;
}

/*
 * A reset purges TCP's queue, so its acknowledgments never come: a
 * response waiting for them must not wait out the send timeout.
 */
static bool client_reset(const struct http_conn *conn)
{
	const struct sock *sk = conn->sock->sk;

	return READ_ONCE(sk->sk_err) || READ_ONCE(sk->sk_state) == TCP_CLOSE;
}

/**
 * kvod_http_live_send() - push a live response's body on
 * @conn: the connection, from its work
 *
 * Return: as kvod_http_send(); -EAGAIN also when the next chunk is not
 * written yet (conn->tx.live.waiting is then set, and the channel wakes
 * the connection).
 */
int kvod_http_live_send(struct http_conn *conn)
{
	struct http_live_tx *lt = &conn->tx.live;
	unsigned int calls;
	int ret;

	lt->waiting = false;
	for (calls = 0; calls < HTTP_SEND_CALLS; calls++) {
		if (lt->frame_sent < lt->frame_len) {
			ret = send_frame(conn);
			if (ret || lt->ending)
				return ret;
		} else if (lt->page) {
			ret = send_chunk(conn);
			if (ret)
				return ret;
		} else {
			ret = next_chunk(conn);
			if (ret == 1)
				return 0;
			if (ret == -ENOBUFS && client_reset(conn))
				return -ECONNRESET;
			if (ret == -ENOBUFS)
				return -EAGAIN;	/* a full socket's wait */
			if (ret == -EAGAIN && client_gone(conn))
				return -ECONNRESET;
			if (ret == -EAGAIN)
				lt->waiting = true;
			if (ret)
				return ret;
		}
	}
	return -EINPROGRESS;
}
