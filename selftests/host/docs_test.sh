#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Documentation/ builds with Sphinx and the kernel's kernel-doc directive
# without a warning (an rst error, a broken kernel-doc comment, or a
# ":doc:" that names no DOC: block), and every DOC: block of kmod/ and
# tsock/ is included by some rst file, so that a rule written once in the
# code is read in the documentation too. Loads nothing.
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
# shellcheck source=selftests/lib/ktap.sh
. "$REPO/selftests/lib/ktap.sh"

KSRC=${KSRC:-/usr/src/linux-source-6.12}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

ktap_header
ktap_plan 2
out=$(KSRC=$KSRC sphinx-build -W --keep-going -q -b dummy \
	"$REPO/Documentation" "$TMP/out" 2>&1)
rc=$?
[ -z "$out" ] || ktap_print_msg "$out"
# kernel-doc's own warnings reach stderr without failing the build.
check_eq "Documentation/ builds without a warning" "0 0" \
	"$rc $(grep -c . <<<"$out")"

# Each "DOC: TITLE" of kmod/ and tsock/ against the ":doc: TITLE" lines
# of the rst.
missing=
while IFS= read -r title; do
	grep -rqxF -- "   :doc: $title" "$REPO/Documentation" ||
		missing+=" '$title'"
done < <(sed -n 's/^ \* DOC: //p' "$REPO"/kmod/*.[ch] "$REPO"/tsock/*.c)
check_eq "every DOC: block of kmod/ and tsock/ is in Documentation/" "" \
	"${missing# }"
ktap_finish
