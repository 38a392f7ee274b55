/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * kvod: the RDMA wire protocol between a client and kvod's rdma_cm
 * server (KVOD_PROTO_RDMA listeners, <linux/kvod.h>). Not an ioctl ABI:
 * these are the bytes on the wire, for any client (tools/kvod-fetch is
 * one). Documentation/rdma.rst has the walk-through.
 */
#ifndef _UAPI_LINUX_KVOD_RDMA_H
#define _UAPI_LINUX_KVOD_RDMA_H

#include <linux/types.h>

/*
 * RDMA wire protocol, version 1 (Documentation/rdma.rst has the walk-through).
 *
 * All multi-byte fields are big-endian. The client connects with rdma_cm
 * (port space TCP, RC QP) and names the movie in the connect request's
 * private data. IB CM carries at most 56 bytes of it (iWARP more), so
 * names reachable over RoCE/IB are at most 47 bytes long.
 *
 *  1. REQ private data: struct kvod_rdma_req, then the name, NUL-terminated
 *     within the private data.
 *  2. The server rejects with struct kvod_rdma_reply (status != 0) as the
 *     consumer-defined reject data, or accepts with struct kvod_rdma_reply
 *     (status 0) as the accept private data: the movie's size and where
 *     the segment table is (address, rkey, length).
 *  3. Once connected the server registers the memory for this connection
 *     only (its own protection domain) and then SENDs one
 *     struct kvod_rdma_ready. The client must have a receive posted for it
 *     before connecting, and must not issue READs before it arrives.
 *     Over iWARP, where MPA (RFC 5044) lets the responder send only after
 *     the initiator's first FPDU, the client first SENDs one
 *     struct kvod_rdma_start once connected, and may SEND it once more if
 *     READY has not come within a second (KVOD_RDMA_STARTS in all); the
 *     server SENDs READY after the first START. Over IB and RoCE the
 *     client sends nothing and the server posts no receive.
 *  4. The client READs the table: table_len bytes of
 *     struct kvod_rdma_segment, contiguous in movie offset from 0. Then it
 *     READs any movie bytes [off, off + len) of a segment from
 *     remote address addr + (off - offset) with the segment's rkey.
 *     The server posts nothing more but, every so often (30 s by
 *     default), a zero-length RDMA WRITE that names no memory: a
 *     keep-alive, which the client's transport answers and its software
 *     never sees (a failed one ends the connection); and the notes of a
 *     live channel a client asked for (below). The client disconnects
 *     when done.
 *
 * An access outside the registered ranges, with another connection's rkey,
 * or after the connection ended, fails: a remote access error over IB
 * and RoCE; over iWARP the responder answers with a TERMINATE and the
 * client's READs complete as flushed.
 */
#define KVOD_RDMA_MAGIC		0x4b564f44	/* "KVOD" */
#define KVOD_RDMA_VERSION	1
#define KVOD_RDMA_PORT		7471		/* default listen port */

enum kvod_rdma_status {
	KVOD_RDMA_OK		= 0,
	KVOD_RDMA_NOT_FOUND	= 1,	/* no movie of that name */
	KVOD_RDMA_BUSY		= 2,	/* connection limit reached */
	KVOD_RDMA_BAD_VERSION	= 3,	/* reply's version is the server's */
	KVOD_RDMA_BAD_REQUEST	= 4,	/* malformed private data */
	KVOD_RDMA_NO_RESOURCES	= 5,	/* the server ran out of memory/queues */
	KVOD_RDMA_ADDR_BUSY	= 6,	/* per-address connection limit reached */
	KVOD_RDMA_NOT_MOVIE	= 7,	/* a live channel created without
					 * KVOD_LIVE_RDMA: no mirror to READ
					 */
};

/**
 * struct kvod_rdma_req - connect request private data
 * @magic: KVOD_RDMA_MAGIC
 * @version: KVOD_RDMA_VERSION
 * @flags: KVOD_RDMA_REQ_NOTIFY, or 0
 * @reserved: must be 0
 * @name: the movie's name, NUL-terminated
 */
struct kvod_rdma_req {
	__be32 magic;
	__u8 version;
	__u8 flags;
	__u8 reserved[2];
	char name[];
};

/*
 * struct kvod_rdma_req.flags: for a live channel, SEND a
 * struct kvod_rdma_live_note per completed chunk (see below). A server
 * grants it only for a live channel, and says so with KVOD_RDMA_NOTIFY in
 * the reply's flags; for a movie the flag is ignored. Other bits are a
 * bad request.
 */
#define KVOD_RDMA_REQ_NOTIFY	0x1

/**
 * struct kvod_rdma_reply - accept or reject private data
 * @magic: KVOD_RDMA_MAGIC
 * @version: the server's KVOD_RDMA_VERSION
 * @status: enum kvod_rdma_status
 * @flags: KVOD_RDMA_LIVE for a live channel, KVOD_RDMA_NOTIFY if notes
 *	follow (accept only); else 0
 * @movie_size: bytes in the movie (accept only); for a live channel, of
 *	its mirror (below)
 * @table_addr: remote address of the segment table (accept only)
 * @table_rkey: its rkey (accept only)
 * @table_len: its length in bytes (accept only)
 * @nr_segments: table_len / sizeof(struct kvod_rdma_segment)
 * @reserved1: 0
 */
struct kvod_rdma_reply {
	__be32 magic;
	__u8 version;
	__u8 status;
	__be16 flags;
	__be64 movie_size;
	__be64 table_addr;
	__be32 table_rkey;
	__be32 table_len;
	__be32 nr_segments;
	__be32 reserved1;
};

/**
 * struct kvod_rdma_ready - the server's one message: memory is registered
 * @magic: KVOD_RDMA_MAGIC
 * @version: KVOD_RDMA_VERSION
 * @status: KVOD_RDMA_OK
 * @reserved: 0
 */
struct kvod_rdma_ready {
	__be32 magic;
	__u8 version;
	__u8 status;
	__be16 reserved;
};

/* STARTs a client may send over iWARP: the first and one resend. */
#define KVOD_RDMA_STARTS	2

/**
 * struct kvod_rdma_start - the client's one message, over iWARP only
 * @magic: KVOD_RDMA_MAGIC
 * @version: KVOD_RDMA_VERSION
 * @reserved: 0
 */
struct kvod_rdma_start {
	__be32 magic;
	__u8 version;
	__u8 reserved[3];
};

/**
 * struct kvod_rdma_segment - one entry of the segment table
 * @offset: movie offset of the segment's first byte
 * @addr: remote address of that byte
 * @length: bytes in the segment
 * @rkey: rkey to READ it with
 * @reserved: 0
 */
struct kvod_rdma_segment {
	__be64 offset;
	__be64 addr;
	__be64 length;
	__be32 rkey;
	__be32 reserved;
};

/*
 * Live channels. A channel created with KVOD_LIVE_RDMA (<linux/kvod.h>)
 * keeps a mirror of its ring for RDMA, and a connect that names it is
 * accepted with KVOD_RDMA_LIVE in the reply's flags. The "movie" of the
 * segment table is then the mirror: at offset 0 a struct
 * kvod_rdma_live_head, followed by nr_chunks struct kvod_rdma_live_slot;
 * at head.data_offset the nr_chunks slots, slot_bytes apart, slot I
 * holding chunk S when S % nr_chunks == I. The server writes into the
 * mirror and the client only READs it. To take chunk S (at most next_seq - 1) a client READs slot
 * entry S % nr_chunks; if its seq is S it READs the len bytes of the slot
 * and then the slot entry once more: the bytes are chunk S only if seq is
 * still S, for the server sets seq to KVOD_RDMA_LIVE_NONE before it
 * writes a slot and to the chunk's number after. Otherwise the ring has
 * moved past S: the client goes on at the newest chunk, next_seq - 1.
 * KVOD_RDMA_LIVE_ENDED in the head's flags says the channel was deleted:
 * no chunk follows.
 *
 * Each of a chunk's three READs must read the server's memory after the
 * one before it has. RDMA orders a QP's READ responses, not the responder's
 * reads of its memory: a READ may read memory before a READ posted ahead
 * of it on the QP has read all of its own. So the client posts each READ
 * only once the one before it completed (the slot's after the entry's,
 * which gives len; the entry's second READ after the slot's), or posts
 * it with IBV_SEND_FENCE, which holds it in the client's device until
 * every READ posted ahead of it on the QP completed (IBA 10.8.3.3): the
 * slot's READs and the entry's second READ may go out together, that one
 * fenced. An entry READ neither waited for nor fenced, or one on another
 * QP, may find seq still S while the bytes READ are not chunk S. Over
 * iWARP a READ cannot be fenced (siw serves neither a fenced READ nor a
 * READ posted after it; cxgb4 drops the flag from a READ), so there the
 * client waits for the completions.
 *
 * A client learns of new chunks in one of two ways. It may poll the head
 * (next_seq): the server then sends nothing per chunk. Or it asks for
 * notes (KVOD_RDMA_REQ_NOTIFY): after READY the server SENDs one
 * struct kvod_rdma_live_note per completed chunk, after the chunk is in
 * its slot, and one with KVOD_RDMA_LIVE_ENDED when the channel is
 * deleted. A note names the chunk, its slot and its length, so the
 * client READs the bytes and then the slot entry, which must still name
 * the chunk, as above: the note comes once the chunk is in its slot, so
 * READs posted after it arrived take the place of the first entry READ.
 * Notes are best effort: the server keeps at most KVOD_RDMA_NOTES of a
 * connection's notes unacknowledged and drops the ones beyond (a client
 * that receives slower than the channel runs learns of a later chunk
 * from a later note, or from the head). The
 * client keeps at least KVOD_RDMA_NOTES receives posted, of at least
 * sizeof(struct kvod_rdma_live_note) bytes, from before it connects
 * (READY takes the first one posted); over iWARP, which has no
 * receiver-not-ready retry, a note that finds no receive ends the
 * connection.
 */
#define KVOD_RDMA_LIVE		0x1	/* struct kvod_rdma_reply.flags */
#define KVOD_RDMA_NOTIFY	0x2	/* struct kvod_rdma_reply.flags */
#define KVOD_RDMA_LIVE_ENDED	0x1	/* head and note flags */
#define KVOD_RDMA_LIVE_NONE	(~(__u64)0)

/**
 * struct kvod_rdma_live_head - the head of a live channel's mirror
 * @magic: KVOD_RDMA_MAGIC
 * @flags: KVOD_RDMA_LIVE_ENDED
 * @chunk_size: the channel's chunk size in bytes
 * @nr_chunks: slots in the ring
 * @slot_bytes: distance between two slots
 * @data_offset: mirror offset of slot 0
 * @next_seq: chunks completed so far; the newest is next_seq - 1
 * @reserved: 0
 */
struct kvod_rdma_live_head {
	__be32 magic;
	__be32 flags;
	__be32 chunk_size;
	__be32 nr_chunks;
	__be64 slot_bytes;
	__be64 data_offset;
	__be64 next_seq;
	__be64 reserved[3];
};

/**
 * struct kvod_rdma_live_slot - what a slot of the mirror holds
 * @seq: the chunk, or KVOD_RDMA_LIVE_NONE while empty or being written
 * @len: its bytes, from the start of the slot
 * @reserved: 0
 */
struct kvod_rdma_live_slot {
	__be64 seq;
	__be32 len;
	__be32 reserved;
};

/* A connection's notes the server keeps in flight at most. */
#define KVOD_RDMA_NOTES		32

/**
 * struct kvod_rdma_live_note - a chunk is complete (KVOD_RDMA_NOTIFY)
 * @seq: the chunk; KVOD_RDMA_LIVE_NONE with KVOD_RDMA_LIVE_ENDED
 * @index: its slot, @seq % nr_chunks
 * @len: its bytes, from the start of the slot
 * @flags: KVOD_RDMA_LIVE_ENDED: the channel was deleted, no chunk follows
 * @reserved: 0
 */
struct kvod_rdma_live_note {
	__be64 seq;
	__be32 index;
	__be32 len;
	__be32 flags;
	__be32 reserved;
};

#endif /* _UAPI_LINUX_KVOD_RDMA_H */
