#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# A short pass of the fuzz targets (selftests/fuzz): build them with
# clang, then run each over its seeds and for $KVOD_FUZZ_SECONDS (default 10)
# more, two at a time, with selftests/fuzz/run.sh, whose KTAP this is.
# A seed that crashes (every crash found is kept as one) or a new crash
# within the time fails. "make fuzz" runs them for minutes each.
# Skips without clang (selftests/qemu/setup.sh installs it).
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
# shellcheck source=selftests/lib/ktap.sh
. "$REPO/selftests/lib/ktap.sh"

if ! command -v clang >/dev/null; then
	ktap_header
	ktap_plan 1
	ktap_skip "fuzz targets" "clang is not installed (selftests/qemu/setup.sh)"
	ktap_finish
fi
if ! out=$(make -s -C "$REPO/selftests/fuzz" 2>&1); then
	ktap_header
	ktap_plan 1
	ktap_print_msg "$out"
	ktap_fail "fuzz targets build"
	ktap_finish
fi
# Apart from make fuzz's results/fuzz: a short pass neither waits for a
# long run of the same target nor writes into its log.
FUZZ_RESULTS=${KVOD_RESULTS:-$REPO/results}/fuzz-quick \
	exec "$REPO/selftests/fuzz/run.sh" -t "${KVOD_FUZZ_SECONDS:-10}" -j 2
