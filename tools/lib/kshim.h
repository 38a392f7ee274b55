/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tools/lib/kshim.h: what kmod/http_parse.c and kmod/name.c take from the
 * kernel, so that kvod-proxy runs the module's own HTTP request parser
 * and name rule. tools/Makefile
 * builds lib/http_parse.o from ../kmod/http_parse.c with "-include
 * lib/kshim.h": the parser's #includes (<linux/kernel.h>, <linux/limits.h>,
 * <linux/string.h>, <linux/types.h>, <linux/kvod.h>) are then the uapi
 * headers of those names, and this file adds the kernel's integer types.
 * kvod_name_valid(), which the parser calls, is kmod/name.c built the
 * same way (lib/name.c).
 */
#ifndef KVOD_LIB_KSHIM_H
#define KVOD_LIB_KSHIM_H

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

#endif /* KVOD_LIB_KSHIM_H */
