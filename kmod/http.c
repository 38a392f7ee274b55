// SPDX-License-Identifier: GPL-2.0
/* HTTP/1.1 range server: listeners and connections. */

/**
 * DOC: HTTP connection work
 *
 * Each accepted connection gets a struct http_conn whose socket callbacks
 * (``sk_data_ready``, ``sk_write_space``, ``sk_state_change``) and whose
 * one timer do nothing but queue the connection's work, with a reference
 * of its own. That work runs the state machine with non-blocking socket
 * calls only, and stops when a call would block, so a worker never sleeps
 * on a client.
 *
 * A work item never runs concurrently with itself, which is what
 * serialises a connection: every field of struct http_conn but @ref and
 * @flags is touched by its work only, except the listener's linkage
 * (@node and @peer, under the listener's spinlock, which http_stop()'s
 * abort of the connections takes too) and what a live response's watcher
 * reads (@srv and @work, set before the watcher is added).
 *
 * An accepted socket is a clone of the listening one and carries its
 * ``sk_data_ready`` and ``sk_user_data``. conn_start(), in the accept
 * work, first gives it back a plain TCP socket's, so that no failure path
 * (a connection refused unanswered, a failed allocation) releases a socket
 * that points into kvod. The connection's own callbacks and timer are
 * installed, and its first deadline armed, by the first run of its work
 * (conn_begin(), state ``HTTP_NEW``): nothing can run the state machine
 * before it is set up, and nothing but that work can.
 */

/**
 * DOC: HTTP delivery
 *
 * A response is done when the client acknowledged all of it
 * (``HTTP_DRAIN``), not when TCP took it. Only then does the connection
 * let go of the movie, whose pages TCP's queue references until then, and
 * only then does a closing connection start its short linger. With
 * ``Connection: close`` the write side is shut right after the last byte
 * (``SHUT_WR``), so the FIN follows the data and is acknowledged with it.
 * A keep-alive response without a body holds nothing and does not wait.
 * A body that cannot be completed, because its file shrank or cannot be
 * read (DOC: The cursor), ends the same way right after the last byte
 * TCP took: the client sees a FIN and fewer bytes than Content-Length,
 * never a reset and never a byte past the file's new end.
 *
 * ``HTTP_DRAIN`` waits for the client's acknowledgment of everything
 * queued, the FIN included when closing. It sets ``SOCK_NOSPACE`` so that
 * TCP calls ``sk_write_space`` on acknowledgements, and that callback
 * queues the work only once ``snd_una`` reached ``write_seq``; a reset
 * wakes the work through ``sk_state_change``. While closing it discards
 * what the client sends; the client's EOF does not end it, as a client may
 * half-close and still read.
 */

/**
 * DOC: HTTP send progress
 *
 * A response is reset after ``http_send_timeout`` seconds without
 * progress. As with nginx's ``send_timeout``, the clock runs between two
 * steps of progress, not over the whole transfer. Progress is:
 *
 * * while the response is still being queued, TCP taking more of it,
 *   which TCP allows once about a third of its send buffer drained; so
 *   the clock runs on while the response waits for its file's bytes to
 *   be read (DOC: Cursor waits), and a device that does not answer ends
 *   it like a client that does not read;
 * * once all of it is queued (``HTTP_DRAIN``), the client acknowledging a
 *   third of what was then unacknowledged, so the drain takes at most
 *   three timeouts (drain_progress());
 * * for a live response that has sent every chunk written so far and
 *   waits for the writer, the client acknowledging anything, or having
 *   nothing left to acknowledge (live_acking()). The clock does not stop
 *   while the response waits: a client that stopped reading would keep
 *   the chunks in TCP's queue pinned for as long as the channel stays
 *   idle.
 *
 * So a client that stops reading, or reads a byte a minute (TCP opens no
 * window for that), holds its movie for at most that long after it
 * stalled, a deleted movie included, and its live chunks however long the
 * channel stays idle.
 */

/**
 * DOC: HTTP connection lifetimes
 *
 * A connection holds one reference for its life and one per queued run of
 * its work (kvod_http_conn_queue()). Teardown happens in the work
 * (conn_close()):
 *
 * 1. restore the socket's callbacks, and clear ``sk_user_data``, under the
 *    write side of ``sk_callback_lock``; the callbacks read
 *    ``sk_user_data`` under the read side, so none of ours runs for the
 *    socket after this;
 * 2. shut the timer down;
 * 3. release the socket (reset when aborting: ``SO_LINGER`` 0);
 * 4. let go of the response's cursor, then of its movie (DOC: The cursor);
 * 5. drop the life reference.
 *
 * The last reference unlinks the connection from its listener and frees
 * it.
 *
 * A socket closed gracefully (on the client's EOF, or at the idle timeout)
 * is left to TCP as an orphan, which must still get its FIN acknowledged.
 * tcp_close() stops the timers of a socket that does not hold its
 * namespace, and accepted sockets of a kernel listener do not, so such an
 * orphan would never send its FIN again nor die, outside every limit of
 * kvod's. So conn_close() has the socket hold its namespace first
 * (conn_may_orphan()), as a userspace server's socket does: TCP sends the
 * FIN again and ends the orphan within ``tcp_orphan_retries``
 * (``tcp_fin_timeout`` once the FIN is acknowledged). In a namespace
 * already going away the socket is reset instead, and so is a connection
 * closed without a response: one refused past the 503 slack, or one whose
 * setup failed.
 *
 * A listener's struct http_server outlives its connections. http_stop()
 * restores the listening socket's callback, cancels the accept work,
 * releases the listening socket, flags every connection to abort
 * (``HTTP_CONN_STOP``: a reset, so nothing lingers) and queues its work,
 * and waits until the last connection is freed. Only then does it destroy
 * the workqueue, which waits for the works that freed them to return, and
 * free the server.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/in6.h>
#include <linux/module.h>
#include <linux/net.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/tcp.h>
#include <linux/wait.h>
#include <net/sock.h>
#include <net/tcp.h>

#include "http.h"

static unsigned int http_max_conns = 16384;
module_param(http_max_conns, uint, 0644);
MODULE_PARM_DESC(http_max_conns,
		 "HTTP connections over all listeners, 0 for no limit; more get 503 (default 16384)");

static unsigned int http_max_conns_per_addr = 1024;
module_param(http_max_conns_per_addr, uint, 0644);
MODULE_PARM_DESC(http_max_conns_per_addr,
		 "HTTP connections per client address and listener, 0 for no limit; more get 503 (default 1024)");

static unsigned int http_header_timeout = 10;
module_param(http_header_timeout, uint, 0644);
MODULE_PARM_DESC(http_header_timeout,
		 "Seconds a client has to send a complete request head (default 10)");

static unsigned int http_idle_timeout = 60;
module_param(http_idle_timeout, uint, 0644);
MODULE_PARM_DESC(http_idle_timeout,
		 "Seconds an idle keep-alive connection lives (default 60)");

static unsigned int http_send_timeout = 60;
module_param(http_send_timeout, uint, 0644);
MODULE_PARM_DESC(http_send_timeout,
		 "Seconds a response may make no progress before it is reset (default 60)");

#define HTTP_BACKLOG		1024
#define HTTP_LINGER_SECS	2	/* an error answer; input after delivery */
#define HTTP_REFUSE_SLACK	64	/* 503 answers in flight */
#define HTTP_STEPS		16	/* state machine steps per work run */
#define HTTP_ACCEPT_RETRY	(HZ / 10)	/* after a failed accept */

#define HTTP_KEEPIDLE		120
#define HTTP_KEEPINTVL		30
#define HTTP_KEEPCNT		4

static atomic_t http_nr_conns = ATOMIC_INIT(0);	/* all listeners */
static atomic_t http_nr_refusing = ATOMIC_INIT(0);

/**
 * struct http_server - the HTTP half of a listener (kvod_listener.priv)
 * @l: the listener
 * @sock: the listening socket
 * @wq: runs @accept_work and every connection's work
 * @accept_work: accepts until the backlog is empty (accept_work())
 * @data_ready: the listening socket's callback before ours
 * @lock: protects @conns, @peers, @nr_conns
 * @conns: every connection not yet freed
 * @peers: connections that count against the per-address limit, by address
 * @nr_conns: entries on @conns
 * @wait: woken when @nr_conns drops to 0
 */
struct http_server {
	struct kvod_listener *l;
	struct socket *sock;
	struct workqueue_struct *wq;
	struct delayed_work accept_work;
	void (*data_ready)(struct sock *sk);
	spinlock_t lock;	/* see the kernel-doc above */
	struct list_head conns;
	struct hlist_head peers[BIT(KVOD_PEER_BITS)];
	unsigned int nr_conns;
	wait_queue_head_t wait;
};

struct kvod_listener *kvod_http_listener(const struct http_conn *conn)
{
	return conn->srv->l;
}

enum {
	STEP_AGAIN,	/* progress: run the next step */
	STEP_WAIT,	/* wait for a socket callback or the timer */
	STEP_YIELD,	/* more to do, but let others run first */
	STEP_ABORT,	/* broken: reset the connection */
};

static void conn_release(struct kref *ref)
{
	struct http_conn *conn = container_of(ref, struct http_conn, ref);
	struct http_server *srv = conn->srv;
	bool last;

	spin_lock(&srv->lock);
	list_del(&conn->node);
	hlist_del_init(&conn->peer.node);
	last = !--srv->nr_conns;
	spin_unlock(&srv->lock);

	if (test_bit(HTTP_CONN_REFUSE, &conn->flags))
		atomic_dec(&http_nr_refusing);
	else
		atomic_dec(&http_nr_conns);
	kvod_lc_dec(srv->l, KVOD_LC_ACTIVE);
	kfree(conn->rx);
	kfree(conn);
	/* http_stop() frees srv only after this work returned. */
	if (last)
		wake_up(&srv->wait);
}

/* Queue the work with a reference of its own. Any context. */
void kvod_http_conn_queue(struct http_conn *conn)
{
	kref_get(&conn->ref);
	if (!queue_work(conn->srv->wq, &conn->work))
		kref_put(&conn->ref, conn_release);
}

static void conn_wake(struct sock *sk)
{
	struct http_conn *conn;

	read_lock_bh(&sk->sk_callback_lock);
	conn = sk->sk_user_data;
	if (conn)
		kvod_http_conn_queue(conn);
	read_unlock_bh(&sk->sk_callback_lock);
}

/* Everything queued on @sk, the FIN included, was acknowledged. */
static bool sock_delivered(const struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);

	return READ_ONCE(tp->snd_una) == READ_ONCE(tp->write_seq);
}

/*
 * Room in the send buffer, or, while draining, every byte acknowledged
 * (DOC: HTTP delivery). SOCK_NOSPACE stays set until we act.
 */
static void conn_write_space(struct sock *sk)
{
	struct http_conn *conn;

	read_lock_bh(&sk->sk_callback_lock);
	conn = sk->sk_user_data;
	if (conn && sk_stream_is_writeable(sk) &&
	    (!test_bit(HTTP_CONN_DRAIN, &conn->flags) || sock_delivered(sk))) {
		clear_bit(SOCK_NOSPACE, &sk->sk_socket->flags);
		kvod_http_conn_queue(conn);
	}
	read_unlock_bh(&sk->sk_callback_lock);
}

static void conn_timer(struct timer_list *t)
{
	struct http_conn *conn = from_timer(conn, t, timer);

	kvod_http_conn_queue(conn);
}

static void conn_set_phase(struct http_conn *conn, enum http_phase phase)
{
	unsigned int secs;

	switch (phase) {
	case HTTP_PH_HEADER:
		secs = READ_ONCE(http_header_timeout);
		break;
	case HTTP_PH_LINGER:
		secs = HTTP_LINGER_SECS;
		break;
	case HTTP_PH_SEND:
		secs = READ_ONCE(http_send_timeout);
		break;
	default:
		secs = READ_ONCE(http_idle_timeout);
		break;
	}
	conn->phase = phase;
	conn->acked = READ_ONCE(tcp_sk(conn->sock->sk)->snd_una);
	conn->deadline = jiffies + max(secs, 1U) * HZ;
	mod_timer(&conn->timer, conn->deadline);
}

/* If TCP may keep @sk as an orphan, it holds its namespace from now on. */
static bool conn_may_orphan(struct sock *sk)
{
	struct net *net = sock_net(sk);

	if (!maybe_get_net(net))
		return false;
	sk_net_refcnt_upgrade(sk);
	put_net(net);
	return true;
}

static void conn_close(struct http_conn *conn, bool abort)
{
	struct sock *sk = conn->sock->sk;

	write_lock_bh(&sk->sk_callback_lock);
	sk->sk_user_data = NULL;
	sk->sk_data_ready = conn->data_ready;
	sk->sk_write_space = conn->write_space;
	sk->sk_state_change = conn->state_change;
	write_unlock_bh(&sk->sk_callback_lock);

	timer_shutdown_sync(&conn->timer);
	if (abort || !conn_may_orphan(sk))
		sock_no_linger(sk);
	sock_release(conn->sock);
	conn->sock = NULL;
	kvod_http_tx_done(conn);
	conn->state = HTTP_DEAD;
	kref_put(&conn->ref, conn_release);
}

/* The response was delivered. An error answer keeps the deadline it got. */
static int conn_next(struct http_conn *conn)
{
	kvod_http_tx_done(conn);
	if (conn->tx.close) {
		conn->state = HTTP_LINGER;
		if (conn->phase != HTTP_PH_LINGER)
			conn_set_phase(conn, HTTP_PH_LINGER);
		return STEP_AGAIN;
	}
	conn->state = HTTP_READ;
	conn->rx_parse = conn->rx_len;	/* pipelined requests */
	conn_set_phase(conn, conn->rx_len ? HTTP_PH_HEADER : HTTP_PH_IDLE);
	return STEP_AGAIN;
}

static int conn_recv(struct http_conn *conn)
{
	struct msghdr msg = { .msg_flags = MSG_DONTWAIT };
	struct kvec iov = {
		.iov_base = conn->rx + conn->rx_len,
		.iov_len = HTTP_HDR_MAX - conn->rx_len,
	};

	return kernel_recvmsg(conn->sock, &msg, &iov, 1, iov.iov_len,
			      msg.msg_flags);
}

/* Answer with an error status and close; the answer gets a moment only. */
static void conn_answer_close(struct http_conn *conn, u16 status)
{
	conn->rx_len = 0;
	kvod_http_respond_error(conn, status);
	conn->state = HTTP_SEND;
	conn_set_phase(conn, HTTP_PH_LINGER);
}

/* A parser error that closes gets a moment only, as conn_answer_close()'s. */
static void conn_respond(struct http_conn *conn, int len,
			 const struct http_request *req)
{
	conn->rx_len -= len;
	memmove(conn->rx, conn->rx + len, conn->rx_len);
	kvod_http_respond(conn, req);
	conn->state = HTTP_SEND;
	conn_set_phase(conn, req->status && req->close ? HTTP_PH_LINGER :
							  HTTP_PH_SEND);
}

static int step_read(struct http_conn *conn)
{
	struct http_request req;
	int ret;

	if (conn->rx_parse) {
		conn->rx_parse = false;
		ret = kvod_http_parse(conn->rx, conn->rx_len, &req);
		if (ret > 0) {
			conn_respond(conn, ret, &req);
			return STEP_AGAIN;
		}
	}

	ret = conn_recv(conn);
	if (ret == -EAGAIN)
		return STEP_WAIT;
	if (ret < 0)
		return STEP_ABORT;
	if (ret == 0) {
		if (!conn->rx_len) {
			conn_close(conn, false);
			return STEP_WAIT;
		}
		conn_answer_close(conn, 400);	/* a truncated request */
		return STEP_AGAIN;
	}
	if (!conn->rx_len && conn->phase != HTTP_PH_HEADER)
		conn_set_phase(conn, HTTP_PH_HEADER);
	/*
	 * A head ends with LF, so parse again only when one came in (or a
	 * NUL, to refuse it at once, or the buffer is full): a client
	 * sending a byte at a time costs a scan per line, not per byte.
	 */
	conn->rx_parse = memchr(conn->rx + conn->rx_len, '\n', ret) ||
			 memchr(conn->rx + conn->rx_len, '\0', ret) ||
			 conn->rx_len + ret == HTTP_HDR_MAX;
	conn->rx_len += ret;
	return STEP_AGAIN;
}

/* TCP took all of the response: wait for delivery (DOC: HTTP delivery). */
static int conn_sent(struct http_conn *conn)
{
	const struct tcp_sock *tp = tcp_sk(conn->sock->sk);
	u32 unacked;

	conn->served++;
	if (conn->tx.close)
		kernel_sock_shutdown(conn->sock, SHUT_WR);
	else if (!conn->tx.movie)
		return conn_next(conn);

	conn->state = HTTP_DRAIN;
	set_bit(HTTP_CONN_DRAIN, &conn->flags);
	conn->acked = READ_ONCE(tp->snd_una);
	unacked = READ_ONCE(tp->write_seq) - conn->acked;
	conn->need = max(DIV_ROUND_UP(unacked, 3), 1U);
	if (conn->phase == HTTP_PH_SEND)
		conn_set_phase(conn, HTTP_PH_SEND);
	return STEP_AGAIN;
}

/*
 * The body cannot be completed (DOC: The cursor): what TCP took is the
 * response. Close after it as after a complete one, with a FIN once it is
 * delivered, so that the client keeps what it got and sees a short body.
 */
static int conn_cut(struct http_conn *conn)
{
	conn->tx.close = true;
	return conn_sent(conn);
}

static int step_send(struct http_conn *conn)
{
	u64 pos = conn->tx.pos;
	u32 sent = conn->tx.hdr_sent;
	int ret = kvod_http_send(conn);

	if (ret == 0)
		return conn_sent(conn);
	/* Progress restarts the clock, except for a closing answer. */
	if (conn->phase == HTTP_PH_SEND &&
	    (conn->tx.pos != pos || conn->tx.hdr_sent != sent))
		conn_set_phase(conn, HTTP_PH_SEND);
	if (ret == -EAGAIN)
		return STEP_WAIT;
	if (ret == -EINPROGRESS)
		return STEP_YIELD;
	if (ret == -ENODATA || ret == -EIO)
		return conn_cut(conn);
	return STEP_ABORT;
}

static int step_drain(struct http_conn *conn)
{
	struct socket *sock = conn->sock;
	int ret;

	if (conn->tx.close) {
		conn->rx_len = 0;
		ret = conn_recv(conn);
		if (ret > 0)
			return STEP_AGAIN;
		if (ret < 0 && ret != -EAGAIN)
			return STEP_ABORT;
	}
	set_bit(SOCK_NOSPACE, &sock->flags);
	/* Pairs with tcp_check_space(): it sees the bit or we the ack. */
	smp_mb__after_atomic();
	if (!sock_delivered(sock->sk)) {
		if (READ_ONCE(sock->sk->sk_err) ||
		    READ_ONCE(sock->sk->sk_state) == TCP_CLOSE)
			return STEP_ABORT;
		return STEP_WAIT;
	}
	clear_bit(HTTP_CONN_DRAIN, &conn->flags);
	clear_bit(SOCK_NOSPACE, &sock->flags);
	return conn_next(conn);
}

static bool drain_progress(struct http_conn *conn)
{
	u32 una = READ_ONCE(tcp_sk(conn->sock->sk)->snd_una);

	if (una - conn->acked < conn->need)
		return false;
	conn->acked = una;
	return true;
}

static bool live_acking(const struct http_conn *conn)
{
	const struct sock *sk = conn->sock->sk;

	return READ_ONCE(tcp_sk(sk)->snd_una) != conn->acked ||
	       sock_delivered(sk);
}

static int step_linger(struct http_conn *conn)
{
	int ret;

	conn->rx_len = 0;
	ret = conn_recv(conn);
	if (ret == -EAGAIN)
		return STEP_WAIT;
	if (ret > 0)
		return STEP_AGAIN;
	conn_close(conn, false);
	return STEP_WAIT;
}

static void conn_sock_setup(struct http_conn *conn)
{
	struct sock *sk = conn->sock->sk;

	tcp_sock_set_nodelay(sk);
	sock_set_keepalive(sk);
	tcp_sock_set_keepidle(sk, HTTP_KEEPIDLE);
	tcp_sock_set_keepintvl(sk, HTTP_KEEPINTVL);
	tcp_sock_set_keepcnt(sk, HTTP_KEEPCNT);

	write_lock_bh(&sk->sk_callback_lock);
	sk->sk_user_data = conn;
	sk->sk_data_ready = conn_wake;
	sk->sk_write_space = conn_write_space;
	sk->sk_state_change = conn_wake;
	write_unlock_bh(&sk->sk_callback_lock);
}

static int conn_begin(struct http_conn *conn)
{
	conn_sock_setup(conn);
	if (test_bit(HTTP_CONN_REFUSE, &conn->flags)) {
		conn_answer_close(conn, 503);
	} else {
		conn->state = HTTP_READ;
		conn_set_phase(conn, HTTP_PH_HEADER);
	}
	return STEP_AGAIN;
}

static int conn_timeout(struct http_conn *conn)
{
	struct kvod_listener *l = kvod_http_listener(conn);

	if (conn->phase == HTTP_PH_LINGER) {
		conn_close(conn, true);
		return STEP_WAIT;
	}
	if (conn->state == HTTP_DRAIN && conn->phase == HTTP_PH_SEND &&
	    drain_progress(conn)) {
		conn_set_phase(conn, HTTP_PH_SEND);
		return STEP_AGAIN;
	}
	if (conn->state == HTTP_SEND && conn->phase == HTTP_PH_SEND &&
	    conn->tx.live.waiting && live_acking(conn)) {
		conn_set_phase(conn, HTTP_PH_SEND);
		return STEP_AGAIN;
	}
	kvod_lc_inc(l, KVOD_LC_TIMEOUTS);
	if (conn->phase == HTTP_PH_SEND)
		return STEP_ABORT;
	if (conn->phase == HTTP_PH_IDLE) {
		conn_close(conn, false);
		return STEP_WAIT;
	}
	conn_answer_close(conn, 408);	/* the header deadline */
	return STEP_AGAIN;
}

static int conn_step(struct http_conn *conn)
{
	switch (conn->state) {
	case HTTP_READ:
		return step_read(conn);
	case HTTP_SEND:
		return step_send(conn);
	case HTTP_DRAIN:
		return step_drain(conn);
	case HTTP_LINGER:
		return step_linger(conn);
	default:
		return STEP_WAIT;
	}
}

static void conn_run(struct http_conn *conn)
{
	unsigned int steps;
	int ret = STEP_AGAIN;

	if (conn->state == HTTP_DEAD)
		return;
	if (test_bit(HTTP_CONN_STOP, &conn->flags)) {
		conn_close(conn, true);
		return;
	}
	if (conn->state == HTTP_NEW)
		ret = conn_begin(conn);
	else if (time_after_eq(jiffies, conn->deadline))
		ret = conn_timeout(conn);

	for (steps = 0; ret == STEP_AGAIN && steps < HTTP_STEPS; steps++)
		ret = conn_step(conn);

	if (ret == STEP_ABORT)
		conn_close(conn, true);
	else if (ret == STEP_YIELD || ret == STEP_AGAIN)
		kvod_http_conn_queue(conn);
}

static void conn_work(struct work_struct *work)
{
	struct http_conn *conn = container_of(work, struct http_conn, work);

	conn_run(conn);
	kref_put(&conn->ref, conn_release);
}

/*
 * Count @conn against the limits and link it to @srv. Return: 0 to serve
 * it, 1 to answer 503, -EBUSY to drop it unanswered.
 */
static int conn_admit(struct http_server *srv, struct http_conn *conn)
{
	unsigned int max_conns = READ_ONCE(http_max_conns);
	int ret = 0;

	spin_lock(&srv->lock);
	if ((atomic_inc_return(&http_nr_conns) > max_conns && max_conns) ||
	    !kvod_peer_add(srv->peers, &conn->peer,
			   READ_ONCE(http_max_conns_per_addr))) {
		ret = 1;
		atomic_dec(&http_nr_conns);
		if (atomic_inc_return(&http_nr_refusing) > HTTP_REFUSE_SLACK) {
			atomic_dec(&http_nr_refusing);
			spin_unlock(&srv->lock);
			return -EBUSY;
		}
		set_bit(HTTP_CONN_REFUSE, &conn->flags);
	}
	list_add_tail(&conn->node, &srv->conns);
	srv->nr_conns++;
	spin_unlock(&srv->lock);
	return ret;
}

/* Undo what the clone inherited (DOC: HTTP connection work). */
static void child_sock_reset(struct http_server *srv, struct socket *sock)
{
	struct sock *sk = sock->sk;

	write_lock_bh(&sk->sk_callback_lock);
	sk->sk_user_data = NULL;
	sk->sk_data_ready = srv->data_ready;
	write_unlock_bh(&sk->sk_callback_lock);
}

/*
 * In the accept work, which http_stop() cancels before aborting: nothing
 * else can queue this connection's work before kvod_http_conn_queue().
 */
static void conn_start(struct http_server *srv, struct socket *sock)
{
	struct http_conn *conn;
	struct sock *sk = sock->sk;
	int ret;

	kvod_lc_inc(srv->l, KVOD_LC_ACCEPTED);
	child_sock_reset(srv, sock);
	conn = kzalloc(sizeof(*conn), GFP_KERNEL);
	if (!conn)
		goto err_release;
	conn->rx = kmalloc(HTTP_HDR_MAX, GFP_KERNEL);
	if (!conn->rx)
		goto err_free;
	if (kernel_getpeername(sock, (struct sockaddr *)&conn->peer.addr) < 0)
		goto err_free;
	kref_init(&conn->ref);
	conn->srv = srv;
	conn->sock = sock;
	conn->state = HTTP_NEW;
	conn->data_ready = srv->data_ready;
	conn->write_space = sk->sk_write_space;
	conn->state_change = sk->sk_state_change;
	INIT_HLIST_NODE(&conn->peer.node);
	INIT_WORK(&conn->work, conn_work);
	timer_setup(&conn->timer, conn_timer, 0);

	ret = conn_admit(srv, conn);
	if (ret < 0)
		goto err_refused;
	kvod_lc_inc(srv->l, KVOD_LC_ACTIVE);
	if (ret)
		kvod_lc_inc(srv->l, KVOD_LC_REFUSED);
	kvod_http_conn_queue(conn);
	return;

err_refused:
	kvod_lc_inc(srv->l, KVOD_LC_REFUSED);
err_free:
	kfree(conn->rx);
	kfree(conn);
err_release:
	/* Reset: nothing is owed, and an orphan would outlive us. */
	sock_no_linger(sk);
	sock_release(sock);
}

static void accept_work(struct work_struct *work)
{
	struct http_server *srv = container_of(to_delayed_work(work),
					       struct http_server,
					       accept_work);
	struct socket *sock;
	int ret;

	for (;;) {
		ret = kernel_accept(srv->sock, &sock, O_NONBLOCK);
		if (ret == -EAGAIN)
			return;
		if (ret) {
			/*
			 * -ENOMEM and the like: the clients in the backlog
			 * raise no new callback, so try again later.
			 * http_stop() cancels this before it releases the
			 * socket, and a cancelled work cannot requeue itself.
			 */
			pr_warn_ratelimited("http %pISpc: accept: %d, retrying\n",
					    &srv->l->addr, ret);
			queue_delayed_work(srv->wq, &srv->accept_work,
					   HTTP_ACCEPT_RETRY);
			return;
		}
		conn_start(srv, sock);
		cond_resched();
	}
}

static void listen_data_ready(struct sock *sk)
{
	struct http_server *srv;

	/* Children inherit this callback until child_sock_reset() runs. */
	if (sk->sk_state != TCP_LISTEN)
		return;
	read_lock_bh(&sk->sk_callback_lock);
	srv = sk->sk_user_data;
	if (srv)
		queue_delayed_work(srv->wq, &srv->accept_work, 0);
	read_unlock_bh(&sk->sk_callback_lock);
}

static int listen_sock(struct http_server *srv)
{
	struct kvod_listener *l = srv->l;
	int family = l->addr.ss_family;
	struct sock *sk;
	int ret;

	ret = sock_create_kern(l->net, family, SOCK_STREAM, IPPROTO_TCP,
			       &srv->sock);
	if (ret)
		return ret;
	sk = srv->sock->sk;
	sock_set_reuseaddr(sk);
	if (family == AF_INET6)
		ip6_sock_set_v6only(sk);
	ret = kernel_bind(srv->sock, (struct sockaddr *)&l->addr,
			  family == AF_INET6 ? sizeof(struct sockaddr_in6) :
					       sizeof(struct sockaddr_in));
	if (ret)
		goto err_release;
	ret = kernel_listen(srv->sock, HTTP_BACKLOG);
	if (ret)
		goto err_release;

	write_lock_bh(&sk->sk_callback_lock);
	srv->data_ready = sk->sk_data_ready;
	sk->sk_user_data = srv;
	sk->sk_data_ready = listen_data_ready;
	write_unlock_bh(&sk->sk_callback_lock);
	return 0;

err_release:
	sock_release(srv->sock);
	srv->sock = NULL;
	return ret;
}

static int http_start(struct kvod_listener *l)
{
	struct http_server *srv;
	int ret;

	srv = kzalloc(sizeof(*srv), GFP_KERNEL);
	if (!srv)
		return -ENOMEM;
	srv->l = l;
	spin_lock_init(&srv->lock);
	INIT_LIST_HEAD(&srv->conns);
	init_waitqueue_head(&srv->wait);
	INIT_DELAYED_WORK(&srv->accept_work, accept_work);

	srv->wq = alloc_workqueue("kvod_http", 0, 0);
	if (!srv->wq) {
		ret = -ENOMEM;
		goto err_free;
	}
	ret = listen_sock(srv);
	if (ret)
		goto err_wq;

	l->priv = srv;
	queue_delayed_work(srv->wq, &srv->accept_work, 0); /* early clients */
	return 0;

err_wq:
	destroy_workqueue(srv->wq);
err_free:
	kfree(srv);
	return ret;
}

/*
 * Flag every connection to abort and run it. The walk leaves srv->lock to
 * queue each run, for a reference dropped then may be the last and
 * conn_release() takes the lock. It holds the connection it stands on,
 * which stays on @conns until released, so it goes on from there: one
 * pass over the list.
 */
static void abort_conns(struct http_server *srv)
{
	struct http_conn *conn, *held = NULL;

	spin_lock(&srv->lock);
	list_for_each_entry(conn, &srv->conns, node) {
		if (test_and_set_bit(HTTP_CONN_STOP, &conn->flags))
			continue;
		if (!kref_get_unless_zero(&conn->ref))
			continue;	/* being freed */
		spin_unlock(&srv->lock);
		kvod_http_conn_queue(conn);
		if (held)
			kref_put(&held->ref, conn_release);
		held = conn;
		cond_resched();
		spin_lock(&srv->lock);
	}
	spin_unlock(&srv->lock);
	if (held)
		kref_put(&held->ref, conn_release);
}

static void http_stop(struct kvod_listener *l)
{
	struct http_server *srv = l->priv;
	struct sock *sk = srv->sock->sk;

	write_lock_bh(&sk->sk_callback_lock);
	sk->sk_user_data = NULL;
	sk->sk_data_ready = srv->data_ready;
	write_unlock_bh(&sk->sk_callback_lock);
	cancel_delayed_work_sync(&srv->accept_work);
	sock_release(srv->sock);

	abort_conns(srv);
	while (!wait_event_timeout(srv->wait, !READ_ONCE(srv->nr_conns),
				   5 * HZ))
		pr_warn("http %pISpc: waiting for %u connections\n",
			&l->addr, READ_ONCE(srv->nr_conns));

	destroy_workqueue(srv->wq);
	kfree(srv);
	l->priv = NULL;
}

static const struct kvod_proto_ops http_ops = {
	.proto	= KVOD_PROTO_HTTP,
	.name	= "http",
	.start	= http_start,
	.stop	= http_stop,
};

void kvod_http_init(void)
{
	kvod_proto_register(&http_ops);
}

void kvod_http_exit(void)
{
	kvod_proto_unregister(&http_ops);
}
