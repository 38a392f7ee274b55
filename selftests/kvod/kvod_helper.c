// SPDX-License-Identifier: GPL-2.0
/*
 * kvod_helper: the few ioctls the shell tests need, without depending on
 * tools/kvodctl (which has tests of its own). Not a test itself.
 *
 *   kvod_helper add NAME FILE	register FILE as NAME
 *   kvod_helper del NAME
 *   kvod_helper stats		movies zombies resident resident_max
 *
 * Exit 0 on success; 1 with one line on stderr on failure; 2 on misuse.
 */
#include "kvod_util.h"

static int fail(const char *what, const char *name, int err)
{
	fprintf(stderr, "kvod_helper: %s %s: %s\n", what, name, strerror(err));
	return 1;
}

int main(int argc, char **argv)
{
	struct kvod_stats st;
	int dev, fd, ret;

	if (argc < 2)
		goto usage;
	dev = open(KVOD_DEVICE, O_RDWR | O_CLOEXEC);
	if (dev < 0)
		return fail("open", KVOD_DEVICE, errno);
	if (!strcmp(argv[1], "add") && argc == 4) {
		fd = open(argv[3], O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return fail("open", argv[3], errno);
		ret = kvod_add(dev, argv[2], fd, 0);
		return ret ? fail("add", argv[2], ret) : 0;
	}
	if (!strcmp(argv[1], "del") && argc == 3) {
		ret = kvod_del(dev, argv[2]);
		return ret ? fail("del", argv[2], ret) : 0;
	}
	if (!strcmp(argv[1], "stats") && argc == 2) {
		ret = kvod_stats(dev, &st);
		if (ret)
			return fail("stats", "", ret);
		printf("%u %u %llu %llu\n", st.movies, st.zombies,
		       (unsigned long long)st.resident,
		       (unsigned long long)st.resident_max);
		return 0;
	}
usage:
	fprintf(stderr, "usage: kvod_helper add NAME FILE | del NAME | stats\n");
	return 2;
}
