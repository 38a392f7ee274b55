// SPDX-License-Identifier: GPL-2.0
/*
 * The module as a whole: the resident cap (max_resident_mb: ENOSPC at
 * the cap, lowering it evicts nothing), and loading and unloading with
 * its parameters and with movies registered. catalog_lib.h says how the
 * program runs.
 */
#include "catalog_lib.h"

/* ------------------------------------------------------------------ */
/* The resident cap. The teardown reloads the module: a clean default.  */

FIXTURE(cap) {
	int dev;
};

FIXTURE_SETUP(cap)
{
	if (getenv("KVOD_NO_LOAD"))
		SKIP(return, "KVOD_NO_LOAD: will not reload the module");
	self->dev = open(KVOD_DEVICE, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->dev);
	ASSERT_EQ(0, kvod_catalog_clear(self->dev));
}

FIXTURE_TEARDOWN(cap)
{
	if (self->dev >= 0)
		close(self->dev);
	EXPECT_EQ(0, module_reload_default());
}

static void cap_set_mb(struct __test_metadata *_metadata, int dev,
		       unsigned int mb)
{
	struct kvod_stats st;
	unsigned long long now;
	char val[16];

	snprintf(val, sizeof(val), "%u", mb);
	ASSERT_EQ(0, kvod_write_file(KVOD_PARAM_CAP, val));
	ASSERT_EQ(0, read_param(&now));
	EXPECT_EQ(mb, now);
	ASSERT_EQ(0, kvod_stats(dev, &st));
	ASSERT_EQ((__u64)mb << 20, st.resident_max);
}

TEST_F(cap, sysfs_param_mode)
{
	struct stat st;

	ASSERT_EQ(0, stat(KVOD_PARAM_CAP, &st));
	EXPECT_TRUE(!!(st.st_mode & S_IWUSR));
	EXPECT_FALSE(!!(st.st_mode & (S_IWGRP | S_IWOTH)));
}

TEST_F(cap, enospc_exact_fill)
{
	struct kvod_movie_info mi;
	struct snap before;
	int full = kvod_make_file(4 * MiB, 1);
	int one = kvod_make_file(1, 2);

	ASSERT_LE(0, full);
	ASSERT_LE(0, one);
	cap_set_mb(_metadata, self->dev, 4);
	/* Exactly at the cap is allowed ... */
	ASSERT_EQ(0, kvod_add(self->dev, "full", full, 0));
	ASSERT_EQ(0, kvod_info(self->dev, "full", &mi));
	EXPECT_EQ(4 * MiB, mi.resident);
	ASSERT_EQ(0, snap_take(self->dev, &before));
	EXPECT_EQ(4 * MiB, before.st.resident);
	/* ... one more page is not. */
	expect_rejected(_metadata, self->dev, &before, ENOSPC,
			kvod_add(self->dev, "over", one, 0), "over");
	ASSERT_EQ(0, kvod_del(self->dev, "full"));
	EXPECT_EQ(0, kvod_add(self->dev, "over", one, 0));
	close(full);
	close(one);
}

TEST_F(cap, enospc_big_file)
{
	struct snap before;
	int fd = kvod_make_file(8 * MiB + 1, 3);

	ASSERT_LE(0, fd);
	cap_set_mb(_metadata, self->dev, 8);
	add_keep(_metadata, self->dev);
	ASSERT_EQ(0, snap_take(self->dev, &before));
	expect_rejected(_metadata, self->dev, &before, ENOSPC,
			kvod_add(self->dev, "huge", fd, 0), "huge");
	close(fd);
}

TEST_F(cap, lowered_below_usage_evicts_nothing)
{
	struct kvod_movie_info mi0, mi1;
	struct snap before, after;
	int big = kvod_make_file(6 * MiB, 4);
	int small = kvod_make_file(MiB, 5);

	ASSERT_LE(0, big);
	ASSERT_LE(0, small);
	cap_set_mb(_metadata, self->dev, 8);
	ASSERT_EQ(0, kvod_add(self->dev, "big", big, 0));
	ASSERT_EQ(0, kvod_info(self->dev, "big", &mi0));
	ASSERT_EQ(0, snap_take(self->dev, &before));
	cap_set_mb(_metadata, self->dev, 2);
	/* Only resident_max moved. */
	ASSERT_EQ(0, snap_take(self->dev, &after));
	EXPECT_EQ(before.st.movies, after.st.movies);
	EXPECT_EQ(before.st.resident, after.st.resident);
	EXPECT_EQ(2 * MiB, after.st.resident_max);
	EXPECT_EQ(0, memcmp(before.e, after.e, sizeof(before.e)));
	ASSERT_EQ(0, kvod_info(self->dev, "big", &mi1));
	EXPECT_EQ(0, memcmp(&mi0, &mi1, sizeof(mi0)));
	expect_rejected(_metadata, self->dev, &after, ENOSPC,
			kvod_add(self->dev, "small", small, 0), "small");
	/* Below the cap again: adds work. */
	ASSERT_EQ(0, kvod_del(self->dev, "big"));
	EXPECT_EQ(0, kvod_add(self->dev, "small", small, 0));
	close(big);
	close(small);
}

TEST_F(cap, raised_allows_more)
{
	struct snap before;
	int a = kvod_make_file(3 * MiB, 4);
	int b = kvod_make_file(3 * MiB, 5);

	ASSERT_LE(0, a);
	ASSERT_LE(0, b);
	cap_set_mb(_metadata, self->dev, 4);
	ASSERT_EQ(0, kvod_add(self->dev, "a", a, 0));
	ASSERT_EQ(0, snap_take(self->dev, &before));
	expect_rejected(_metadata, self->dev, &before, ENOSPC,
			kvod_add(self->dev, "b", b, 0), "b");
	cap_set_mb(_metadata, self->dev, 16);
	EXPECT_EQ(0, kvod_add(self->dev, "b", b, 0));
	close(a);
	close(b);
}

/* ------------------------------------------------------------------ */
/* Loading and unloading: each test reloads; the teardown restores.    */

FIXTURE(module) {
	int dev;
};

FIXTURE_SETUP(module)
{
	self->dev = -1;
	if (getenv("KVOD_NO_LOAD"))
		SKIP(return, "KVOD_NO_LOAD: will not reload the module");
}

FIXTURE_TEARDOWN(module)
{
	if (self->dev >= 0)
		close(self->dev);
	EXPECT_EQ(0, module_reload_default());
}

static void reload(struct __test_metadata *_metadata, const char *params)
{
	ASSERT_EQ(0, kvod_module_unload());
	ASSERT_EQ(0, kvod_module_load(ko_path, params))
		TH_LOG("insmod %s %s", ko_path, params);
}

static __u64 half_ram(void)
{
	struct sysinfo si;

	if (sysinfo(&si))
		return 0;
	return (__u64)si.totalram * si.mem_unit / 2;
}

static void expect_default_cap(struct __test_metadata *_metadata, int dev)
{
	struct kvod_stats st;
	__u64 half = half_ram();

	ASSERT_EQ(0, kvod_stats(dev, &st));
	ASSERT_LT(0ULL, half);
	EXPECT_LE(st.resident_max, half + MiB);
	EXPECT_GE(st.resident_max + MiB, half)
		TH_LOG("resident_max %llu, half of RAM %llu",
		       (unsigned long long)st.resident_max,
		       (unsigned long long)half);
}

TEST_F(module, load_default_cap_half_ram)
{
	reload(_metadata, "");
	self->dev = open(KVOD_DEVICE, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->dev);
	expect_default_cap(_metadata, self->dev);
}

TEST_F(module, load_param_zero_means_default)
{
	reload(_metadata, "max_resident_mb=0");
	self->dev = open(KVOD_DEVICE, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->dev);
	expect_default_cap(_metadata, self->dev);
}

TEST_F(module, load_param_cap)
{
	struct kvod_stats st;
	unsigned long long mb;
	struct snap before;
	int fd = kvod_make_file(2 * MiB, 1);

	ASSERT_LE(0, fd);
	reload(_metadata, "max_resident_mb=3");
	ASSERT_EQ(0, read_param(&mb));
	EXPECT_EQ(3ULL, mb);
	self->dev = open(KVOD_DEVICE, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->dev);
	ASSERT_EQ(0, kvod_stats(self->dev, &st));
	EXPECT_EQ(3 * MiB, st.resident_max);
	ASSERT_EQ(0, kvod_add(self->dev, "first", fd, 0));
	ASSERT_EQ(0, snap_take(self->dev, &before));
	expect_rejected(_metadata, self->dev, &before, ENOSPC,
			kvod_add(self->dev, "second", fd, 0), "second");
	close(fd);
}

TEST_F(module, unload_with_movies)
{
	struct kvod_stats st;
	int fd = kvod_make_file(3 * MiB, 1);

	ASSERT_LE(0, fd);
	self->dev = open(KVOD_DEVICE, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->dev);
	ASSERT_EQ(0, kvod_catalog_clear(self->dev));
	ASSERT_EQ(0, kvod_add(self->dev, "left1", fd, 0));
	ASSERT_EQ(0, kvod_add(self->dev, "left2", fd, 0));
	close(fd);
	/* An open /dev/kvod pins the module. */
	EXPECT_NE(0, kvod_module_unload());
	EXPECT_TRUE(kvod_module_loaded());
	close(self->dev);
	self->dev = -1;
	ASSERT_EQ(0, kvod_module_unload());
	EXPECT_NE(0, access(KVOD_DEVICE, F_OK));
	EXPECT_FALSE(kvod_module_loaded());
	/* A fresh load starts with an empty catalog. */
	ASSERT_EQ(0, kvod_module_load(ko_path, ""));
	self->dev = open(KVOD_DEVICE, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->dev);
	ASSERT_EQ(0, kvod_stats(self->dev, &st));
	EXPECT_EQ(0U, st.movies);
	EXPECT_EQ(0ULL, st.resident);
}

/* ------------------------------------------------------------------ */

int main(int argc, char **argv)
{
	return catalog_main(argc, argv);
}
