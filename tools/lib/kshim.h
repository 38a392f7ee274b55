/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tools/lib/kshim.h: what kmod/http_parse.c, kmod/http_proto.c,
 * kmod/rdma_parse.c and kmod/name.c take from the kernel, so that
 * kvod-proxy runs the module's own HTTP request parser, answers and name
 * rule, and selftests/fuzz fuzzes the module's parsers in userspace.
 * tools/Makefile builds lib/http_parse.o from ../kmod/http_parse.c with
 * "-include lib/kshim.h": the parser's #includes (<linux/kernel.h>,
 * <linux/limits.h>, <linux/string.h>, <linux/types.h>, <asm/byteorder.h>,
 * <linux/kvod.h>) are then the uapi headers of those names, and this file
 * adds the kernel's integer types, be32_to_cpu(), ARRAY_SIZE() and
 * memchr_inv(). kvod_name_valid(), which the parsers call, is kmod/name.c
 * built the same way (lib/name.c).
 */
#ifndef KVOD_LIB_KSHIM_H
#define KVOD_LIB_KSHIM_H

#include <endian.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;

#define U64_MAX		UINT64_MAX

#define be32_to_cpu(x)	be32toh(x)

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* The first byte of the @n at @p that is not @c, NULL if all are. */
static inline void *memchr_inv(const void *p, int c, size_t n)
{
	const unsigned char *s = p;

	for (; n; n--, s++) {
		if (*s != (unsigned char)c)
			return (void *)s;
	}
	return NULL;
}

#endif /* KVOD_LIB_KSHIM_H */
