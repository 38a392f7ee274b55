// SPDX-License-Identifier: GPL-2.0
/*
 * Test knobs, in /sys/kernel/debug/kvod/ rather than among the module's
 * parameters: they are not part of kvod's interface and exist only so
 * that selftests can reach rare states on demand.
 *
 *   small_chunks: the first N chunks of every movie ADDed afterwards are
 *     single pages, as if their 2 MiB allocations had failed, so the
 *     chunks after them are 2 MiB chunks at offsets that are not 2
 *     MiB-aligned (selftests/kvod/rdma_chunks.sh).
 *   push_release_delay_ms: a push that ended by itself sleeps this long
 *     between leaving the push list and releasing its socket, the window
 *     namespace teardown must wait across (selftests/kvod/push_netns.sh).
 *   rdma_setup_delay_ms: an RDMA connection's setup work sleeps this long
 *     before it builds anything, so that a client's connect times out
 *     waiting for the answer (selftests/kvod/rdma_proxy.sh: 504).
 *   drop_notes: the next N notes of completed chunks, to any connection,
 *     are dropped as if no buffer were free (counted in notes_dropped),
 *     each taking one off N; end notes are not (selftests/kvod/
 *     live_rdma.sh: a reader whose last notes were dropped). N is 0 to
 *     INT_MAX; anything else is refused with EINVAL.
 *
 * All default to 0 (off) and are read with READ_ONCE() where they act,
 * drop_notes with atomic_dec_if_positive().
 * The directory is created first at load and removed last at exit; a
 * debugfs failure is not an error, as for any debugfs user.
 */
#include <linux/debugfs.h>

#include "kvod.h"

u32 kvod_debug_small_chunks;
u32 kvod_debug_push_release_delay_ms;
u32 kvod_debug_rdma_setup_delay_ms;
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
}

void kvod_debugfs_exit(void)
{
	debugfs_remove_recursive(kvod_debugfs);
}
