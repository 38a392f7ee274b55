/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tools/lib: movie names as the module accepts them: 1 to 63 bytes of
 * [A-Za-z0-9._-], not "." or "..". Userspace needs the same rule where it
 * cannot ask the module (kvod-proxy and the HTTP parser it shares with the
 * module); lib/name.c builds the module's kmod/name.c.
 */
#ifndef KVOD_LIB_NAME_H
#define KVOD_LIB_NAME_H

#include <stdbool.h>

#include "../../kmod/name.h"

#endif /* KVOD_LIB_NAME_H */
