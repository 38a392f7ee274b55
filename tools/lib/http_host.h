/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tools/lib/http_host: the Host header of an HTTP request, from the
 * host and port an http:// URL was split into. No output.
 */
#ifndef KVOD_LIB_HTTP_HOST_H
#define KVOD_LIB_HTTP_HOST_H

#include <stddef.h>

int kvod_http_host(char *buf, size_t len, const char *host, const char *port);

#endif /* KVOD_LIB_HTTP_HOST_H */
