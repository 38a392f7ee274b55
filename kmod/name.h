/* SPDX-License-Identifier: GPL-2.0 */
/* Movie names (name.c), built into userspace too (tools/lib/name.c). */
#ifndef _KVOD_NAME_H
#define _KVOD_NAME_H

#include <linux/types.h>

#include <linux/kvod.h>

bool kvod_name_valid(const char name[KVOD_NAME_MAX]);

#endif /* _KVOD_NAME_H */
