/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The RDMA connect request parser's interface (rdma_parse.c). As with
 * http_parse.h, it needs nothing of the module but kvod_name_valid()
 * (name.h), so that userspace builds the same parser against
 * tools/lib/kshim.h: selftests/fuzz feeds it what a client may send.
 */
#ifndef _KVOD_RDMA_PARSE_H
#define _KVOD_RDMA_PARSE_H

#include <linux/types.h>

#include <linux/kvod.h>
#include <linux/kvod_rdma.h>

#include "name.h"

u8 kvod_rdma_parse_request(const void *data, size_t len,
			   char name[KVOD_NAME_MAX], u8 *flags);

#endif /* _KVOD_RDMA_PARSE_H */
