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
 *     The server posts nothing more; the client disconnects when done.
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
	KVOD_RDMA_NOT_MOVIE	= 7,	/* a live channel: not served over
					 * RDMA by this version
					 */
};

/**
 * struct kvod_rdma_req - connect request private data
 * @magic: KVOD_RDMA_MAGIC
 * @version: KVOD_RDMA_VERSION
 * @reserved: must be 0
 * @name: the movie's name, NUL-terminated
 */
struct kvod_rdma_req {
	__be32 magic;
	__u8 version;
	__u8 reserved[3];
	char name[];
};

/**
 * struct kvod_rdma_reply - accept or reject private data
 * @magic: KVOD_RDMA_MAGIC
 * @version: the server's KVOD_RDMA_VERSION
 * @status: enum kvod_rdma_status
 * @reserved0: 0
 * @movie_size: bytes in the movie (accept only)
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
	__be16 reserved0;
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

#endif /* _UAPI_LINUX_KVOD_RDMA_H */
