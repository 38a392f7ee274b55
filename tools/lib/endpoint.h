/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tools/lib: network endpoints as kvod's ioctls take them (struct
 * kvod_sockaddr), read and written the same way by kvodctl's listen and
 * push. No output: callers print their own errors.
 */
#ifndef KVOD_LIB_ENDPOINT_H
#define KVOD_LIB_ENDPOINT_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/kvod.h>

/* Room for the longest text kvod_format_endpoint() writes, NUL included. */
#define KVOD_ENDPOINT_MAX	72

int kvod_parse_endpoint(const char *s, bool need_host,
			struct kvod_sockaddr *sa);
void kvod_format_endpoint(const struct kvod_sockaddr *sa, char *buf,
			  size_t size);

#endif /* KVOD_LIB_ENDPOINT_H */
