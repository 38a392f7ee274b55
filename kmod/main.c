// SPDX-License-Identifier: GPL-2.0
/* kvod: a video-on-demand server in the kernel; module load and exit. */

/**
 * DOC: Module load and exit
 *
 * Load brings up the test knobs in debugfs first, then the catalog, which
 * everything else serves movies from, then the cursors' workqueue, which
 * reads the page cache for HTTP and push (DOC: Cursor waits), then the
 * protocols: each registers its listener ops with kvod_proto_register(),
 * and RDMA also brings up its workqueues and device client. Then come the
 * pushes (their workqueue and pernet hook), which hold movies, then the
 * listeners (their pernet hook), which hold movies while they serve, and
 * the control device last, so that nothing can be configured before the
 * rest exists.
 *
 * ``pre_exit`` hooks run in reverse order of registration, so a dying
 * namespace's listeners stop before its pushes.
 *
 * Exit is the reverse:
 *
 * 1. the device goes first: open files pin the module, so no ioctl is
 *    running, and no new listener or push can appear while they are torn
 *    down;
 * 2. the listeners' pernet hook is unregistered, which waits for a
 *    namespace's teardown in progress, and every listener is stopped;
 * 3. the pushes' hook is unregistered, every listed push is stopped, and
 *    the push workqueue is destroyed, which waits for pushes that were
 *    ending by themselves;
 * 4. the protocols' global state goes;
 * 5. the cursors' workqueue goes, once every read of the page cache that
 *    a wait still follows has completed (DOC: Cursor waits);
 * 6. the catalog goes, once no reader is left;
 * 7. the graveyard lets go of the pages it still holds, and the memory
 *    counters are checked: every kind is back to zero (DOC: Memory
 *    accounting);
 * 8. the knobs go last.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>

#include "cursor.h"
#include "kvod.h"

static int __init kvod_init(void)
{
	int ret;

	kvod_debugfs_init();
	ret = kvod_catalog_init();
	if (ret)
		goto err_debugfs;
	ret = kvod_cursors_init();
	if (ret)
		goto err_catalog;
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
	kvod_cursors_exit();
err_catalog:
	kvod_catalog_exit();
	kvod_mem_exit();
err_debugfs:
	kvod_debugfs_exit();
	return ret;
}

static void __exit kvod_exit(void)
{
	kvod_dev_exit();
	kvod_listeners_exit();
	kvod_push_exit();
	kvod_rdma_exit();
	kvod_http_exit();
	kvod_cursors_exit();
	kvod_catalog_exit();
	kvod_mem_exit();
	kvod_debugfs_exit();
}

module_init(kvod_init);
module_exit(kvod_exit);

MODULE_DESCRIPTION("kvod: zero-copy video-on-demand server (RDMA, HTTP, paced RTP)");
MODULE_AUTHOR("The kvod developers");
MODULE_LICENSE("GPL");
