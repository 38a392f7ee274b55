// SPDX-License-Identifier: GPL-2.0
/*
 * sch_tsock: the timed-socket queueing discipline.
 *
 * A sender stamps each packet with the time it should leave
 * (skb->tstamp, from SO_TXTIME or from a kernel sender such as kvod's
 * push) and goes back to sleep; tsock holds the packet until that time and
 * releases it from an hrtimer, the qdisc watchdog, or with launch-time
 * offload hands it to the NIC @lead ns before its time. The drops, the
 * late policy and the offload's conditions are in Documentation/tsock.rst.
 *
 * Structure: every flow (a socket, or a hash of the packet when there is
 * no full socket behind it) has its own queue, an rb-tree of its packets
 * ordered by departure time (equal times stay in arrival order). Flows
 * with packets sit in a second rb-tree, the schedule, ordered by the time
 * of their first packet; its leftmost flow owns the next packet to leave.
 * Packets without a departure time pass through a FIFO that is served
 * before any timed packet. A flow is freed as soon as it is empty; its key
 * (a socket pointer) cannot be reused by another socket while packets of
 * the first hold it.
 *
 * Late drops and a parent: dequeue never tells a parent that the queue
 * emptied (qlen_notify), which hfsc and qfq do not survive in the middle of
 * their own dequeue or peek; a late last packet is left to a second timer,
 * @expire (see dequeue_timed()).
 *
 * Locking: enqueue, dequeue and reset run under the qdisc lock; change
 * takes it (sch_tree_lock) to commit, and @expire takes it from its timer;
 * dump reads parameters with READ_ONCE() under RTNL only; dump_stats takes
 * the lock for a consistent snapshot of the counters.
 */
#include <linux/errqueue.h>
#include <linux/module.h>
#include <linux/rbtree.h>
#include <linux/rtnetlink.h>
#include <linux/skbuff.h>
#include <linux/slab.h>
#include <linux/time.h>
#include <linux/tsock.h>
#include <net/netlink.h>
#include <net/pkt_sched.h>
#include <net/sch_generic.h>
#include <net/sock.h>

#define TSOCK_DEF_HORIZON_US	(2 * USEC_PER_SEC)
#define TSOCK_DEF_TOLERANCE	NSEC_PER_MSEC
#define TSOCK_DEF_SLACK		(10 * NSEC_PER_USEC)
#define TSOCK_DEF_FLOW_LIMIT	1000
#define TSOCK_DEF_LIMIT		10000
#define TSOCK_DEF_LEAD		(200 * NSEC_PER_USEC)

/**
 * struct tsock_flow - one flow's queue
 * @by_key: in tsock_sched_data.flows, ordered by @key
 * @by_time: in tsock_sched_data.schedule while @qlen, by its first packet
 * @pkts: the packets, by departure time
 * @key: the socket, or (hash << 1) | 1 for packets without a full socket
 * @qlen: packets in @pkts
 */
struct tsock_flow {
	struct rb_node by_key;
	struct rb_node by_time;
	struct rb_root_cached pkts;
	unsigned long key;
	u32 qlen;
};

/* Parameters as userspace sees them; one parse path fills them. */
struct tsock_params {
	u32 clockid;
	u32 horizon_us;
	u32 late_policy;
	u32 tolerance;
	u32 slack;
	u32 flow_limit;
	u32 limit;
	u32 lead;
	bool offload;
};

struct tsock_sched_data {
	struct qdisc_skb_head untimed;
	struct rb_root_cached schedule;
	struct rb_root flows;
	u32 nr_flows;

	struct tsock_params p;
	u64 horizon;		/* ns, from p.horizon_us */
	u8 tstamp_type;		/* SKB_CLOCK_* matching p.clockid */
	bool offloaded;
	int queue;		/* device tx queue, for offload */
	ktime_t (*get_time)(void);

	u64 armed_at;		/* watchdog deadline pending, or 0 */
	struct qdisc_watchdog watchdog;
	struct hrtimer expire;	/* drops the late packet dequeue left */
	bool expiring;		/* @expire is armed: no watchdog for it */
	struct tc_tsock_xstats st;
};

static struct kmem_cache *tsock_flow_cachep __read_mostly;

static const struct netlink_range_validation tsock_ns_range = {
	.max = NSEC_PER_SEC,
};

static const struct nla_policy tsock_policy[TCA_TSOCK_MAX + 1] = {
	[TCA_TSOCK_CLOCKID]	= { .type = NLA_U32 },
	[TCA_TSOCK_HORIZON]	= NLA_POLICY_MIN(NLA_U32, 1),
	[TCA_TSOCK_LATE_POLICY]	= NLA_POLICY_MAX(NLA_U32, TSOCK_LATE_MAX),
	[TCA_TSOCK_TOLERANCE]	= { .type = NLA_U32 },
	[TCA_TSOCK_SLACK]	= NLA_POLICY_FULL_RANGE(NLA_U32, &tsock_ns_range),
	[TCA_TSOCK_FLOW_LIMIT]	= NLA_POLICY_MIN(NLA_U32, 1),
	[TCA_TSOCK_LIMIT]	= NLA_POLICY_MIN(NLA_U32, 1),
	[TCA_TSOCK_OFFLOAD]	= NLA_POLICY_MAX(NLA_U8, 1),
	[TCA_TSOCK_LEAD]	= NLA_POLICY_FULL_RANGE(NLA_U32, &tsock_ns_range),
	[TCA_TSOCK_OFFLOADED]	= { .type = NLA_REJECT },
};

/* Does @skb carry a departure time, in our clock? */
enum tsock_when { TSOCK_UNTIMED, TSOCK_TIMED, TSOCK_BAD_CLOCK };

static enum tsock_when skb_when(const struct tsock_sched_data *q,
				const struct sk_buff *skb)
{
	const struct sock *sk = skb->sk;

	if (!skb->tstamp)
		return TSOCK_UNTIMED;
	if (skb->tstamp_type == q->tstamp_type)
		return TSOCK_TIMED;
	/*
	 * Another clock's time is a departure time asked for only if
	 * SO_TXTIME put it there. Otherwise it is a receive time (a
	 * realtime stamp) or TCP's monotonic departure hint, which a
	 * CLOCK_TAI qdisc cannot read: such a packet has no time here.
	 */
	if (sk && sk_fullsock(sk) && sock_flag(sk, SOCK_TXTIME))
		return TSOCK_BAD_CLOCK;
	return TSOCK_UNTIMED;
}

static void report_sock_error(struct sk_buff *skb, u32 err, u8 code)
{
	struct sock_exterr_skb *serr;
	ktime_t txtime = skb->tstamp;
	struct sock *sk = skb->sk;
	struct sk_buff *clone;

	if (!sk || !sk_fullsock(sk) || !sk->sk_txtime_report_errors)
		return;
	clone = skb_clone(skb, GFP_ATOMIC);
	if (!clone)
		return;
	serr = SKB_EXT_ERR(clone);
	serr->ee.ee_errno = err;
	serr->ee.ee_origin = SO_EE_ORIGIN_TXTIME;
	serr->ee.ee_type = 0;
	serr->ee.ee_code = code;
	serr->ee.ee_pad = 0;
	serr->ee.ee_data = txtime >> 32;
	serr->ee.ee_info = txtime;
	if (sock_queue_err_skb(sk, clone))
		kfree_skb(clone);
}

static unsigned long flow_key(struct sk_buff *skb)
{
	struct sock *sk = skb->sk;

	/* Socket pointers are even; hashed keys are odd, so never equal. */
	if (sk && sk_fullsock(sk))
		return (unsigned long)sk;
	return ((unsigned long)skb_get_hash(skb) << 1) | 1UL;
}

static struct tsock_flow *flow_lookup(struct tsock_sched_data *q,
				      unsigned long key)
{
	struct rb_node **p = &q->flows.rb_node, *parent = NULL;
	struct tsock_flow *f;

	while (*p) {
		parent = *p;
		f = rb_entry(parent, struct tsock_flow, by_key);
		if (f->key == key)
			return f;
		p = key < f->key ? &parent->rb_left : &parent->rb_right;
	}

	f = kmem_cache_zalloc(tsock_flow_cachep, GFP_ATOMIC | __GFP_NOWARN);
	if (!f)
		return NULL;
	f->key = key;
	f->pkts = RB_ROOT_CACHED;
	RB_CLEAR_NODE(&f->by_time);
	rb_link_node(&f->by_key, parent, p);
	rb_insert_color(&f->by_key, &q->flows);
	q->nr_flows++;
	return f;
}

static void flow_free(struct tsock_sched_data *q, struct tsock_flow *f)
{
	rb_erase(&f->by_key, &q->flows);
	q->nr_flows--;
	kmem_cache_free(tsock_flow_cachep, f);
}

static struct sk_buff *flow_head(const struct tsock_flow *f)
{
	return rb_to_skb(rb_first_cached(&f->pkts));
}

static bool flow_before(struct rb_node *a, const struct rb_node *b)
{
	return flow_head(rb_entry(a, struct tsock_flow, by_time))->tstamp <
	       flow_head(rb_entry(b, struct tsock_flow, by_time))->tstamp;
}

static void schedule_flow(struct tsock_sched_data *q, struct tsock_flow *f)
{
	rb_add_cached(&f->by_time, &q->schedule, flow_before);
}

static void unschedule_flow(struct tsock_sched_data *q, struct tsock_flow *f)
{
	rb_erase_cached(&f->by_time, &q->schedule);
	RB_CLEAR_NODE(&f->by_time);
}

static bool skb_before(struct rb_node *a, const struct rb_node *b)
{
	return rb_to_skb(a)->tstamp < rb_to_skb(b)->tstamp;
}

/* Insert in time order; equal times keep arrival order. */
static void flow_add(struct tsock_sched_data *q, struct tsock_flow *f,
		     struct sk_buff *skb)
{
	f->qlen++;
	if (!rb_add_cached(&skb->rbnode, &f->pkts, skb_before))
		return;
	if (!RB_EMPTY_NODE(&f->by_time))
		unschedule_flow(q, f);
	schedule_flow(q, f);
}

static struct sk_buff *flow_pop(struct Qdisc *sch, struct tsock_flow *f)
{
	struct tsock_sched_data *q = qdisc_priv(sch);
	struct sk_buff *skb = flow_head(f);

	unschedule_flow(q, f);
	rb_erase_cached(&skb->rbnode, &f->pkts);
	/* rbnode shares storage with next, prev and dev. */
	skb->next = NULL;
	skb->prev = NULL;
	skb->dev = qdisc_dev(sch);
	if (--f->qlen)
		schedule_flow(q, f);
	else
		flow_free(q, f);

	qdisc_qstats_backlog_dec(sch, skb);
	sch->q.qlen--;
	return skb;
}

static struct tsock_flow *first_flow(const struct tsock_sched_data *q)
{
	struct rb_node *n = rb_first_cached(&q->schedule);

	return n ? rb_entry(n, struct tsock_flow, by_time) : NULL;
}

static ktime_t release_time(const struct tsock_sched_data *q,
			    const struct sk_buff *skb)
{
	return q->offloaded ? skb->tstamp - q->p.lead : skb->tstamp;
}

/* After every enqueue and dequeue: arm the timer for the next packet. */
static void reset_watchdog(struct Qdisc *sch)
{
	struct tsock_sched_data *q = qdisc_priv(sch);
	struct tsock_flow *f = first_flow(q);
	ktime_t next;

	/* Dequeue comes again without a timer, or @expire kicks the root. */
	if (q->untimed.qlen || q->expiring)
		return;
	if (!f) {
		if (q->armed_at) {
			qdisc_watchdog_cancel(&q->watchdog);
			q->armed_at = 0;
		}
		return;
	}
	next = release_time(q, flow_head(f));
	qdisc_watchdog_schedule_range_ns(&q->watchdog, next, q->p.slack);
	q->armed_at = next;
}

static int tsock_drop(struct sk_buff *skb, struct Qdisc *sch,
		      struct sk_buff **to_free, u64 *counter, u32 err,
		      u8 code)
{
	(*counter)++;
	report_sock_error(skb, err, code);
	return qdisc_drop(skb, sch, to_free);
}

static int enqueue_timed(struct sk_buff *skb, struct Qdisc *sch,
			 struct sk_buff **to_free)
{
	struct tsock_sched_data *q = qdisc_priv(sch);
	ktime_t now = q->get_time();
	struct tsock_flow *f;

	/*
	 * SO_TXTIME's time is a u64: one of 2^63 ns or more is a negative
	 * ktime_t here, but it is beyond any horizon, not long past (and
	 * now - tstamp, the lateness, would wrap and call it on time).
	 * Past this check no time is negative, so lateness cannot wrap.
	 */
	if (skb->tstamp < 0 || skb->tstamp > now + (s64)q->horizon)
		return tsock_drop(skb, sch, to_free, &q->st.drop_horizon,
				  EINVAL, SO_EE_CODE_TXTIME_INVALID_PARAM);
	if (q->p.late_policy == TSOCK_LATE_DROP &&
	    now - skb->tstamp > (s64)q->p.tolerance)
		return tsock_drop(skb, sch, to_free, &q->st.drop_late,
				  ECANCELED, SO_EE_CODE_TXTIME_MISSED);

	f = flow_lookup(q, flow_key(skb));
	if (!f) {
		q->st.drop_limit++;
		return qdisc_drop(skb, sch, to_free);
	}
	if (f->qlen >= q->p.flow_limit) {
		q->st.drop_flow_limit++;
		return qdisc_drop(skb, sch, to_free);
	}
	flow_add(q, f, skb);
	return NET_XMIT_SUCCESS;
}

static int tsock_enqueue(struct sk_buff *skb, struct Qdisc *sch,
			 struct sk_buff **to_free)
{
	struct tsock_sched_data *q = qdisc_priv(sch);
	int ret;

	if (unlikely(sch->q.qlen >= sch->limit)) {
		q->st.drop_limit++;
		return qdisc_drop(skb, sch, to_free);
	}

	switch (skb_when(q, skb)) {
	case TSOCK_UNTIMED:
		__qdisc_enqueue_tail(skb, &q->untimed);
		q->st.untimed++;
		ret = NET_XMIT_SUCCESS;
		break;
	case TSOCK_BAD_CLOCK:
		return tsock_drop(skb, sch, to_free, &q->st.drop_clock,
				  EINVAL, SO_EE_CODE_TXTIME_INVALID_PARAM);
	default:
		ret = enqueue_timed(skb, sch, to_free);
		if (ret != NET_XMIT_SUCCESS)
			return ret;
	}

	qdisc_qstats_backlog_inc(sch, skb);
	sch->q.qlen++;
	reset_watchdog(sch);
	return ret;
}

static void account_release(struct tsock_sched_data *q, s64 late)
{
	if (late < 0)
		late = 0;
	if (late > q->p.tolerance)
		q->st.late++;
	else
		q->st.on_time++;
	if (q->offloaded)
		q->st.offloaded++;
	q->st.lateness_sum += late;
	if (late > q->st.lateness_max)
		q->st.lateness_max = late;
}

static bool late_drop(const struct tsock_sched_data *q,
		      const struct sk_buff *skb, ktime_t now)
{
	return q->p.late_policy == TSOCK_LATE_DROP &&
	       now - skb->tstamp > (s64)q->p.tolerance;
}

/* Drop @skb, just taken off its flow as late; the caller reports it up. */
static void drop_late(struct Qdisc *sch, struct sk_buff *skb,
		      struct sk_buff **to_free)
{
	struct tsock_sched_data *q = qdisc_priv(sch);

	q->st.drop_late++;
	report_sock_error(skb, ECANCELED, SO_EE_CODE_TXTIME_MISSED);
	qdisc_drop(skb, sch, to_free);
}

/* Does a parent hear of our drops (qdisc_tree_reduce_backlog())? */
static bool has_parent(const struct Qdisc *sch)
{
	return sch->parent != TC_H_ROOT && !(sch->flags & TCQ_F_NOPARENT);
}

/* Under the qdisc lock, in dequeue: @expire is to drop what is late. */
static void expire_soon(struct tsock_sched_data *q)
{
	if (q->expiring)
		return;
	q->expiring = true;
	hrtimer_start(&q->expire, 0, HRTIMER_MODE_REL_SOFT);
}

/*
 * The next timed packet that is due, or NULL; drops late ones by policy.
 * Runs without RTNL: drops are freed here, as sch_etf does, so that their
 * sockets get their memory back now (rtnl_kfree_skbs() would hold them
 * until some unrelated RTNL unlock, and its list is not ours to use
 * without RTNL).
 *
 * A parent learns of every drop, or it keeps a phantom backlog, but only
 * while a packet is still counted here: the one returned, or the last
 * one, which is left to @expire. Had the queue emptied, the parent's
 * qlen_notify would run inside its own dequeue or peek, where 6.12's
 * hfsc takes the class off twice (update_vf() once more after the
 * dequeue: the parent class goes passive under a backlogged sibling,
 * which is then never served) and qfq picks its next aggregate twice
 * (it loses one, or dereferences NULL when there is no other).
 */
static struct sk_buff *dequeue_timed(struct Qdisc *sch, ktime_t now)
{
	struct tsock_sched_data *q = qdisc_priv(sch);
	unsigned int drops = 0, drop_len = 0;
	struct sk_buff *skb = NULL, *to_free = NULL;
	struct tsock_flow *f;

	while ((f = first_flow(q))) {
		skb = flow_head(f);
		if (now < release_time(q, skb) || !late_drop(q, skb, now))
			break;
		skb = NULL;
		if (sch->q.qlen == 1 && has_parent(sch)) {
			expire_soon(q);
			break;
		}
		skb = flow_pop(sch, f);
		drops++;
		drop_len += qdisc_pkt_len(skb);
		drop_late(sch, skb, &to_free);
		skb = NULL;
	}
	if (drops)
		qdisc_tree_reduce_backlog(sch, drops, drop_len);
	kfree_skb_list(to_free);
	if (!skb || now < release_time(q, skb))
		return NULL;

	skb = flow_pop(sch, f);
	account_release(q, now - skb->tstamp);
	/*
	 * The NIC takes the stamp as the launch time, and one in the past
	 * is for the qdisc to handle (etf drops it): a late packet sent is
	 * sent now.
	 */
	if (q->offloaded && now > skb->tstamp)
		skb->tstamp = now;
	return skb;
}

static struct sk_buff *tsock_dequeue(struct Qdisc *sch)
{
	struct tsock_sched_data *q = qdisc_priv(sch);
	struct sk_buff *skb;
	ktime_t now;

	skb = __qdisc_dequeue_head(&q->untimed);
	if (skb) {
		qdisc_qstats_backlog_dec(sch, skb);
		sch->q.qlen--;
		/*
		 * A launch-time queue takes every packet's time as its launch
		 * time: an untimed one (or one with TCP's monotonic hint in a
		 * CLOCK_TAI tsock) leaves now.
		 */
		if (q->offloaded)
			skb_set_delivery_time(skb, q->get_time(),
					      q->tstamp_type);
		goto out;
	}

	now = q->get_time();
	if (q->armed_at && now >= q->armed_at) {
		q->st.wakeups++;
		q->armed_at = 0;
	}
	skb = dequeue_timed(sch, now);
out:
	if (skb)
		qdisc_bstats_update(sch, skb);
	reset_watchdog(sch);
	return skb;
}

/*
 * @expire: drops the late packets dequeue left, the last one among them.
 * It takes the root lock as sch_sfq's perturbation timer does (tsock_reset
 * holds that lock, so it may only try to cancel this timer; destroy
 * cancels it first, as it arms the watchdog). No parent is in the middle
 * of a dequeue now, so it may hear that this queue emptied. Then it kicks
 * the root, which may have other classes to send: the parent kept
 * picking this one while the late packet was here.
 */
static enum hrtimer_restart tsock_expire(struct hrtimer *timer)
{
	struct tsock_sched_data *q = container_of(timer, struct tsock_sched_data,
						  expire);
	struct Qdisc *sch = q->watchdog.qdisc;
	unsigned int drops = 0, drop_len = 0;
	struct sk_buff *to_free = NULL;
	spinlock_t *root_lock;	/* the root qdisc's, which dequeue holds */
	struct tsock_flow *f;
	ktime_t now;

	rcu_read_lock();
	root_lock = qdisc_lock(qdisc_root_sleeping(sch));
	spin_lock(root_lock);
	q->expiring = false;
	now = q->get_time();
	while ((f = first_flow(q)) && late_drop(q, flow_head(f), now)) {
		struct sk_buff *skb = flow_pop(sch, f);

		drops++;
		drop_len += qdisc_pkt_len(skb);
		drop_late(sch, skb, &to_free);
	}
	if (drops)
		qdisc_tree_reduce_backlog(sch, drops, drop_len);
	reset_watchdog(sch);
	spin_unlock(root_lock);
	kfree_skb_list(to_free);
	__netif_schedule(qdisc_root(sch));
	rcu_read_unlock();
	return HRTIMER_NORESTART;
}

/* Drop the earliest packet; for lowering the limit. */
static struct sk_buff *dequeue_any(struct Qdisc *sch)
{
	struct tsock_sched_data *q = qdisc_priv(sch);
	struct sk_buff *skb = __qdisc_dequeue_head(&q->untimed);
	struct tsock_flow *f;

	if (skb) {
		qdisc_qstats_backlog_dec(sch, skb);
		sch->q.qlen--;
		return skb;
	}
	f = first_flow(q);
	return f ? flow_pop(sch, f) : NULL;
}

static void tsock_reset(struct Qdisc *sch)
{
	struct tsock_sched_data *q = qdisc_priv(sch);
	struct tsock_flow *f, *tmp;

	if (q->watchdog.qdisc == sch) {
		hrtimer_try_to_cancel(&q->expire);
		qdisc_watchdog_cancel(&q->watchdog);
	}
	q->expiring = false;
	q->armed_at = 0;

	rtnl_kfree_skbs(q->untimed.head, q->untimed.tail);
	memset(&q->untimed, 0, sizeof(q->untimed));

	rbtree_postorder_for_each_entry_safe(f, tmp, &q->flows, by_key) {
		struct rb_node *n;

		while ((n = rb_first_cached(&f->pkts))) {
			struct sk_buff *skb = rb_to_skb(n);

			rb_erase_cached(n, &f->pkts);
			rtnl_kfree_skbs(skb, skb);
		}
		kmem_cache_free(tsock_flow_cachep, f);
	}
	q->flows = RB_ROOT;
	q->schedule = RB_ROOT_CACHED;
	q->nr_flows = 0;
	sch->q.qlen = 0;
	sch->qstats.backlog = 0;
}

static int parse_clockid(const struct nlattr *attr, u32 *clockid,
			 struct netlink_ext_ack *extack)
{
	u32 id = nla_get_u32(attr);

	if (id != CLOCK_MONOTONIC && id != CLOCK_TAI) {
		NL_SET_ERR_MSG_ATTR(extack, attr,
				    "clockid must be CLOCK_MONOTONIC or CLOCK_TAI");
		return -EINVAL;
	}
	*clockid = id;
	return 0;
}

/*
 * Fill @p from @opt over the values it holds. @create allows the options
 * that are fixed afterwards; nothing is committed here.
 */
static int tsock_parse(struct nlattr *opt, struct tsock_params *p,
		       bool create, struct netlink_ext_ack *extack)
{
	struct nlattr *tb[TCA_TSOCK_MAX + 1];
	int err;

	if (!opt)
		return 0;
	err = nla_parse_nested(tb, TCA_TSOCK_MAX, opt, tsock_policy, extack);
	if (err < 0)
		return err;

	if (tb[TCA_TSOCK_CLOCKID]) {
		u32 old = p->clockid;

		err = parse_clockid(tb[TCA_TSOCK_CLOCKID], &p->clockid, extack);
		if (err)
			return err;
		if (!create && p->clockid != old) {
			NL_SET_ERR_MSG_ATTR(extack, tb[TCA_TSOCK_CLOCKID],
					    "clockid is fixed at creation");
			return -EOPNOTSUPP;
		}
	}
	if (tb[TCA_TSOCK_OFFLOAD]) {
		bool want = nla_get_u8(tb[TCA_TSOCK_OFFLOAD]);

		if (!create && want != p->offload) {
			NL_SET_ERR_MSG_ATTR(extack, tb[TCA_TSOCK_OFFLOAD],
					    "offload is fixed at creation");
			return -EOPNOTSUPP;
		}
		p->offload = want;
	}
	if (tb[TCA_TSOCK_HORIZON])
		p->horizon_us = nla_get_u32(tb[TCA_TSOCK_HORIZON]);
	if (tb[TCA_TSOCK_LATE_POLICY])
		p->late_policy = nla_get_u32(tb[TCA_TSOCK_LATE_POLICY]);
	if (tb[TCA_TSOCK_TOLERANCE])
		p->tolerance = nla_get_u32(tb[TCA_TSOCK_TOLERANCE]);
	if (tb[TCA_TSOCK_SLACK])
		p->slack = nla_get_u32(tb[TCA_TSOCK_SLACK]);
	if (tb[TCA_TSOCK_FLOW_LIMIT])
		p->flow_limit = nla_get_u32(tb[TCA_TSOCK_FLOW_LIMIT]);
	if (tb[TCA_TSOCK_LIMIT])
		p->limit = nla_get_u32(tb[TCA_TSOCK_LIMIT]);
	if (tb[TCA_TSOCK_LEAD]) {
		if (!p->offload) {
			NL_SET_ERR_MSG_ATTR(extack, tb[TCA_TSOCK_LEAD],
					    "lead applies only with offload");
			return -EINVAL;
		}
		p->lead = nla_get_u32(tb[TCA_TSOCK_LEAD]);
	}

	if (p->flow_limit > p->limit) {
		NL_SET_ERR_MSG(extack, "flow_limit exceeds limit");
		return -EINVAL;
	}
	return 0;
}

/* Under the tree lock; the parameters are valid. */
static void tsock_commit(struct Qdisc *sch, const struct tsock_params *p)
{
	struct tsock_sched_data *q = qdisc_priv(sch);

	WRITE_ONCE(q->p.horizon_us, p->horizon_us);
	WRITE_ONCE(q->p.late_policy, p->late_policy);
	WRITE_ONCE(q->p.tolerance, p->tolerance);
	WRITE_ONCE(q->p.slack, p->slack);
	WRITE_ONCE(q->p.flow_limit, p->flow_limit);
	WRITE_ONCE(q->p.limit, p->limit);
	WRITE_ONCE(q->p.lead, p->lead);
	q->horizon = (u64)p->horizon_us * NSEC_PER_USEC;
	WRITE_ONCE(sch->limit, p->limit);
}

static int tsock_change(struct Qdisc *sch, struct nlattr *opt,
			struct netlink_ext_ack *extack)
{
	struct tsock_sched_data *q = qdisc_priv(sch);
	unsigned int drops = 0, drop_len = 0;
	struct tsock_params p = q->p;
	int err;

	err = tsock_parse(opt, &p, false, extack);
	if (err)
		return err;

	sch_tree_lock(sch);
	tsock_commit(sch, &p);
	while (sch->q.qlen > sch->limit) {
		struct sk_buff *skb = dequeue_any(sch);

		drops++;
		drop_len += qdisc_pkt_len(skb);
		q->st.drop_limit++;
		qdisc_qstats_drop(sch);
		rtnl_kfree_skbs(skb, skb);	/* change runs under RTNL */
	}
	if (drops)
		qdisc_tree_reduce_backlog(sch, drops, drop_len);
	reset_watchdog(sch);
	sch_tree_unlock(sch);
	return 0;
}

static void tsock_disable_offload(struct Qdisc *sch)
{
	struct tsock_sched_data *q = qdisc_priv(sch);
	struct net_device *dev = qdisc_dev(sch);
	struct tc_etf_qopt_offload etf = { .queue = q->queue, .enable = 0 };

	if (!q->offloaded)
		return;
	if (dev->netdev_ops->ndo_setup_tc(dev, TC_SETUP_QDISC_ETF, &etf) < 0)
		netdev_warn(dev, "tsock: could not disable launch-time offload on queue %d\n",
			    q->queue);
	q->offloaded = false;
}

/* Try the device; without it the timer does the job. Never fails. */
static void tsock_enable_offload(struct Qdisc *sch,
				 struct netlink_ext_ack *extack)
{
	struct tsock_sched_data *q = qdisc_priv(sch);
	struct net_device *dev = qdisc_dev(sch);
	const struct net_device_ops *ops = dev->netdev_ops;
	struct tc_etf_qopt_offload etf = { .queue = q->queue, .enable = 1 };

	/*
	 * On a multi-queue device a tsock feeds one tx queue only under an
	 * mq-like root (one class per queue). As the root, or under another
	 * root (prio, htb...), it may feed every queue, but launch time
	 * would be enabled on @queue only: packets on the others would
	 * leave @lead early. Offload wants a tsock per queue (mq).
	 */
	if (dev->real_num_tx_queues > 1 &&
	    (sch->parent == TC_H_ROOT ||
	     !(rtnl_dereference(dev->qdisc)->flags & TCQ_F_MQROOT))) {
		NL_SET_ERR_MSG_MOD(extack,
				   "launch-time offload needs a tsock per tx queue (under mq), using the timer");
		return;
	}
	if (!ops->ndo_setup_tc || ops->ndo_setup_tc(dev, TC_SETUP_QDISC_ETF, &etf) < 0) {
		NL_SET_ERR_MSG_MOD(extack,
				   "device has no launch-time offload, using the timer");
		return;
	}
	q->offloaded = true;
}

static int tsock_init(struct Qdisc *sch, struct nlattr *opt,
		      struct netlink_ext_ack *extack)
{
	struct tsock_sched_data *q = qdisc_priv(sch);
	struct net_device *dev = qdisc_dev(sch);
	struct tsock_params p = {
		.clockid	= CLOCK_MONOTONIC,
		.horizon_us	= TSOCK_DEF_HORIZON_US,
		.late_policy	= TSOCK_LATE_SEND,
		.tolerance	= TSOCK_DEF_TOLERANCE,
		.slack		= TSOCK_DEF_SLACK,
		.flow_limit	= TSOCK_DEF_FLOW_LIMIT,
		.limit		= TSOCK_DEF_LIMIT,
		.lead		= TSOCK_DEF_LEAD,
	};
	int err;

	q->schedule = RB_ROOT_CACHED;
	q->flows = RB_ROOT;

	err = tsock_parse(opt, &p, true, extack);
	if (err)
		return err;

	q->p.clockid = p.clockid;
	q->p.offload = p.offload;
	tsock_commit(sch, &p);
	if (p.clockid == CLOCK_TAI) {
		q->get_time = ktime_get_clocktai;
		q->tstamp_type = SKB_CLOCK_TAI;
	} else {
		q->get_time = ktime_get;
		q->tstamp_type = SKB_CLOCK_MONOTONIC;
	}
	q->queue = sch->dev_queue - netdev_get_tx_queue(dev, 0);
	hrtimer_init(&q->expire, CLOCK_MONOTONIC, HRTIMER_MODE_REL_SOFT);
	q->expire.function = tsock_expire;
	qdisc_watchdog_init_clockid(&q->watchdog, sch, p.clockid);
	if (p.offload)
		tsock_enable_offload(sch, extack);
	return 0;
}

/*
 * Runs after a failed init too: the timers may never have been set up.
 * @expire goes first, as it arms the watchdog.
 */
static void tsock_destroy(struct Qdisc *sch)
{
	struct tsock_sched_data *q = qdisc_priv(sch);

	if (q->watchdog.qdisc == sch) {
		hrtimer_cancel(&q->expire);
		qdisc_watchdog_cancel(&q->watchdog);
	}
	tsock_disable_offload(sch);
}

static int tsock_dump(struct Qdisc *sch, struct sk_buff *skb)
{
	struct tsock_sched_data *q = qdisc_priv(sch);
	struct nlattr *opts;

	opts = nla_nest_start_noflag(skb, TCA_OPTIONS);
	if (!opts)
		return -EMSGSIZE;

	if (nla_put_u32(skb, TCA_TSOCK_CLOCKID, q->p.clockid) ||
	    nla_put_u32(skb, TCA_TSOCK_HORIZON, READ_ONCE(q->p.horizon_us)) ||
	    nla_put_u32(skb, TCA_TSOCK_LATE_POLICY,
			READ_ONCE(q->p.late_policy)) ||
	    nla_put_u32(skb, TCA_TSOCK_TOLERANCE, READ_ONCE(q->p.tolerance)) ||
	    nla_put_u32(skb, TCA_TSOCK_SLACK, READ_ONCE(q->p.slack)) ||
	    nla_put_u32(skb, TCA_TSOCK_FLOW_LIMIT,
			READ_ONCE(q->p.flow_limit)) ||
	    nla_put_u32(skb, TCA_TSOCK_LIMIT, READ_ONCE(q->p.limit)) ||
	    nla_put_u8(skb, TCA_TSOCK_OFFLOAD, q->p.offload) ||
	    nla_put_u8(skb, TCA_TSOCK_OFFLOADED, q->offloaded))
		goto nla_put_failure;
	if (q->p.offload &&
	    nla_put_u32(skb, TCA_TSOCK_LEAD, READ_ONCE(q->p.lead)))
		goto nla_put_failure;

	return nla_nest_end(skb, opts);

nla_put_failure:
	nla_nest_cancel(skb, opts);
	return -EMSGSIZE;
}

static int tsock_dump_stats(struct Qdisc *sch, struct gnet_dump *d)
{
	struct tsock_sched_data *q = qdisc_priv(sch);
	struct tc_tsock_xstats st;

	sch_tree_lock(sch);
	st = q->st;
	st.flows = q->nr_flows;
	sch_tree_unlock(sch);
	st.reserved = 0;

	return gnet_stats_copy_app(d, &st, sizeof(st));
}

static struct Qdisc_ops tsock_qdisc_ops __read_mostly = {
	.id		= "tsock",
	.priv_size	= sizeof(struct tsock_sched_data),
	.enqueue	= tsock_enqueue,
	.dequeue	= tsock_dequeue,
	.peek		= qdisc_peek_dequeued,
	.init		= tsock_init,
	.reset		= tsock_reset,
	.destroy	= tsock_destroy,
	.change		= tsock_change,
	.dump		= tsock_dump,
	.dump_stats	= tsock_dump_stats,
	.owner		= THIS_MODULE,
};
MODULE_ALIAS_NET_SCH("tsock");

static int __init tsock_module_init(void)
{
	int err;

	tsock_flow_cachep = KMEM_CACHE(tsock_flow, 0);
	if (!tsock_flow_cachep)
		return -ENOMEM;
	err = register_qdisc(&tsock_qdisc_ops);
	if (err)
		kmem_cache_destroy(tsock_flow_cachep);
	return err;
}

/* Every tsock qdisc holds a module reference, so no flow is left here. */
static void __exit tsock_module_exit(void)
{
	unregister_qdisc(&tsock_qdisc_ops);
	kmem_cache_destroy(tsock_flow_cachep);
}

module_init(tsock_module_init);
module_exit(tsock_module_exit);

MODULE_DESCRIPTION("tsock: timed-socket qdisc, releases packets at their departure time");
MODULE_AUTHOR("The kvod developers");
MODULE_LICENSE("GPL");
