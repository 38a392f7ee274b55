// SPDX-License-Identifier: GPL-2.0
/* The movie name rule of uapi/linux/kvod.h; userspace builds this too. */
#include <linux/string.h>

#include "name.h"

/**
 * kvod_name_valid() - check a movie name from userspace
 * @name: a KVOD_NAME_MAX-byte field
 *
 * Return: true for 1..63 bytes of [A-Za-z0-9._-] followed by a NUL, other
 * than "." and "..", which would read as path components in a URL.
 */
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

		/* Not isalnum(): the kernel's ctype knows Latin-1 letters. */
		if (!(c >= 'a' && c <= 'z') && !(c >= 'A' && c <= 'Z') &&
		    !(c >= '0' && c <= '9') && c != '.' && c != '_' && c != '-')
			return false;
	}
	return true;
}
