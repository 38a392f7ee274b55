#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Host-side test of "make -C selftests install": the kselftest install
# tree it makes lists, with the kernel's run_kselftest.sh, every program
# of selftests/kvod and holds what they need, with a timeout that covers
# the longest of them; its libraries find kvod where make install puts
# it (fake kvodctl and modinfo on PATH) and, with KVOD_REPO, where they
# find it in the git tree; without KVOD_TEST_HOST every program skips
# (kselftest's exit 4) and runs none of the commands that change the
# machine, which stand-ins on PATH log and refuse; with it, a C program
# gets past its guard and skips on a kvod.ko that is not there. Loads
# nothing.
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
# shellcheck source=selftests/lib/ktap.sh
. "$REPO/selftests/lib/ktap.sh"
# shellcheck source=selftests/lib/runner.sh
. "$REPO/selftests/lib/runner.sh"	# base_timeout

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
D=$TMP/ksft
# What the installed programs see: no guest, no opt-in, no tree.
NOWHERE=(env -u KVOD_TEST_HOST -u KVOD_IN_GUEST -u KVOD_REPO -u KVOD_KMOD_DIR
	-u KVOD_TSOCK_DIR -u KVODCTL -u KTAP_HELPERS -u TC_LIB_DIR)

# Stand-ins: kvodctl, kvod-fetch and a modinfo that names installed
# modules in $TMP/bin; the commands that load modules or change the
# network in $TMP/deny, which log their calls and fail.
mkdir "$TMP/bin" "$TMP/deny"
for f in kvodctl kvod-fetch; do
	printf '#!/bin/sh\nexit 0\n' >"$TMP/bin/$f"
done
# shellcheck disable=SC2016 # the stand-in's $2
printf '#!/bin/sh\necho "/lib/modules/test/updates/$2.ko.xz"\n' >"$TMP/bin/modinfo"
for f in modprobe insmod rmmod ip rdma tc sysctl; do
	printf '#!/bin/sh\necho "%s $*" >>"%s"\nexit 1\n' "$f" "$TMP/deny.log" \
		>"$TMP/deny/$f"
done
chmod +x "$TMP"/bin/* "$TMP"/deny/*

ktap_header
ktap_plan 13

check_ok "make -C selftests install INSTALL_PATH=DIR" \
	make -C "$REPO/selftests" install INSTALL_PATH="$D"

# kvod:NAME for each program of the source tree, in kselftest's order.
want=()
for f in "$REPO"/selftests/kvod/*_test.c "$REPO"/selftests/kvod/*.sh; do
	f=${f##*/}
	want+=("kvod:${f%.c}")
done
check_eq "run_kselftest.sh --list lists every kvod/*_test and kvod/*.sh" \
	"$(printf '%s\n' "${want[@]}")" "$("$D/run_kselftest.sh" --list)"

missing=
for f in "${want[@]}"; do
	[ -x "$D/kvod/${f#kvod:}" ] || missing+=" ${f#kvod:}"
done
check_eq "every listed program is installed, executable" "" "${missing# }"

# The programs' helpers and data (all of kvod/ but the C sources and
# headers), the libraries they source and the txtime programs, at their
# paths under selftests/.
missing=
for f in "$REPO"/selftests/kvod/* "$REPO"/selftests/lib/*.sh \
	"$REPO"/selftests/txtime/txsend "$REPO"/selftests/txtime/txrecv; do
	case $f in *.c | *.h) continue ;; esac
	f=${f#"$REPO/selftests/"}
	[ -e "$D/$f" ] || missing+=" $f"
done
check_eq "their helpers, data and libraries are installed" "" "${missing# }"

# Every program gets kselftest's one timeout: it must not be shorter than
# the one the guest runner gives it, nor than the program took.
timeout=$(sed -n 's/^timeout=//p' "$D/kvod/settings" 2>/dev/null)
short=
for f in "$REPO"/selftests/kvod/*_test.c "$REPO"/selftests/kvod/*.sh; do
	t=$(base_timeout "${f%.c}")
	[ "${timeout:-0}" -ge "$t" ] || short+=" ${f##*/}:$t"
done
while read -r name secs _; do	# Debian's kernel's seconds
	[ "${timeout:-0}" -ge "$secs" ] || short+=" $name:$secs"
done < <(grep -v '^#' "$REPO/selftests/durations.txt")
check_eq "kvod/settings has a timeout ($timeout s) that covers every program" \
	ok "${timeout:+ok}${short}"

# The libraries in the install tree, without KVOD_REPO: the tree's own
# programs, kvod's tools from PATH, the modules from modinfo.
# shellcheck disable=SC2016 # expanded by the child
where='. lib/ktap.sh && . lib/rdma.sh && echo "$KVOD_SELFTESTS $KTAP_HELPERS $KVODCTL $KVOD_FETCH $RDMA_CLIENT $KVOD_TC_LIB $(kmod_path kvod) $(kmod_path sch_tsock) $SIW_KO"'
m=/lib/modules/test/updates
check_eq "installed, the libraries find kvod where make install puts it" \
	"$D $D/kselftest/ktap_helpers.sh $TMP/bin/kvodctl $TMP/bin/kvod-fetch $D/kvod/rdma_client /usr/lib/tc $m/kvod.ko.xz $m/sch_tsock.ko.xz $m/siw.ko.xz" \
	"$(cd "$D" && "${NOWHERE[@]}" PATH="$TMP/bin:$PATH" bash -c "$where" 2>&1)"
check_eq "with KVOD_REPO, they find it in the tree as ever" \
	"/r/selftests $KTAP_HELPERS /r/tools/kvodctl /r/tools/kvod-fetch /r/selftests/kvod/rdma_client /r/tools/tc /r/kmod/kvod.ko /r/kmod/../tsock/sch_tsock.ko /r/build/siw/siw.ko" \
	"$(cd "$D" && "${NOWHERE[@]}" KVOD_REPO=/r PATH="$TMP/bin:$PATH" bash -c "$where" 2>&1)"
missing=
while read -r f; do
	[ -e "$D/${f#\$KVOD_SELFTESTS/}" ] || missing+=" $f"
done < <(grep -ohE '[$]KVOD_SELFTESTS/[A-Za-z0-9_./-]+' "$D"/kvod/*.sh "$D"/lib/*.sh | sort -u)
check_eq "every \$KVOD_SELFTESTS/ path they name is installed" "" "${missing# }"

# Without the opt-in, through the kernel's runner.
out=$(cd "$D" && "${NOWHERE[@]}" PATH="$TMP/deny:$PATH" ./run_kselftest.sh -t kvod:kvodctl.sh 2>&1)
check_eq "-t kvod:kvodctl.sh skips, saying why" \
	"# 1..0 # SKIP not inside a selftests/qemu/vm-run guest, and no KVOD_TEST_HOST=1; refusing to load modules here|ok 1 selftests: kvod: kvodctl.sh # SKIP" \
	"$(grep -E 'SKIP|^(not )?ok ' <<<"$out" | paste -sd'|')"
out=$(cd "$D" && "${NOWHERE[@]}" PATH="$TMP/deny:$PATH" ./run_kselftest.sh -t kvod:abi_test 2>&1)
check_eq "-t kvod:abi_test skips, saying why" \
	"# 1..0 # SKIP not inside a selftests/qemu/vm-run guest, and no KVOD_TEST_HOST=1; refusing to load modules here|ok 1 selftests: kvod: abi_test # SKIP" \
	"$(grep -E 'SKIP|^(not )?ok ' <<<"$out" | paste -sd'|')"
out=$(cd "$D" && "${NOWHERE[@]}" PATH="$TMP/deny:$PATH" ./run_kselftest.sh -c kvod 2>&1)
check_eq "-c kvod: every program skips" "${#want[@]} ${#want[@]}" \
	"$(grep -c '^ok [0-9]* selftests: kvod: .* # SKIP$' <<<"$out") $(grep -c '^\(not \)\?ok ' <<<"$out")"
# With it, a C program gets past its guard to the module, which is not
# there: it skips before touching anything.
out=$(cd "$D/kvod" && "${NOWHERE[@]}" KVOD_TEST_HOST=1 KVOD_KMOD_DIR="$TMP/none" \
	PATH="$TMP/deny:$PATH" ./abi_test 2>&1)
rc=$?
check_eq "KVOD_TEST_HOST=1 lets abi_test past its guard" \
	"1..0 # SKIP $TMP/none/kvod.ko: No such file or directory (build it with make modules) rc=4" \
	"$(grep SKIP <<<"$out") rc=$rc"
check_eq "no program loaded a module or changed the network" "" \
	"$(cat "$TMP/deny.log" 2>/dev/null)"
ktap_finish
