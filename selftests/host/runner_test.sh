#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Host-side test of the test runner (selftests/lib/runner.sh, as used by
# selftests/run_guest.sh) and of selftests/run-tests' counting, on made-up
# test programs. Boots nothing, loads nothing.
set -euo pipefail
# The expected timeouts below are unscaled, and the plans are of the
# whole suite: the knobs make test-debug sets (scale, shard, guests) must
# not reach them.
unset KVOD_TIMEOUT_SCALE KVOD_SHARD KVOD_GUESTS KVOD_TESTS

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
# shellcheck source=selftests/lib/ktap.sh
. "$REPO/selftests/lib/ktap.sh"
# shellcheck source=selftests/lib/runner.sh
. "$REPO/selftests/lib/runner.sh"

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
T=$TMP/tests
mkdir "$T"

cat >"$T/pass.sh" <<'EOF'
echo "TAP version 13"
echo "1..2"
echo "ok 1 first"
echo "ok 2 second # SKIP not here"
echo "on stderr" >&2
EOF
cat >"$T/fail.sh" <<'EOF'
echo "1..2"
echo "ok 1 good"
echo "not ok 2 bad"
exit 1
EOF
cat >"$T/skip.sh" <<'EOF'
echo "1..0 # SKIP nothing to do"
exit 4
EOF
cat >"$T/crash.sh" <<'EOF'
echo "1..2"
echo "ok 1 before the crash"
exit 2
EOF
cat >"$T/slow.sh" <<'EOF'
# timeout: 1
echo "1..1"
sleep 30
EOF
printf '#!/bin/sh\necho "no KTAP here"\n' >"$T/plain_test"
chmod +x "$T/plain_test"
printf '#!/bin/sh\nexit 0\n' >"$T/noexec_test"

ktap_header
ktap_plan 46

start=$SECONDS
out=$(KVOD_RESULTS=$TMP/results run_suite t "" "$T/pass.sh" "$T/fail.sh" \
	"$T/skip.sh" "$T/crash.sh" "$T/slow.sh" "$T/plain_test" \
	"$T/noexec_test" "$T/missing.sh") || true
elapsed=$((SECONDS - start))
printf '%s\n' "$out" >"$TMP/run.log"

tops=$(grep -E '^(not )?ok ' "$TMP/run.log" | paste -sd'|')
check_eq "one result line per program" \
	"ok 1 selftests: t: pass.sh|not ok 2 selftests: t: fail.sh # exit=1|ok 3 selftests: t: skip.sh # SKIP|not ok 4 selftests: t: crash.sh # exit=2|not ok 5 selftests: t: slow.sh # TIMEOUT 1 seconds|ok 6 selftests: t: plain_test|not ok 7 selftests: t: noexec_test # not executable|not ok 8 selftests: t: missing.sh # not found: $T/missing.sh" \
	"$tops"
check_eq "plan line" "1..8" "$(sed -n 2p "$TMP/run.log")"
check_eq "program output indented, stderr included" \
	"  ok 1 first|  ok 2 second # SKIP not here|  on stderr" \
	"$(sed -n '/^# selftests: t: pass.sh/,/^ok 1/p' "$TMP/run.log" | grep '^  [oO]' | paste -sd'|')"
if [ "$elapsed" -lt 20 ]; then
	ktap_pass "\"# timeout: 1\" in a shell test is obeyed"
else
	ktap_fail "\"# timeout: 1\" in a shell test is obeyed"
fi
check_eq "per-program log saved unindented" "ok 1 good" \
	"$(sed -n 2p "$TMP/results/t/fail.sh.log")"
export KVOD_TIMEOUT_slow_sh=7
check_eq "KVOD_TIMEOUT_<name> overrides the comment" 7 "$(test_timeout "$T/slow.sh")"
unset KVOD_TIMEOUT_slow_sh
check_eq "default timeout" 300 "$(KVOD_TEST_TIMEOUT='' test_timeout "$T/plain_test")"
check_eq "KVOD_TIMEOUT_SCALE multiplies" 4 "$(KVOD_TIMEOUT_SCALE=4 test_timeout "$T/slow.sh")"

# Counting: pass.sh 1 pass 1 skip; fail.sh 1 pass 1 fail; skip.sh 1 skip;
# crash.sh 1 pass + 1 for dying; slow.sh, noexec_test, missing.sh 1 fail
# each; plain_test 1 pass.
count=$("$REPO/selftests/run-tests" --count "$TMP/run.log") && rc=0 || rc=$?
check_eq "counts leaves and programs" "4 passed, 5 failed, 2 skipped" \
	"$(tail -n1 <<<"$count")"
check_eq "counting exits 1 on failures" 1 "$rc"
check_eq "failures are named" \
	"FAIL run: fail.sh: bad|FAIL selftests: t: crash.sh # exit=2" \
	"$(grep '^FAIL' <<<"$count" | head -n2 | paste -sd'|')"
check_eq "a failed program whose leaves failed is noted, not counted" \
	"NOTE selftests: t: fail.sh # exit=1" "$(grep '^NOTE' <<<"$count")"

# A guest that died after the third program: the rest count as failed.
sed '/^# selftests: t: crash.sh/,$d' "$TMP/run.log" >"$TMP/dead.log"
echo "# selftests: t: crash.sh" >>"$TMP/dead.log"
echo "  ok 1 before the crash" >>"$TMP/dead.log"
count=$("$REPO/selftests/run-tests" --count "$TMP/dead.log") || true
check_eq "unreported programs count as failed" "3 passed, 6 failed, 2 skipped" \
	"$(tail -n1 <<<"$count")"

: >"$TMP/empty.log"
count=$("$REPO/selftests/run-tests" --count "$TMP/empty.log") || true
check_eq "a log without KTAP is one failure" "0 passed, 1 failed, 0 skipped" \
	"$(tail -n1 <<<"$count")"

# A failed leaf's summary line carries the last three diagnostics before
# it (check_eq's expected and actual), and none from before a result.
printf '%s\n' 'TAP version 13' 1..1 '# selftests: t: d.sh' '  1..2' \
	'  # old' '  ok 1 a' '  # one' '  # two' "  # expected: 'x'" \
	"  # actual:   'y'" '  not ok 2 b' 'not ok 1 selftests: t: d.sh # exit=1' \
	>"$TMP/diag.log"
count=$("$REPO/selftests/run-tests" --count "$TMP/diag.log") || true
check_eq "a failed check's summary says what differed" \
	"FAIL diag: d.sh: b|    # two|    # expected: 'x'|    # actual:   'y'" \
	"$(sed -n '/^FAIL/,/^NOTE/p' <<<"$count" | grep -v '^NOTE' | paste -sd'|')"

printf 'TAP version 13\n1..1\n# selftests: t: a.sh\n  ok 1 x\nok 1 selftests: t: a.sh\n' >"$TMP/ok.log"
rc=0
"$REPO/selftests/run-tests" --count "$TMP/ok.log" >/dev/null || rc=$?
check_eq "counting exits 0 when all passed" 0 "$rc"

# An after-hook that finds a problem fails a program that passed, and
# says why; one that finds none leaves the result alone. The failed
# program's passing leaves still count, and it adds one failure.
# shellcheck disable=SC2317 # run_suite calls it
after_hook() {
	echo "# looked after $1"
	[ "$1" != pass.sh ] || { echo "kernel report during $1"; return 1; }
}
out=$(RUN_SUITE_AFTER=after_hook run_suite t "" "$T/pass.sh" "$T/skip.sh") || true
check_eq "an after-hook's failure fails the program" \
	"not ok 1 selftests: t: pass.sh # after: kernel report during pass.sh|ok 2 selftests: t: skip.sh # SKIP" \
	"$(grep -E '^(not )?ok ' <<<"$out" | paste -sd'|')"
check_eq "an after-hook's comments reach the log" 2 "$(grep -c '^# looked after' <<<"$out")"
count=$("$REPO/selftests/run-tests" --count <(printf '%s\n' "$out")) || true
check_eq "a program failed by its after-hook counts once" "1 passed, 1 failed, 2 skipped" \
	"$(tail -n1 <<<"$count")"

# The hook runs in run_suite's shell, not a subshell: what it keeps
# (run_guest.sh's count of kernel log lines seen) lasts to the next call.
# shellcheck disable=SC2317 # run_suite calls it
count_hook() {
	AFTER_CALLS=$((AFTER_CALLS + 1))
	echo "# call $AFTER_CALLS"
}
AFTER_CALLS=0
out=$(RUN_SUITE_AFTER=count_hook run_suite t "" "$T/skip.sh" "$T/skip.sh") || true
check_eq "an after-hook's state lasts from one program to the next" \
	"# call 1|# call 2" "$(grep '^# call' <<<"$out" | paste -sd'|')"

# Transports: "# transports: rxe siw" adds NAME@siw to the default list,
# which runs NAME with KVOD_RDMA_TRANSPORT=siw.
mkdir "$TMP/tr"
cat >"$TMP/tr/net.sh" <<'EOF'
# transports: rxe siw
echo "1..1"
echo "ok 1 transport ${KVOD_RDMA_TRANSPORT:-rxe}"
EOF
check_eq "a test with two transports is listed twice" \
	"net.sh|net.sh@siw" \
	"$(KVOD_TESTS='' suite_programs "$TMP/tr" | xargs -n1 basename | paste -sd'|')"
out=$(run_suite t "" "$TMP/tr/net.sh" "$TMP/tr/net.sh@siw") || true
check_eq "NAME@siw runs NAME over siw, and is reported as NAME@siw" \
	"ok 1 transport rxe|ok 1 selftests: t: net.sh|ok 1 transport siw|ok 2 selftests: t: net.sh@siw" \
	"$(grep -E '^ *ok ' <<<"$out" | sed 's/^ *//' | paste -sd'|')"
check_eq "NAME@siw keeps NAME's timeout (slow.sh's 1 s)" "1 1" \
	"$(base_timeout "$T/slow.sh") $(base_timeout "$T/slow.sh@siw")"

# Tiers: "# tier: debug" and a transport written T:debug are left out of
# the default list unless KVOD_TIER=debug; named, they run in any tier.
mkdir "$TMP/tier"
printf '# transports: rxe siw siwlo:debug\necho 1..0\n' >"$TMP/tier/a.sh"
printf '# tier: debug\n# transports: rxe siw\necho 1..0\n' >"$TMP/tier/b.sh"
check_eq "make test's tier leaves out tier-debug programs and T:debug runs" \
	"a.sh|a.sh@siw" \
	"$(KVOD_TESTS='' KVOD_TIER='' suite_programs "$TMP/tier" | xargs -n1 basename | paste -sd'|')"
check_eq "the debug tier runs all of them" \
	"a.sh|b.sh|a.sh@siw|a.sh@siwlo|b.sh@siw" \
	"$(KVOD_TESTS='' KVOD_TIER=debug suite_programs "$TMP/tier" | xargs -n1 basename | paste -sd'|')"
check_eq "a tier-debug program named runs in make test's tier" "b.sh@siw" \
	"$(KVOD_TIER='' suite_programs "$TMP/tier" b@siw | xargs -n1 basename)"

# Guests: "# guest: library" is left out of the default list but for
# KVOD_GUEST=library, whose list has nothing else.
printf '# guest: library\necho 1..0\n' >"$TMP/tier/c.sh"
check_eq "a library guest's program is not in the default list" "a.sh|a.sh@siw" \
	"$(KVOD_TESTS='' KVOD_TIER='' suite_programs "$TMP/tier" | xargs -n1 basename | paste -sd'|')"
check_eq "KVOD_GUEST=library lists only those" "c.sh" \
	"$(KVOD_TESTS='' KVOD_TIER='' KVOD_GUEST=library suite_programs "$TMP/tier" | xargs -n1 basename)"

# --plan: what each guest would run, on the real suite, booting nothing.
# The shards of KVOD_SHARD=I/N are the whole suite once: every program
# in exactly one shard.
plan() {
	env -u KVOD_TESTS "$REPO/selftests/run-tests" --plan "$@"
}
all=$(KVOD_GUESTS=1 plan | cut -d: -f2- | tr ' ' '\n' | sed '/^$/d' | sort)
shards=$(for i in 1 2 3; do KVOD_SHARD=$i/3 KVOD_GUESTS=1 plan; done |
	cut -d: -f2- | tr ' ' '\n' | sed '/^$/d' | sort)
check_ok "three shards hold every program of the suite once ($(wc -l <<<"$all") programs)" \
	test "$(wc -l <<<"$all")" -gt 40 -a "$all" = "$shards"
check_eq "a shard is dealt to the guests: two lines" 2 \
	"$(KVOD_SHARD=2/3 KVOD_GUESTS=2 plan | grep -c '^guest [12]: [^ ]')"
# The debug kernel's plan deals by durations.txt's third column (six
# times the second where there is none).
for col in 2 3; do
	heaviest[col]=$(awk -v c="$col" '!/^#/ && NF >= 2 {
			w = c == 2 ? $2 : (NF >= 3 ? $3 : $2 * 6)
			if (w + 0 > max) { max = w + 0; p = $1 }
		}
		END { print p }' "$REPO/selftests/durations.txt")
done
check_eq "Debian's plan starts with the heaviest program on Debian's kernel" \
	"${heaviest[2]}" "$(KVOD_TIER=debug KVOD_GUESTS=1 plan | sed -n 's/^guest 1: \([^ ]*\).*/\1/p')"
check_eq "the debug kernel's plan starts with the heaviest there" \
	"${heaviest[3]}" "$(KVOD_TIER=debug KVOD_KERNEL=debug KVOD_GUESTS=1 plan | sed -n 's/^guest 1: \([^ ]*\).*/\1/p')"
check_eq "the library guest's programs are dealt as one, and run after a guest" \
	"guest 1:|library, after guest 1: library_disk.sh|guest 2: http_fetch.sh" \
	"$(KVOD_GUESTS=2 plan library_disk.sh http_fetch.sh | paste -sd'|')"
check_eq "no guest without a program (one would run them all)" \
	"guest 1: unload.sh" "$(KVOD_GUESTS=4 plan unload.sh)"
for bad in 0/3 4/3 3 x/y 1/0; do
	rc=0
	out=$(KVOD_SHARD=$bad plan 2>&1) || rc=$?
	check_eq "KVOD_SHARD=$bad is refused" \
		"2|run-tests: KVOD_SHARD=$bad: want I/N, 1 <= I <= N" "$rc|$out"
done

# run_guest and guest_chain, with vm-run stubbed: run-tests sourced (it
# then only defines its functions), with boot_guest and boot_library
# saying what they would boot and returning FAKE_RC's status for the
# library guest.
chains() {
	(
		# shellcheck source=/dev/null # (checked on its own)
		. "$REPO/selftests/run-tests"
		boot_guest() {
			local name=$1

			shift
			echo "$name ${KVOD_GUEST:-regular}${BOOT_DISK:+ disk}: ${*##*/}" >>"$TMP/boots"
			: >"$KVOD_RESULTS/$name.log"
			[ "$name" != library ] || return "${FAKE_RC:-0}"
		}
		boot_library() {
			BOOT_DISK=img KVOD_GUEST=library boot_guest library "$@"
		}
		# shellcheck disable=SC2034 # run-tests' weight() reads it
		DURATIONS=$TMP/durations
		: >"$TMP/boots"
		KVOD_RESULTS=$TMP/chains
		mkdir -p "$KVOD_RESULTS"
		run_guest "$@" >/dev/null
		sort "$TMP/boots" | paste -sd'|'
		printf '%s\n' "${FAILURES[@]}" | grep -o 'kernel log clean.*' || :
		shopt -s nullglob
		left=("$KVOD_RESULTS"/.*.guests)
		echo "${#left[@]}"
	)
}
printf '%s\n' "rdma_fetch.sh 100" "library_disk.sh 50" "http_fetch.sh 40" \
	"http_serve.sh 30" >"$TMP/durations"
check_eq "two guests, then the library guest with its disk after one" \
	"library library disk: library_disk.sh|test-1 regular: rdma_fetch.sh|test-2 regular: http_fetch.sh http_serve.sh
0" "$(KVOD_GUESTS=2 chains rdma_fetch.sh library_disk.sh http_fetch.sh http_serve.sh)"
# The default list is the suite's: its library programs, in its order.
lib_progs=$(cd "$REPO/selftests/kvod" &&
	grep -l '^# guest: library$' -- *.sh | paste -sd' ')
check_eq "one guest: its own list, then the library's" \
	"library library disk: $lib_progs|test regular: 
0" "$(KVOD_GUESTS=1 chains)"
check_eq "a library guest that fails counts as the library's failure" \
	"library library disk: library_disk.sh
kernel log clean: see the vm-run lines above ($TMP/chains/library.dmesg, $TMP/chains/library.console)
0" "$(FAKE_RC=125 KVOD_GUESTS=2 chains library_disk.sh)"

# plan over a suite of its own (run-tests sourced, REPO pointed at it):
# however many programs the library guest runs, and however the suite
# is sharded, they are one word, and one guest boots it.
suite_plan() {
	(
		# shellcheck source=/dev/null # (checked on its own)
		. "$REPO/selftests/run-tests"
		# shellcheck disable=SC2034 # run-tests' weight() reads it
		DURATIONS=$TMP/suite/durations
		REPO=$TMP/suite plan | sed "s#$TMP/suite/selftests/kvod/##g"
	)
}
mkdir -p "$TMP/suite/selftests/kvod"
for p in a b c d; do
	printf 'echo 1..0\n' >"$TMP/suite/selftests/kvod/$p.sh"
done
for p in l1 l2; do
	printf '# guest: library\necho 1..0\n' >"$TMP/suite/selftests/kvod/$p.sh"
done
printf '%s\n' "a.sh 100" "b.sh 90" "c.sh 80" "d.sh 70" "l1.sh 20" "l2.sh 20" \
	>"$TMP/suite/durations"
check_eq "the library guest's programs are one word, however many" \
	"a.sh d.sh library:l1.sh,l2.sh|b.sh c.sh" \
	"$(KVOD_GUESTS=2 suite_plan | paste -sd'|')"
check_eq "shards: one of them has all the library guest's programs" \
	"library:l1.sh,l2.sh" \
	"$(for i in 1 2; do KVOD_SHARD=$i/2 KVOD_GUESTS=1 suite_plan; done |
		tr ' ' '\n' | grep library)"
echo "library-guest 200" >>"$TMP/suite/durations"
check_eq "the library guest's boot weighs with its programs" \
	"library:l1.sh,l2.sh d.sh|a.sh b.sh c.sh" \
	"$(KVOD_GUESTS=2 suite_plan | paste -sd'|')"

rc=0
out=$(env -u KVOD_IN_GUEST "$REPO/selftests/run_guest.sh" 2>/dev/null) || rc=$?
check_eq "run_guest.sh refuses to run on the host" "4|1..0 # SKIP not inside a selftests/qemu/vm-run guest" "$rc|$out"

ktap_finish
