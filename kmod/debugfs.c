// SPDX-License-Identifier: GPL-2.0
/*
 * Test knobs for the selftests (Documentation/kvod.rst), 0 for off: in
 * debugfs, not module parameters, as they are not part of kvod's interface.
 */
#include <linux/debugfs.h>

#include "kvod.h"

u32 kvod_debug_small_chunks;
u32 kvod_debug_push_release_delay_ms;
u32 kvod_debug_rdma_setup_delay_ms;
u32 kvod_debug_add_lazy;
u32 kvod_debug_cursor_sync;
atomic_t kvod_debug_drop_notes = ATOMIC_INIT(0);

static struct dentry *kvod_debugfs;

static int drop_notes_get(void *data, u64 *val)
{
	*val = atomic_read(&kvod_debug_drop_notes);
	return 0;
}

/* A count, so never negative: the atomic_t only makes taking one safe. */
static int drop_notes_set(void *data, u64 val)
{
	if (val > INT_MAX)
		return -EINVAL;
	atomic_set(&kvod_debug_drop_notes, val);
	return 0;
}

DEFINE_DEBUGFS_ATTRIBUTE(drop_notes_fops, drop_notes_get, drop_notes_set,
			 "%llu\n");

void kvod_debugfs_init(void)
{
	kvod_debugfs = debugfs_create_dir(KBUILD_MODNAME, NULL);
	debugfs_create_u32("small_chunks", 0600, kvod_debugfs,
			   &kvod_debug_small_chunks);
	debugfs_create_u32("push_release_delay_ms", 0600, kvod_debugfs,
			   &kvod_debug_push_release_delay_ms);
	debugfs_create_u32("rdma_setup_delay_ms", 0600, kvod_debugfs,
			   &kvod_debug_rdma_setup_delay_ms);
	debugfs_create_file_unsafe("drop_notes", 0600, kvod_debugfs, NULL,
				   &drop_notes_fops);
	debugfs_create_u32("add_lazy", 0600, kvod_debugfs,
			   &kvod_debug_add_lazy);
	debugfs_create_u32("cursor_sync", 0600, kvod_debugfs,
			   &kvod_debug_cursor_sync);
}

void kvod_debugfs_exit(void)
{
	debugfs_remove_recursive(kvod_debugfs);
}
