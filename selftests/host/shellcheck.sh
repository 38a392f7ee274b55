#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Lint every shell file of the project with shellcheck: *.sh and *.bash
# under selftests/, bench/ and tools/, and the scripts there and in .ci/
# whose first line names a shell. .shellcheckrc says which checks are off,
# and why.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
# shellcheck source=selftests/lib/ktap.sh
. "$REPO/selftests/lib/ktap.sh"

cd "$REPO"
files=()
while IFS= read -r -d '' f; do
	case $f in
	*.sh | *.bash) files+=("$f") ;;
	*) head -n1 "$f" | grep -qE '^#!.*\b(ba)?sh\b' && files+=("$f") ;;
	esac
done < <(find selftests bench tools .ci -type f \
	\( -name '*.sh' -o -name '*.bash' -o -perm -u+x \) -print0 | sort -z)

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
