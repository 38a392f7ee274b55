#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Host-side test of the tc plugin's iproute2 pin: tools/tc refuses to
# build q_tsock.so for a tc of another iproute2 release than the one
# tc_plugin.h was written against, and builds it for the installed tc
# (selftests/qemu/setup.sh installs that release). Loads nothing.
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
# shellcheck source=selftests/lib/ktap.sh
. "$REPO/selftests/lib/ktap.sh"

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
pinned=$(sed -n 's/^#define KVOD_TC_IPROUTE2 "\(.*\)"/\1/p' \
	"$REPO/tools/tc/tc_plugin.h")

# fake_tc VERSION: a tc that reports iproute2 VERSION.
fake_tc() {
	printf '#!/bin/sh\necho "tc utility, iproute2-%s, libbpf 1.1.2"\n' "$1" \
		>"$TMP/tc-$1"
	chmod +x "$TMP/tc-$1"
	echo "$TMP/tc-$1"
}

ktap_header
ktap_plan 4
check_ok "tc_plugin.h names its iproute2 release ($pinned)" \
	test -n "$pinned"
out=$(make -s -C "$REPO/tools/tc" check-iproute2 TC="$(fake_tc 6.99.0)" 2>&1)
rc=$?
check_eq "another release is refused, with the reason" \
	"2 tools/tc: tc is iproute2 '6.99.0', q_tsock.so is written against $pinned (tc_plugin.h)" \
	"$rc $(grep 'tools/tc:' <<<"$out")"
check_ok "the pinned release passes" \
	make -s -C "$REPO/tools/tc" check-iproute2 TC="$(fake_tc "$pinned")"
check_ok "the installed tc is the pinned release" \
	make -s -C "$REPO/tools/tc" check-iproute2
ktap_finish
