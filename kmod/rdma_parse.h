/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The RDMA connect request parser (rdma_parse.c). selftests/fuzz builds it
 * too, with tools/lib/kshim.h: it may use nothing of the module but name.h.
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
