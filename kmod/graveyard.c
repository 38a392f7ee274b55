// SPDX-License-Identifier: GPL-2.0
/* The graveyard: pages kvod let go of that the network stack still holds. */

/**
 * DOC: The graveyard
 *
 * kvod hands TCP and UDP references to its pages (``MSG_SPLICE_PAGES``),
 * and the stack keeps them until the bytes are acknowledged or the packet
 * is freed: long after a live ring's writer swapped the page out of its
 * slot (DOC: Overwrite without tearing), or after a movie was freed while
 * a qdisc still held its packets. A live reader between chunks holds the
 * page of the chunk it sends in the same way. Such a page is not freed but
 * buried: kvod_graveyard_bury() keeps kvod's reference on a list, and the
 * bytes are counted as ``graveyard`` instead of ``resident`` (DOC: Memory
 * accounting).
 *
 * A reaper, a delayed work queued while the list is not empty, looks at
 * every buried page each ``GRAVEYARD_REAP_MS``. A page whose only
 * reference is the graveyard's gets no new one that lasts: nobody holds a
 * pointer to it to take one from, and a speculative reference of a walk
 * of physical pages is dropped at once. The reaper frees such a page
 * with put_page(), which leaves it to such a walker if one holds it just
 * then, and uncharges its bytes. Module exit stops the reaper and drops
 * the graveyard's references: a page still held is then freed by its
 * last holder, and is no longer counted.
 *
 * ``kvod_graveyard_lock``, a spinlock, guards the list. The reaper takes
 * the whole list to look at it, so a page buried meanwhile waits for its
 * next run; pages are freed outside the lock.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/list.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>

#include "kvod.h"

#define GRAVEYARD_REAP_MS	500

/**
 * struct kvod_grave - a buried page
 * @node: on kvod_graveyard, under kvod_graveyard_lock
 * @page: the head of the page; the graveyard holds one reference
 * @order: its order
 */
struct kvod_grave {
	struct list_head node;
	struct page *page;
	unsigned int order;
};

static LIST_HEAD(kvod_graveyard);
static DEFINE_SPINLOCK(kvod_graveyard_lock);

static void graveyard_reap(struct work_struct *work);
static DECLARE_DELAYED_WORK(kvod_reaper, graveyard_reap);

static bool page_held_by_others(struct page *page)
{
	return folio_ref_count(page_folio(page)) > 1;
}

static void grave_free(struct kvod_grave *g)
{
	kvod_mem_release(KVOD_MEM_GRAVEYARD, PAGE_SIZE << g->order);
	put_page(g->page);
	kfree(g);
}

/*
 * The reaper takes the whole list, so that it looks at each page without
 * the lock and may yield, and puts back what is still held.
 */
static void graveyard_reap(struct work_struct *work)
{
	struct kvod_grave *g, *tmp;
	LIST_HEAD(look);
	bool more;

	spin_lock(&kvod_graveyard_lock);
	list_splice_init(&kvod_graveyard, &look);
	spin_unlock(&kvod_graveyard_lock);

	list_for_each_entry_safe(g, tmp, &look, node) {
		if (!page_held_by_others(g->page)) {
			list_del(&g->node);
			grave_free(g);
		}
		cond_resched();
	}

	spin_lock(&kvod_graveyard_lock);
	list_splice(&look, &kvod_graveyard);
	more = !list_empty(&kvod_graveyard);
	spin_unlock(&kvod_graveyard_lock);
	if (more)
		schedule_delayed_work(&kvod_reaper,
				      msecs_to_jiffies(GRAVEYARD_REAP_MS));
}

/**
 * kvod_graveyard_bury() - let go of a page that others may still hold
 * @page: the head of a page of kvod's, whose reference the caller gives up
 * @order: its order
 *
 * If nobody else holds @page, nothing is done: the caller frees it. Else
 * the graveyard takes the caller's reference and counts the page until it
 * frees it. Should the graveyard have no room for it, the reference is
 * dropped at once, and the page, uncounted, is freed by its last holder.
 *
 * Context: process context.
 *
 * Return: true if @page was taken, false if the caller is to free it.
 */
bool kvod_graveyard_bury(struct page *page, unsigned int order)
{
	struct kvod_grave *g;

	if (!page_held_by_others(page))
		return false;
	g = kmalloc(sizeof(*g), GFP_KERNEL | __GFP_NOWARN);
	if (!g) {
		put_page(page);
		return true;
	}
	g->page = page;
	g->order = order;
	kvod_mem_charge(KVOD_MEM_GRAVEYARD, PAGE_SIZE << order);
	spin_lock(&kvod_graveyard_lock);
	list_add_tail(&g->node, &kvod_graveyard);
	spin_unlock(&kvod_graveyard_lock);
	schedule_delayed_work(&kvod_reaper, msecs_to_jiffies(GRAVEYARD_REAP_MS));
	return true;
}

/* Module exit, once nobody can bury a page any more. */
void kvod_graveyard_exit(void)
{
	struct kvod_grave *g, *tmp;

	cancel_delayed_work_sync(&kvod_reaper);
	list_for_each_entry_safe(g, tmp, &kvod_graveyard, node) {
		grave_free(g);
		cond_resched();
	}
	INIT_LIST_HEAD(&kvod_graveyard);
}
