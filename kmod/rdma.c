// SPDX-License-Identifier: GPL-2.0
/* RDMA READ server: listeners, rdma_cm events and RDMA devices. */

/**
 * DOC: RDMA listeners and devices
 *
 * A listener is one rdma_cm id bound to the listener's address in its
 * namespace. For the wildcard address rdma_cm itself listens on every
 * device, including devices that appear later. A listener bound to a
 * specific address is bound to the device that owns it. When that device
 * goes away (``DEVICE_REMOVAL`` on the listening id), or while no device
 * serves the address yet, the listener waits, and the ib_client's add()
 * callback retries the bind when a device appears.
 *
 * kvod's ib_client was registered after rdma_cm's, so its remove() runs
 * first. It stops admitting on the device, closes the device's
 * connections and waits until every one of them has freed its QP, MRs, CQ
 * and PD, and destroys a listening id bound to the device, before rdma_cm
 * tears down its own state for it. Waiting for the cm_ids alone would not
 * do: a release destroys its id before the QP.
 */

/**
 * DOC: RDMA listener namespace
 *
 * RDMA listeners exist only in the initial network namespace, as for every
 * in-kernel rdma_cm server (nvmet-rdma, isert, srpt, ksmbd, rds): an
 * rdma_cm id holds a reference on its namespace, so a listener elsewhere
 * would keep its namespace alive and could never be stopped by the
 * namespace's death, as HTTP listeners are. LISTEN in another namespace
 * fails with ``EOPNOTSUPP``.
 */

/**
 * DOC: RDMA loopback addresses
 *
 * rdma_cm takes a loopback address for the wildcard (cma_any_addr()): an
 * id bound to 127.0.0.1 listens on every device and accepts requests for
 * any of their addresses. A listener that says it is on loopback must not
 * be reachable from the network, so LISTEN on a loopback address
 * (127.0.0.0/8 or ::1) fails with ``EADDRNOTAVAIL``, as it does on a
 * specific address that is not configured in the namespace.
 */

/**
 * DOC: RDMA connection setup
 *
 * The rdma_cm event handler only does what must happen there, and is
 * cheap: rdma_cm runs it in its own work, and a slow one would stall every
 * rdma_cm user of the host. It parses a connect request, looks its movie
 * up, and admits the connection against the limits (``rdma_max_conns``
 * per listener, ``rdma_max_conns_per_addr`` per client address and
 * listener) or rejects it with a status.
 *
 * The connection's setup (its PD, the movie's map and MRs, the table, CQ
 * and QP, then the accept) runs in its setup_work on kvod's
 * ``kvod_rdma_setup`` workqueue, at most ``KVOD_RDMA_SETUPS`` at once. The
 * others wait their turn, each holding the connection slot it was
 * admitted with, so the queue is bounded by the connection limits. A setup
 * that fails is rejected with the status kvod_rdma_status() maps its error
 * to: ``NO_RESOURCES``, or ``BUSY`` for ``-EBUSY``. A connection closed
 * before its setup answered (unlisten, exit, device removal) is rejected
 * with ``BUSY``.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/inetdevice.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <net/addrconf.h>

#include "rdma.h"
#include "rdma_parse.h"

static unsigned int rdma_max_conns = 1024;
module_param(rdma_max_conns, uint, 0644);
MODULE_PARM_DESC(rdma_max_conns,
		 "RDMA connections per listener, 0 for no limit; more are rejected as busy (default 1024)");

static unsigned int rdma_max_conns_per_addr = 64;
module_param(rdma_max_conns_per_addr, uint, 0644);
MODULE_PARM_DESC(rdma_max_conns_per_addr,
		 "RDMA connections per client address and listener, 0 for no limit; more are rejected (default 64)");

struct workqueue_struct *kvod_rdma_wq;		/* releases, rebinds */
static struct workqueue_struct *kvod_rdma_setup_wq;
#define KVOD_RDMA_SETUPS	4

/* Every RDMA listener, for device add/remove; under kvod_rdma_lock. */
static LIST_HEAD(kvod_rdma_listeners);
static DEFINE_MUTEX(kvod_rdma_lock);
static atomic_t kvod_rdma_devices = ATOMIC_INIT(0);
/* Woken by every connection's release, once it is off its list. */
static DECLARE_WAIT_QUEUE_HEAD(kvod_rdma_released_wq);

static struct ib_client kvod_rdma_client;

static bool addr_is_any(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		return ((const struct sockaddr_in *)ss)->sin_addr.s_addr ==
		       htonl(INADDR_ANY);
	return ipv6_addr_any(&((const struct sockaddr_in6 *)ss)->sin6_addr);
}

/* Refused for a listener (DOC: RDMA loopback addresses). */
static bool addr_is_loopback(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		return ipv4_is_loopback(((const struct sockaddr_in *)ss)->
					sin_addr.s_addr);
	return ipv6_addr_loopback(&((const struct sockaddr_in6 *)ss)->sin6_addr);
}

static bool addr_is_local(struct net *net, const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *sin = (const struct sockaddr_in *)ss;
		struct net_device *ndev;

		ndev = ip_dev_find(net, sin->sin_addr.s_addr);
		if (!ndev)
			return false;
		dev_put(ndev);
		return true;
	}
#if IS_ENABLED(CONFIG_IPV6)
	return ipv6_chk_addr(net,
			     &((const struct sockaddr_in6 *)ss)->sin6_addr,
			     NULL, 0);
#else
	return false;
#endif
}

static void listener_set_devices(struct kvod_rdma_listener *rl, s64 n)
{
	atomic64_set(&rl->l->counters[KVOD_LC_DEVICES], n);
}

/**
 * kvod_rdma_status() - the wire status for a failed connection setup
 * @err: negative errno
 *
 * Return: enum kvod_rdma_status.
 */
u8 kvod_rdma_status(int err)
{
	return err == -EBUSY ? KVOD_RDMA_BUSY : KVOD_RDMA_NO_RESOURCES;
}

/**
 * kvod_rdma_reject() - reject a connect request with a status, and count it
 * @rl: the listener it came in on
 * @id: the request's id; in its handler or under rdma_lock_handler()
 * @status: enum kvod_rdma_status, not KVOD_RDMA_OK
 */
void kvod_rdma_reject(struct kvod_rdma_listener *rl, struct rdma_cm_id *id,
		      u8 status)
{
	static const enum kvod_listener_counter why[] = {
		[KVOD_RDMA_NOT_FOUND] = KVOD_LC_REJ_NOT_FOUND,
		[KVOD_RDMA_BUSY] = KVOD_LC_REJ_BUSY,
		[KVOD_RDMA_BAD_VERSION] = KVOD_LC_REJ_VERSION,
		[KVOD_RDMA_BAD_REQUEST] = KVOD_LC_REJ_BAD_REQUEST,
		[KVOD_RDMA_NO_RESOURCES] = KVOD_LC_REFUSED,
		[KVOD_RDMA_ADDR_BUSY] = KVOD_LC_REJ_BUSY,
		[KVOD_RDMA_NOT_MOVIE] = KVOD_LC_REJ_NOT_FOUND,
	};
	struct kvod_rdma_reply reply = {
		.magic = cpu_to_be32(KVOD_RDMA_MAGIC),
		.version = KVOD_RDMA_VERSION,
		.status = status,
	};

	kvod_lc_inc(rl->l, why[status]);
	rdma_reject(id, &reply, sizeof(reply), IB_CM_REJ_CONSUMER_DEFINED);
}

/* Reject from the CONNECT_REQUEST handler: non-zero makes rdma_cm destroy @id. */
static int conn_reject(struct kvod_rdma_listener *rl, struct rdma_cm_id *id,
		       u8 status)
{
	kvod_rdma_reject(rl, id, status);
	return -ECONNREFUSED;
}

/* Whether kvod serves on @dev: from add() until remove() starts. */
static bool device_serving(struct ib_device *dev)
{
	return ib_get_client_data(dev, &kvod_rdma_client);
}

/*
 * Count @conn against the limits and, if it fits, link it and queue its
 * setup. Under rl->lock, so that close_conns() either sees the connection
 * with its setup queued (and release_work waits for that) or the
 * connection sees the listener stopping or its device going away.
 */
static u8 conn_admit(struct kvod_rdma_listener *rl, struct kvod_rdma_conn *conn)
{
	unsigned int max_conns = READ_ONCE(rdma_max_conns);
	u8 status = KVOD_RDMA_OK;

	spin_lock_bh(&rl->lock);
	if (rl->stopping || !device_serving(conn->dev) ||
	    (max_conns && rl->nr_conns >= max_conns)) {
		status = KVOD_RDMA_BUSY;
		goto out;
	}
	if (!kvod_peer_add(rl->peers, &conn->peer,
			   READ_ONCE(rdma_max_conns_per_addr))) {
		status = KVOD_RDMA_ADDR_BUSY;
		goto out;
	}
	list_add_tail(&conn->node, &rl->conns);
	rl->nr_conns++;
	conn->id->context = &conn->ctx;
	queue_work(kvod_rdma_setup_wq, &conn->setup_work);
out:
	spin_unlock_bh(&rl->lock);
	return status;
}

/**
 * kvod_rdma_conn_unlink() - the last step of a connection's release
 * @conn: an admitted connection, about to be freed
 *
 * A stopper waits for the count to reach zero and then frees the listener:
 * its completion is the last thing this touches (complete() is safe
 * against the waiter freeing it as soon as wait_for_completion() returns).
 */
void kvod_rdma_conn_unlink(struct kvod_rdma_conn *conn)
{
	struct kvod_rdma_listener *rl = conn->rl;
	bool last;

	spin_lock_bh(&rl->lock);
	list_del_init(&conn->node);
	hlist_del_init(&conn->peer.node);
	last = !--rl->nr_conns && rl->stopping;
	spin_unlock_bh(&rl->lock);
	wake_up_all(&kvod_rdma_released_wq);
	if (last)
		complete(&rl->drained);
}

static int on_connect_request(struct kvod_rdma_listener *rl,
			      struct rdma_cm_id *id,
			      const struct rdma_cm_event *ev)
{
	char name[KVOD_NAME_MAX];
	struct kvod_rdma_conn *conn;
	struct kvod_movie *movie;
	u8 status, flags;

	status = kvod_rdma_parse_request(ev->param.conn.private_data,
					 ev->param.conn.private_data_len,
					 name, &flags);
	if (status)
		return conn_reject(rl, id, status);
	movie = kvod_movie_open(name);
	if (!movie)
		return conn_reject(rl, id, KVOD_RDMA_NOT_FOUND);
	/*
	 * A live channel without an RDMA mirror has nothing to READ, nor,
	 * for now, has a movie served from the page cache: it is refused as
	 * a server without the resources, which a client may retry.
	 */
	if (!kvod_movie_image(movie)) {
		u8 why = movie->live ? KVOD_RDMA_NOT_MOVIE :
				       KVOD_RDMA_NO_RESOURCES;

		kvod_movie_close(movie);
		return conn_reject(rl, id, why);
	}
	/* Notes only for a channel: a movie's client asked for nothing. */
	conn = kvod_rdma_conn_create(rl, id, &ev->param.conn, movie,
				     movie->live && (flags & KVOD_RDMA_REQ_NOTIFY));
	if (IS_ERR(conn))
		return conn_reject(rl, id, kvod_rdma_status(PTR_ERR(conn)));
	status = conn_admit(rl, conn);
	if (status) {
		kvod_rdma_conn_free(conn);
		return conn_reject(rl, id, status);
	}
	return 0;	/* setup_work answers */
}

static int conn_event(struct kvod_rdma_conn *conn,
		      const struct rdma_cm_event *ev)
{
	switch (ev->event) {
	case RDMA_CM_EVENT_ESTABLISHED:
		if (test_bit(KVOD_RDMA_CONN_CLOSING, &conn->flags))
			break;
		if (kvod_rdma_conn_established(conn))
			kvod_rdma_conn_close(conn);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_REJECTED:
		kvod_rdma_conn_close(conn);
		break;
	default:
		break;
	}
	return 0;	/* release_work destroys the id */
}

/*
 * The listening id's device is going away. remove() normally got there
 * first; if not, take the id out and let rdma_cm destroy it. Nothing may
 * touch @rl after the cmpxchg: a stopper that finds rl->id NULL does not
 * wait for this handler.
 */
static int listener_device_removal(struct kvod_rdma_listener *rl,
				   struct rdma_cm_id *id)
{
	if (READ_ONCE(rl->id) != id)
		return 0;
	listener_set_devices(rl, 0);
	return cmpxchg(&rl->id, id, NULL) == id;
}

static int listener_event(struct kvod_rdma_listener *rl, struct rdma_cm_id *id,
			  struct rdma_cm_event *ev)
{
	switch (ev->event) {
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		return on_connect_request(rl, id, ev);
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		return listener_device_removal(rl, id);
	default:
		return 0;
	}
}

static int kvod_rdma_cm_handler(struct rdma_cm_id *id,
				struct rdma_cm_event *ev)
{
	struct kvod_rdma_ctx *ctx = id->context;

	if (ctx->kind == KVOD_RDMA_CTX_CONN)
		return conn_event(container_of(ctx, struct kvod_rdma_conn, ctx),
				  ev);
	return listener_event(container_of(ctx, struct kvod_rdma_listener,
					   ctx), id, ev);
}

/*
 * Create, bind and publish the listening id. Returns -ENODEV if the
 * address is local but no RDMA device serves it (yet).
 */
static int listener_bind(struct kvod_rdma_listener *rl)
{
	struct kvod_listener *l = rl->l;
	struct ib_device *dev;
	struct rdma_cm_id *id;
	int ret;

	lockdep_assert_held(&rl->id_lock);
	id = rdma_create_id(l->net, kvod_rdma_cm_handler, &rl->ctx,
			    RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(id))
		return PTR_ERR(id);
	if (l->addr.ss_family == AF_INET6) {
		ret = rdma_set_afonly(id, 1);
		if (ret)
			goto err;
	}
	ret = rdma_bind_addr(id, (struct sockaddr *)&l->addr);
	if (ret)
		goto err;
	ret = rdma_listen(id, 128);
	if (ret)
		goto err;
	listener_set_devices(rl, addr_is_any(&l->addr) ?
			     atomic_read(&kvod_rdma_devices) : 1);
	/* Read now: once published, the handler may destroy the id. */
	dev = id->device;
	WRITE_ONCE(rl->id, id);
	/*
	 * Bound to a device whose remove() had already passed us by? Then
	 * its DEVICE_REMOVAL may have come before the id was published and
	 * been left to us (listener_device_removal()).
	 */
	smp_mb();	/* publish rl->id before reading the client data */
	if (dev && !device_serving(dev)) {
		if (cmpxchg(&rl->id, id, NULL) != id)
			return -ENODEV;	/* the handler has it */
		listener_set_devices(rl, 0);
		ret = -ENODEV;
		goto err;
	}
	return 0;
err:
	rdma_destroy_id(id);
	return ret;
}

static void listener_retry_work(struct work_struct *work)
{
	struct kvod_rdma_listener *rl =
		container_of(work, struct kvod_rdma_listener, retry_work);

	mutex_lock(&rl->id_lock);
	if (!rl->stopping && !rl->id && !listener_bind(rl))
		pr_info("rdma listener on %pISpc: bound to a new device\n",
			&rl->l->addr);
	mutex_unlock(&rl->id_lock);
}

static void listener_unbind_dev(struct kvod_rdma_listener *rl,
				struct ib_device *dev)
{
	struct rdma_cm_id *id;

	mutex_lock(&rl->id_lock);
	/* Loaded once: the event handler may take it without id_lock. */
	id = READ_ONCE(rl->id);
	if (id && (id->device != dev || cmpxchg(&rl->id, id, NULL) != id))
		id = NULL;
	if (id) {
		listener_set_devices(rl, 0);
		rdma_destroy_id(id);
		pr_info("rdma listener on %pISpc: device removed, waiting\n",
			&rl->l->addr);
	}
	mutex_unlock(&rl->id_lock);
}

static int kvod_rdma_start(struct kvod_listener *l)
{
	struct kvod_rdma_listener *rl;
	int ret;

	if (!net_eq(l->net, &init_net))
		return -EOPNOTSUPP;	/* DOC: RDMA listener namespace */
	if (addr_is_loopback(&l->addr) ||
	    (!addr_is_any(&l->addr) && !addr_is_local(l->net, &l->addr)))
		return -EADDRNOTAVAIL;

	rl = kzalloc(sizeof(*rl), GFP_KERNEL);
	if (!rl)
		return -ENOMEM;
	rl->ctx.kind = KVOD_RDMA_CTX_LISTENER;
	rl->l = l;
	mutex_init(&rl->id_lock);
	spin_lock_init(&rl->lock);
	INIT_LIST_HEAD(&rl->conns);
	hash_init(rl->peers);
	init_completion(&rl->drained);
	INIT_WORK(&rl->retry_work, listener_retry_work);

	/* On kvod_rdma_listeners first, so that add() can retry the bind. */
	mutex_lock(&kvod_rdma_lock);
	list_add_tail(&rl->node, &kvod_rdma_listeners);
	mutex_unlock(&kvod_rdma_lock);

	mutex_lock(&rl->id_lock);
	ret = listener_bind(rl);
	if (ret == -ENODEV && !addr_is_any(&l->addr))
		ret = 0;	/* wait: a device may bring the address */
	if (ret)
		rl->stopping = true;	/* retry_work must not bind */
	mutex_unlock(&rl->id_lock);
	if (ret) {
		mutex_lock(&kvod_rdma_lock);
		list_del(&rl->node);
		mutex_unlock(&kvod_rdma_lock);
		cancel_work_sync(&rl->retry_work);
		kfree(rl);
		return ret;
	}
	l->priv = rl;
	return 0;
}

/*
 * Close the connections on @dev, or all of them if @dev is NULL (closing
 * is idempotent); whether there was any, released or not.
 */
static bool close_conns(struct kvod_rdma_listener *rl, struct ib_device *dev)
{
	struct kvod_rdma_conn *conn;
	bool found = false;

	spin_lock_bh(&rl->lock);
	list_for_each_entry(conn, &rl->conns, node) {
		if (!dev || conn->dev == dev) {
			kvod_rdma_conn_close(conn);
			found = true;
		}
	}
	spin_unlock_bh(&rl->lock);
	return found;
}

/*
 * Whether there is a release to wait for is decided where stopping is set:
 * from then on nothing is admitted, so the count only falls, and the
 * release that takes it to zero is the one that completes rl->drained.
 */
static void kvod_rdma_stop(struct kvod_listener *l)
{
	struct kvod_rdma_listener *rl = l->priv;
	struct rdma_cm_id *id;
	bool busy;

	mutex_lock(&rl->id_lock);
	spin_lock_bh(&rl->lock);
	rl->stopping = true;
	busy = rl->nr_conns;
	spin_unlock_bh(&rl->lock);
	id = xchg(&rl->id, NULL);
	mutex_unlock(&rl->id_lock);
	cancel_work_sync(&rl->retry_work);
	if (id)
		rdma_destroy_id(id);

	close_conns(rl, NULL);
	if (busy)
		wait_for_completion(&rl->drained);

	/* remove() must find us until drained; add() may have queued a retry. */
	mutex_lock(&kvod_rdma_lock);
	list_del(&rl->node);
	mutex_unlock(&kvod_rdma_lock);
	cancel_work_sync(&rl->retry_work);
	kfree(rl);
}

static int kvod_rdma_add_one(struct ib_device *dev)
{
	struct kvod_rdma_listener *rl;
	int n = atomic_inc_return(&kvod_rdma_devices);

	/* Any non-NULL value: kvod serves on @dev (device_serving()). */
	ib_set_client_data(dev, &kvod_rdma_client, &kvod_rdma_client);
	mutex_lock(&kvod_rdma_lock);
	list_for_each_entry(rl, &kvod_rdma_listeners, node) {
		if (addr_is_any(&rl->l->addr))
			listener_set_devices(rl, n);
		else if (!READ_ONCE(rl->id))
			queue_work(kvod_rdma_wq, &rl->retry_work);
	}
	mutex_unlock(&kvod_rdma_lock);
	return 0;
}

/* Whether any connection on @dev is not released yet (closing it). */
static bool dev_has_conns(struct ib_device *dev)
{
	struct kvod_rdma_listener *rl;
	bool found = false;

	mutex_lock(&kvod_rdma_lock);
	list_for_each_entry(rl, &kvod_rdma_listeners, node)
		found |= close_conns(rl, dev);
	mutex_unlock(&kvod_rdma_lock);
	return found;
}

/*
 * Device removal (DOC: RDMA listeners and devices); races with admission
 * and stop are settled in conn_admit() and kvod_rdma_stop(). The handler
 * takes no lock held here, so waiting for releases cannot deadlock.
 */
static void kvod_rdma_remove_one(struct ib_device *dev, void *client_data)
{
	DEFINE_WAIT_FUNC(wait, woken_wake_function);
	struct kvod_rdma_listener *rl;
	int n = atomic_dec_return(&kvod_rdma_devices);

	ib_set_client_data(dev, &kvod_rdma_client, NULL);
	mutex_lock(&kvod_rdma_lock);
	list_for_each_entry(rl, &kvod_rdma_listeners, node) {
		close_conns(rl, dev);
		if (addr_is_any(&rl->l->addr))
			listener_set_devices(rl, n);
		else
			listener_unbind_dev(rl, dev);
	}
	mutex_unlock(&kvod_rdma_lock);
	/* dev_has_conns() sleeps (a mutex): hence wait_woken(). */
	add_wait_queue(&kvod_rdma_released_wq, &wait);
	while (dev_has_conns(dev))
		wait_woken(&wait, TASK_UNINTERRUPTIBLE, MAX_SCHEDULE_TIMEOUT);
	remove_wait_queue(&kvod_rdma_released_wq, &wait);
	flush_workqueue(kvod_rdma_wq);
}

static struct ib_client kvod_rdma_client = {
	.name = "kvod",
	.add = kvod_rdma_add_one,
	.remove = kvod_rdma_remove_one,
};

static const struct kvod_proto_ops kvod_rdma_proto = {
	.proto = KVOD_PROTO_RDMA,
	.name = "rdma",
	.start = kvod_rdma_start,
	.stop = kvod_rdma_stop,
};

int kvod_rdma_init(void)
{
	int ret = -ENOMEM;

	kvod_rdma_wq = alloc_workqueue("kvod_rdma", WQ_UNBOUND, 0);
	if (!kvod_rdma_wq)
		return ret;
	kvod_rdma_setup_wq = alloc_workqueue("kvod_rdma_setup", WQ_UNBOUND,
					     KVOD_RDMA_SETUPS);
	if (!kvod_rdma_setup_wq)
		goto err_wq;
	ret = ib_register_client(&kvod_rdma_client);
	if (ret)
		goto err_setup_wq;
	kvod_proto_register(&kvod_rdma_proto);
	return 0;

err_setup_wq:
	destroy_workqueue(kvod_rdma_setup_wq);
err_wq:
	destroy_workqueue(kvod_rdma_wq);
	return ret;
}

/* After every listener is stopped: no connection is left to release. */
void kvod_rdma_exit(void)
{
	kvod_proto_unregister(&kvod_rdma_proto);
	ib_unregister_client(&kvod_rdma_client);
	destroy_workqueue(kvod_rdma_setup_wq);
	destroy_workqueue(kvod_rdma_wq);
	kvod_rdma_conns_exit();
}
