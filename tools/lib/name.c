// SPDX-License-Identifier: GPL-2.0
/*
 * The movie name rule of uapi/linux/kvod.h, for userspace; the module's
 * is kvod_name_valid() in kmod/catalog.c, and selftests/host/name_test.c
 * holds the cases both must agree on.
 */
#include "name.h"

#include <string.h>

bool kvod_name_valid(const char name[KVOD_NAME_MAX])
{
	size_t len = strnlen(name, KVOD_NAME_MAX);
	size_t i;

	if (len == 0 || len == KVOD_NAME_MAX)
		return false;
	if (!strcmp(name, ".") || !strcmp(name, ".."))
		return false;
	for (i = 0; i < len; i++) {
		char c = name[i];

		if (!(c >= 'a' && c <= 'z') && !(c >= 'A' && c <= 'Z') &&
		    !(c >= '0' && c <= '9') && c != '.' && c != '_' && c != '-')
			return false;
	}
	return true;
}
