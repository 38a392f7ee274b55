/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Movie names (name.c): one rule, compiled into the module and, from the
 * same file, into userspace (tools/lib/name.c, against tools/lib/kshim.h)
 * for kvod-proxy, the HTTP parser it shares with the module, and the host
 * tests.
 */
#ifndef _KVOD_NAME_H
#define _KVOD_NAME_H

#include <linux/types.h>

#include <linux/kvod.h>

bool kvod_name_valid(const char name[KVOD_NAME_MAX]);

#endif /* _KVOD_NAME_H */
