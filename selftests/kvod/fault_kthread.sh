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
	race_loop http1 race_http "$HTTP_URL" "$RACE_TMP/film"
	race_loop http2 race_http "$HTTP_URL" "$RACE_TMP/film"
	race_loop rdma1 race_rdma "$RDMA_URL/film" "$RACE_TMP/film"
	race_loop rdma2 race_rdma "$RDMA_URL/film" "$RACE_TMP/film"
	race_loop push1 race_push film 5004 20M "$RACE_TMP/film.ts188"
}

faults_on() {
	fault_on failslab "$1"
	fault_on fail_page_alloc "$1" min-order=0
}

# injected: "SLAB PAGE", the failures injected since faults_on.
injected() {
	echo "$(fault_injected failslab) $(fault_injected fail_page_alloc)"
}

# some_injected: at least one allocation failed since faults_on (the
# count stays after fault_off).
some_injected() {
	local slab page

	read -r slab page < <(injected)
	((slab + page > 0))
}

# running: every loop has ended a run since the round emptied its
# outcomes: they all cycle, so kvod is at work when faults go on.
running() {
	local l

	for l in http1 http2 rdma1 rdma2 push1; do
		[ -s "$RACE_TMP/$l.out" ] || return 1
	done
}

# inject PROB: PROB % of kvod's allocations fail for $FAULT_SECONDS, and
# on until one did (bounded): on a slow guest a client's run takes longer
# than the window, which then held none of kvod's work (the debug kernel,
# beside other guests: "50%: failed: 0 slab and 0 page allocations").
inject() {
	faults_on "$1"
	sleep "$FAULT_SECONDS"
	wait_for "$(time_limit 60)" some_injected
	fault_off
}

# outcomes WORD: runs of every loop that ended in WORD.
outcomes() {
	cat "$RACE_TMP"/*.out 2>/dev/null | grep -cx "$1"
}

# idle: no connection left on either listener, no reader on the movie.
idle() {
	[ "$(rdma_counter active)" = 0 ] &&
		[ "$(movie_clients film)" = 0 ] &&
		[ "$("$KVODCTL" list --json |
			jq '[.listeners[] | select(.proto == "http")][0].counters.active')" = 0 ]
}

for p in "${PROBS[@]}"; do
	rm -f "$RACE_TMP"/*.out "$RACE_TMP"/*.err
	clients
	wait_for "$(time_limit 120)" running
	inject "$p"
	read -r slab page < <(injected)
	race_stop
	for l in http1 http2 rdma1 rdma2 push1; do
		ktap_print_msg "$p%: $l: $(race_summary "$l")"
	done
	ktap_print_msg "$p%: failed: $slab slab and $page page allocations"
	check_eq "$p% of kvod's allocations fail: some did" yes \
		"$(some_injected && echo yes || echo no)"
	check_eq "$p% of kvod's allocations fail: no client corrupt or hung" \
		"0 0" "$(outcomes corrupt) $(outcomes hung)"
	wait_for 30 idle
	check_eq "... then no connection is left and HTTP, RDMA, push are byte-exact" \
		"yes ok ok ok" \
		"$(idle && echo yes || echo no) $(race_http "$HTTP_URL" "$RACE_TMP/film") $(race_rdma "$RDMA_URL/film" "$RACE_TMP/film") $(race_push film 5004 20M "$RACE_TMP/film.ts188")"
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
read -r slab page < <(injected)
race_stop
ktap_print_msg "rmmod: failed: $slab slab and $page page allocations"
check_eq "rmmod with 50% of kvod's allocations failing (some did) succeeds, no client corrupt or hung" \
	"0 no yes 0 0" \
	"$rc $([ -d /sys/module/kvod ] && echo yes || echo no) $(some_injected && echo yes || echo no) $(outcomes corrupt) $(outcomes hung)"
check_eq "no kvod PD, MR or QP left on the device" "0 0 0" \
	"$(kvod_rdma_objects | tr '\n' ' ' | sed 's/ $//')"

ktap_finish
