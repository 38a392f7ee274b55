#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# ip netns del at the moment a namespace's pushes end by themselves. A
# push that ends releases its socket from its own work item; the
# namespace's teardown (kvod's pernet pre_exit) must wait for that release,
# or the socket is released after the namespace's UDP state is gone (a
# use-after-free the debug kernel reports). kvod's push_release_delay_ms
# widens the window between a push leaving the list and its release, so
# that on any kernel the order is visible in kvod's debug log: every
# "push N: released" before "netns INUM: pushes released". Then the same
# race without the delay, repeated; the kernel log must stay clean.
#
# timeout: 600

# shellcheck source=selftests/lib/tsock.sh
. "$(dirname "$0")/../lib/tsock.sh"

ktap_header
ktap_plan 7

NS=push-ns-$$
TMP=$(mktemp -d)
cleanup() {
	ip netns del "$NS" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT

# 20 RTP packets of a synthetic MPEG-TS movie.
python3 -c '
import sys
with open(sys.argv[1], "wb") as f:
    f.write((b"\x47" + b"\0" * 187) * 140)
' "$TMP/m.ts" || ktap_bail_out "cannot make the movie"

kvod_load dyndbg=+p || ktap_bail_out "insmod kvod failed"
"$KVODCTL" add m "$TMP/m.ts" >/dev/null || ktap_bail_out "kvodctl add failed"

# round NPUSH RATE [SLEEP]: a namespace with NPUSH pushes of the 20-packet
# movie at RATE; delete it SLEEP seconds after starting the last one, or
# without SLEEP as soon as the last one is off the list. Prints the
# namespace's inode number and the pushes' ids. Call next_round first.
round() {
	local i inum

	ip netns add "$NS" && ip -n "$NS" link set lo up || return 1
	inum=$(stat -L -c %i "/run/netns/$NS")
	echo "$inum"
	for ((i = 0; i < $1; i++)); do
		ip netns exec "$NS" "$KVODCTL" push m "udp://127.0.0.1:$((5020 + i))" \
			--rate "$2" --window 20 || return 1
	done
	if [ -n "${3:-}" ]; then
		sleep "$3"
	else
		wait_for 20 no_pushes
	fi
	ip netns del "$NS"
}

# next_round: mark the kernel log where a round starts. A namespace's
# inode number is reused once it is freed, so an older namespace's lines
# must not count for this one (round_log: the log since the mark).
ROUND=0
next_round() {
	ROUND=$((ROUND + 1))
	kmsg_mark "push_netns round $ROUND"
}

# round_log: the kernel log since the last round started.
round_log() {
	kmsg_since "push_netns round $ROUND"
}

# released_first INUM IDS...: in the kernel log of the last round, every
# push's release comes before its namespace's pre_exit finished.
released_first() {
	local inum=$1 id log ns_line line

	shift
	log=$(round_log)
	ns_line=$(grep -n "kvod: netns $inum: pushes released" <<<"$log" |
		cut -d: -f1 | head -n1)
	[ -n "$ns_line" ] || { ktap_print_msg "no pre_exit line for $inum"; return 1; }
	for id; do
		line=$(grep -n "kvod: push $id: released" <<<"$log" |
			cut -d: -f1 | head -n1)
		if [ -z "$line" ] || [ "$line" -gt "$ns_line" ]; then
			ktap_print_msg "push $id released at log line ${line:-never}, netns $inum gone at $ns_line"
			return 1
		fi
	done
}

# ns_gone INUM: kvod logged the end of that namespace's pre_exit, in
# the last round.
ns_gone() {
	round_log | grep -q "kvod: netns $1: pushes released"
}

# Longer than the guest takes from the last push to pre_exit (about 2 s).
PARAM=$(kvod_knob push_release_delay_ms)
check_ok "delay knob set" sh -c "echo 10000 > $PARAM"
next_round
out=$(round 4 20M) || ktap_print_msg "round failed: $out"
inum=$(head -n1 <<<"$out")
ids=$(tail -n +2 <<<"$out")
check_eq "4 pushes started" 4 "$(wc -l <<<"$ids")"
# Whether kvod's debug lines are printed is the kernel's to say (dynamic
# debug's control file), not the lines under test: both kernels have it.
dyndbg=0
if grep -hs 'push\.c:[0-9]* \[kvod\][a-z0-9_]* =p "push %u: released' \
	/proc/dynamic_debug/control /sys/kernel/debug/dynamic_debug/control |
	grep -q .; then
	dyndbg=1
	check_ok "namespace torn down" wait_for 60 ns_gone "$inum"
	# shellcheck disable=SC2086 # one id per word
	check_ok "its pushes were released before pre_exit returned" \
		released_first "$inum" $ids
else
	sleep 15
	ktap_skip "namespace torn down" "kvod's debug lines are off (no dynamic debug)"
	ktap_skip "its pushes were released before pre_exit returned" \
		"kvod's debug lines are off; the kernel log check covers it"
fi

check_ok "delay knob cleared" sh -c "echo 0 > $PARAM"
fails=0 n=$(rounds 10)
for ((r = 1; r <= n; r++)); do
	# 20 packets at 400 kbit/s: about half a second each.
	next_round
	out=$(round 8 400k "0.$((RANDOM % 8))") || { fails=$((fails + 1)); ktap_print_msg "round $r failed: $out"; }
	inum=$(head -n1 <<<"$out")
	# Without kvod's debug lines pre_exit's end is not visible; the
	# kernel log check after the test covers a late release there.
	[ "$dyndbg" = 0 ] || wait_for 30 ns_gone "$inum" || fails=$((fails + 1))
done
check_eq "$n rounds of netns del as 8 pushes end" 0 "$fails"
check_ok "no push left" wait_for 20 no_pushes

kvod_unload
ktap_finish
