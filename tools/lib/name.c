// SPDX-License-Identifier: GPL-2.0
/*
 * kvod_name_valid() for userspace: the module's own kmod/name.c, built
 * against kshim.h (the kernel types it uses).
 */
#include "kshim.h"

#include "../../kmod/name.c"
