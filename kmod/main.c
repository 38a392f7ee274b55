// SPDX-License-Identifier: GPL-2.0
/*
 * kvod: a video-on-demand server in the kernel.
 *
 * This file only brings the subsystems up in order and takes them down in
 * reverse: the test knobs in debugfs first (debugfs.c), then the catalog
 * (everything else serves movies from it), the protocols, which register
 * their listener ops (and RDMA its device client and workqueues), the
 * pushes (which hold movies), then the listeners (which hold movies while
 * they serve), the control device last (nothing can be configured before
 * the rest exists). The pushes and the listeners each stop a dying
 * namespace's own with a pernet hook; pre_exit hooks run in reverse order
 * of registration, so a namespace's listeners stop before its pushes. At
 * exit the device goes first, so no new listener or push can appear while
 * they are torn down, then the catalog, once no reader is left, and the
 * knobs last.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>

#include "kvod.h"

static int __init kvod_init(void)
{
	int ret;

	kvod_debugfs_init();
	ret = kvod_catalog_init();
	if (ret)
		goto err_debugfs;
	kvod_http_init();
	ret = kvod_rdma_init();
	if (ret)
		goto err_http;
	ret = kvod_push_init();
	if (ret)
		goto err_rdma;
	ret = kvod_listeners_init();
	if (ret)
		goto err_push;
	ret = kvod_dev_init();
	if (ret)
		goto err_listeners;
	return 0;

err_listeners:
	kvod_listeners_exit();
err_push:
	kvod_push_exit();
err_rdma:
	kvod_rdma_exit();
err_http:
	kvod_http_exit();
	kvod_catalog_exit();
err_debugfs:
	kvod_debugfs_exit();
	return ret;
}

static void __exit kvod_exit(void)
{
	kvod_dev_exit();
	kvod_listeners_exit();
	kvod_push_exit();	/* pushes hold movies: before the catalog */
	kvod_rdma_exit();
	kvod_http_exit();
	kvod_catalog_exit();
	kvod_debugfs_exit();
}

module_init(kvod_init);
module_exit(kvod_exit);

MODULE_DESCRIPTION("kvod: zero-copy video-on-demand server (RDMA, HTTP, paced RTP)");
MODULE_AUTHOR("The kvod developers");
MODULE_LICENSE("GPL");
