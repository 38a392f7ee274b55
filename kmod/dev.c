// SPDX-License-Identifier: GPL-2.0
/* /dev/kvod: the control interface, a row of kvod_ioctls[] per command. */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "kvod.h"

struct kvod_ioctl_head {
	__u32 size;
	__u32 flags;
};

#define KVOD_ASSERT_ABI(type, ksize)					\
	static_assert(sizeof(type) == (ksize) &&				\
		      offsetof(type, size) == 0 &&			\
		      offsetof(type, flags) == 4)

KVOD_ASSERT_ABI(struct kvod_movie_add, KVOD_MOVIE_ADD_SIZE_VER0);
KVOD_ASSERT_ABI(struct kvod_movie_ref, KVOD_MOVIE_REF_SIZE_VER0);
KVOD_ASSERT_ABI(struct kvod_movie_info, KVOD_MOVIE_INFO_SIZE_VER1);
KVOD_ASSERT_ABI(struct kvod_movie_list, KVOD_MOVIE_LIST_SIZE_VER0);
KVOD_ASSERT_ABI(struct kvod_stats, KVOD_STATS_SIZE_VER1);
KVOD_ASSERT_ABI(struct kvod_listen, KVOD_LISTEN_SIZE_VER0);
KVOD_ASSERT_ABI(struct kvod_listener_info, KVOD_LISTENER_INFO_SIZE_VER0);
KVOD_ASSERT_ABI(struct kvod_push_start, KVOD_PUSH_START_SIZE_VER0);
KVOD_ASSERT_ABI(struct kvod_push_ref, KVOD_PUSH_REF_SIZE_VER0);
KVOD_ASSERT_ABI(struct kvod_push_info, KVOD_PUSH_INFO_SIZE_VER0);
KVOD_ASSERT_ABI(struct kvod_live_create, KVOD_LIVE_CREATE_SIZE_VER0);
KVOD_ASSERT_ABI(struct kvod_live_feed, KVOD_LIVE_FEED_SIZE_VER0);
static_assert(sizeof(struct kvod_sockaddr) == 24);

/*
 * LIVE_FEED's argument and, past what userspace sees, the file its
 * handler made: the fd is installed only once the struct was copied out.
 */
struct kvod_ioc_feed {
	struct kvod_live_feed uapi;
	struct file *file;
};

union kvod_ioctl_arg {
	struct kvod_ioctl_head head;
	struct kvod_movie_add add;
	struct kvod_movie_ref ref;
	struct kvod_movie_info info;
	struct kvod_movie_list list;
	struct kvod_stats stats;
	struct kvod_listen listen;
	struct kvod_push_start push;
	struct kvod_push_ref push_ref;
	struct kvod_live_create live_create;
	struct kvod_ioc_feed feed;
};

static bool zeroed(const void *p, size_t len)
{
	return !memchr_inv(p, 0, len);
}

static int ioc_movie_add(union kvod_ioctl_arg *arg)
{
	struct kvod_movie_add *add = &arg->add;

	if (add->reserved0 || !zeroed(add->reserved, sizeof(add->reserved)))
		return -EINVAL;
	if (!kvod_name_valid(add->name))
		return -EINVAL;

	CLASS(fd, f)(add->fd);
	if (fd_empty(f))
		return -EBADF;
	if (!(fd_file(f)->f_mode & FMODE_READ))
		return -EBADF;
	return kvod_catalog_add(add->name, fd_file(f), add->bitrate,
				add->flags & KVOD_ADD_PIN);
}

static int ioc_movie_del(union kvod_ioctl_arg *arg)
{
	if (!zeroed(arg->ref.reserved, sizeof(arg->ref.reserved)))
		return -EINVAL;
	return kvod_catalog_del(arg->ref.name);
}

static int ioc_movie_info(union kvod_ioctl_arg *arg)
{
	struct kvod_movie_info *info = &arg->info;
	char name[KVOD_NAME_MAX];

	/* Output fields are ignored on input, so a struct can be reused. */
	if (info->live_reserved)
		return -EINVAL;
	memcpy(name, info->name, sizeof(name));
	return kvod_catalog_info(name, info);
}

/*
 * Copy @nr entries of @esize bytes out with the caller's stride, each
 * truncated or zero-extended to it and with its leading size field set.
 */
static int list_copy_out(const struct kvod_movie_list *list,
			 const void *entries, size_t esize, u32 nr)
{
	void __user *dst = u64_to_user_ptr(list->entries);
	size_t copy = min_t(size_t, list->entry_size, esize);
	u32 i;

	for (i = 0; i < nr; i++, dst += list->entry_size) {
		const void *src = entries + i * esize;

		if (put_user(list->entry_size, (u32 __user *)dst) ||
		    copy_to_user(dst + sizeof(u32), src + sizeof(u32),
				 copy - sizeof(u32)))
			return -EFAULT;
		if (list->entry_size > copy &&
		    clear_user(dst + copy, list->entry_size - copy))
			return -EFAULT;
	}
	return 0;
}

static int list_check(const struct kvod_movie_list *list, u32 ver0)
{
	if (list->reserved0 ||
	    !zeroed(list->reserved, sizeof(list->reserved)))
		return -EINVAL;
	if (list->entry_size < ver0 || list->entry_size > PAGE_SIZE)
		return -EINVAL;
	return 0;
}

/* Hand a snapshot of @nr entries to the caller's list and free it. */
static int list_finish(struct kvod_movie_list *list, void *entries,
		       size_t esize, u32 nr)
{
	u32 fill = min(nr, list->count);
	int ret;

	ret = list_copy_out(list, entries, esize, fill);
	kvfree(entries);
	if (ret)
		return ret;
	list->count = nr;
	list->filled = fill;
	return 0;
}

static int ioc_movie_list(union kvod_ioctl_arg *arg)
{
	struct kvod_movie_info *infos;
	u32 nr;
	int ret = list_check(&arg->list, KVOD_MOVIE_INFO_SIZE_VER0) ?:
		  kvod_catalog_list(&infos, &nr);

	return ret ?: list_finish(&arg->list, infos, sizeof(*infos), nr);
}

static int ioc_listener_list(union kvod_ioctl_arg *arg)
{
	struct kvod_listener_info *infos;
	u32 nr;
	int ret = list_check(&arg->list, KVOD_LISTENER_INFO_SIZE_VER0) ?:
		  kvod_listener_list(&infos, &nr);

	return ret ?: list_finish(&arg->list, infos, sizeof(*infos), nr);
}

static int listen_check(const struct kvod_listen *listen)
{
	if (listen->reserved0 ||
	    !zeroed(listen->reserved, sizeof(listen->reserved)))
		return -EINVAL;
	return 0;
}

static int ioc_listen(union kvod_ioctl_arg *arg)
{
	int ret = listen_check(&arg->listen);

	return ret ?: kvod_listener_add(arg->listen.proto, &arg->listen.addr);
}

static int ioc_unlisten(union kvod_ioctl_arg *arg)
{
	int ret = listen_check(&arg->listen);

	return ret ?: kvod_listener_del(arg->listen.proto, &arg->listen.addr);
}

/* push.c checks the rest of the request; the id is an output. */
static int ioc_push_start(union kvod_ioctl_arg *arg)
{
	return kvod_push_start(&arg->push);
}

/*
 * The id could not reach the caller, who gets EFAULT: stop the push
 * before anyone relies on it (its first packet is due a window later).
 * It may have ended or been stopped already; then there is nothing to do.
 */
static void ioc_push_start_undo(union kvod_ioctl_arg *arg)
{
	kvod_push_stop(arg->push.id);
}

static int ioc_push_stop(union kvod_ioctl_arg *arg)
{
	struct kvod_push_ref *ref = &arg->push_ref;

	if (ref->reserved0 || !zeroed(ref->reserved, sizeof(ref->reserved)))
		return -EINVAL;
	return kvod_push_stop(ref->id);
}

static int ioc_push_list(union kvod_ioctl_arg *arg)
{
	struct kvod_push_info *infos;
	u32 nr;
	int ret = list_check(&arg->list, KVOD_PUSH_INFO_SIZE_VER0) ?:
		  kvod_push_list(&infos, &nr);

	return ret ?: list_finish(&arg->list, infos, sizeof(*infos), nr);
}

static int ioc_live_create(union kvod_ioctl_arg *arg)
{
	return kvod_catalog_live_create(&arg->live_create);
}

/* Reserve an fd and make the feed file; ioc_live_feed_commit() joins them. */
static int ioc_live_feed(union kvod_ioctl_arg *arg)
{
	struct kvod_live_feed *req = &arg->feed.uapi;
	struct kvod_movie *movie;
	struct file *file;
	int fd;

	if (req->reserved0 || !zeroed(req->reserved, sizeof(req->reserved)))
		return -EINVAL;
	if (!kvod_name_valid(req->name))
		return -EINVAL;
	movie = kvod_movie_get(req->name);
	if (!movie)
		return -ENOENT;
	fd = get_unused_fd_flags(O_CLOEXEC);
	if (fd < 0) {
		kvod_movie_put(movie);
		return fd;
	}
	file = kvod_live_feed(movie);
	if (IS_ERR(file)) {
		put_unused_fd(fd);
		kvod_movie_put(movie);
		return PTR_ERR(file);
	}
	req->fd = fd;
	arg->feed.file = file;
	return 0;
}

static void ioc_live_feed_commit(union kvod_ioctl_arg *arg)
{
	fd_install(arg->feed.uapi.fd, arg->feed.file);
}

/* The fd never reached the caller. */
static void ioc_live_feed_undo(union kvod_ioctl_arg *arg)
{
	put_unused_fd(arg->feed.uapi.fd);
	fput(arg->feed.file);
}

static int ioc_stats(union kvod_ioctl_arg *arg)
{
	struct kvod_stats *st = &arg->stats;

	if (!zeroed(st->reserved, sizeof(st->reserved)))
		return -EINVAL;
	kvod_catalog_stats(st);
	kvod_mem_stats(st);
	kvod_rdma_stats(st);
	return 0;
}

struct kvod_ioctl {
	unsigned int cmd;
	u32 ksize;
	u32 ver0;
	u32 flags;	/* the @flags bits the command knows */
	bool change;
	bool copy_out;
	int (*fn)(union kvod_ioctl_arg *arg);
	/* Undoes a done @fn whose result could not be copied out, if set. */
	void (*undo)(union kvod_ioctl_arg *arg);
	/* Finishes a done @fn once its result was copied out, if set. */
	void (*commit)(union kvod_ioctl_arg *arg);
};

#define KVOD_IOCTL_FULL(_cmd, _type, _ver0, _change, _out, _fn, _undo,	\
			_commit)					\
	{ .cmd = (_cmd), .ksize = sizeof(_type), .ver0 = (_ver0),	\
	  .change = (_change), .copy_out = (_out), .fn = (_fn),	\
	  .undo = (_undo), .commit = (_commit) }
#define KVOD_IOCTL_FLAGS(_cmd, _type, _ver0, _change, _out, _fn, _flags)	\
	{ .cmd = (_cmd), .ksize = sizeof(_type), .ver0 = (_ver0),	\
	  .change = (_change), .copy_out = (_out), .fn = (_fn),	\
	  .flags = (_flags) }
#define KVOD_IOCTL_UNDO(_cmd, _type, _ver0, _change, _out, _fn, _undo)	\
	KVOD_IOCTL_FULL(_cmd, _type, _ver0, _change, _out, _fn, _undo, NULL)
#define KVOD_IOCTL(_cmd, _type, _ver0, _change, _out, _fn)		\
	KVOD_IOCTL_UNDO(_cmd, _type, _ver0, _change, _out, _fn, NULL)

static const struct kvod_ioctl kvod_ioctls[] = {
	KVOD_IOCTL_FLAGS(KVOD_IOC_MOVIE_ADD, struct kvod_movie_add,
			 KVOD_MOVIE_ADD_SIZE_VER0, true, false, ioc_movie_add,
			 KVOD_ADD_FLAGS),
	KVOD_IOCTL(KVOD_IOC_MOVIE_DEL, struct kvod_movie_ref,
		   KVOD_MOVIE_REF_SIZE_VER0, true, false, ioc_movie_del),
	KVOD_IOCTL(KVOD_IOC_MOVIE_INFO, struct kvod_movie_info,
		   KVOD_MOVIE_INFO_SIZE_VER0, false, true, ioc_movie_info),
	KVOD_IOCTL(KVOD_IOC_MOVIE_LIST, struct kvod_movie_list,
		   KVOD_MOVIE_LIST_SIZE_VER0, false, true, ioc_movie_list),
	KVOD_IOCTL(KVOD_IOC_STATS, struct kvod_stats,
		   KVOD_STATS_SIZE_VER0, false, true, ioc_stats),
	KVOD_IOCTL(KVOD_IOC_LISTEN, struct kvod_listen,
		   KVOD_LISTEN_SIZE_VER0, true, false, ioc_listen),
	KVOD_IOCTL(KVOD_IOC_UNLISTEN, struct kvod_listen,
		   KVOD_LISTEN_SIZE_VER0, true, false, ioc_unlisten),
	KVOD_IOCTL(KVOD_IOC_LISTENER_LIST, struct kvod_movie_list,
		   KVOD_MOVIE_LIST_SIZE_VER0, false, true, ioc_listener_list),
	KVOD_IOCTL_UNDO(KVOD_IOC_PUSH_START, struct kvod_push_start,
			KVOD_PUSH_START_SIZE_VER0, true, true, ioc_push_start,
			ioc_push_start_undo),
	KVOD_IOCTL(KVOD_IOC_PUSH_STOP, struct kvod_push_ref,
		   KVOD_PUSH_REF_SIZE_VER0, true, false, ioc_push_stop),
	KVOD_IOCTL(KVOD_IOC_PUSH_LIST, struct kvod_movie_list,
		   KVOD_MOVIE_LIST_SIZE_VER0, false, true, ioc_push_list),
	KVOD_IOCTL(KVOD_IOC_LIVE_CREATE, struct kvod_live_create,
		   KVOD_LIVE_CREATE_SIZE_VER0, true, false, ioc_live_create),
	KVOD_IOCTL_FULL(KVOD_IOC_LIVE_FEED, struct kvod_live_feed,
			KVOD_LIVE_FEED_SIZE_VER0, true, true, ioc_live_feed,
			ioc_live_feed_undo, ioc_live_feed_commit),
};

/* Match on type, number and direction; @size in the struct rules. */
static const struct kvod_ioctl *ioctl_find(unsigned int cmd)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(kvod_ioctls); i++) {
		if ((kvod_ioctls[i].cmd & ~IOCSIZE_MASK) == (cmd & ~IOCSIZE_MASK))
			return &kvod_ioctls[i];
	}
	return NULL;
}

/*
 * Both the caller and whoever opened the file must hold CAP_NET_ADMIN over
 * the initial user namespace: movies are global, and an fd passed to a
 * privileged process must not lend it the opener's lack of privilege.
 */
static bool may_change(struct file *file)
{
	return file_ns_capable(file, &init_user_ns, CAP_NET_ADMIN) &&
	       capable(CAP_NET_ADMIN);
}

static long kvod_ioctl(struct file *file, unsigned int cmd, unsigned long uarg)
{
	void __user *uptr = (void __user *)uarg;
	const struct kvod_ioctl *ioc;
	union kvod_ioctl_arg arg;
	u32 usize;
	int ret;

	ioc = ioctl_find(cmd);
	if (!ioc)
		return -ENOTTY;
	if (ioc->change && !may_change(file))
		return -EPERM;
	if (get_user(usize, (u32 __user *)uptr))
		return -EFAULT;
	if (usize > PAGE_SIZE)
		return -E2BIG;
	if (usize < ioc->ver0)
		return -EINVAL;
	ret = copy_struct_from_user(&arg, ioc->ksize, uptr, usize);
	if (ret)
		return ret;
	if (arg.head.flags & ~ioc->flags)
		return -EINVAL;

	ret = ioc->fn(&arg);
	if (ret)
		return ret;
	arg.head.size = usize;
	if (ioc->copy_out && copy_to_user(uptr, &arg, min(usize, ioc->ksize))) {
		if (ioc->undo)
			ioc->undo(&arg);
		return -EFAULT;
	}
	if (ioc->commit)
		ioc->commit(&arg);
	return 0;
}

static const struct file_operations kvod_fops = {
	.owner = THIS_MODULE,
	.open = nonseekable_open,
	.unlocked_ioctl = kvod_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
};

static struct miscdevice kvod_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "kvod",
	.fops = &kvod_fops,
	.mode = 0600,
};

int kvod_dev_init(void)
{
	return misc_register(&kvod_misc);
}

/* Open files pin the module (fops.owner), so no ioctl runs past this. */
void kvod_dev_exit(void)
{
	misc_deregister(&kvod_misc);
}
