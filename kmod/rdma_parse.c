// SPDX-License-Identifier: GPL-2.0
/*
 * The private data of an RDMA connect request (<linux/kvod_rdma.h>). The
 * version is checked before the fields it lays out, so that a client of
 * another version gets KVOD_RDMA_BAD_VERSION.
 */
#include <linux/string.h>
#include <asm/byteorder.h>

#include "rdma_parse.h"

/**
 * kvod_rdma_parse_request() - check a connect request's private data
 * @data: the private data, NULL if there is none
 * @len: its length in bytes
 * @name: the movie's name, NUL-padded to KVOD_NAME_MAX, on KVOD_RDMA_OK
 * @flags: the request's flags, set once they passed their check
 *
 * The name must be NUL-terminated within @len bytes, and be a valid
 * movie name (kvod_name_valid()).
 *
 * Return: KVOD_RDMA_OK, or the status to reject the request with
 * (KVOD_RDMA_BAD_REQUEST or KVOD_RDMA_BAD_VERSION).
 */
u8 kvod_rdma_parse_request(const void *data, size_t len,
			   char name[KVOD_NAME_MAX], u8 *flags)
{
	const struct kvod_rdma_req *req = data;
	size_t room, n;

	if (!req || len < sizeof(*req) + 1)
		return KVOD_RDMA_BAD_REQUEST;
	if (be32_to_cpu(req->magic) != KVOD_RDMA_MAGIC)
		return KVOD_RDMA_BAD_REQUEST;
	if (req->version != KVOD_RDMA_VERSION)
		return KVOD_RDMA_BAD_VERSION;
	if (memchr_inv(req->reserved, 0, sizeof(req->reserved)) ||
	    (req->flags & ~KVOD_RDMA_REQ_NOTIFY))
		return KVOD_RDMA_BAD_REQUEST;
	*flags = req->flags;

	room = len - sizeof(*req);
	n = strnlen(req->name, room);
	if (n == room || n >= KVOD_NAME_MAX)
		return KVOD_RDMA_BAD_REQUEST;	/* not terminated */
	memcpy(name, req->name, n + 1);
	memset(name + n + 1, 0, KVOD_NAME_MAX - n - 1);
	return kvod_name_valid(name) ? KVOD_RDMA_OK : KVOD_RDMA_BAD_REQUEST;
}
