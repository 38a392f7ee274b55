// SPDX-License-Identifier: GPL-2.0
/*
 * RDMA READ server: not built in yet.
 */
#include "kvod.h"

const struct kvod_proto_ops *kvod_rdma_ops(void)
{
	return NULL;
}
