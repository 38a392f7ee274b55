/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The host tests are tables of cases: a fixture with nothing to set up or
 * tear down, whose variants are the cases, each a TEST_F() result per
 * case. Include this after kselftest_harness.h, then declare the fields
 * of a case:
 *
 *	CASES(accepts) {
 *		const char *s;
 *		int want;
 *	};
 *
 * and add cases with FIXTURE_VARIANT_ADD(accepts, name) { ... }.
 */
#ifndef KVOD_HOST_CASES_H
#define KVOD_HOST_CASES_H

#define CASES(fixture)			\
	FIXTURE(fixture) {};		\
	FIXTURE_SETUP(fixture) {}	\
	FIXTURE_TEARDOWN(fixture) {}	\
	FIXTURE_VARIANT(fixture)

#endif /* KVOD_HOST_CASES_H */
