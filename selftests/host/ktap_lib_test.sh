#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Host-side test of the shell test helpers in selftests/lib/ktap.sh and
# selftests/lib/guest.sh. Loads nothing.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
LIB=$REPO/selftests/lib/ktap.sh
# The children's output is compared whole: no cost lines unless a check
# asks for them.
unset KVOD_CHECK_COST
# shellcheck source=selftests/lib/ktap.sh
. "$LIB"

# child SCRIPT: run SCRIPT in a fresh bash with the library; print its
# output with "|" for newlines, then " rc=STATUS".
child() {
	local out rc=0

	out=$(env -u KVOD_IN_GUEST -u KVOD_TEST_HOST bash -c ". '$LIB'; $1" 2>&1) || rc=$?
	echo "$(paste -sd'|' <<<"$out") rc=$rc"
}

ktap_header
ktap_plan 38

check_eq "all passed: exit 0" "1..2|ok 1 a|# b: why|ok 2 b # SKIP|# Totals: pass:1 fail:0 xfail:0 xpass:0 skip:1 error:0 rc=0" \
	"$(child 'ktap_plan 2; ktap_pass a; ktap_skip b why; ktap_finish')"
check_eq "a failure: exit 1" "1..2|ok 1 a|not ok 2 b|# Totals: pass:1 fail:1 xfail:0 xpass:0 skip:0 error:0 rc=1" \
	"$(child 'ktap_plan 2; ktap_pass a; ktap_fail b; ktap_finish')"
check_eq "all skipped: exit 4" "1..1|# a: no|ok 1 a # SKIP|# Totals: pass:0 fail:0 xfail:0 xpass:0 skip:1 error:0 rc=4" \
	"$(child 'ktap_plan 1; ktap_skip a no; ktap_finish')"
check_eq "plan not met: exit 1" "1..2|ok 1 a|# Totals: pass:1 fail:0 xfail:0 xpass:0 skip:0 error:0|# planned 2 tests but ran 1 rc=1" \
	"$(child 'ktap_plan 2; ktap_pass a; ktap_finish')"
check_eq "a test beyond the plan fails the program" \
	"1..1|ok 1 a|not ok 2 b|# Totals: pass:1 fail:1 xfail:0 xpass:0 skip:0 error:0|# planned 1 tests but ran 2 rc=1" \
	"$(child 'ktap_plan 1; ktap_pass a; ktap_fail b; ktap_finish')"
# shellcheck disable=SC2016 # expanded by the child
check_eq "descriptions are not globbed, messages keep their lines" \
	"# x|#  y|ok 1 [kvod] *|ok 2 [k] * # SKIP rc=0" \
	"$(child 'cd "$(mktemp -d)" && touch k v; ktap_print_msg "x
 y"; ktap_pass "[kvod] *"; ktap_skip "[k] *"')"
check_eq "no helpers: bail out" "Bail out! no /nonexistent: run selftests/qemu/setup.sh rc=1" \
	"$(KTAP_HELPERS=/nonexistent child 'ktap_pass a')"
check_eq "rounds: N, divided by the scale, at least 1" "100 25 1" \
	"$(rounds 100) $(KVOD_TIMEOUT_SCALE=4 rounds 100) $(KVOD_TIMEOUT_SCALE=4 rounds 3)"
kv_into KV_A b "a=1 b=2 b=3"
kv_into KV_B c "a=1 b=2"
kv_into KV_C x "x=* y=?"
check_eq "kv_into: the first KEY=VALUE, none for a missing key, not globbed" \
	"2||*" "$KV_A|$KV_B|$KV_C"
check_eq "no cost lines without KVOD_CHECK_COST" "ok 1 a rc=0" \
	"$(KVOD_CHECK_COST='' child '/bin/true; ktap_pass a')"
# shellcheck disable=SC2016 # expanded by the inner bash
check_ok "KVOD_CHECK_COST: a result says its seconds and processes" \
	bash -c '[[ $1 =~ ^"# cost: "[0-9]+" s, "([0-9]+)" processes|ok 1 a rc=0"$ ]] &&
		((BASH_REMATCH[1] >= 2))' _ \
	"$(KVOD_CHECK_COST=1 child '/bin/true; /bin/true; ktap_pass a')"
check_eq "check_eq shows both values" "# expected: 'x'|# actual:   'y'|not ok 1 d rc=0" \
	"$(child 'check_eq d x y')"
check_eq "check_errno by strerror text" "ok 1 d rc=0" \
	"$(child 'check_errno d ENOENT ls /nonexistent/kvod')"
check_eq "check_errno wants a failure" "not ok 1 d rc=0" \
	"$(child 'check_errno d ENOENT true | grep -v "^#"')"
check_eq "check_says: a failure saying the text" "ok 1 d rc=0" \
	"$(child 'check_says d "No such file" ls /nonexistent/kvod')"
check_eq "check_says wants a failure" "not ok 1 d rc=0" \
	"$(child 'check_says d "" true | grep -v "^#"')"
check_eq "check_says wants the text" "not ok 1 d rc=0" \
	"$(child 'check_says d "no such movie" ls /nonexistent/kvod | grep -v "^#"')"
check_eq "check_fail" "ok 1 d rc=0" "$(child 'check_fail d false')"
check_eq "check_ok" "ok 1 d rc=0" "$(child 'check_ok d true')"
check_eq "check_ok fails on a failure" "not ok 1 d rc=0" \
	"$(child 'check_ok d false | grep -v "^#"')"
check_eq "check_fail fails on a success" "not ok 1 d rc=0" \
	"$(child 'check_fail d true | grep -v "^#"')"
check_eq "kvod_load refuses outside the guest" \
	"Bail out!  refusing to insmod kvod outside a selftests/qemu/vm-run guest without KVOD_TEST_HOST=1|# Totals: pass:0 fail:0 xfail:0 xpass:0 skip:0 error:0 rc=1" \
	"$(child 'kvod_load')"
check_eq "kvod_require_guest skips outside the guest" \
	"1..0 # SKIP not inside a selftests/qemu/vm-run guest, and no KVOD_TEST_HOST=1; refusing to load modules here rc=4" \
	"$(child 'kvod_require_guest; echo still here')"
check_eq "kvod_require_guest lets a KVOD_TEST_HOST=1 host through" \
	"still here rc=0" "$(child 'KVOD_TEST_HOST=1 kvod_require_guest; echo still here')"
check_eq "time_limit as is by default" 5 "$(env -u KVOD_TIMEOUT_SCALE bash -c ". '$REPO/selftests/lib/ktap.sh'; time_limit 5")"
check_eq "time_limit stretched by KVOD_TIMEOUT_SCALE" 20 "$(KVOD_TIMEOUT_SCALE=4 bash -c ". '$REPO/selftests/lib/ktap.sh'; time_limit 5")"

# wait_test runs its command on every poll: a counter file that reaches 3
# on the third run passes; one that never changes times out.
# shellcheck disable=SC2016 # expanded by the child
check_eq "wait_test polls its command again" "ok rc=0" \
	"$(child 'f=$(mktemp); echo 0 >$f; n() { echo $(($(cat $f) + 1)) >$f; cat $f; }; wait_test 5 = 3 n && echo ok; rm -f $f')"
check_eq "wait_test gives up after its time" "timeout rc=0" \
	"$(child 'wait_test 1 = 1 echo 0 || echo timeout')"
# sleep_nofork makes its FIFO once, then sleeps with no program to run:
# with PATH empty sleep(1) could not be found; under set -e its timeout
# is no error. The child's TMPDIR is a fresh directory.
# shellcheck disable=SC2016 # expanded by the child
check_eq "sleep_nofork sleeps 0.3 s and starts no process" "slept rc=0" \
	"$(child 'set -e; TMPDIR=$(mktemp -d); sleep_nofork 0; t=$EPOCHREALTIME; PATH= sleep_nofork 0.3; d=$(( (${EPOCHREALTIME/./} - ${t/./}) / 1000 )); [ -p "$TMPDIR/kvod-sleep-$UID.fifo" ] && [ $d -ge 300 ] && [ $d -lt 1000 ] && echo slept; rm -r "$TMPDIR"')"
# ... and keeps no descriptor open, which every program a test starts
# would inherit: after a sleep the shell has the descriptors a shell
# without the library has here (255 is bash's own, for some shells).
# shellcheck disable=SC2016 # expanded by the shells
fds='fds=(); cd /proc/$$/fd && for f in *; do [ "$f" = 255 ] || fds+=("$f"); done; echo "${fds[*]}"'
check_eq "sleep_nofork leaves no descriptor open" \
	"$(env -u KVOD_IN_GUEST bash -c "$fds" 2>&1) rc=0" \
	"$(child "sleep_nofork 0.1; $fds")"

# proc_where: a sleeping task's name, state, system call and kernel stack
# (reading them needs root, which the guest and CI are); an ended one is
# "gone".
sleep 60 &
napper=$!
where=$(child "proc_where $napper")
kill "$napper"
wait "$napper" 2>/dev/null || true
check_ok "proc_where: name, state and system call" \
	grep -qE "^sleep $napper: S \(sleeping\), syscall [0-9]+ " <<<"$where"
check_ok "proc_where: the kernel stack, in nanosleep" \
	grep -qE "\|  \[<[0-9a-f]+>\] [a-z_]*nanosleep" <<<"$where"
check_eq "proc_where: an ended task is gone" "$napper: gone rc=0" \
	"$(child "proc_where $napper")"

# The read-backs parse kvodctl's output: a stand-in kvodctl prints what
# the real one prints for two listeners, two pushes and a movie.
FAKE=$(mktemp -d)
trap 'rm -rf "$FAKE"' EXIT
cat >"$FAKE/kvodctl" <<'END'
#!/bin/sh
case "$1 $2" in
"list --json")
	echo '{"movies":[{"name":"m","size":5}],"listeners":[{"proto":"http","address":"127.0.0.1:8080","netns":4026531840,"counters":{"accepted":3,"active":1,"refused":0,"bytes":99,"404":2}},{"proto":"rdma","address":"[::1]:7471","netns":4026531840,"counters":{"accepted":7,"active":0,"refused":1,"bytes":0,"404":0}}],"pushes":[{"id":1,"movie":"m"},{"id":2,"movie":"m"}]}' ;;
"info m")
	printf 'name: m\nsize: 5\nactive_clients: 4\nbytes_served: 10\n' ;;
*)	exit 1 ;;
esac
END
chmod +x "$FAKE/kvodctl"
KVODCTL=$FAKE/kvodctl
check_eq "listener_counter: a counter of the listener named" "1 2 1" \
	"$(listener_counter http 127.0.0.1:8080 active) $(listener_counter http 127.0.0.1:8080 404) $(listener_counter rdma "[::1]:7471" refused)"
check_eq "listener_counters: every counter, none of an unlisted listener" \
	"accepted=7|active=0|refused=1|bytes=0|404=0|" \
	"$(listener_counters rdma "[::1]:7471" | paste -sd'|')|$(listener_counters http 127.0.0.1:9)"
check_eq "listeners: the endpoints of a protocol" "127.0.0.1:8080|[::1]:7471" \
	"$(listeners http)|$(listeners rdma)"
check_eq "movie_field and movie_clients; nothing for an unknown movie" \
	"10 4 " "$(movie_field m bytes_served) $(movie_clients m) $(movie_field nosuch size)"
check_eq "pushes: how many are listed" 2 "$(pushes)"

ktap_finish
