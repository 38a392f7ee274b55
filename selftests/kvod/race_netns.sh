#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Stress: network namespaces die with kvod in them, for
# $KVOD_STRESS_SECONDS (see lib/race.sh). Each round builds a namespace
# reached over a veth, starts in it an HTTP listener with downloads
# running and two pushes timed to end by themselves just when "ip netns
# del" runs. (RDMA listeners live only in the initial namespace:
# rdma_netns.sh checks that LISTEN rdma elsewhere is refused.) Each
# round the namespace's listeners and pushes must be gone within 20 s;
# downloads and the received push must be byte-exact or cut short (an
# exact prefix), never hung. Last, a namespace with all of that is
# deleted while kvod is unloaded.
#
# timeout: 900
# tier: debug

# shellcheck disable=SC2317 # functions that trap and wait_for run
HERE=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
# shellcheck source=selftests/lib/race.sh
. "$HERE/../lib/race.sh"

NS=kvod-race-$$
NS_ADDR=198.18.2.1
HOST_ADDR=198.18.2.2
VETH=kvn
# A 1 MiB movie pushed at 8 Mbit/s lasts about a second.
PUSH_RATE=8000000
cleanup() {
	ip netns del "$NS" 2>/dev/null
	race_cleanup
	kvod_unload
}
trap cleanup EXIT

ktap_header
ktap_plan 7
# shellcheck disable=SC2119 # no module parameters
kvod_load || ktap_bail_out "cannot load kvod.ko"
race_film "$RACE_TMP/film" $((1 << 20 | 2345)) ||
	ktap_bail_out "cannot make the film"
"$KVODCTL" add film "$RACE_TMP/film" || ktap_bail_out "cannot add film"
PUSH_MS=$(($(stat -c %s "$RACE_TMP/film") * 8 * 1000 / PUSH_RATE))

# ns_up: the namespace, its veth to us, and kvod's listeners in it.
ns_up() {
	ip netns add "$NS" &&
		ip link add "${VETH}0" type veth peer name "${VETH}1" netns "$NS" &&
		ip addr add "$HOST_ADDR/30" dev "${VETH}0" &&
		ip link set "${VETH}0" up &&
		ip -n "$NS" addr add "$NS_ADDR/30" dev "${VETH}1" &&
		ip -n "$NS" link set "${VETH}1" up && ip -n "$NS" link set lo up &&
		ip netns exec "$NS" "$KVODCTL" listen http "$NS_ADDR:8080"
}

# kvod_in_ns INUM: listeners and pushes kvod has in namespace INUM.
kvod_in_ns() {
	"$KVODCTL" list --json |
		jq --argjson n "$1" '[.listeners[], .pushes[] | select(.netns == $n)] | length'
}

# ns_empty INUM: kvod has nothing left in namespace INUM.
ns_empty() {
	[ "$(kvod_in_ns "$1")" = 0 ]
}

# The pushes: one to a receiver here, over the veth, one to nobody.
push_start() {
	ip netns exec "$NS" "$KVODCTL" push film "udp://$HOST_ADDR:5004" \
		--rate "$PUSH_RATE" >/dev/null &&
		ip netns exec "$NS" "$KVODCTL" push film udp://127.0.0.1:5006 \
			--rate "$PUSH_RATE" >/dev/null
}

# push_rx: receive the push over the veth; its outcome to push.out.
push_rx() {
	local rc=0

	race_rx_cmd 5004 "$RACE_TMP/rx" "$PUSH_RATE"
	timeout -k 5 "$RACE_CLIENT_TIMEOUT" "${RACE_RX_CMD[@]}" \
		>"$RACE_TMP/rx.log" 2>&1 || rc=$?
	race_rx "$RACE_TMP/rx.log"
	if [ "$rc" = 0 ] && race_rx_lossy; then
		echo lossy
	elif [ "$rc" = 0 ] && race_is_prefix "$RACE_TMP/rx" "$RACE_TMP/film.ts188"; then
		echo cut
	elif [ "$rc" = 0 ] && [ ! -s "$RACE_TMP/rx" ]; then
		echo err
	else
		race_verdict "$rc" "$RACE_TMP/rx" "$RACE_TMP/film.ts188"
	fi
}

# round: one namespace's life; fails if what kvod had in it outlives it.
round() {
	local inum ms

	ns_up || { ktap_print_msg "cannot build namespace $NS"; return 2; }
	inum=$(stat -L -c %i "/run/netns/$NS")
	push_rx >>"$RACE_TMP/push.out" &
	RACE_PIDS+=($!)
	wait_for "$(time_limit 10)" grep -qs listening "$RACE_TMP/rx.log"
	for _ in 1 2; do
		race_http "http://$NS_ADDR:8080/film" "$RACE_TMP/film" \
			>>"$RACE_TMP/http.out" &
		RACE_PIDS+=($!)
	done
	# Both requests in before the pushes start the clock to the end:
	# on a slow kernel curl may not even connect within a push's second.
	wait_test "$(time_limit 10)" -ge 2 \
		listener_counter http "$NS_ADDR:8080" accepted
	if ! push_start; then
		ktap_print_msg "cannot start the pushes"
		unstarted=$((unstarted + 1))
	fi
	# Delete the namespace around the moment the pushes end.
	ms=$((PUSH_MS + RANDOM % 600 - 300))
	((ms > 0)) || ms=0
	sleep "$((ms / 1000)).$(printf %03d $((ms % 1000)))"
	ip netns del "$NS"
	if ! wait_for "$(time_limit 20)" ns_empty "$inum"; then
		ktap_print_msg "namespace $inum: kvod still has, $(time_limit 20) s after ip netns del:" \
			"$("$KVODCTL" list 2>&1)"
		return 1
	fi
	wait "${RACE_PIDS[@]}"
	RACE_PIDS=()
	rm -f "$RACE_TMP/rx.log"
}

race_begin
rounds=0
leftover=0
unstarted=0
while race_until; do
	rounds=$((rounds + 1))
	round || { leftover=1; break; }
done
ktap_print_msg "$rounds namespaces deleted in $RACE_SECONDS s"
check_eq "every namespace took its listeners and pushes along" 0 "$leftover"
race_check http "HTTP downloads from a dying namespace: whole or cut, never hung"
race_tally "$RACE_TMP/push.out"
ktap_print_msg "push: $(race_format)"
# A push may deliver nothing when the namespace dies first ("err"), but
# every round must have started its pushes.
check_eq "the received push: whole or an exact prefix, never corrupt or hung; every push started" \
	"0 0 0" "${RACE_TALLY[corrupt]} ${RACE_TALLY[hung]} $unstarted"
kvod_stats
check_eq "nothing of kvod left in any namespace, no reader on the movie" \
	"0 0 0" \
	"$("$KVODCTL" list --json | jq '.listeners + .pushes | length') $(movie_clients film) ${KVOD_STATS[zombies]:-}"

# A namespace with listeners, downloads and pushes deleted during rmmod:
# a fresh one, whatever became of the last round's.
ip netns del "$NS" 2>/dev/null
NS=$NS-rm
VETH=kvm
NS_ADDR=198.18.3.1
HOST_ADDR=198.18.3.2
rm -f "$RACE_TMP"/*.out "$RACE_TMP/rx.log"
if ! ns_up; then
	ktap_print_msg "cannot build namespace $NS"
else
	push_rx >>"$RACE_TMP/push.out" &
	RACE_PIDS+=($!)
	race_http "http://$NS_ADDR:8080/film" "$RACE_TMP/film" \
		>>"$RACE_TMP/http.out" &
	RACE_PIDS+=($!)
	wait_for "$(time_limit 10)" grep -qs listening "$RACE_TMP/rx.log"
	push_start
	ip netns exec "$NS" "$KVODCTL" push film udp://127.0.0.1:5008 --loop \
		--rate "$PUSH_RATE" \
		>/dev/null
fi
ip netns del "$NS" &
del=$!
race_rmmod 60
rc=$?
timeout 60 tail --pid="$del" -f /dev/null
wait "$del"
rc_del=$?
check_eq "rmmod and ip netns del at once both succeed, kvod is gone" \
	"0 0 no" "$rc $rc_del $([ -d /sys/module/kvod ] && echo yes || echo no)"
wait "${RACE_PIDS[@]}"
RACE_PIDS=()
check_eq "... their clients: none corrupt, none hung" "no 0 0" \
	"$(race_after_rmmod)"
wait_for "$(time_limit 20)" test ! -e /sys/class/net/kvn0 -a ! -e /sys/class/net/kvm0
check_eq "... and the namespaces' devices are gone" "no no" \
	"$([ -e /sys/class/net/kvn0 ] && echo yes || echo no) $([ -e /sys/class/net/kvm0 ] && echo yes || echo no)"

ktap_finish
