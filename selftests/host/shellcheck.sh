#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Lint the test and VM tooling with shellcheck: the runners, the demo, CI glue,
# the shell test library and these host tests. Other people's scripts are
# theirs to lint: list a file here once it is clean.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
# shellcheck source=selftests/lib/ktap.sh
. "$REPO/selftests/lib/ktap.sh"

cd "$REPO"
files=(tools/vm-run tools/run-tests tools/demo tools/demo-guest.sh .ci/run
	selftests/run_guest.sh selftests/lib/ktap.sh selftests/lib/guest.sh
	selftests/lib/runner.sh selftests/lib/health.sh tools/debug-kernel
	selftests/host/vm_health_test.sh
	selftests/host/runner_test.sh selftests/host/ktap_lib_test.sh
	selftests/host/shellcheck.sh)

ktap_header
ktap_plan "${#files[@]}"
for f in "${files[@]}"; do
	if ! command -v shellcheck >/dev/null; then
		ktap_skip "shellcheck $f" "shellcheck is not installed"
	elif [ ! -e "$f" ]; then
		ktap_skip "shellcheck $f" "no such file"
	elif out=$(shellcheck -x -s bash "$f" 2>&1); then
		ktap_pass "shellcheck $f"
	else
		ktap_print_msg "$out"
		ktap_fail "shellcheck $f"
	fi
done
ktap_finish
