/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * kvod: in-kernel video-on-demand server, userspace ABI.
 *
 * Everything is driven through ioctls on /dev/kvod (a misc device, mode
 * 0600). Queries are open to anyone who can open the device; changes need
 * CAP_NET_ADMIN in the initial user namespace, both in the caller and in
 * the credentials that opened the file.
 *
 * Rules every command follows:
 *  - Every argument struct starts with a __u32 @size (set it to sizeof the
 *    struct you were compiled against) and a __u32 @flags. Commands are
 *    matched on type, number and direction; the size bits of the command
 *    are ignored in favour of @size. The kernel accepts any @size from the
 *    command's first published size (KVOD_*_SIZE_VER0) up to a page; bytes
 *    past what it knows must be zero (else -E2BIG), bytes it knows but you
 *    did not pass read as zero, and it writes back at most @size bytes.
 *    This lets the ABI grow without new command numbers.
 *  - Unknown bits in @flags and non-zero reserved fields: -EINVAL.
 *  - Output-only fields are ignored on input, so a struct can be reused.
 *  - Unknown commands: -ENOTTY.
 *  - Names are NUL-terminated within their 64-byte field, 1..63 bytes
 *    of [A-Za-z0-9._-], and neither "." nor "..": -EINVAL otherwise.
 *  - All integers are in host byte order; all fields are naturally aligned
 *    with explicit padding, so the layout is the same for 32- and 64-bit
 *    callers (no compat_ioctl translation is needed).
 */
#ifndef _UAPI_LINUX_KVOD_H
#define _UAPI_LINUX_KVOD_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define KVOD_DEVICE		"/dev/kvod"
#define KVOD_NAME_MAX		64	/* bytes, including the NUL */

/* ioctl type byte; unused in Documentation/userspace-api/ioctl/ioctl-number.rst */
#define KVOD_IOC_MAGIC		0xC6

/**
 * struct kvod_movie_add - register a movie (KVOD_IOC_MOVIE_ADD)
 * @size: sizeof(struct kvod_movie_add)
 * @flags: KVOD_ADD_PIN, or 0
 * @fd: an open, readable file descriptor of a regular, non-empty file
 * @reserved0: must be 0
 * @bitrate: nominal bit rate in bits/s, 0 if unknown
 * @name: the movie's name, unique in the catalog
 * @reserved: must be 0
 *
 * The whole file is read once into memory the module holds (in physically
 * contiguous chunks of up to 2 MiB) and is never read again. The file may be
 * closed or changed afterwards without effect on the movie. KVOD_ADD_PIN
 * asks for exactly this, and it is what every ADD does, except while the
 * test knob add_lazy is set (Documentation/kvod.rst, "Titles in the page
 * cache"): an ADD without KVOD_ADD_PIN of a file whose filesystem reads
 * through the page cache (ext4, xfs; not tmpfs) then reads nothing. The
 * module keeps the file open instead and serves HTTP and push from the
 * page cache; the movie's @length is the file's size at ADD.
 *
 * Errors: EBADF (fd not open or not readable), EINVAL (not a regular file,
 * empty, bad name, bad flags), EEXIST (name taken), ENOSPC (over the
 * resident-bytes cap, module parameter max_resident_mb), ENOMEM, EFBIG
 * (file larger than the ABI allows), EIO (the file shrank while read),
 * EINTR (a fatal signal during the read: the caller dies before it could
 * see it), EPERM.
 */
struct kvod_movie_add {
	__u32 size;
	__u32 flags;
	__s32 fd;
	__u32 reserved0;
	__u64 bitrate;
	char name[KVOD_NAME_MAX];
	__u64 reserved[4];
};

#define KVOD_MOVIE_ADD_SIZE_VER0	120

/* struct kvod_movie_add.flags */
#define KVOD_ADD_PIN		0x1U	/* read the whole file into memory now */
#define KVOD_ADD_FLAGS		KVOD_ADD_PIN

/**
 * struct kvod_movie_ref - name a movie (KVOD_IOC_MOVIE_DEL)
 * @size: sizeof(struct kvod_movie_ref)
 * @flags: must be 0
 * @name: the movie's name
 * @reserved: must be 0
 *
 * DEL removes the name at once: the next lookup fails with ENOENT and the
 * name may be registered again. The memory stays until the last reader
 * (an HTTP download, an RDMA connection, a push) lets go of it.
 * DEL of a live channel also ends it: its readers see the end of the
 * stream and its writer's next write() fails with EPIPE.
 */
struct kvod_movie_ref {
	__u32 size;
	__u32 flags;
	char name[KVOD_NAME_MAX];
	__u64 reserved[2];
};

#define KVOD_MOVIE_REF_SIZE_VER0	88

/**
 * struct kvod_movie_info - one movie's state (KVOD_IOC_MOVIE_INFO, LIST)
 * @size: sizeof(struct kvod_movie_info)
 * @flags: must be 0 on input; 0 on output (reserved)
 * @name: in: the movie to query (INFO); out: its name
 * @length: the movie's size in bytes
 * @bitrate: nominal bit rate in bits/s (0 if unknown)
 * @resident: bytes of memory holding it (length rounded up to chunks)
 * @chunks: number of physically contiguous chunks
 * @active_clients: readers currently attached (HTTP, RDMA, push)
 * @bytes_served: bytes handed to clients since registration
 * @kind: KVOD_KIND_MOVIE or KVOD_KIND_LIVE
 * @live_opts: a live channel's KVOD_LIVE_* options, KVOD_LIVE_WRITER
 *	added while it has a writer
 * @live_chunk_size: a live channel's chunk size in bytes
 * @live_reserved: zero on output
 * @live_seq: chunks completed so far; the newest complete chunk is
 *	@live_seq - 1
 * @live_overruns: chunks that readers skipped because the ring had
 *	overwritten them before they were sent
 * @live_swaps: ring pages the writer replaced with fresh ones rather than
 *	overwrite them, because a reader still held them (a slow reader's
 *	TCP send queue, a push between packets); since KVOD_MOVIE_INFO_SIZE_VER1
 *
 * A live channel (KVOD_IOC_LIVE_CREATE) is listed with the movies. For it
 * @length is the bytes written into it so far, @chunks the chunks in its
 * ring and @resident the ring's memory.
 */
struct kvod_movie_info {
	__u32 size;
	__u32 flags;
	char name[KVOD_NAME_MAX];
	__u64 length;
	__u64 bitrate;
	__u64 resident;
	__u32 chunks;
	__u32 active_clients;
	__u64 bytes_served;
	__u32 kind;
	__u32 live_opts;
	__u32 live_chunk_size;
	__u32 live_reserved;
	__u64 live_seq;
	__u64 live_overruns;
	__u64 live_swaps;
};

#define KVOD_KIND_MOVIE		0
#define KVOD_KIND_LIVE		1

#define KVOD_MOVIE_INFO_SIZE_VER0	144
#define KVOD_MOVIE_INFO_SIZE_VER1	152	/* @live_swaps */

/**
 * struct kvod_movie_list - list the catalog (KVOD_IOC_MOVIE_LIST)
 * @size: sizeof(struct kvod_movie_list)
 * @flags: must be 0
 * @count: in: room in @entries (may be 0); out: movies in the catalog
 * @entry_size: sizeof(struct kvod_movie_info) as the caller knows it;
 *	at least KVOD_MOVIE_INFO_SIZE_VER0
 * @entries: user pointer to an array of @count entries
 * @filled: out: entries written, min(room, movies), in name order
 * @reserved0: must be 0
 * @reserved: must be 0
 *
 * If @count on return is larger than @filled, the array was too small;
 * call again with more room. The list is a consistent snapshot.
 */
struct kvod_movie_list {
	__u32 size;
	__u32 flags;
	__u32 count;
	__u32 entry_size;
	__u64 entries;
	__u32 filled;
	__u32 reserved0;
	__u64 reserved[2];
};

#define KVOD_MOVIE_LIST_SIZE_VER0	48

/**
 * struct kvod_stats - module-wide counters (KVOD_IOC_STATS)
 * @size: sizeof(struct kvod_stats)
 * @flags: must be 0
 * @movies: movies in the catalog
 * @zombies: deleted movies still held by readers
 * @resident: bytes of movie memory held (catalog and zombies)
 * @resident_max: the cap on @resident (module parameter max_resident_mb)
 * @rdma_maps: movies DMA-mapped for RDMA, one per movie and device, each
 *	shared by the connections to the movie on the device
 * @rdma_map_bytes: bytes of those mappings' scatterlists and bookkeeping
 * @rdma_conn_bytes: bytes the RDMA connections keep of their own for
 *	their registrations (MR pointers and segment tables; not what the
 *	device keeps per MR)
 * @reserved: zero on output
 * @mem: bytes kvod holds, the sum of @resident, @graveyard,
 *	@rdma_map_bytes and @rdma_conn_bytes; since KVOD_STATS_SIZE_VER1
 * @graveyard: bytes of pages no longer part of a movie or ring that TCP,
 *	a queued packet or a reader between chunks still references, until
 *	they are freed; since KVOD_STATS_SIZE_VER1
 * @rdma_mr_pages: pages the RDMA connections' MRs hold, each an entry in
 *	the device's page list for the MR; since KVOD_STATS_SIZE_VER1
 */
struct kvod_stats {
	__u32 size;
	__u32 flags;
	__u32 movies;
	__u32 zombies;
	__u64 resident;
	__u64 resident_max;
	__u64 rdma_maps;
	__u64 rdma_map_bytes;
	__u64 rdma_conn_bytes;
	__u64 reserved[5];
	__u64 mem;
	__u64 graveyard;
	__u64 rdma_mr_pages;
};

#define KVOD_STATS_SIZE_VER0		96
#define KVOD_STATS_SIZE_VER1		120	/* @mem, @graveyard, @rdma_mr_pages */

/* Serving protocols. */
#define KVOD_PROTO_HTTP		1	/* HTTP/1.1 range server over TCP */
#define KVOD_PROTO_RDMA		2	/* client-driven RDMA READ (rdma_cm) */

/**
 * struct kvod_sockaddr - an IPv4 or IPv6 address and port
 * @family: AF_INET or AF_INET6
 * @port: port, host byte order; 1..65535
 * @scope_id: IPv6 scope (interface index) for link-local addresses, else 0
 * @addr: the address in network byte order; IPv4 uses the first 4 bytes
 *	and the rest must be 0. All zeroes is the wildcard address.
 */
struct kvod_sockaddr {
	__u16 family;
	__u16 port;
	__u32 scope_id;
	__u8 addr[16];
};

/**
 * struct kvod_listen - start or stop a listener (KVOD_IOC_LISTEN, UNLISTEN)
 * @size: sizeof(struct kvod_listen)
 * @flags: must be 0
 * @proto: KVOD_PROTO_*
 * @reserved0: must be 0
 * @addr: where to listen
 * @reserved: must be 0
 *
 * A listener lives in the network namespace of the caller of LISTEN and
 * goes away with UNLISTEN from that namespace, with the namespace, or with
 * the module. UNLISTEN closes the listener's connections.
 *
 * Errors: EINVAL (bad proto, family, port or address), EADDRINUSE (a
 * listener of that proto on that address exists, or the port is taken),
 * EADDRNOTAVAIL (no such local address; RDMA: also a loopback address,
 * which rdma_cm would take for the wildcard), ENODEV (HTTP: a link-local
 * address's scope_id names no interface), ENOENT (UNLISTEN: no such
 * listener), EOPNOTSUPP (RDMA outside the initial network namespace),
 * EPERM.
 */
struct kvod_listen {
	__u32 size;
	__u32 flags;
	__u32 proto;
	__u32 reserved0;
	struct kvod_sockaddr addr;
	__u64 reserved[4];
};

#define KVOD_LISTEN_SIZE_VER0		72

/* Per-listener counters; which ones a protocol fills is listed per index. */
enum kvod_listener_counter {
	KVOD_LC_ACCEPTED,	/* connections accepted (all) */
	KVOD_LC_ACTIVE,		/* connections open now (all) */
	KVOD_LC_REFUSED,	/* connections refused: limits (all) */
	KVOD_LC_BYTES,		/* movie bytes served or made readable (all) */
	KVOD_LC_HTTP_200,	/* responses by status (HTTP) */
	KVOD_LC_HTTP_206,
	KVOD_LC_HTTP_400,
	KVOD_LC_HTTP_404,
	KVOD_LC_HTTP_405,
	KVOD_LC_HTTP_408,	/* header deadline expired */
	KVOD_LC_HTTP_416,
	KVOD_LC_HTTP_431,
	KVOD_LC_HTTP_503,
	KVOD_LC_HTTP_505,
	KVOD_LC_TIMEOUTS,	/* connections cut by a deadline (HTTP) */
	KVOD_LC_REJ_NOT_FOUND,	/* rejects by reason (RDMA) */
	KVOD_LC_REJ_BUSY,
	KVOD_LC_REJ_VERSION,
	KVOD_LC_REJ_BAD_REQUEST,
	KVOD_LC_DEVICES,	/* RDMA devices the listener is bound on (RDMA) */
	KVOD_LC_NOTES,		/* live chunk notes sent (RDMA) */
	KVOD_LC_NOTES_DROPPED,	/* notes not sent: buffers busy, chunk gone (RDMA) */
	KVOD_LC_PEERS_LOST,	/* closed: a keep-alive failed or went unanswered (RDMA) */
	KVOD_LC_NR,
};

#define KVOD_LISTENER_COUNTERS	32

/**
 * struct kvod_listener_info - one listener (KVOD_IOC_LISTENER_LIST)
 * @size: sizeof(struct kvod_listener_info)
 * @flags: 0
 * @proto: KVOD_PROTO_*
 * @netns: inode number of the listener's network namespace
 * @addr: where it listens
 * @counters: indexed by enum kvod_listener_counter; the rest are 0
 */
struct kvod_listener_info {
	__u32 size;
	__u32 flags;
	__u32 proto;
	__u32 netns;
	struct kvod_sockaddr addr;
	__u64 counters[KVOD_LISTENER_COUNTERS];
};

#define KVOD_LISTENER_INFO_SIZE_VER0	296

/*
 * KVOD_IOC_LISTENER_LIST takes a struct kvod_movie_list, with the same
 * rules, whose entries are struct kvod_listener_info (@entry_size at least
 * KVOD_LISTENER_INFO_SIZE_VER0), in the order the listeners were created,
 * across every network namespace.
 */

/*
 * The RDMA wire protocol (what a client and kvod exchange over rdma_cm) is
 * not an ioctl: it is in <linux/kvod_rdma.h>.
 */

/*
 * Paced push: the kernel sends a movie as RTP over UDP (RFC 2250: MPEG-TS,
 * payload type 33, 7 TS packets of 188 bytes per RTP packet) at a constant
 * rate, each packet stamped with its departure time as SO_TXTIME does, so
 * that a time-based qdisc (tsock, sch_fq, sch_etf) releases it on time.
 * kvod hands packets to the socket up to @window_ms ahead of their time
 * and sleeps in between; it never busy-waits. Documentation/tsock.rst.
 */
#define KVOD_PUSH_LOOP		0x1U	/* start over at the end */
#define KVOD_PUSH_TAI		0x2U	/* stamp in CLOCK_TAI, not MONOTONIC */
#define KVOD_PUSH_OPTS		(KVOD_PUSH_LOOP | KVOD_PUSH_TAI)

/**
 * struct kvod_push_start - start a push (KVOD_IOC_PUSH_START)
 * @size: sizeof(struct kvod_push_start)
 * @flags: must be 0
 * @id: out: the push's id, never 0, never one of a running push; ids are
 *	not reused until 2^32 more pushes have started
 * @opts: KVOD_PUSH_*; unknown bits: EINVAL
 * @rate: payload bits/s (MPEG-TS bytes, without RTP/UDP/IP headers);
 *	0 takes the movie's bitrate. 10000 .. 10000000000.
 * @window_ms: how far ahead of their time packets are handed to the
 *	socket, 1 .. 2000; 0 means 50. Keep it below the qdisc's horizon.
 *	The push sleeps a tick at least: a window under two ticks hands
 *	packets over late.
 * @reserved0: must be 0
 * @dst: where to send; a unicast or multicast address, not the wildcard
 * @name: the movie
 * @reserved: must be 0
 *
 * The push sends from a kernel UDP socket in the network namespace of the
 * caller and lives until its last packet left (without KVOD_PUSH_LOOP),
 * until KVOD_IOC_PUSH_STOP, until its namespace goes away, or until the
 * module is unloaded. It holds the movie: a movie deleted meanwhile is
 * sent to its end, and a looping push of a deleted movie ends there too.
 * A movie whose length is not a multiple of 188 bytes loses its tail.
 *
 * A push of a live channel (KVOD_LIVE_TS only, never KVOD_PUSH_LOOP)
 * sends each chunk once it is complete, from the newest complete one
 * on; it waits while there is none, and ends when the channel is
 * deleted. One slower than the channel's writer skips to the newest
 * chunk when the ring has overwritten the next one (live_overruns).
 *
 * Errors: EINVAL (bad opts, rate, window, address or name; rate 0 for a
 * movie whose bitrate is not in that range; a live channel that is not
 * MPEG-TS, or KVOD_PUSH_LOOP for one), ENOENT (no such movie),
 * ENOSPC (too many pushes), ENETUNREACH and the like from connecting the
 * socket, EPERM, EFAULT (the id could not be written back: the push was
 * stopped again, so no push runs that its caller cannot name).
 */
struct kvod_push_start {
	__u32 size;
	__u32 flags;
	__u32 id;
	__u32 opts;
	__u64 rate;
	__u32 window_ms;
	__u32 reserved0;
	struct kvod_sockaddr dst;
	char name[KVOD_NAME_MAX];
	__u64 reserved[4];
};

#define KVOD_PUSH_START_SIZE_VER0	152

/**
 * struct kvod_push_ref - name a push (KVOD_IOC_PUSH_STOP)
 * @size: sizeof(struct kvod_push_ref)
 * @flags: must be 0
 * @id: the push, as PUSH_START returned it
 * @reserved0: must be 0
 * @reserved: must be 0
 *
 * Stops the push at once; packets already queued below the socket still
 * leave. Errors: ENOENT (no such push, or it ended), EINVAL, EPERM.
 */
struct kvod_push_ref {
	__u32 size;
	__u32 flags;
	__u32 id;
	__u32 reserved0;
	__u64 reserved[2];
};

#define KVOD_PUSH_REF_SIZE_VER0		32

/**
 * struct kvod_push_info - one push (KVOD_IOC_PUSH_LIST)
 * @size: sizeof(struct kvod_push_info)
 * @flags: 0
 * @id: the push's id
 * @opts: KVOD_PUSH_* as started
 * @rate: payload bits/s in use
 * @window_ms: in use
 * @netns: inode number of the push's network namespace
 * @dst: where it sends
 * @name: the movie
 * @packets: RTP packets handed to the socket
 * @bytes: movie bytes in them
 * @loops: times the movie started over
 * @late: packets that were already due when handed over (kvod fell behind)
 * @errors: packets skipped: the socket refused them, or the qdisc still
 *	dropped them once they were a window late (its drops are retried
 *	until then)
 * @icmp_errors: ICMP errors received for the destination, from it (a port
 *	unreachable while nobody listens there) or from a router on the
 *	way; the packet sent while one arrived is sent again. 0 from a
 *	kernel that did not count them
 * @reserved: 0
 *
 * KVOD_IOC_PUSH_LIST takes a struct kvod_movie_list, with the same rules,
 * whose entries are struct kvod_push_info (@entry_size at least
 * KVOD_PUSH_INFO_SIZE_VER0), in id order, across every namespace.
 */
struct kvod_push_info {
	__u32 size;
	__u32 flags;
	__u32 id;
	__u32 opts;
	__u64 rate;
	__u32 window_ms;
	__u32 netns;
	struct kvod_sockaddr dst;
	char name[KVOD_NAME_MAX];
	__u64 packets;
	__u64 bytes;
	__u64 loops;
	__u64 late;
	__u64 errors;
	__u64 icmp_errors;
	__u64 reserved[3];
};

#define KVOD_PUSH_INFO_SIZE_VER0	192

/*
 * Live channels. A live channel shares the movies' name space and is
 * deleted like a movie (KVOD_IOC_MOVIE_DEL), but has no file: it is a ring
 * of @nr_chunks chunks of @chunk_size bytes, resident from its creation,
 * that one writer at a time fills through an fd (KVOD_IOC_LIVE_FEED).
 * Chunks are completed in order and numbered from 0; chunk S lives in ring
 * slot S % nr_chunks until chunk S + nr_chunks overwrites it. Readers start
 * at the newest complete chunk. Documentation/live.rst.
 */
#define KVOD_LIVE_TS		0x1U	/* MPEG-TS: chunks of whole 188-byte packets */
#define KVOD_LIVE_RDMA		0x2U	/* keep a mirror of the ring for RDMA */
#define KVOD_LIVE_OPTS		(KVOD_LIVE_TS | KVOD_LIVE_RDMA)
#define KVOD_LIVE_WRITER	0x80000000U	/* info only: a writer is attached */

#define KVOD_LIVE_CHUNK_MAX	(2U << 20)	/* bytes */
#define KVOD_LIVE_CHUNKS_MIN	2
#define KVOD_LIVE_CHUNKS_MAX	65536

/**
 * struct kvod_live_create - create a live channel (KVOD_IOC_LIVE_CREATE)
 * @size: sizeof(struct kvod_live_create)
 * @flags: must be 0
 * @opts: KVOD_LIVE_*; unknown bits: EINVAL
 * @chunk_size: bytes per chunk, 188 .. KVOD_LIVE_CHUNK_MAX; with
 *	KVOD_LIVE_TS a multiple of 188
 * @nr_chunks: chunks in the ring, KVOD_LIVE_CHUNKS_MIN ..
 *	KVOD_LIVE_CHUNKS_MAX
 * @reserved0: must be 0
 * @bitrate: nominal bit rate in bits/s, 0 if unknown
 * @name: the channel's name, unique among movies and channels
 * @reserved: must be 0
 *
 * Each chunk is one physically contiguous allocation of @chunk_size
 * rounded up to a power-of-two number of pages; the ring counts against
 * the resident cap like a movie. KVOD_LIVE_RDMA adds a second ring of
 * the same size and a page or more of slot descriptors, which RDMA
 * clients READ (<linux/kvod_rdma.h>); the writer copies each chunk into
 * it once. Without it, RDMA clients are rejected (KVOD_RDMA_NOT_MOVIE).
 *
 * Errors: EINVAL (bad opts, sizes or name), EEXIST (name taken), ENOSPC
 * (over the resident cap), ENOMEM, EPERM.
 */
struct kvod_live_create {
	__u32 size;
	__u32 flags;
	__u32 opts;
	__u32 chunk_size;
	__u32 nr_chunks;
	__u32 reserved0;
	__u64 bitrate;
	char name[KVOD_NAME_MAX];
	__u64 reserved[4];
};

#define KVOD_LIVE_CREATE_SIZE_VER0	128

/**
 * struct kvod_live_feed - become a channel's writer (KVOD_IOC_LIVE_FEED)
 * @size: sizeof(struct kvod_live_feed)
 * @flags: must be 0
 * @fd: out: a new write-only file descriptor (close-on-exec)
 * @reserved0: must be 0
 * @name: the channel
 * @reserved: must be 0
 *
 * write() on @fd appends to the channel and never waits for a reader: a
 * chunk is complete, and readers see it, when its last byte is written;
 * a slow reader never holds the writer up (see Documentation/live.rst). A write
 * after the channel was deleted fails with EPIPE. Closing @fd completes a
 * partly written chunk (with KVOD_LIVE_TS, its whole packets only) and
 * leaves the channel without a writer; readers wait for the next one.
 *
 * Errors: ENOENT (no such channel), EINVAL (bad name, or a movie rather
 * than a channel), EBUSY (the channel has a writer), EMFILE, ENOMEM,
 * EPERM.
 */
struct kvod_live_feed {
	__u32 size;
	__u32 flags;
	__s32 fd;
	__u32 reserved0;
	char name[KVOD_NAME_MAX];
	__u64 reserved[2];
};

#define KVOD_LIVE_FEED_SIZE_VER0	96

#define KVOD_IOC_MOVIE_ADD	_IOW(KVOD_IOC_MAGIC, 0x01, struct kvod_movie_add)
#define KVOD_IOC_MOVIE_DEL	_IOW(KVOD_IOC_MAGIC, 0x02, struct kvod_movie_ref)
#define KVOD_IOC_MOVIE_INFO	_IOWR(KVOD_IOC_MAGIC, 0x03, struct kvod_movie_info)
#define KVOD_IOC_MOVIE_LIST	_IOWR(KVOD_IOC_MAGIC, 0x04, struct kvod_movie_list)
#define KVOD_IOC_STATS		_IOWR(KVOD_IOC_MAGIC, 0x05, struct kvod_stats)
#define KVOD_IOC_LISTEN		_IOW(KVOD_IOC_MAGIC, 0x10, struct kvod_listen)
#define KVOD_IOC_UNLISTEN	_IOW(KVOD_IOC_MAGIC, 0x11, struct kvod_listen)
#define KVOD_IOC_LISTENER_LIST	_IOWR(KVOD_IOC_MAGIC, 0x12, struct kvod_movie_list)
#define KVOD_IOC_PUSH_START	_IOWR(KVOD_IOC_MAGIC, 0x20, struct kvod_push_start)
#define KVOD_IOC_PUSH_STOP	_IOW(KVOD_IOC_MAGIC, 0x21, struct kvod_push_ref)
#define KVOD_IOC_PUSH_LIST	_IOWR(KVOD_IOC_MAGIC, 0x22, struct kvod_movie_list)
#define KVOD_IOC_LIVE_CREATE	_IOW(KVOD_IOC_MAGIC, 0x30, struct kvod_live_create)
#define KVOD_IOC_LIVE_FEED	_IOWR(KVOD_IOC_MAGIC, 0x31, struct kvod_live_feed)

#endif /* _UAPI_LINUX_KVOD_H */
