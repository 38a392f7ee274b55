#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Fault injection in the paths that run in kernel threads: HTTP accept and
# serving, RDMA connect request and establishment, push work, and rmmod.
# failslab and fail_page_alloc (every order, sleeping allocations too)
# fail a share of the allocations made with kvod's code on the stack, for
# each probability of $KVOD_FAULT_PROBS (default "1 10 50 100"), for
# $KVOD_FAULT_SECONDS (default 10) each and on until one did, while HTTP,
# RDMA and push clients run in loops (each has ended a run before faults
# go on). A client gets the movie byte-exact, or an error
# or reject (a push may end early: an exact prefix); none hangs. After
# each round the server serves byte-exact again with no connection left,
# and failslab and fail_page_alloc must have failed at least one of kvod's
# allocations (their count of injected failures: else nothing was tested);
# kmemleak finds no leak through kvod; and with faults injected into
# rmmod as well, kvod unloads with clients running and leaves nothing on
# the RDMA device.
#
# Needs a kernel with fault injection (the debug kernel); skips on
# Debian's.
#
# timeout: 1200

HERE=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
# shellcheck source=selftests/lib/race.sh
. "$HERE/../lib/race.sh"

read -r -a PROBS <<<"${KVOD_FAULT_PROBS:-1 10 50 100}"
FAULT_SECONDS=${KVOD_FAULT_SECONDS:-10}
HTTP_URL=http://127.0.0.1:8080/film
# A client stuck for 2 minutes (times the debug tier's scale) is hung.
RACE_CLIENT_TIMEOUT=$((120 * ${KVOD_TIMEOUT_SCALE:-1}))
# The client loops: two HTTP and two RDMA downloads and a push, but one
# HTTP download where $KVOD_TIMEOUT_SCALE is above 1. Every round waits
# for each loop's first run, and then for the runs under way to end; on
# the debug kernel five loops stretched a push's run to a minute. HTTP
# connections share nothing but the movie, which the RDMA readers share
# too; two RDMA readers also share the movie's mappings, set up and torn
# down as allocations fail.
if ((${KVOD_TIMEOUT_SCALE:-1} > 1)); then
	LOOPS=(http1 rdma1 rdma2 push1)
else
	LOOPS=(http1 http2 rdma1 rdma2 push1)
fi
trap 'fault_off 2>/dev/null; race_cleanup; rdma_test_stop' EXIT

ktap_header
fault_require
ktap_plan $((3 * ${#PROBS[@]} + 3))
# shellcheck disable=SC2119 # no module parameters
rdma_test_start
"$KVODCTL" listen http 127.0.0.1:8080 || ktap_bail_out "cannot listen on http"
race_film "$RACE_TMP/film" $((3 << 20 | 777)) ||
	ktap_bail_out "cannot make the film"
"$KVODCTL" add film "$RACE_TMP/film" || ktap_bail_out "cannot add film"
leak_mark
fault_filter

clients() {
	local l

	for l in "${LOOPS[@]}"; do
		case $l in
		http*) race_loop "$l" race_http "$HTTP_URL" "$RACE_TMP/film" ;;
		rdma*) race_loop "$l" race_rdma "$RDMA_URL/film" "$RACE_TMP/film" ;;
		push*) race_loop "$l" race_push film 5004 20M "$RACE_TMP/film.ts188" ;;
		esac
	done
}

faults_on() {
	fault_on failslab "$1"
	fault_on fail_page_alloc "$1" min-order=0
}

# some_injected: at least one allocation failed since faults_on (the
# counts stay after fault_off); SLAB and PAGE say how many.
some_injected() {
	fault_injected SLAB failslab
	fault_injected PAGE fail_page_alloc
	((SLAB + PAGE > 0))
}

# running: every loop has ended a run since the round emptied its
# outcomes: they all cycle, so kvod is at work when faults go on.
running() {
	local l

	for l in "${LOOPS[@]}"; do
		[ -s "$RACE_TMP/$l.out" ] || return 1
	done
}

# inject PROB: PROB % of kvod's allocations fail for $FAULT_SECONDS, and
# on until one did (bounded): on a slow guest a client's run takes longer
# than the window, which then held none of kvod's work (the debug kernel,
# beside other guests: "50%: failed: 0 slab and 0 page allocations").
inject() {
	faults_on "$1"
	sleep_nofork "$FAULT_SECONDS"
	wait_for "$(time_limit 60)" some_injected
	fault_off
}

# outcomes: "CORRUPT HUNG", the runs of every loop that ended so
# (race_tally: builtins).
outcomes() {
	race_tally "$RACE_TMP"/*.out
	echo "${RACE_TALLY[corrupt]} ${RACE_TALLY[hung]}"
}

# idle: no connection left on either listener, no reader on the movie:
# one kvodctl list and one jq a poll, not three kvodctl runs.
idle() {
	"$KVODCTL" list --json | jq -e --arg rdma "$RXE_EP" '
		[(.listeners[] | select(.proto == "rdma" and .address == $rdma) |
			.counters.active),
		 (.movies[] | select(.name == "film") | .active_clients),
		 ([.listeners[] | select(.proto == "http")][0].counters.active)] ==
		[0, 0, 0]' >/dev/null
}

for p in "${PROBS[@]}"; do
	rm -f "$RACE_TMP"/*.out "$RACE_TMP"/*.err
	clients
	wait_for "$(time_limit 120)" running
	inject "$p"
	race_stop
	for l in "${LOOPS[@]}"; do
		ktap_print_msg "$p%: $l: $(race_summary "$l")"
	done
	some_injected && some=yes || some=no
	ktap_print_msg "$p%: failed: $SLAB slab and $PAGE page allocations"
	check_eq "$p% of kvod's allocations fail: some did" yes "$some"
	check_eq "$p% of kvod's allocations fail: no client corrupt or hung" \
		"0 0" "$(outcomes)"
	# The loops have stopped: wait_for's last look is the check's.
	wait_for 30 idle && quiet=yes || quiet=no
	check_eq "... then no connection is left and HTTP, RDMA, push are byte-exact" \
		"yes ok ok ok" \
		"$quiet $(race_http "$HTTP_URL" "$RACE_TMP/film") $(race_rdma "$RDMA_URL/film" "$RACE_TMP/film") $(race_push film 5004 20M "$RACE_TMP/film.ts188")"
done
leak_check "no leak through kvod after the sweep (kmemleak)"

# rmmod with clients running and allocations failing.
rm -f "$RACE_TMP"/*.out
clients
wait_for "$(time_limit 120)" running
faults_on 50
race_rmmod 60
rc=$?
fault_off
race_stop
some_injected && some=yes || some=no
ktap_print_msg "rmmod: failed: $SLAB slab and $PAGE page allocations"
[ -d /sys/module/kvod ] && loaded=yes || loaded=no
check_eq "rmmod with 50% of kvod's allocations failing (some did) succeeds, no client corrupt or hung" \
	"0 no yes 0 0" "$rc $loaded $some $(outcomes)"
check_eq "no kvod PD, MR or QP left on the device" "0 0 0" \
	"$(kvod_rdma_objects | tr '\n' ' ' | sed 's/ $//')"

ktap_finish
