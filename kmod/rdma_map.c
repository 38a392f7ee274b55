// SPDX-License-Identifier: GPL-2.0
/* A movie's image DMA-mapped for one RDMA device, shared by its connections. */

/**
 * DOC: RDMA shared maps
 *
 * A connection registers the movie in MRs of its own ("RDMA protection"),
 * but what they are built from, the plan of segments (runs of chunks, one
 * MR each), each segment's scatterlist and its DMA mapping, depends on the
 * movie's image (DOC: Image lifetimes), the device and ``rdma_huge_pages``
 * alone. Built per connection they would grow with the title times the
 * connections: half a million scatterlist entries, about 16 MiB, for a
 * 1 TiB title of 2 MiB chunks. So a map is built once per image, device
 * and choice of MR page size, when the first connection to the movie on
 * the device sets up, and shared; ib_map_mr_sg() only reads it. A
 * connection keeps only its MRs and its segment table.
 */

/**
 * DOC: RDMA segments
 *
 * The movie is covered by as few MRs as the device allows. Runs of whole
 * 2 MiB chunks use 2 MiB MR pages where ``rdma_huge_pages`` is on and the
 * device's ``page_size_cap`` has them; everything else uses 4 KiB pages.
 * An MR has at most ``max_fast_reg_page_list_len`` pages, and never more
 * than 65536.
 *
 * An MR's first byte is at the start of its first MR page, so its iova
 * must be aligned to its page size: it is the movie offset of its first
 * byte rounded down to that size. That is the offset itself except for a
 * run of 2 MiB chunks that follows a chunk which fell back to a smaller
 * order (the run then starts at an offset that is not 2 MiB-aligned).
 * Either way the addresses a client sees are derived from movie offsets,
 * never kernel or DMA addresses. The last segment ends exactly at the
 * movie's last byte.
 */

/**
 * DOC: RDMA mirror mapping
 *
 * A live channel's mirror is DMA-mapped like a movie, once per device, and
 * then written by the CPU for every chunk, with no DMA sync. That is sound
 * only where the device reads the pages themselves: rxe and siw, which
 * read them by their kernel address, and a device with coherent DMA and
 * no bounce buffer. A mirror whose mapping would need a sync
 * (dma_need_sync()) fails the connection's setup, so the connection is
 * refused with ``NO_RESOURCES`` rather than served a stale snapshot.
 */

/**
 * DOC: RDMA map lifetime and locking
 *
 * Each connection that registered from a map holds it from its setup
 * until its release has deregistered its MRs (kvod_rdma_map_put()); the
 * last put unmaps and frees it. A map holds a reference to the image it
 * maps (kvod_image_get()) from its build until it is freed, so it never
 * outlives the chunks it maps, and an image's address is a sound key: no
 * other image can have it while the map is listed. Device removal waits
 * for the release of every connection on the device ("RDMA listeners and
 * devices"), so no map outlives its device either.
 *
 * ``kvod_rdma_maps_lock``, a mutex, guards the list of maps and the drop
 * of a map's last reference. A map is built without it, as a large
 * movie's takes long and other connections' setups and releases must not
 * wait for it. It is put on the list only if no other connection put one
 * for the same image and device meanwhile; else it is freed and that one
 * is used. A map's fields do not change once it is on the list.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/dma-mapping.h>
#include <linux/module.h>
#include <linux/overflow.h>
#include <linux/sizes.h>
#include <linux/slab.h>

#include "rdma.h"

static bool rdma_huge_pages = true;
module_param(rdma_huge_pages, bool, 0644);
MODULE_PARM_DESC(rdma_huge_pages,
		 "Register 2 MiB chunks with 2 MiB MR pages where the device allows (default on)");

static DEFINE_MUTEX(kvod_rdma_maps_lock);
static LIST_HEAD(kvod_rdma_maps);
static u32 kvod_rdma_nr_maps;		/* under kvod_rdma_maps_lock */

static u32 dev_max_pages(struct ib_device *dev)
{
	return min_t(u32, dev->attrs.max_fast_reg_page_list_len, 1U << 16);
}

static bool chunk_is_huge(const struct kvod_chunk *c, u64 off)
{
	return c->order == KVOD_CHUNK_MAX_ORDER && c->offset == off;
}

/* Length and MR page size of the segment at @off (DOC: RDMA segments). */
static u64 plan_segment(const struct kvod_image *img, u64 off, bool huge,
			u32 max_pages, u32 *psize)
{
	const struct kvod_chunk *c = kvod_image_chunk(img, off);
	u64 end = off;
	u32 n = 0;

	if (huge && chunk_is_huge(c, off)) {
		*psize = SZ_2M;
		while (n < max_pages && c && chunk_is_huge(c, end)) {
			end += c->len;
			n++;
			c = kvod_image_next_chunk(img, c);
		}
		return end - off;
	}

	*psize = PAGE_SIZE;
	while (c && n < max_pages) {
		u64 take;

		if (huge && end != off && chunk_is_huge(c, end))
			break;
		take = min_t(u64, c->offset + c->len - end,
			     (u64)(max_pages - n) << PAGE_SHIFT);
		end += take;
		n += DIV_ROUND_UP(take, PAGE_SIZE);
		if (end == c->offset + c->len)
			c = kvod_image_next_chunk(img, c);
	}
	return end - off;
}

/* Segments of @img's plan; with @segs, their offsets and lengths too. */
static u32 plan_image(const struct kvod_image *img, bool huge,
		      u32 max_pages, struct kvod_rdma_mseg *segs)
{
	u64 off = 0;
	u32 n = 0;

	while (off < img->length) {
		u32 psize;
		u64 len = plan_segment(img, off, huge, max_pages, &psize);

		if (segs) {
			segs[n].offset = off;
			segs[n].length = len;
			segs[n].psize = psize;
		}
		off += len;
		n++;
	}
	return n;
}

static int seg_fill_sg(struct kvod_rdma_mseg *seg,
		       const struct kvod_image *img, size_t *bytes)
{
	const struct kvod_chunk *first = kvod_image_chunk(img, seg->offset);
	const struct kvod_chunk *c;
	u64 off = seg->offset, end = seg->offset + seg->length;
	struct scatterlist *sg;
	unsigned int n = 0;
	int ret;

	for (c = first; c && c->offset < end; c = kvod_image_next_chunk(img, c))
		n++;
	ret = sg_alloc_table(&seg->sgt, n, GFP_KERNEL);
	if (ret)
		return ret;
	*bytes += n * sizeof(*sg);

	c = first;
	for_each_sg(seg->sgt.sgl, sg, n, ret) {
		u64 in = off - c->offset;
		u64 len = min(c->offset + c->len, end) - off;

		sg_set_page(sg, nth_page(c->page, in >> PAGE_SHIFT), len, 0);
		off += len;
		c = kvod_image_next_chunk(img, c);
	}
	return 0;
}

/* Whether @seg would need a DMA sync (DOC: RDMA mirror mapping). */
static bool seg_needs_sync(struct ib_device *dev, struct kvod_rdma_mseg *seg)
{
	struct scatterlist *sg;
	int i;

	if (ib_uses_virt_dma(dev))
		return false;
	for_each_sg(seg->sgt.sgl, sg, seg->mapped, i)
		if (dma_need_sync(dev->dma_device, sg_dma_address(sg)))
			return true;
	return false;
}

/* @mirror: a live channel's, which the CPU writes while it is mapped. */
static int seg_map(struct kvod_rdma_map *map, struct kvod_rdma_mseg *seg,
		   bool mirror)
{
	int ret;

	ret = seg_fill_sg(seg, map->image, &map->bytes);
	if (ret)
		return ret;
	seg->mapped = ib_dma_map_sg(map->dev, seg->sgt.sgl,
				    seg->sgt.orig_nents, DMA_TO_DEVICE);
	if (!seg->mapped)
		return -ENOMEM;
	/* The MR's first byte starts its first page (DOC: RDMA segments). */
	if (sg_dma_address(seg->sgt.sgl) & (seg->psize - 1))
		return -EINVAL;	/* an IOMMU moved the chunk off its alignment */
	if (mirror && seg_needs_sync(map->dev, seg))
		return -EOPNOTSUPP;
	return 0;
}

/* Unmap and free what was built of @map, and @map; NULL-safe fields. */
static void map_free(struct kvod_rdma_map *map)
{
	u32 i;

	for (i = 0; i < map->nr_segs; i++) {
		struct kvod_rdma_mseg *seg = &map->segs[i];

		if (seg->mapped)
			ib_dma_unmap_sg(map->dev, seg->sgt.sgl,
					seg->sgt.orig_nents, DMA_TO_DEVICE);
		sg_free_table(&seg->sgt);
		cond_resched();
	}
	kvod_image_put(map->image);
	kvfree(map);
}

static struct kvod_rdma_map *map_build(struct kvod_image *img,
				       struct ib_device *dev, bool huge,
				       bool mirror)
{
	u32 max_pages = dev_max_pages(dev), n, i;
	struct kvod_rdma_map *map;
	int ret;

	if (!max_pages)
		return ERR_PTR(-EOPNOTSUPP);
	n = plan_image(img, huge, max_pages, NULL);
	map = kvzalloc(struct_size(map, segs, n), GFP_KERNEL);
	if (!map)
		return ERR_PTR(-ENOMEM);
	kref_init(&map->ref);
	map->image = kvod_image_get(img);
	map->dev = dev;
	map->huge = huge;
	map->nr_segs = n;
	map->bytes = struct_size(map, segs, n);
	plan_image(img, huge, max_pages, map->segs);
	for (i = 0; i < n; i++) {
		ret = seg_map(map, &map->segs[i], mirror);
		if (ret) {
			map_free(map);
			return ERR_PTR(ret);
		}
		cond_resched();
	}
	return map;
}

/* The listed map of (@img, @dev, @huge), referenced; under the lock. */
static struct kvod_rdma_map *map_find(const struct kvod_image *img,
				      struct ib_device *dev, bool huge)
{
	struct kvod_rdma_map *map;

	list_for_each_entry(map, &kvod_rdma_maps, node) {
		if (map->image == img && map->dev == dev &&
		    map->huge == huge) {
			kref_get(&map->ref);
			return map;
		}
	}
	return NULL;
}

/**
 * kvod_rdma_map_get() - the map of @movie's image on @dev, built if need be
 * @movie: a movie with an image (not a live channel without a mirror)
 *	that the caller holds
 * @dev: the device
 *
 * Context: process context; may take long the first time, for a large movie.
 *
 * Return: the map, with a reference for the caller, or an ERR_PTR().
 */
struct kvod_rdma_map *kvod_rdma_map_get(struct kvod_movie *movie,
					struct ib_device *dev)
{
	bool huge = READ_ONCE(rdma_huge_pages) &&
		    (dev->attrs.page_size_cap & SZ_2M);
	struct kvod_image *img = kvod_movie_image(movie);
	struct kvod_rdma_map *map, *other;

	mutex_lock(&kvod_rdma_maps_lock);
	map = map_find(img, dev, huge);
	mutex_unlock(&kvod_rdma_maps_lock);
	if (map)
		return map;

	map = map_build(img, dev, huge, movie->live);
	if (IS_ERR(map))
		return map;
	mutex_lock(&kvod_rdma_maps_lock);
	other = map_find(img, dev, huge);
	if (!other) {
		list_add(&map->node, &kvod_rdma_maps);
		kvod_rdma_nr_maps++;
		kvod_mem_charge(KVOD_MEM_RDMA_MAPS, map->bytes);
	}
	mutex_unlock(&kvod_rdma_maps_lock);
	if (other) {
		map_free(map);	/* built twice at once: keep the first */
		map = other;
	}
	return map;
}

/* The last reference: called with kvod_rdma_maps_lock held; drops it. */
static void map_release(struct kref *ref)
{
	struct kvod_rdma_map *map = container_of(ref, struct kvod_rdma_map,
						 ref);

	list_del(&map->node);
	kvod_rdma_nr_maps--;
	kvod_mem_release(KVOD_MEM_RDMA_MAPS, map->bytes);
	mutex_unlock(&kvod_rdma_maps_lock);
	map_free(map);
}

/**
 * kvod_rdma_map_put() - drop a reference to a map
 * @map: the map, or NULL
 *
 * Context: process context, once the caller's MRs from @map are gone.
 */
void kvod_rdma_map_put(struct kvod_rdma_map *map)
{
	if (map)
		kref_put_mutex(&map->ref, map_release, &kvod_rdma_maps_lock);
}

/**
 * kvod_rdma_map_stats() - the maps' part of STATS
 * @st: its rdma_maps is filled
 */
void kvod_rdma_map_stats(struct kvod_stats *st)
{
	mutex_lock(&kvod_rdma_maps_lock);
	st->rdma_maps = kvod_rdma_nr_maps;
	mutex_unlock(&kvod_rdma_maps_lock);
}
