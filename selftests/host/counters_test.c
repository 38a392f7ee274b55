// SPDX-License-Identifier: GPL-2.0
/*
 * The listener counter names of tools/lib/counters.c, which kvodctl
 * prints and rdma_ctl takes, on the host: every counter of the uapi enum
 * has a name, no two share one, and a name leads back to its counter.
 */
#include <errno.h>
#include <string.h>

#include "lib/counters.h"
#include "kselftest_harness.h"

TEST(every_counter_named_once)
{
	int i, j;

	for (i = 0; i < KVOD_LC_NR; i++) {
		ASSERT_NE(NULL, kvod_counter_names[i])
			TH_LOG("counter %d has no name", i);
		EXPECT_NE(0, kvod_counter_names[i][0]);
		for (j = 0; j < i; j++)
			EXPECT_STRNE(kvod_counter_names[j],
				     kvod_counter_names[i]);
	}
}

TEST(name_to_index)
{
	int i;

	for (i = 0; i < KVOD_LC_NR; i++)
		EXPECT_EQ(i, kvod_counter_index(kvod_counter_names[i]));
	EXPECT_EQ(KVOD_LC_REJ_BUSY, kvod_counter_index("rej_busy"));
	EXPECT_EQ(KVOD_LC_HTTP_503, kvod_counter_index("503"));
}

TEST(unknown_names)
{
	EXPECT_EQ(-EINVAL, kvod_counter_index(""));
	EXPECT_EQ(-EINVAL, kvod_counter_index("busy"));
	EXPECT_EQ(-EINVAL, kvod_counter_index("Accepted"));
	EXPECT_EQ(-EINVAL, kvod_counter_index("accepted "));
}

TEST_HARNESS_MAIN
