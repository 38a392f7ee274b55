// SPDX-License-Identifier: GPL-2.0
/* Paced push: RTP/UDP packets, each stamped with its departure time. */

/**
 * DOC: Push schedule
 *
 * kvod does not time the packets itself. A packet is due at the schedule's
 * start plus the time the payload bytes before it take at the push's
 * rate: a full packet (1316 bytes) every 1316 x 8 / rate, a shorter one
 * (the end of a movie, or of a live chunk) sooner, so the rate holds
 * whatever the sizes. A delayed work item wakes when the next packet is
 * half a window ahead, hands the socket every packet due within the
 * window, each with its time as an ``SCM_TXTIME`` control message (as a
 * userspace ``SO_TXTIME`` sender would), and sleeps again. So the CPU
 * works in short bursts, a few per window, and the qdisc below (tsock,
 * sch_fq, or sch_etf with ``CLOCK_TAI``) holds each packet until its time.
 * Without such a qdisc the packets leave in bursts of up to a window.
 *
 * The work sleeps at least a tick: with a window under two ticks the wait
 * would otherwise round down to 0 and requeue the work at once until the
 * packet is due, a busy wait, so such a window hands packets over late
 * instead. It sleeps at most ``PUSH_WAIT_MAX`` ticks, which the timer
 * wheel keeps to the tick (a longer timer may fire an eighth of its delay
 * late, which can pass half a window): a slow push looks again, finds
 * nothing due and sleeps.
 *
 * With ``CLOCK_TAI`` the schedule steps with the wall clock. After a step
 * back the schedule starts over from now, rather than stop for as long as
 * the step; after a step forward the packets in between are late and
 * handed over at once, for the qdisc to send or drop by its late policy.
 */

/**
 * DOC: Push packets
 *
 * A packet is RTP (RFC 3550) carrying MPEG-TS (RFC 2250): a 12-byte RTP
 * header with payload type 33, a random SSRC and initial sequence number,
 * and a 90 kHz timestamp that follows the schedule (the departure time
 * less the start, so it does not advance across a live writer's pause);
 * then up to 7 TS packets of the movie, which may straddle two chunks.
 *
 * No movie byte is copied. kvod writes each packet's RTP header into a
 * fragment of its own page (the push's ``page_frag_cache``, 12 bytes a
 * packet) and hands UDP the header and the payload as one
 * ``MSG_SPLICE_PAGES`` send with its ``SCM_TXTIME``. UDP takes a page
 * reference for each fragment ("Movie memory"), so a packet waiting in the
 * qdisc outlives the push and the movie. The checksum is left to the
 * device where it can (``CHECKSUM_PARTIAL``). On a device without
 * scatter-gather UDP copies instead (ip_append_data()).
 */

/**
 * DOC: Live push
 *
 * A push of a live channel sends the ring's chunks as they complete,
 * starting at the newest complete one. It holds one chunk at a time
 * (kvod_live_take()), and an RTP packet carries up to 7 TS packets of that
 * chunk; a push slower than its writer skips ahead as any reader does
 * ("Overwrite without tearing"). It watches the channel (kvod_live_watch())
 * from PUSH_START until teardown, and a completed chunk queues the work if
 * it is idle. A push that finds no chunk ready waits for one without a
 * timer, and when chunks come again its schedule starts over from then, so
 * a pause of the writer is not made up in a burst. DEL of the channel ends
 * the push. The watcher comes off before the work item is cancelled, so
 * nothing queues it again afterwards.
 */

/**
 * DOC: Push lifetimes and locking
 *
 * PUSH_START creates a struct kvod_push with a reference on its movie and
 * a kernel UDP socket in the caller's namespace, and links it on
 * ``kvod_pushes``. A push ends in one of two ways, and whoever takes it
 * off that list under ``kvod_push_lock`` (clearing @linked) owns the
 * teardown:
 *
 * * Its own work item, at the end of the movie: it moves the push to
 *   ``kvod_push_ending``, releases its socket and movie, leaves that list,
 *   wakes ``kvod_push_ended`` and frees the push; it does not requeue.
 * * PUSH_STOP, the namespace's ``pre_exit``, or module exit: they unlink
 *   it, then, without the mutex, cancel_delayed_work_sync() (which also
 *   stops a work item that requeues itself), then free it. A work item
 *   that reaches the end and finds its push unlinked returns without
 *   touching it.
 *
 * A push's cursor may queue its work too, once the page cache may have
 * the bytes it waited for (DOC: Cursor waits). So teardown first takes
 * the watcher off (a live channel) and stops the cursor's wakes, and only
 * then cancels the work item for good. It releases the socket first (no
 * more sends), then the movie's cursor (DOC: The cursor), which waits for
 * a read it queued, then the movie reference.
 *
 * The socket does not hold its namespace, as kernel sockets do not. The
 * pushes' pernet ``pre_exit`` hook stops the namespace's pushes while the
 * namespace is intact, then waits until none of them is on
 * ``kvod_push_ending``, so no push socket is released after the
 * namespace's UDP state is gone.
 *
 * The ioctls take ``kvod_push_lock`` only to link, find, list and unlink.
 * The work item takes it only at the end, to check that the push is still
 * linked and to leave ``kvod_push_ending``; that is why a stopper cancels
 * the work item only after dropping the mutex. Counters are atomics that
 * PUSH_LIST reads without order.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bvec.h>
#include <linux/delay.h>
#include <linux/errqueue.h>
#include <linux/list.h>
#include <linux/math64.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/net.h>
#include <linux/net_tstamp.h>
#include <linux/nsproxy.h>
#include <linux/proc_ns.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/socket.h>
#include <linux/timekeeping.h>
#include <linux/unaligned.h>
#include <linux/workqueue.h>
#include <net/ip.h>
#include <net/ipv6.h>
#include <net/net_namespace.h>
#include <net/sock.h>

#include "cursor.h"
#include "kvod.h"

#define PUSH_TS_PACKET		188
#define PUSH_TS_PER_RTP		7
#define PUSH_PAYLOAD		(PUSH_TS_PACKET * PUSH_TS_PER_RTP)
#define PUSH_RTP_HDR		12
#define PUSH_RTP_PT_MP2T	33
#define PUSH_RATE_MIN		10000ULL
#define PUSH_RATE_MAX		10000000000ULL
#define PUSH_WINDOW_DEF		50
#define PUSH_WINDOW_MAX		2000
#define PUSH_MAX		64
/* Packets sent per work run at most, so one push cannot hog a worker. */
#define PUSH_BATCH_MAX		1024
/* Socket memory of one packet: 1356 bytes and headers in a 2 KiB buffer. */
#define PUSH_TRUESIZE		SKB_TRUESIZE(2048)
#define PUSH_SNDBUF_MAX		(32 << 20)
#define PUSH_WAIT_MAX		63UL

/**
 * struct kvod_push - one running push
 * @node: on kvod_pushes, then maybe kvod_push_ending; under kvod_push_lock
 * @work: the sender (DOC: Push lifetimes and locking)
 * @id: userspace handle
 * @opts: KVOD_PUSH_*
 * @movie: held reference
 * @cursor: the walk of @movie's bytes, for a movie (not a live channel),
 *	from push_setup() to the teardown; @work's only until then
 * @sock: kernel UDP socket, connected to @dst
 * @net: its namespace, for pre_exit matching and listing; not counted
 * @dst: the destination as userspace gave it
 * @rate: payload bits/s
 * @window: ns
 * @interval: ns between packets of a full payload (1316 bytes)
 * @clockid: CLOCK_MONOTONIC or CLOCK_TAI
 * @start: departure time of packet 0, in @clockid
 * @k: index of the next packet to send (counts across loops)
 * @pos: payload bytes scheduled before packet @k (counts across loops)
 * @offset: movie offset of its payload
 * @seq0: RTP sequence number of packet 0
 * @ts0: RTP timestamp of packet 0
 * @ssrc: RTP SSRC
 * @linked: on kvod_pushes (DOC: Push lifetimes and locking)
 * @packets: RTP packets sent (the counters are for PUSH_LIST)
 * @bytes: movie bytes sent
 * @loops: restarts at the movie's beginning
 * @late: packets handed over after their time
 * @errors: packets the socket refused
 * @icmp_errors: ICMP errors taken off the socket's error queue
 * @retried: the packet @k failed for an ICMP error once already
 * @hdrs: page fragments for RTP headers (DOC: Push packets); @work's only
 * @live: a live channel's push (DOC: Live push); the rest only @work
 *	touches
 * @live.watch: watches the channel while @live.watching
 * @live.page: the chunk being sent, held; NULL between chunks
 * @live.seq: that chunk, or the next one wanted
 * @live.len: its bytes
 * @live.stalled: the last attempt found no chunk: restart the schedule
 */
struct kvod_push {
	struct list_head node;
	struct delayed_work work;
	u32 id;
	u32 opts;
	struct kvod_movie *movie;
	struct kvod_cursor cursor;
	struct socket *sock;
	struct net *net;
	struct kvod_sockaddr dst;
	u64 rate;
	u64 window;
	u64 interval;
	clockid_t clockid;
	ktime_t start;
	u64 k;
	u64 pos;
	u64 offset;
	u16 seq0;
	u32 ts0;
	u32 ssrc;
	bool linked;
	atomic64_t packets;
	atomic64_t bytes;
	atomic64_t loops;
	atomic64_t late;
	atomic64_t errors;
	atomic64_t icmp_errors;
	bool retried;
	struct page_frag_cache hdrs;
	struct {
		struct kvod_live_watcher watch;
		bool watching;
		struct page *page;
		u64 seq;
		u32 len;
		bool stalled;
	} live;
};

static LIST_HEAD(kvod_pushes);		/* under kvod_push_lock, by id */
static LIST_HEAD(kvod_push_ending);	/* under kvod_push_lock */
static unsigned long kvod_push_ended_gen;	/* bumped as one leaves it */
static DECLARE_WAIT_QUEUE_HEAD(kvod_push_ended);
static DEFINE_MUTEX(kvod_push_lock);
static u32 kvod_nr_pushes;		/* under kvod_push_lock */
static u32 kvod_push_last_id;		/* under kvod_push_lock */
static struct workqueue_struct *kvod_push_wq;

static ktime_t push_now(const struct kvod_push *p)
{
	return p->clockid == CLOCK_TAI ? ktime_get_clocktai() : ktime_get();
}

static u64 push_sched_ns(const struct kvod_push *p)
{
	return mul_u64_u64_div_u64(p->pos, 8 * NSEC_PER_SEC, p->rate);
}

static ktime_t push_due_at(const struct kvod_push *p, u64 sched)
{
	return ktime_add_ns(p->start, sched);
}

static ktime_t push_due(const struct kvod_push *p)
{
	return push_due_at(p, push_sched_ns(p));
}

static void push_restart(struct kvod_push *p, ktime_t now)
{
	p->start = ktime_sub_ns(ktime_add_ns(now, p->window),
				push_sched_ns(p));
}

static void rtp_header(const struct kvod_push *p, u64 sched, u8 *h)
{
	u32 ts = p->ts0 + (u32)div_u64(sched * 9, 100000);

	h[0] = 0x80;			/* V=2, no padding, extension, CSRC */
	h[1] = PUSH_RTP_PT_MP2T;	/* M=0 */
	put_unaligned_be16((u16)(p->seq0 + p->k), h + 2);
	put_unaligned_be32(ts, h + 4);
	put_unaligned_be32(p->ssrc, h + 8);
}

/*
 * With IP_RECVERR an ICMP error for the destination is queued on the
 * socket's error queue and fails the next send, and nobody reads that
 * queue: take it off, counting ICMP errors. True if anything was there.
 */
static bool push_drain_errors(struct kvod_push *p)
{
	struct sk_buff *skb;
	bool any = false;

	while ((skb = sock_dequeue_err_skb(p->sock->sk))) {
		u8 origin = SKB_EXT_ERR(skb)->ee.ee_origin;

		if (origin == SO_EE_ORIGIN_ICMP || origin == SO_EE_ORIGIN_ICMP6)
			atomic64_inc(&p->icmp_errors);
		kfree_skb(skb);
		any = true;
	}
	return any;
}

/*
 * Point @bv at the next payload: @len bytes of the live chunk held, or up
 * to @len bytes of the movie. Return the bytes, or kvod_cursor_fill()'s
 * error.
 */
static ssize_t push_payload(struct kvod_push *p, size_t len,
			    struct bio_vec *bv, unsigned int max,
			    unsigned int *n)
{
	if (p->live.page) {
		bvec_set_page(bv, p->live.page, len, p->offset);
		*n = 1;
		return len;
	}
	return kvod_cursor_fill(&p->cursor, p->offset, len, bv, max, n, true);
}

/*
 * Return: 0 once the packet is sent or skipped; -EAGAIN or -ENOBUFS to
 * send it again later; -EIOCBQUEUED to send it again once the cursor's
 * wake says its bytes may be in memory; another negative errno if there
 * is nothing to send at @p->offset.
 */
static int push_send_one(struct kvod_push *p, u64 sched, size_t len,
			 ktime_t now)
{
	u8 ctl[CMSG_SPACE(sizeof(u64))] __aligned(sizeof(u64)) = { };
	struct msghdr msg = {
		.msg_control = ctl,
		.msg_controllen = sizeof(ctl),
		.msg_flags = MSG_SPLICE_PAGES | MSG_DONTWAIT,
	};
	ktime_t due = push_due_at(p, sched);
	struct cmsghdr *cm = (struct cmsghdr *)ctl;
	u64 txtime = ktime_to_ns(due);
	struct bio_vec bv[3];	/* the header, and a payload in two chunks */
	unsigned int n;
	ssize_t got;
	u8 *hdr;
	int ret;

	push_drain_errors(p);
	hdr = page_frag_alloc(&p->hdrs, PUSH_RTP_HDR,
			      GFP_KERNEL | __GFP_NOWARN);
	if (!hdr)
		return -ENOBUFS;	/* retry this packet later */
	got = push_payload(p, len, bv + 1, ARRAY_SIZE(bv) - 1, &n);
	if (got < 0) {
		page_frag_free(hdr);
		return got;
	}
	len = got;
	rtp_header(p, sched, hdr);
	bvec_set_virt(&bv[0], hdr, PUSH_RTP_HDR);

	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_TXTIME;
	cm->cmsg_len = CMSG_LEN(sizeof(txtime));
	memcpy(CMSG_DATA(cm), &txtime, sizeof(txtime));
	iov_iter_bvec(&msg.msg_iter, ITER_SOURCE, bv, n + 1,
		      PUSH_RTP_HDR + len);
	ret = sock_sendmsg(p->sock, &msg);
	page_frag_free(hdr);	/* an skb that took it holds its own */
	kvod_cursor_sent(&p->cursor);
	if (ret == -EAGAIN)
		return ret;
	/*
	 * An ICMP error failed it: one queued after the drain, or one whose
	 * sk_err was set after the drain took its queue entry (or without
	 * one, when the queue was full). sock_error() consumed the error,
	 * so the packet goes again later, once unless more were queued.
	 */
	if (ret < 0 && ret != -ENOBUFS &&
	    (push_drain_errors(p) || !p->retried)) {
		p->retried = true;
		return -EAGAIN;
	}
	p->retried = false;
	/*
	 * The qdisc dropped it (IP_RECVERR): retry while that may be for
	 * want of room, but not once it is a window late, as a drop for
	 * lateness or for the wrong clock (tsock's late drop, sch_etf)
	 * comes again on every retry and would hold the push for ever.
	 */
	if (ret == -ENOBUFS && ktime_before(now, ktime_add_ns(due, p->window)))
		return ret;
	if (ktime_before(due, now))
		atomic64_inc(&p->late);
	if (ret < 0) {
		atomic64_inc(&p->errors);
		return 0;	/* skipped */
	}
	atomic64_inc(&p->packets);
	atomic64_add(len, &p->bytes);
	atomic64_add(len, &p->movie->bytes_served);
	return 0;
}

/* A looping push starts over only while its movie is listed, not deleted. */
static bool push_may_loop(struct kvod_push *p)
{
	struct kvod_movie *m;

	if (!(p->opts & KVOD_PUSH_LOOP))
		return false;
	m = kvod_movie_get(p->movie->name);
	kvod_movie_put(m);
	return m == p->movie;
}

#define PUSH_IDLE	((size_t)-1)	/* push_next_len(): no chunk ready */

/*
 * A live push's next payload, from the chunk it holds or the next one;
 * @p->offset is the offset in the chunk. 0: the channel ended; PUSH_IDLE:
 * no chunk is complete yet.
 */
static size_t push_live_next_len(struct kvod_push *p, ktime_t now)
{
	int ret;

	if (p->live.page && p->offset == p->live.len) {
		put_page(p->live.page);
		p->live.page = NULL;
		p->live.seq++;
	}
	if (!p->live.page) {
		ret = kvod_live_take(p->movie->live, &p->live.seq,
				     &p->live.page, &p->live.len);
		if (ret == -EAGAIN) {
			p->live.stalled = true;
			return PUSH_IDLE;
		}
		if (ret)
			return 0;
		p->offset = 0;
		if (p->live.stalled) {
			push_restart(p, now);
			p->live.stalled = false;
		}
	}
	return min_t(u64, PUSH_PAYLOAD, p->live.len - p->offset);
}

static void push_live_notify(struct kvod_live_watcher *w,
			     const struct kvod_live_event *ev)
{
	struct kvod_push *p = container_of(w, struct kvod_push, live.watch);

	/* Pending on a timer means it has a chunk to send: leave it. */
	queue_delayed_work(kvod_push_wq, &p->work, 0);
}

static void push_unwatch(struct kvod_push *p)
{
	if (p->live.watching)
		kvod_live_unwatch(p->movie->live, &p->live.watch);
	p->live.watching = false;
}

/* Payload of the next packet: whole TS packets only. 0: the push is over. */
static size_t push_next_len(struct kvod_push *p, ktime_t now)
{
	u64 left;

	if (p->movie->live)
		return push_live_next_len(p, now);
	left = p->movie->length - p->offset;

	if (left < PUSH_TS_PACKET) {
		if (!push_may_loop(p))
			return 0;
		p->offset = 0;
		atomic64_inc(&p->loops);
		left = p->movie->length;
		if (left < PUSH_TS_PACKET)
			return 0;
	}
	return min_t(u64, PUSH_PAYLOAD, rounddown(left, PUSH_TS_PACKET));
}

/* The cursor goes first, as it reads the movie. May sleep. */
static void push_close_movie(struct kvod_push *p)
{
	kvod_cursor_release(&p->cursor);
	kvod_movie_close(p->movie);
	p->movie = NULL;
}

static void push_release(struct kvod_push *p)
{
	sock_release(p->sock);
	p->sock = NULL;
	page_frag_cache_drain(&p->hdrs);
	if (p->live.page)
		put_page(p->live.page);
	p->live.page = NULL;
	push_close_movie(p);
}

static void push_free(struct kvod_push *p)
{
	push_release(p);
	kfree(p);
}

/* The push ended by itself: free it unless a stopper owns it already. */
static void push_finish(struct kvod_push *p)
{
	unsigned int delay = READ_ONCE(kvod_debug_push_release_delay_ms);
	bool mine;

	mutex_lock(&kvod_push_lock);
	mine = p->linked;
	if (mine) {
		p->linked = false;
		list_move_tail(&p->node, &kvod_push_ending);
		kvod_nr_pushes--;
	}
	mutex_unlock(&kvod_push_lock);
	if (!mine)
		return;

	pr_debug("push %u: done after %lld packets\n", p->id,
		 atomic64_read(&p->packets));
	if (delay)
		msleep(delay);
	push_unwatch(p);
	kvod_cursor_stop(&p->cursor);
	/* A chunk or a read may have queued us again since we started. */
	cancel_delayed_work(&p->work);
	push_release(p);
	pr_debug("push %u: released\n", p->id);

	mutex_lock(&kvod_push_lock);
	list_del(&p->node);
	WRITE_ONCE(kvod_push_ended_gen, kvod_push_ended_gen + 1);
	mutex_unlock(&kvod_push_lock);
	/* The waiter looks at the list only, never at @p. */
	wake_up_all(&kvod_push_ended);
	kfree(p);
}

static void push_work(struct work_struct *w)
{
	struct kvod_push *p = container_of(to_delayed_work(w),
					   struct kvod_push, work);
	ktime_t now = push_now(p), next;
	unsigned int batch = 0;
	unsigned long delay;
	s64 wait;
	int ret;

	/*
	 * Packet k was not due within the window at the last run, so it is due
	 * within a window and an interval unless the clock stepped back.
	 */
	if (ktime_after(push_due(p),
			ktime_add_ns(now, p->window + p->interval)))
		push_restart(p, now);

	for (;;) {
		/* One division a packet: the bytes before it do not change. */
		u64 sched = push_sched_ns(p);
		size_t len;

		if (!ktime_before(push_due_at(p, sched),
				  ktime_add_ns(now, p->window)))
			break;
		len = push_next_len(p, now);	/* may restart the schedule */
		if (!len) {
			push_finish(p);
			return;
		}
		if (len == PUSH_IDLE)
			return;	/* the channel queues us with its next chunk */
		ret = push_send_one(p, sched, len, now);
		if (ret == -EAGAIN || ret == -ENOBUFS)
			goto full;	/* this packet again, when there is room */
		if (ret == -EIOCBQUEUED)
			return;	/* the cursor's wake queues us */
		if (ret) {
			push_finish(p);	/* the movie has nothing there */
			return;
		}
		p->offset += len;
		p->pos += len;
		p->k++;
		if (++batch == PUSH_BATCH_MAX) {
			queue_delayed_work(kvod_push_wq, &p->work, 0);
			return;
		}
	}

	/* Half a window before the next packet (DOC: Push schedule). */
	next = ktime_sub_ns(push_due(p), p->window / 2);
	wait = ktime_to_ns(ktime_sub(next, push_now(p)));
	delay = wait > 0 ? nsecs_to_jiffies(wait) : 0;
	queue_delayed_work(kvod_push_wq, &p->work,
			   clamp(delay, 1UL, PUSH_WAIT_MAX));
	return;
full:
	/* The socket holds all it may: packets leave, try in a tick. */
	queue_delayed_work(kvod_push_wq, &p->work, 1);
}

static int push_sockaddr(const struct kvod_sockaddr *ua,
			 struct sockaddr_storage *ss, int *len)
{
	if (!memchr_inv(ua->addr, 0, sizeof(ua->addr)))
		return -EINVAL;
	return kvod_sockaddr_to_kernel(ua, ss, len);
}

/*
 * A qdisc that holds packets until their time holds them in the socket's
 * send buffer too: make room for a window of them at the push's rate
 * (within PUSH_SNDBUF_MAX), or the push waits for room a tick at a time
 * and falls behind. And have the qdisc's drops (tsock's flow_limit and
 * limit, for instance) returned as -ENOBUFS (IP_RECVERR), which UDP
 * otherwise hides: the push then retries the packet instead of losing it.
 * An IPv6 socket sends to a v4-mapped address through udp_sendmsg(),
 * which reads the IPv4 flag: it gets both.
 */
static void push_sock_tune(struct kvod_push *p)
{
	struct sock *sk = p->sock->sk;
	u64 want = (div64_u64(p->window, p->interval) + 1) * PUSH_TRUESIZE;

	want = min_t(u64, want, PUSH_SNDBUF_MAX);
	ip_sock_set_recverr(sk);
	if (sk->sk_family == AF_INET6)
		ip6_sock_set_recverr(sk);
	lock_sock(sk);
	if (want > sk->sk_sndbuf) {
		sk->sk_userlocks |= SOCK_SNDBUF_LOCK;
		WRITE_ONCE(sk->sk_sndbuf, want);
	}
	release_sock(sk);
}

static int push_socket(struct kvod_push *p)
{
	struct sock_txtime txt = { .clockid = p->clockid };
	struct sockaddr_storage ss;
	int len, ret;

	ret = push_sockaddr(&p->dst, &ss, &len);
	if (ret)
		return ret;
	ret = sock_create_kern(p->net, ss.ss_family, SOCK_DGRAM, IPPROTO_UDP,
			       &p->sock);
	if (ret)
		return ret;
	push_sock_tune(p);
	ret = sock_setsockopt(p->sock, SOL_SOCKET, SO_TXTIME,
			      KERNEL_SOCKPTR(&txt), sizeof(txt));
	if (!ret)
		ret = kernel_connect(p->sock, (struct sockaddr *)&ss, len, 0);
	if (ret) {
		sock_release(p->sock);
		p->sock = NULL;
	}
	return ret;
}

static int push_check(const struct kvod_push_start *req)
{
	if ((req->opts & ~KVOD_PUSH_OPTS) || req->reserved0 ||
	    memchr_inv(req->reserved, 0, sizeof(req->reserved)))
		return -EINVAL;
	if (req->rate && (req->rate < PUSH_RATE_MIN ||
			  req->rate > PUSH_RATE_MAX))
		return -EINVAL;
	if (req->window_ms > PUSH_WINDOW_MAX)
		return -EINVAL;
	if (!kvod_name_valid(req->name))
		return -EINVAL;
	return 0;
}

/* The page cache may have the next packet's bytes now (DOC: Cursor waits). */
static void push_cursor_wake(struct kvod_cursor *c)
{
	struct kvod_push *p = container_of(c, struct kvod_push, cursor);

	mod_delayed_work(kvod_push_wq, &p->work, 0);
}

/* Under kvod_push_lock. */
static bool push_id_in_use(u32 id)
{
	struct kvod_push *p;

	list_for_each_entry(p, &kvod_pushes, node)
		if (p->id == id)
			return true;
	return false;
}

/*
 * Fill in a new push from a checked request; takes the movie reference
 * and, for a movie, starts its cursor.
 */
static int push_setup(struct kvod_push *p, const struct kvod_push_start *req)
{
	p->opts = req->opts;
	p->dst = req->dst;
	p->net = current->nsproxy->net_ns;
	p->clockid = req->opts & KVOD_PUSH_TAI ? CLOCK_TAI : CLOCK_MONOTONIC;
	p->window = (u64)(req->window_ms ?: PUSH_WINDOW_DEF) * NSEC_PER_MSEC;
	p->seq0 = get_random_u16();
	p->ts0 = get_random_u32();
	p->ssrc = get_random_u32();

	p->movie = kvod_movie_open(req->name);
	if (!p->movie)
		return -ENOENT;
	p->rate = req->rate ?: p->movie->bitrate;
	if (p->rate < PUSH_RATE_MIN || p->rate > PUSH_RATE_MAX ||
	    (!p->movie->live && p->movie->length < PUSH_TS_PACKET) ||
	    (p->movie->live && (!kvod_live_ts(p->movie->live) ||
				(req->opts & KVOD_PUSH_LOOP)))) {
		kvod_movie_close(p->movie);
		return -EINVAL;
	}
	if (p->movie->live)
		p->live.seq = kvod_live_newest(p->movie->live);
	else
		kvod_cursor_init(&p->cursor, p->movie, push_cursor_wake);
	p->interval = div64_u64((u64)PUSH_PAYLOAD * 8 * NSEC_PER_SEC, p->rate);
	return 0;
}

/**
 * kvod_push_start() - start a push (KVOD_IOC_PUSH_START)
 * @req: the request; @req->id is set on success
 *
 * Return: 0 or a negative errno, see struct kvod_push_start in the uapi
 * header.
 */
int kvod_push_start(struct kvod_push_start *req)
{
	struct kvod_push *p;
	int ret;

	ret = push_check(req);
	if (ret)
		return ret;
	p = kzalloc(sizeof(*p), GFP_KERNEL);
	if (!p)
		return -ENOMEM;
	INIT_DELAYED_WORK(&p->work, push_work);
	ret = push_setup(p, req);
	if (ret)
		goto err_free;
	ret = push_socket(p);
	if (ret)
		goto err_movie;

	mutex_lock(&kvod_push_lock);
	if (kvod_nr_pushes >= PUSH_MAX) {
		mutex_unlock(&kvod_push_lock);
		ret = -ENOSPC;
		goto err_sock;
	}
	/* After 2^32 starts the ids wrap: skip 0 and those still running. */
	do {
		p->id = ++kvod_push_last_id;
	} while (!p->id || push_id_in_use(p->id));
	list_add_tail(&p->node, &kvod_pushes);
	p->linked = true;
	kvod_nr_pushes++;
	p->start = ktime_add_ns(push_now(p), p->window);
	if (p->movie->live) {
		kvod_live_watch(p->movie->live, &p->live.watch,
				push_live_notify);
		p->live.watching = true;
	}
	/* Once the work is queued the push may end and be freed: log first. */
	pr_debug("push %u: %s at %llu bit/s, every %llu ns\n", p->id,
		 p->movie->name, p->rate, p->interval);
	req->id = p->id;
	queue_delayed_work(kvod_push_wq, &p->work, 0);
	mutex_unlock(&kvod_push_lock);
	return 0;

err_sock:
	sock_release(p->sock);
err_movie:
	push_close_movie(p);
err_free:
	kfree(p);
	return ret;
}

/*
 * Unlinked by the caller, so nobody else frees it; may sleep. Nothing
 * queues the work once the watcher and the cursor's wakes are off.
 */
static void push_stop(struct kvod_push *p)
{
	push_unwatch(p);
	kvod_cursor_stop(&p->cursor);
	cancel_delayed_work_sync(&p->work);
	push_free(p);
}

/**
 * kvod_push_stop() - stop a push (KVOD_IOC_PUSH_STOP)
 * @id: the push
 *
 * Return: 0 or -ENOENT.
 */
int kvod_push_stop(u32 id)
{
	struct kvod_push *p, *found = NULL;

	mutex_lock(&kvod_push_lock);
	list_for_each_entry(p, &kvod_pushes, node) {
		if (p->id == id) {
			found = p;
			p->linked = false;
			list_del(&p->node);
			kvod_nr_pushes--;
			break;
		}
	}
	mutex_unlock(&kvod_push_lock);
	if (!found)
		return -ENOENT;
	push_stop(found);
	return 0;
}

static void push_fill_info(struct kvod_push *p, struct kvod_push_info *info)
{
	memset(info, 0, sizeof(*info));
	info->size = sizeof(*info);
	info->id = p->id;
	info->opts = p->opts;
	info->rate = p->rate;
	info->window_ms = div_u64(p->window, NSEC_PER_MSEC);
	info->netns = p->net->ns.inum;
	info->dst = p->dst;
	strscpy(info->name, p->movie->name, sizeof(info->name));
	info->packets = atomic64_read(&p->packets);
	info->bytes = atomic64_read(&p->bytes);
	info->loops = atomic64_read(&p->loops);
	info->late = atomic64_read(&p->late);
	info->errors = atomic64_read(&p->errors);
	info->icmp_errors = atomic64_read(&p->icmp_errors);
}

/**
 * kvod_push_list() - snapshot the pushes
 * @infos: set to a kvmalloc()ed array (ZERO_SIZE_PTR if empty) that the
 *	caller kvfree()s
 * @nr: set to the number of pushes
 *
 * Return: 0 or -ENOMEM.
 */
int kvod_push_list(struct kvod_push_info **infos, u32 *nr)
{
	struct kvod_push_info *arr;
	struct kvod_push *p;
	u32 n = 0;

	mutex_lock(&kvod_push_lock);
	arr = kvmalloc_array(kvod_nr_pushes, sizeof(*arr), GFP_KERNEL);
	if (arr) {
		list_for_each_entry(p, &kvod_pushes, node)
			push_fill_info(p, &arr[n++]);
	}
	mutex_unlock(&kvod_push_lock);
	if (!arr)
		return -ENOMEM;

	*infos = arr;
	*nr = n;
	return 0;
}

/* Stop every push of @net, or all of them if @net is NULL. */
static void push_stop_all(struct net *net)
{
	struct kvod_push *p, *tmp;
	LIST_HEAD(doomed);

	mutex_lock(&kvod_push_lock);
	list_for_each_entry_safe(p, tmp, &kvod_pushes, node) {
		if (!net || net_eq(p->net, net)) {
			p->linked = false;
			list_move_tail(&p->node, &doomed);
			kvod_nr_pushes--;
		}
	}
	mutex_unlock(&kvod_push_lock);

	list_for_each_entry_safe(p, tmp, &doomed, node)
		push_stop(p);
}

/* Is a push of @net still releasing itself? @gen: the list's generation. */
static bool push_ending(struct net *net, unsigned long *gen)
{
	struct kvod_push *p;
	bool found = false;

	mutex_lock(&kvod_push_lock);
	*gen = kvod_push_ended_gen;
	list_for_each_entry(p, &kvod_push_ending, node) {
		if (net_eq(p->net, net)) {
			found = true;
			break;
		}
	}
	mutex_unlock(&kvod_push_lock);
	return found;
}

/* The workqueue outlives this hook (DOC: Push lifetimes and locking). */
static void __net_exit push_net_pre_exit(struct net *net)
{
	unsigned long gen;

	push_stop_all(net);
	while (push_ending(net, &gen))
		wait_event(kvod_push_ended,
			   READ_ONCE(kvod_push_ended_gen) != gen);
	pr_debug("netns %u: pushes released\n", net->ns.inum);
}

static struct pernet_operations push_net_ops = {
	.pre_exit = push_net_pre_exit,
};

int kvod_push_init(void)
{
	int ret;

	kvod_push_wq = alloc_workqueue("kvod_push", WQ_UNBOUND, 0);
	if (!kvod_push_wq)
		return -ENOMEM;
	ret = register_pernet_subsys(&push_net_ops);
	if (ret)
		destroy_workqueue(kvod_push_wq);
	return ret;
}

void kvod_push_exit(void)
{
	unregister_pernet_subsys(&push_net_ops);
	push_stop_all(NULL);
	destroy_workqueue(kvod_push_wq);
}
