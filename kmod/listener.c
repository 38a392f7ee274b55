// SPDX-License-Identifier: GPL-2.0
/* Listeners: where kvod accepts clients, per protocol and namespace. */

/**
 * DOC: Listener lifetimes
 *
 * LISTEN creates a listener in the caller's network namespace, and it
 * lives on ``kvod_listeners`` until UNLISTEN, the namespace's
 * ``pre_exit``, or module exit. Whichever comes first unlinks it under
 * ``kvod_listen_lock`` and then, without the lock, calls ``ops->stop()``,
 * which closes the listening endpoint and every connection accepted
 * through it, and waits for them; after it returns nothing refers to the
 * listener and it is freed.
 *
 * A listener does not hold a reference on its namespace, as kernel
 * sockets do not: ``pre_exit`` stops it while the namespace is still
 * intact. An HTTP connection's orphan does hold it ("HTTP connection
 * lifetimes"), which delays ``pre_exit`` until TCP has ended the orphan.
 *
 * Counters are atomics the protocols bump from their data paths.
 * LISTENER_LIST reads them under ``kvod_listen_lock``, which only keeps
 * the listener alive, never the counters consistent with each other.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/hash.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/jhash.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/net.h>
#include <linux/nospec.h>
#include <linux/nsproxy.h>
#include <linux/slab.h>
#include <net/ipv6.h>
#include <net/net_namespace.h>

#include "kvod.h"

static LIST_HEAD(kvod_listeners);	/* under kvod_listen_lock */
/* By KVOD_PROTO_*: see kvod_proto_register(). */
static const struct kvod_proto_ops *kvod_protos[KVOD_PROTO_RDMA + 1];
static DEFINE_MUTEX(kvod_listen_lock);
static u32 kvod_nr_listeners;		/* under kvod_listen_lock */

/* The client address without its port. */
static bool peer_eq(const struct sockaddr_storage *a,
		    const struct sockaddr_storage *b)
{
	if (a->ss_family != b->ss_family)
		return false;
	if (a->ss_family == AF_INET6)
		return ipv6_addr_equal(&((const struct sockaddr_in6 *)a)->sin6_addr,
				       &((const struct sockaddr_in6 *)b)->sin6_addr);
	return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
	       ((const struct sockaddr_in *)b)->sin_addr.s_addr;
}

/* Seeded, so that clients cannot choose addresses that share a bucket. */
static u32 peer_hash(const struct sockaddr_storage *ss)
{
	static u32 seed __read_mostly;

	net_get_random_once(&seed, sizeof(seed));
	if (ss->ss_family == AF_INET6)
		return jhash(&((const struct sockaddr_in6 *)ss)->sin6_addr,
			     sizeof(struct in6_addr), seed);
	return jhash_1word((__force u32)((const struct sockaddr_in *)ss)->sin_addr.s_addr,
			   seed);
}

/**
 * kvod_peer_add() - count a connection against the per-address limit
 * @peers: the listener's table, BIT(KVOD_PEER_BITS) buckets
 * @peer: the connection's address, filled in; its node not in a table
 * @max: connections allowed per address, 0 for no limit
 *
 * Context: under the listener's lock, which also guards the
 * hlist_del_init() of @peer->node when the connection goes.
 *
 * Return: true if @peer fits and is now in @peers.
 */
bool kvod_peer_add(struct hlist_head *peers, struct kvod_peer *peer,
		   unsigned int max)
{
	struct hlist_head *bucket;
	struct kvod_peer *other;
	unsigned int same = 0;

	bucket = &peers[hash_32(peer_hash(&peer->addr), KVOD_PEER_BITS)];
	if (max) {
		hlist_for_each_entry(other, bucket, node) {
			if (peer_eq(&other->addr, &peer->addr) && ++same >= max)
				return false;
		}
	}
	hlist_add_head(&peer->node, bucket);
	return true;
}

/**
 * kvod_proto_register() - offer a protocol to LISTEN
 * @ops: the protocol's half of a listener, for KVOD_PROTO_* @ops->proto
 *
 * No LISTEN runs beside registering or unregistering, so the table needs
 * no lock (DOC: Module load and exit).
 */
void kvod_proto_register(const struct kvod_proto_ops *ops)
{
	if (WARN_ON(ops->proto >= ARRAY_SIZE(kvod_protos) ||
		    kvod_protos[ops->proto]))
		return;
	kvod_protos[ops->proto] = ops;
}

/**
 * kvod_proto_unregister() - withdraw a protocol from LISTEN
 * @ops: what kvod_proto_register() was given
 */
void kvod_proto_unregister(const struct kvod_proto_ops *ops)
{
	if (ops->proto < ARRAY_SIZE(kvod_protos))
		kvod_protos[ops->proto] = NULL;
}

static const struct kvod_proto_ops *proto_ops(u32 proto)
{
	if (proto >= ARRAY_SIZE(kvod_protos))
		return NULL;
	return kvod_protos[array_index_nospec(proto, ARRAY_SIZE(kvod_protos))];
}

/**
 * kvod_sockaddr_to_kernel() - convert and check a userspace address
 * @ua: the address as userspace gave it (the wildcard is allowed)
 * @ss: set to the kernel's form
 * @len: if not NULL, set to the length of the sockaddr in @ss
 *
 * Return: 0, or -EINVAL for a bad family, a zero port, or an IPv4 address
 * with bits beyond its 4 bytes or a scope id.
 */
int kvod_sockaddr_to_kernel(const struct kvod_sockaddr *ua,
			    struct sockaddr_storage *ss, int *len)
{
	memset(ss, 0, sizeof(*ss));
	if (ua->port == 0)
		return -EINVAL;

	switch (ua->family) {
	case AF_INET: {
		struct sockaddr_in *sin = (struct sockaddr_in *)ss;

		if (ua->scope_id || memchr_inv(ua->addr + 4, 0, 12))
			return -EINVAL;
		sin->sin_family = AF_INET;
		sin->sin_port = htons(ua->port);
		memcpy(&sin->sin_addr, ua->addr, 4);
		if (len)
			*len = sizeof(*sin);
		return 0;
	}
	case AF_INET6: {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

		memcpy(&sin6->sin6_addr, ua->addr, 16);
		/* A scope only where the address needs one (link-local). */
		if (ua->scope_id &&
		    !__ipv6_addr_needs_scope_id(__ipv6_addr_type(&sin6->sin6_addr)))
			return -EINVAL;
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(ua->port);
		sin6->sin6_scope_id = ua->scope_id;
		if (len)
			*len = sizeof(*sin6);
		return 0;
	}
	default:
		return -EINVAL;
	}
}

static bool same_endpoint(const struct kvod_listener *l, u32 proto,
			  const struct net *net, const struct kvod_sockaddr *ua)
{
	return l->ops->proto == proto && net_eq(l->net, net) &&
	       !memcmp(&l->uaddr, ua, sizeof(*ua));
}

static struct kvod_listener *listener_find(u32 proto, const struct net *net,
					   const struct kvod_sockaddr *ua)
{
	struct kvod_listener *l;

	lockdep_assert_held(&kvod_listen_lock);
	list_for_each_entry(l, &kvod_listeners, node) {
		if (same_endpoint(l, proto, net, ua))
			return l;
	}
	return NULL;
}

/**
 * kvod_listener_add() - start a listener in the caller's namespace
 * @proto: KVOD_PROTO_*
 * @ua: address from userspace
 *
 * The protocol's start() runs under kvod_listen_lock, so two LISTENs of one
 * endpoint cannot both get past the duplicate check.
 *
 * Return: 0 or a negative errno (see struct kvod_listen).
 */
int kvod_listener_add(u32 proto, const struct kvod_sockaddr *ua)
{
	const struct kvod_proto_ops *ops = proto_ops(proto);
	struct net *net = current->nsproxy->net_ns;
	struct kvod_listener *l;
	int ret;

	if (!ops)
		return -EINVAL;

	l = kzalloc(sizeof(*l), GFP_KERNEL);
	if (!l)
		return -ENOMEM;
	ret = kvod_sockaddr_to_kernel(ua, &l->addr, NULL);
	if (ret)
		goto err_free;
	l->uaddr = *ua;
	l->ops = ops;
	l->net = net;

	mutex_lock(&kvod_listen_lock);
	if (listener_find(proto, net, ua)) {
		ret = -EADDRINUSE;
		goto err_unlock;
	}
	ret = ops->start(l);
	if (ret)
		goto err_unlock;
	list_add_tail(&l->node, &kvod_listeners);
	kvod_nr_listeners++;
	mutex_unlock(&kvod_listen_lock);

	pr_info("%s listener on %pISpc started\n", ops->name, &l->addr);
	return 0;

err_unlock:
	mutex_unlock(&kvod_listen_lock);
err_free:
	kfree(l);
	return ret;
}

static void listener_stop(struct kvod_listener *l)
{
	pr_info("%s listener on %pISpc stopping\n", l->ops->name, &l->addr);
	l->ops->stop(l);
	kfree(l);
}

/**
 * kvod_listener_del() - stop a listener of the caller's namespace
 * @proto: KVOD_PROTO_*
 * @ua: the address it was started with
 *
 * Return: 0, -EINVAL or -ENOENT. Sleeps until its connections are closed.
 */
int kvod_listener_del(u32 proto, const struct kvod_sockaddr *ua)
{
	struct net *net = current->nsproxy->net_ns;
	struct sockaddr_storage ss;
	struct kvod_listener *l;
	int ret;

	if (!proto || proto > KVOD_PROTO_RDMA)
		return -EINVAL;
	ret = kvod_sockaddr_to_kernel(ua, &ss, NULL);
	if (ret)
		return ret;

	mutex_lock(&kvod_listen_lock);
	l = listener_find(proto, net, ua);
	if (l) {
		list_del(&l->node);
		kvod_nr_listeners--;
	}
	mutex_unlock(&kvod_listen_lock);

	if (!l)
		return -ENOENT;
	listener_stop(l);
	return 0;
}

static void listener_fill_info(struct kvod_listener *l,
			       struct kvod_listener_info *info)
{
	int i;

	memset(info, 0, sizeof(*info));
	info->size = sizeof(*info);
	info->proto = l->ops->proto;
	info->netns = l->net->ns.inum;
	info->addr = l->uaddr;
	for (i = 0; i < KVOD_LC_NR; i++)
		info->counters[i] = atomic64_read(&l->counters[i]);
}

/**
 * kvod_listener_list() - snapshot every listener
 * @infos: set to a kvmalloc()ed array (ZERO_SIZE_PTR if empty) that the
 *	caller kvfree()s
 * @nr: set to the number of listeners
 *
 * Return: 0 or -ENOMEM.
 */
int kvod_listener_list(struct kvod_listener_info **infos, u32 *nr)
{
	struct kvod_listener_info *arr;
	struct kvod_listener *l;
	u32 n = 0;

	mutex_lock(&kvod_listen_lock);
	arr = kvmalloc_array(kvod_nr_listeners, sizeof(*arr), GFP_KERNEL);
	if (arr) {
		list_for_each_entry(l, &kvod_listeners, node)
			listener_fill_info(l, &arr[n++]);
	}
	mutex_unlock(&kvod_listen_lock);
	if (!arr)
		return -ENOMEM;

	*infos = arr;
	*nr = n;
	return 0;
}

/* Stop every listener of @net, or all of them if @net is NULL. */
static void listeners_stop(struct net *net)
{
	struct kvod_listener *l, *tmp;
	LIST_HEAD(doomed);

	mutex_lock(&kvod_listen_lock);
	list_for_each_entry_safe(l, tmp, &kvod_listeners, node) {
		if (!net || net_eq(l->net, net)) {
			list_move_tail(&l->node, &doomed);
			kvod_nr_listeners--;
		}
	}
	mutex_unlock(&kvod_listen_lock);

	list_for_each_entry_safe(l, tmp, &doomed, node)
		listener_stop(l);
}

static void __net_exit kvod_net_pre_exit(struct net *net)
{
	listeners_stop(net);
}

static struct pernet_operations kvod_net_ops = {
	.pre_exit = kvod_net_pre_exit,
};

int kvod_listeners_init(void)
{
	return register_pernet_subsys(&kvod_net_ops);
}

void kvod_listeners_exit(void)
{
	unregister_pernet_subsys(&kvod_net_ops);
	listeners_stop(NULL);
}
