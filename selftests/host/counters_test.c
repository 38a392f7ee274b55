// SPDX-License-Identifier: GPL-2.0
/*
 * The listener counter names of tools/lib/counters.c, which kvodctl
 * prints and the shell tests read, on the host: every counter of the uapi
 * enum has a name, and no two share one.
 */
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

TEST_HARNESS_MAIN
