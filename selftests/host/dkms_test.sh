#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# DKMS packaging: `dkms add`, `build` and `install` of a clean export of the
# tree, into private dkms and install trees (nothing of the host's module
# tree is touched, nothing is loaded). Runs on the build machine.
set -u

REPO=$(cd "$(dirname "$0")/../.." && pwd)
. "$REPO/selftests/lib/ktap.sh"

KVER=${KVER:-$(find /usr/src -maxdepth 1 -name 'linux-headers-6.12.*-amd64' \
	-printf '%f\n' 2>/dev/null | sed 's|^linux-headers-||' | sort -V | tail -n1)}
VERSION=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$REPO/dkms.conf")

ktap_header
ktap_plan 6

if ! command -v dkms >/dev/null || [ -z "$KVER" ]; then
	for t in add build install kvod sch_tsock vermagic; do
		ktap_skip "dkms $t" "dkms or 6.12 headers missing"
	done
	ktap_finish
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/src/kvod-$VERSION" "$tmp/dkms" "$tmp/inst/$KVER"
# The working tree as it is (tracked and new files), without build
# products; a tree that is not a git work tree (an export made with git
# archive) is copied whole but for what the build makes.
export_tree() {
	if git -C "$REPO" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
		git -C "$REPO" ls-files -co --exclude-standard -z |
			(cd "$REPO" && xargs -0 tar -c --no-recursion -f -)
	else
		tar -c -C "$REPO" --exclude=./build --exclude=./results \
			--exclude='*.o' --exclude='*.ko' --exclude='*.mod' \
			--exclude='*.mod.c' --exclude='*.d' --exclude='.*.cmd' \
			--exclude=Module.symvers --exclude=modules.order -f - .
	fi
}
export_tree 2>/dev/null | tar -x -C "$tmp/src/kvod-$VERSION"

dk() {
	dkms "$@" --sourcetree "$tmp/src" --dkmstree "$tmp/dkms" \
		--installtree "$tmp/inst" >"$tmp/log" 2>&1
}

check() {
	local desc=$1

	shift
	if "$@"; then
		ktap_pass "$desc"
	else
		sed 's/^/# /' "$tmp/log" | tail -n 20
		ktap_fail "$desc"
	fi
}

check "dkms add kvod/$VERSION" dk add "kvod/$VERSION"
check "dkms build for $KVER" dk build "kvod/$VERSION" -k "$KVER"
check "dkms install into a private tree" \
	dk install "kvod/$VERSION" -k "$KVER" --force

# shellcheck disable=SC2317 # check runs it
installed() {
	compgen -G "$tmp/inst/$KVER/updates/dkms/$1.ko*" >/dev/null
}
check "kvod.ko installed under updates/dkms" installed kvod
check "sch_tsock.ko installed under updates/dkms" installed sch_tsock

# shellcheck disable=SC2317 # check runs it
vermagic_ok() {
	local ko

	ko=$(compgen -G "$tmp/inst/$KVER/updates/dkms/kvod.ko*" | head -n1)
	modinfo -F vermagic "$ko" | grep -q "^$KVER "
}
check "installed kvod.ko is built for $KVER" vermagic_ok

ktap_finish
