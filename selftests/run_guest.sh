#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Run kvod's selftests inside the selftests/qemu/vm-run guest, in KTAP (see
# selftests/lib/runner.sh for the format, timeouts and exit statuses):
#
#	selftests/qemu/vm-run -- selftests/run_guest.sh [NAME...]
#
# (selftests/run-tests does this, and counts the results.) The programs are
# selftests/kvod/*_test (kselftest_harness.h C tests, built by make
# selftests), then selftests/kvod/*.sh (shell tests), each group in C
# locale order. NAME arguments, or else the space-separated names in
# $KVOD_TESTS, pick and order programs instead: a name is a file in
# selftests/kvod ("catalog_test", "kvodctl.sh"; ".sh" may be left out),
# or a path if it holds a "/". $KVOD_TEST_DIR replaces selftests/kvod.
#
# Each program loads the modules it needs and should unload them. Before
# each one, and after the last, we delete any named network namespace
# and rmmod whatever of $KVOD_MODULES (default "sch_tsock kvod") is still
# loaded, and say so in a "# runner:" line: a leftover is the previous
# program's bug, or its timeout's. Tracing and lo's qdisc are put as at
# boot before each one too (tracefs_reset, lo_reset: lib/runner.sh), with
# a "# runner:" line saying what was left.
#
# Exit status: 0 if every program passed or skipped, 1 otherwise; 4 when
# not inside a selftests/qemu/vm-run guest (this script unloads modules).
set -euo pipefail
export LC_COLLATE=C

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# The runner, the resets and the health check; and guest.sh, which it
# sources (kvod_in_guest, kmsg_mark).
# shellcheck source=selftests/lib/runner.sh
. "$HERE/lib/runner.sh"

if ! kvod_in_guest; then
	echo "run_guest.sh: refusing to run outside a selftests/qemu/vm-run guest; use selftests/run-tests" >&2
	echo "1..0 # SKIP not inside a selftests/qemu/vm-run guest"
	exit 4
fi

TEST_DIR=${KVOD_TEST_DIR:-$HERE/kvod}
read -r -a MODULES <<<"${KVOD_MODULES:-sch_tsock kvod}"

# The hooks around every program start as few processes as they can
# (each costs seconds on the debug kernel): the resets print into
# SCRATCH, not into a $(...) subshell.
SCRATCH=${TMPDIR:-/tmp}/kvod-run-guest.$$

# unload_leftovers WHEN: delete the named network namespaces left, which
# may hold a module, then rmmod what is still loaded of MODULES.
unload_leftovers() {
	local gone

	netns_reset >"$SCRATCH"
	read -r gone <"$SCRATCH"
	[ -z "$gone" ] || echo "# runner: deleted leftover network namespaces $1: $gone"
	modules_reset "$1" "${MODULES[@]}"
}

# shellcheck disable=SC2317 # run_suite calls it
# before_test NAME: also puts tracing and lo's qdisc as at boot
# (lib/runner.sh), saying in a "# runner:" line what
# the programs before had left, and marks the program's start in the
# kernel log, so that the console's timestamps say when each program ran.
before_test() {
	local left=

	unload_leftovers "before $1" || true	# the note says it; the end fails
	if ! tracefs_reset >"$SCRATCH"; then
		echo "# runner: could not reset tracing before $1"
	fi
	read -r left <"$SCRATCH"
	[ -z "$left" ] || echo "# runner: tracing as left before $1: $left; reset"
	lo_reset >"$SCRATCH"
	left=
	read -r left <"$SCRATCH"
	[ -z "$left" ] || echo "# runner: lo had a $left qdisc before $1; removed"
	if [ -w "$KMEMLEAK" ] && kernel_jiffies; then
		kmsg_mark "$1 starts at jiffies $JIFFIES"
	else
		kmsg_mark "$1 starts"
	fi
}

# kernel_jiffies: set JIFFIES to the kernel's jiffies now, from the first
# "jiffies:" line of /proc/timer_list; fails if there is none (builtins
# only: a process costs seconds on the debug kernel).
kernel_jiffies() {
	local key value

	while read -r key value; do
		if [ "$key" = jiffies: ] && [[ $value =~ ^[0-9]+$ ]]; then
			JIFFIES=$value
			return 0
		fi
	done </proc/timer_list
	return 1
}

# After each program, look at what the kernel said during it: a line of
# HEALTH_PATTERNS in the new part of the kernel log fails the program
# (kmemleak turning itself off among them: every later leak would go
# unseen).
# One dmesg reads the log; only when a new line matches a pattern do the
# new lines go through health_scan's awk, which tells a report from the
# call traces the fault tests expect.
LOG_SEEN=0
HEALTH_RE=$(health_regex)

# shellcheck disable=SC2317 # run_suite calls it
health_after() {
	local name=$1 i
	local -a log bad=()

	mapfile -t log < <(dmesg 2>/dev/null)
	for ((i = LOG_SEEN; i < ${#log[@]}; i++)); do
		if [[ ${log[i]} =~ $HEALTH_RE ]]; then
			bad=("${log[@]:LOG_SEEN}")
			break
		fi
	done
	LOG_SEEN=${#log[@]}
	((${#bad[@]})) || return 0
	printf '%s\n' "${bad[@]}" | health_scan - >"$SCRATCH"
	mapfile -t -n 20 bad <"$SCRATCH"
	((${#bad[@]})) || return 0
	printf '# kernel: %s\n' "${bad[@]}"
	echo "kernel report during $name: ${bad[0]}"
	return 1
}

# Leaks are looked for once, at the end: a kmemleak scan of the guest
# takes 35 s or more on the debug kernel, which after every program cost
# each guest about 20 minutes of the suite. selftests/qemu/vm-run scans twice
# after the last program and fails the run for an unreferenced object
# allocated during a program, which it names (kmemleak_programs in
# lib/runner.sh) from the jiffies in each program's start mark; an object
# allocated before the first mark is the boot's, listed but not counted.
KMEMLEAK=/sys/kernel/debug/kmemleak
mapfile -t LOG < <(dmesg 2>/dev/null)
LOG_SEEN=${#LOG[@]}
unset LOG
RUN_SUITE_AFTER=health_after

# The programs to run, in order.
mapfile -t tests < <(suite_programs "$TEST_DIR" "$@")

rc=0
run_suite kvod before_test "${tests[@]}" || rc=$?
# A module that will not go away after the last program fails the run.
unload_leftovers "after the last test" || rc=1
rm -f "$SCRATCH"
exit "$rc"
