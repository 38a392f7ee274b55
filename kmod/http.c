// SPDX-License-Identifier: GPL-2.0
/*
 * HTTP/1.1 range server: not built in yet.
 */
#include "kvod.h"

const struct kvod_proto_ops *kvod_http_ops(void)
{
	return NULL;
}
