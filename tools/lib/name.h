/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tools/lib: movie names as the module accepts them (kvod_name_valid() in
 * kmod/catalog.c): 1 to 63 bytes of [A-Za-z0-9._-], not "." or "..".
 * Userspace needs the same rule where it cannot ask the module: kvod-proxy
 * and the HTTP parser it shares with the module.
 */
#ifndef KVOD_LIB_NAME_H
#define KVOD_LIB_NAME_H

#include <stdbool.h>
#include <linux/kvod.h>

bool kvod_name_valid(const char name[KVOD_NAME_MAX]);

#endif /* KVOD_LIB_NAME_H */
