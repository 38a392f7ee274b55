// SPDX-License-Identifier: GPL-2.0
/*
 * RDMA READ server: listeners, rdma_cm events and RDMA devices.
 *
 * A listener is one rdma_cm id bound to the listener's address in its
 * namespace. For the wildcard address rdma_cm itself listens on every
 * device, including devices that appear later. A listener bound to a
 * specific address is bound to the device that owns it; when that device
 * goes away (DEVICE_REMOVAL on the listening id) or when no device serves
 * the address yet, the listener waits, and the ib_client's add() callback
 * retries the bind when a device appears.
 *
 * Connect requests are parsed, looked up and accepted in the event handler
 * (rdma_cm calls it in process context); see rdma_conn.c for what a
 * connection holds. Device removal closes the device's connections from
 * the ib_client's remove() and waits for them, before rdma_cm tears down
 * its own state for the device.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/inetdevice.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <net/addrconf.h>

#include "rdma.h"

static unsigned int rdma_max_conns = 1024;
module_param(rdma_max_conns, uint, 0644);
MODULE_PARM_DESC(rdma_max_conns,
		 "Connections per RDMA listener before connects are rejected as busy");

struct workqueue_struct *kvod_rdma_wq;

/* Every RDMA listener, for device add/remove; under kvod_rdma_lock. */
static LIST_HEAD(kvod_rdma_listeners);
static DEFINE_MUTEX(kvod_rdma_lock);
static atomic_t kvod_rdma_devices = ATOMIC_INIT(0);

struct kvod_rdma_lnode {
	struct list_head node;
	struct kvod_rdma_listener *rl;
};

static bool addr_is_any(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		return ((const struct sockaddr_in *)ss)->sin_addr.s_addr ==
		       htonl(INADDR_ANY);
	return ipv6_addr_any(&((const struct sockaddr_in6 *)ss)->sin6_addr);
}

/* Whether a specific address is configured in @net at all. */
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

/* Reject a connect request; the caller returns non-zero to destroy @id. */
static int conn_reject(struct kvod_rdma_listener *rl, struct rdma_cm_id *id,
		       u8 status)
{
	static const enum kvod_listener_counter why[] = {
		[KVOD_RDMA_NOT_FOUND] = KVOD_LC_REJ_NOT_FOUND,
		[KVOD_RDMA_BUSY] = KVOD_LC_REJ_BUSY,
		[KVOD_RDMA_BAD_VERSION] = KVOD_LC_REJ_VERSION,
		[KVOD_RDMA_BAD_REQUEST] = KVOD_LC_REJ_BAD_REQUEST,
		[KVOD_RDMA_NO_RESOURCES] = KVOD_LC_REFUSED,
	};
	struct kvod_rdma_reply reply = {
		.magic = cpu_to_be32(KVOD_RDMA_MAGIC),
		.version = KVOD_RDMA_VERSION,
		.status = status,
	};

	kvod_lc_inc(rl->l, why[status]);
	rdma_reject(id, &reply, sizeof(reply), IB_CM_REJ_CONSUMER_DEFINED);
	return -ECONNREFUSED;
}

/* Versioned private data first: magic, version, then the name. */
static u8 parse_request(const struct rdma_conn_param *p,
			char name[KVOD_NAME_MAX])
{
	const struct kvod_rdma_req *req = p->private_data;
	size_t room, len;

	if (!req || p->private_data_len < sizeof(*req) + 1)
		return KVOD_RDMA_BAD_REQUEST;
	if (be32_to_cpu(req->magic) != KVOD_RDMA_MAGIC)
		return KVOD_RDMA_BAD_REQUEST;
	if (req->version != KVOD_RDMA_VERSION)
		return KVOD_RDMA_BAD_VERSION;
	if (memchr_inv(req->reserved, 0, sizeof(req->reserved)))
		return KVOD_RDMA_BAD_REQUEST;

	room = p->private_data_len - sizeof(*req);
	len = strnlen(req->name, room);
	if (len == room || len >= KVOD_NAME_MAX)
		return KVOD_RDMA_BAD_REQUEST;	/* not terminated */
	memcpy(name, req->name, len + 1);
	memset(name + len + 1, 0, KVOD_NAME_MAX - len - 1);
	return kvod_name_valid(name) ? KVOD_RDMA_OK : KVOD_RDMA_BAD_REQUEST;
}

/* Take a connection slot unless the listener is stopping or full. */
static u8 slot_get(struct kvod_rdma_listener *rl)
{
	u8 status = KVOD_RDMA_OK;

	spin_lock_bh(&rl->lock);
	if (rl->stopping || rl->nr_conns >= READ_ONCE(rdma_max_conns))
		status = KVOD_RDMA_BUSY;
	else
		rl->nr_conns++;
	spin_unlock_bh(&rl->lock);
	return status;
}

static void slot_put(struct kvod_rdma_listener *rl)
{
	spin_lock_bh(&rl->lock);
	if (!--rl->nr_conns)
		wake_up(&rl->drained);
	spin_unlock_bh(&rl->lock);
}

/* Link an accepted connection, or close it at once if we are stopping. */
static void conn_link(struct kvod_rdma_conn *conn)
{
	struct kvod_rdma_listener *rl = conn->rl;
	bool stopping;

	spin_lock_bh(&rl->lock);
	list_add_tail(&conn->node, &rl->conns);
	stopping = rl->stopping;
	spin_unlock_bh(&rl->lock);

	kvod_lc_inc(rl->l, KVOD_LC_ACCEPTED);
	kvod_lc_inc(rl->l, KVOD_LC_ACTIVE);
	if (stopping)
		kvod_rdma_conn_close(conn);
}

/**
 * kvod_rdma_conn_unlink() - the last step of a connection's release
 * @conn: a linked connection, about to be freed
 */
void kvod_rdma_conn_unlink(struct kvod_rdma_conn *conn)
{
	struct kvod_rdma_listener *rl = conn->rl;

	spin_lock_bh(&rl->lock);
	list_del_init(&conn->node);
	spin_unlock_bh(&rl->lock);
	kvod_lc_dec(rl->l, KVOD_LC_ACTIVE);
	slot_put(rl);
}

static int on_connect_request(struct kvod_rdma_listener *rl,
			      struct rdma_cm_id *id,
			      const struct rdma_cm_event *ev)
{
	char name[KVOD_NAME_MAX];
	struct kvod_rdma_conn *conn;
	struct kvod_movie *movie;
	u8 status;
	int ret;

	status = parse_request(&ev->param.conn, name);
	if (status)
		return conn_reject(rl, id, status);
	movie = kvod_movie_get(name);
	if (!movie)
		return conn_reject(rl, id, KVOD_RDMA_NOT_FOUND);
	status = slot_get(rl);
	if (status) {
		kvod_movie_put(movie);
		return conn_reject(rl, id, status);
	}

	conn = kvod_rdma_conn_create(rl, id, movie, &status);
	if (!conn) {
		slot_put(rl);
		return conn_reject(rl, id, status);
	}
	ret = kvod_rdma_conn_accept(conn, &ev->param.conn);
	if (ret) {
		pr_warn_ratelimited("conn %pISpc: accept failed: %d\n",
				    &id->route.addr.dst_addr, ret);
		kvod_rdma_conn_destroy(conn);
		slot_put(rl);
		kvod_lc_inc(rl->l, KVOD_LC_REFUSED);
		return ret;
	}
	conn_link(conn);
	return 0;
}

static int conn_event(struct kvod_rdma_conn *conn, struct rdma_cm_id *id,
		      const struct rdma_cm_event *ev)
{
	switch (ev->event) {
	case RDMA_CM_EVENT_ESTABLISHED:
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

/* The listening id's device is going away: let rdma_cm destroy the id. */
static int listener_device_removal(struct kvod_rdma_listener *rl,
				   struct rdma_cm_id *id)
{
	int ret = 0;

	mutex_lock(&rl->id_lock);
	if (rl->id == id) {
		rl->id = NULL;
		rl->waiting = true;
		listener_set_devices(rl, 0);
		ret = 1;
	}
	mutex_unlock(&rl->id_lock);
	if (ret)
		pr_info("rdma listener on %pISpc: device removed, waiting\n",
			&rl->l->addr);
	return ret;
}

static int kvod_rdma_cm_handler(struct rdma_cm_id *id,
				struct rdma_cm_event *ev)
{
	if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST)
		return on_connect_request(id->context, id, ev);
	/* Connection ids have a QP whose context is the connection. */
	if (id->qp)
		return conn_event(id->qp->qp_context, id, ev);
	if (ev->event == RDMA_CM_EVENT_DEVICE_REMOVAL)
		return listener_device_removal(id->context, id);
	return 0;
}

/*
 * Create and bind the listening id. Returns -ENODEV if the address is
 * local but no RDMA device serves it (yet).
 */
static int listener_bind(struct kvod_rdma_listener *rl)
{
	struct kvod_listener *l = rl->l;
	struct rdma_cm_id *id;
	int ret;

	lockdep_assert_held(&rl->id_lock);
	id = rdma_create_id(l->net, kvod_rdma_cm_handler, rl, RDMA_PS_TCP,
			    IB_QPT_RC);
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
	rl->id = id;
	rl->waiting = false;
	listener_set_devices(rl, addr_is_any(&l->addr) ?
			     atomic_read(&kvod_rdma_devices) : 1);
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
	if (rl->waiting && !rl->stopping && !listener_bind(rl))
		pr_info("rdma listener on %pISpc: bound to a new device\n",
			&rl->l->addr);
	mutex_unlock(&rl->id_lock);
}

static int kvod_rdma_start(struct kvod_listener *l)
{
	struct kvod_rdma_listener *rl;
	struct kvod_rdma_lnode *ln;
	int ret;

	if (!addr_is_any(&l->addr) && !addr_is_local(l->net, &l->addr))
		return -EADDRNOTAVAIL;

	rl = kzalloc(sizeof(*rl), GFP_KERNEL);
	ln = kzalloc(sizeof(*ln), GFP_KERNEL);
	if (!rl || !ln) {
		ret = -ENOMEM;
		goto err_free;
	}
	rl->l = l;
	mutex_init(&rl->id_lock);
	spin_lock_init(&rl->lock);
	INIT_LIST_HEAD(&rl->conns);
	init_waitqueue_head(&rl->drained);
	INIT_WORK(&rl->retry_work, listener_retry_work);

	mutex_lock(&rl->id_lock);
	ret = listener_bind(rl);
	if (ret == -ENODEV && !addr_is_any(&l->addr)) {
		rl->waiting = true;	/* a device may bring the address */
		ret = 0;
	}
	mutex_unlock(&rl->id_lock);
	if (ret)
		goto err_free;

	ln->rl = rl;
	l->priv = ln;
	mutex_lock(&kvod_rdma_lock);
	list_add_tail(&ln->node, &kvod_rdma_listeners);
	mutex_unlock(&kvod_rdma_lock);
	return 0;

err_free:
	kfree(ln);
	kfree(rl);
	return ret;
}

static void close_conns(struct kvod_rdma_listener *rl, struct ib_device *dev)
{
	struct kvod_rdma_conn *conn;

	spin_lock_bh(&rl->lock);
	if (!dev)
		rl->stopping = true;
	list_for_each_entry(conn, &rl->conns, node) {
		if (!dev || conn->dev == dev)
			kvod_rdma_conn_close(conn);
	}
	spin_unlock_bh(&rl->lock);
}

static void kvod_rdma_stop(struct kvod_listener *l)
{
	struct kvod_rdma_lnode *ln = l->priv;
	struct kvod_rdma_listener *rl = ln->rl;
	struct rdma_cm_id *id;

	mutex_lock(&kvod_rdma_lock);
	list_del(&ln->node);
	mutex_unlock(&kvod_rdma_lock);

	mutex_lock(&rl->id_lock);
	id = rl->id;
	rl->id = NULL;
	rl->stopping = true;
	mutex_unlock(&rl->id_lock);
	cancel_work_sync(&rl->retry_work);
	if (id)
		rdma_destroy_id(id);	/* no new connect requests */

	close_conns(rl, NULL);
	wait_event(rl->drained, !READ_ONCE(rl->nr_conns));
	kfree(ln);
	kfree(rl);
}

static int kvod_rdma_add_one(struct ib_device *dev)
{
	struct kvod_rdma_lnode *ln;
	int n = atomic_inc_return(&kvod_rdma_devices);

	mutex_lock(&kvod_rdma_lock);
	list_for_each_entry(ln, &kvod_rdma_listeners, node) {
		if (addr_is_any(&ln->rl->l->addr))
			listener_set_devices(ln->rl, n);
		else if (READ_ONCE(ln->rl->waiting))
			queue_work(kvod_rdma_wq, &ln->rl->retry_work);
	}
	mutex_unlock(&kvod_rdma_lock);
	return 0;
}

/* Close every connection on @dev and wait, before rdma_cm lets it go. */
static void kvod_rdma_remove_one(struct ib_device *dev, void *client_data)
{
	struct kvod_rdma_lnode *ln;
	int n = atomic_dec_return(&kvod_rdma_devices);

	mutex_lock(&kvod_rdma_lock);
	list_for_each_entry(ln, &kvod_rdma_listeners, node) {
		close_conns(ln->rl, dev);
		if (addr_is_any(&ln->rl->l->addr))
			listener_set_devices(ln->rl, n);
	}
	mutex_unlock(&kvod_rdma_lock);
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

const struct kvod_proto_ops *kvod_rdma_ops(void)
{
	return &kvod_rdma_proto;
}

int kvod_rdma_init(void)
{
	int ret;

	kvod_rdma_wq = alloc_workqueue("kvod_rdma", WQ_UNBOUND, 0);
	if (!kvod_rdma_wq)
		return -ENOMEM;
	ret = ib_register_client(&kvod_rdma_client);
	if (ret)
		destroy_workqueue(kvod_rdma_wq);
	return ret;
}

/* After every listener is stopped: no connection is left to release. */
void kvod_rdma_exit(void)
{
	ib_unregister_client(&kvod_rdma_client);
	destroy_workqueue(kvod_rdma_wq);
}
