/* SPDX-License-Identifier: GPL-2.0 */
/* What kvod's HTTP server and kvod-proxy answer alike (http_proto.c). */
#ifndef _KVOD_HTTP_PROTO_H
#define _KVOD_HTTP_PROTO_H

#include "http_parse.h"

const char *kvod_http_reason(u16 status);
const char *kvod_http_content_type(const char *name);
u16 kvod_http_resolve_range(const struct http_request *req, u64 length,
			    u64 *first, u64 *last);

#endif /* _KVOD_HTTP_PROTO_H */
