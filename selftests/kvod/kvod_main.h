/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The main() of a kselftest_harness.h program that tests a freshly loaded
 * kvod.ko: include after kselftest_harness.h and call kvod_harness_main().
 *
 * It lists tests (-l, -h) without loading anything; outside a selftests/qemu/vm-run
 * guest it skips, unless KVOD_TEST_HOST=1; KVOD_NO_LOAD=1 tests the module
 * already loaded. Else it removes a stale kvod.ko, runs the program's
 * setup, loads the RDMA core (which insmod does not), loads kvod.ko from
 * kvod_ko_path() with the program's parameters, and at exit removes it
 * again, failing the program if it will not go (a test may have removed
 * it already), then runs the program's teardown.
 */
#ifndef _KVOD_MAIN_H
#define _KVOD_MAIN_H

#include "kvod_util.h"

/**
 * struct kvod_main_opts - what a program adds to kvod_harness_main()
 * @params: kvod.ko's parameters, as insmod takes them, or NULL
 * @setup: run in the guest before kvod.ko is loaded, or NULL
 * @teardown: run at exit after kvod.ko is removed, or NULL
 */
struct kvod_main_opts {
	const char *params;
	void (*setup)(void);
	void (*teardown)(void);
};

static pid_t kvod_main_pid;
static void (*kvod_main_teardown)(void);

static void kvod_unload_at_exit(void)
{
	int ret;

	if (getpid() != kvod_main_pid)
		return;
	ret = kvod_module_loaded() ? kvod_module_unload() : 0;
	if (kvod_main_teardown)
		kvod_main_teardown();
	if (ret) {
		printf("# rmmod %s: %s\n", KVOD_MODULE, strerror(ret));
		fflush(stdout);
		_exit(KSFT_FAIL);
	}
}

/* @ko: where kvod.ko is (kvod_ko_path()); @opts: may be NULL. */
static int kvod_harness_main(int argc, char **argv, const char *ko,
			     const struct kvod_main_opts *opts)
{
	static const struct kvod_main_opts none;

	bool list_only = false;
	int i, ret;

	if (!opts)
		opts = &none;

	for (i = 1; i < argc; i++)
		if (!strcmp(argv[i], "-l") || !strcmp(argv[i], "-h"))
			list_only = true;
	if (list_only || getenv("KVOD_NO_LOAD"))
		return test_harness_run(argc, argv);

	if (!kvod_in_guest() && !kvod_test_host()) {
		ksft_print_header();
		ksft_exit_skip("not inside a selftests/qemu/vm-run guest, and no KVOD_TEST_HOST=1; refusing to load modules here\n");
	}
	if (access(ko, R_OK)) {
		ksft_print_header();
		ksft_exit_skip("%s: %s (build it with make modules)\n", ko,
			       strerror(errno));
	}
	/* Start from a fresh module: a leftover one may hold old movies. */
	if (kvod_module_loaded()) {
		ret = kvod_module_unload();
		if (ret) {
			ksft_print_header();
			ksft_exit_fail_msg("rmmod stale %s: %s\n",
					   KVOD_MODULE, strerror(ret));
		}
	}
	if (opts->setup)
		opts->setup();
	/* kvod.ko links against the RDMA core, which insmod does not load. */
	if (system("modprobe -q -a ib_core rdma_cm")) {
		ksft_print_header();
		ksft_exit_fail_msg("modprobe ib_core rdma_cm failed\n");
	}
	ret = kvod_module_load(ko, opts->params ?: "");
	if (ret) {
		ksft_print_header();
		ksft_exit_fail_msg("insmod %s: %s\n", ko, strerror(ret));
	}
	kvod_main_pid = getpid();
	kvod_main_teardown = opts->teardown;
	atexit(kvod_unload_at_exit);
	return test_harness_run(argc, argv);
}

#endif /* _KVOD_MAIN_H */
