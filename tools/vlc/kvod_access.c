// SPDX-License-Identifier: GPL-2.0
/*
 * A VLC 3.0 access module for rdma://HOST[:PORT]/NAME: VLC itself pulls
 * a movie from kvod's RDMA server with one-sided READs (the thesis's
 * VLC access module, section 5.2.2), through the client library that
 * kvod-fetch and kvod-proxy use (tools/lib/rdma.c).
 *
 *   Open     parse the location, connect (the movie's name in the
 *            request), READ the segment table, register the ring
 *   Read     keep --kvod-depth READs of --kvod-chunk bytes posted ahead
 *            of the reader, in a ring; hand VLC the oldest buffer's bytes
 *            once its READ completed (completions come in posting order,
 *            one send queue), a copy into VLC's buffer
 *   Seek     wait out the READs in flight, discard them, and go on at the
 *            new offset on the same connection: no reconnect
 *   Control  size, can seek/fast-seek/pause/control pace, and the PTS
 *            delay from --network-caching
 *   Close    disconnect and free
 *
 * Errors reach VLC's log with kvod-fetch's wording ("NAME: movie not
 * found", "the server disconnected"). Built by tools/Makefile against
 * libvlccore-dev; installed by "make install" into VLC's plugin directory,
 * or used from the tree with VLC_PLUGIN_PATH=tools/vlc.
 */
#define MODULE_STRING "kvod"
#define _GNU_SOURCE

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <vlc_common.h>
#include <vlc_plugin.h>
#include <vlc_access.h>
#include <vlc_interrupt.h>

#include "../lib/rdma.h"

#define CHUNK_DEFAULT	(256 * 1024)
#define DEPTH_DEFAULT	8
#define DEPTH_MAX	64
#define STEP_MS		100	/* how long a wait goes without checking vlc_killed() */
#define TIMEOUT_MAX	600000	/* ms, as kvod-fetch's --timeout */

struct kvod_sys {
	struct kvod_conn c;
	char name[KVOD_NAME_MAX];
	char *ring;			/* depth buffers of chunk bytes */
	struct ibv_mr *mr;
	unsigned int depth;
	uint32_t chunk;
	int timeout_ms;
	uint64_t pos;			/* the offset VLC reads next */
	uint64_t next_off;		/* the offset the next READ starts at */
	uint64_t posted, done;		/* READs posted and completed, ever */
	uint64_t head;			/* the oldest READ not yet consumed */
	uint32_t used;			/* bytes of head's buffer consumed */
	uint32_t len[DEPTH_MAX];	/* bytes each slot's READ asked for */
	bool failed;
};

static char *slot_buf(struct kvod_sys *sys, uint64_t n)
{
	return sys->ring + (n % sys->depth) * (size_t)sys->chunk;
}

/* Post READs until the ring is full or the movie ends. */
static int post_ahead(stream_t *access, struct kvod_sys *sys)
{
	while (sys->posted - sys->head < sys->depth &&
	       sys->next_off < sys->c.movie_size) {
		long i = kvod_seg_find(&sys->c, sys->next_off);
		const struct kvod_seg *s;
		uint64_t len = sys->chunk;

		if (i < 0) {
			msg_Err(access, "%s: offset %" PRIu64 " is in no segment",
				sys->name, sys->next_off);
			return -1;
		}
		s = &sys->c.segs[i];
		if (len > s->offset + s->length - sys->next_off)
			len = s->offset + s->length - sys->next_off;
		if (kvod_post_read(&sys->c, slot_buf(sys, sys->posted),
				   sys->mr->lkey,
				   s->addr + (sys->next_off - s->offset),
				   s->rkey, len, sys->posted)) {
			msg_Err(access, "%s: %s", sys->name, sys->c.err);
			return -1;
		}
		sys->len[sys->posted % sys->depth] = len;
		sys->posted++;
		sys->next_off += len;
	}
	return 0;
}

/*
 * Wait for the next completion; 0 when one came, -1 on failure (logged)
 * or when VLC stops the input.
 */
static int wait_one(stream_t *access, struct kvod_sys *sys)
{
	int waited = 0;

	for (;;) {
		struct ibv_wc wc;
		int n;

		if (vlc_killed())
			return -1;
		n = kvod_poll(&sys->c, &wc, 1, STEP_MS);
		if (n < 0) {
			msg_Err(access, "%s: %s", sys->name, sys->c.err);
			return -1;
		}
		if (n == 0) {
			waited += STEP_MS;
			if (waited < sys->timeout_ms)
				continue;
			msg_Err(access, "%s: no completion within %d ms",
				sys->name, sys->timeout_ms);
			return -1;
		}
		if (wc.status != IBV_WC_SUCCESS) {
			msg_Err(access, "%s: READ: %s%s", sys->name,
				ibv_wc_status_str(wc.status),
				sys->c.disconnected ? " (the server disconnected)" : "");
			return -1;
		}
		if (wc.wr_id != sys->done) {
			msg_Err(access, "%s: completion %" PRIu64 " out of order",
				sys->name, (uint64_t)wc.wr_id);
			return -1;
		}
		sys->done++;
		return 0;
	}
}

static ssize_t Read(stream_t *access, void *buf, size_t len)
{
	struct kvod_sys *sys = access->p_sys;
	uint32_t left;

	if (sys->failed || sys->pos >= sys->c.movie_size)
		return 0;
	if (post_ahead(access, sys))
		goto fail;
	while (sys->done <= sys->head)
		if (wait_one(access, sys))
			goto fail;
	left = sys->len[sys->head % sys->depth] - sys->used;
	if (len > left)
		len = left;
	memcpy(buf, slot_buf(sys, sys->head) + sys->used, len);
	sys->used += len;
	sys->pos += len;
	if (sys->used == sys->len[sys->head % sys->depth]) {
		sys->head++;
		sys->used = 0;
	}
	return len;
fail:
	sys->failed = true;
	return 0;
}

/* Drain what is in flight and go on from @offset: no reconnect. */
static int Seek(stream_t *access, uint64_t offset)
{
	struct kvod_sys *sys = access->p_sys;

	if (sys->failed)
		return VLC_EGENERIC;
	while (sys->done < sys->posted)
		if (wait_one(access, sys)) {
			sys->failed = true;
			return VLC_EGENERIC;
		}
	sys->head = sys->posted;
	sys->used = 0;
	sys->pos = offset;
	sys->next_off = offset;
	return VLC_SUCCESS;
}

static int Control(stream_t *access, int query, va_list args)
{
	struct kvod_sys *sys = access->p_sys;

	switch (query) {
	case STREAM_CAN_SEEK:
	case STREAM_CAN_FASTSEEK:
	case STREAM_CAN_PAUSE:
	case STREAM_CAN_CONTROL_PACE:
		*va_arg(args, bool *) = true;
		return VLC_SUCCESS;
	case STREAM_GET_SIZE:
		*va_arg(args, uint64_t *) = sys->c.movie_size;
		return VLC_SUCCESS;
	case STREAM_GET_PTS_DELAY:
		*va_arg(args, int64_t *) = INT64_C(1000) *
			var_InheritInteger(access, "network-caching");
		return VLC_SUCCESS;
	case STREAM_SET_PAUSE_STATE:
		return VLC_SUCCESS;
	default:
		return VLC_EGENERIC;
	}
}

static void release(struct kvod_sys *sys)
{
	if (sys->mr)
		ibv_dereg_mr(sys->mr);
	kvod_close(&sys->c);
	free(sys->ring);
	free(sys);
}

static int Open(vlc_object_t *obj)
{
	stream_t *access = (stream_t *)obj;
	struct kvod_sys *sys;
	char host[256], port[8], url[512], pdata[KVOD_REQ_PDATA_MAX];
	struct kvod_conn_opts o = { .pdata = pdata };
	int64_t chunk, depth, timeout;

	snprintf(url, sizeof(url), "rdma://%s", access->psz_location);
	sys = calloc(1, sizeof(*sys));
	if (!sys)
		return VLC_ENOMEM;
	if (kvod_parse_url(url, host, sizeof(host), port, sizeof(port),
			   sys->name, sizeof(sys->name))) {
		msg_Err(access, "bad URL '%s' (rdma://HOST[:PORT]/NAME)", url);
		free(sys);
		return VLC_EGENERIC;
	}
	chunk = var_InheritInteger(access, "kvod-chunk");
	depth = var_InheritInteger(access, "kvod-depth");
	if (chunk < 4096 || chunk > (64 << 20) || depth < 1 || depth > DEPTH_MAX) {
		msg_Err(access, "--kvod-chunk 4096..64M, --kvod-depth 1..%d", DEPTH_MAX);
		free(sys);
		return VLC_EGENERIC;
	}
	/* 0 would time every step out at once; rdma_cm takes an int. */
	timeout = var_InheritInteger(access, "kvod-timeout");
	if (timeout < 1 || timeout > TIMEOUT_MAX) {
		msg_Err(access, "--kvod-timeout %" PRId64 ": not in 1..%d ms",
			timeout, TIMEOUT_MAX);
		free(sys);
		return VLC_EGENERIC;
	}
	sys->chunk = chunk;
	sys->depth = depth;
	sys->timeout_ms = timeout;
	o.host = host;
	o.port = port;
	o.depth = sys->depth;
	o.timeout_ms = sys->timeout_ms;
	o.pdata_len = kvod_build_req(pdata, sizeof(pdata), sys->name);
	if (kvod_connect(&sys->c, &o) ||
	    kvod_read_table(&sys->c, sys->timeout_ms)) {
		msg_Err(access, "%s: %s", sys->name, sys->c.err);
		release(sys);
		return VLC_EGENERIC;
	}
	sys->ring = malloc((size_t)sys->depth * sys->chunk);
	if (sys->ring)
		sys->mr = kvod_reg(&sys->c, sys->ring,
				   (size_t)sys->depth * sys->chunk);
	if (!sys->mr) {
		msg_Err(access, "%s: %s", sys->name,
			sys->ring ? sys->c.err : "out of memory");
		release(sys);
		return VLC_ENOMEM;
	}
	msg_Dbg(access, "%s: %" PRIu64 " bytes in %u segments", sys->name,
		sys->c.movie_size, sys->c.nr_segments);
	access->p_sys = sys;
	access->pf_read = Read;
	access->pf_block = NULL;
	access->pf_control = Control;
	access->pf_seek = Seek;
	return VLC_SUCCESS;
}

static void Close(vlc_object_t *obj)
{
	stream_t *access = (stream_t *)obj;

	release(access->p_sys);
}

vlc_module_begin()
	set_shortname("kvod")
	set_description("kvod RDMA input (rdma://HOST[:PORT]/NAME)")
	set_category(CAT_INPUT)
	set_subcategory(SUBCAT_INPUT_ACCESS)
	add_integer("kvod-chunk", CHUNK_DEFAULT, "READ size",
		    "Bytes each RDMA READ asks for", true)
	add_integer("kvod-depth", DEPTH_DEFAULT, "READs ahead",
		    "READs kept posted ahead of the reader", true)
	add_integer("kvod-timeout", 5000, "Timeout (ms)",
		    "Per connect step, and for a READ to complete (1..600000)",
		    true)
	set_capability("access", 0)
	add_shortcut("rdma")
	set_callbacks(Open, Close)
vlc_module_end()
