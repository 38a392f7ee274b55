#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Stress: DEL and ADD of one name, alternating between two files of
# different sizes and contents, while HTTP, RDMA and push clients read
# that name, for $KVOD_STRESS_SECONDS (see lib/race.sh). A client that got the
# movie must have got exactly one of the two files (never a mix, never a
# freed page); a client that started while the name was absent gets an
# error. Afterwards no deleted movie stays resident, and rmmod with all
# of it running unloads and leaves nothing on the RDMA device.
#
# timeout: 900
# tier: debug

HERE=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
# shellcheck source=selftests/lib/race.sh
. "$HERE/../lib/race.sh"

HTTP_URL=http://127.0.0.1:8080/film
PUSH_RATE=40M
trap 'race_cleanup; rdma_test_stop' EXIT

ktap_header
ktap_plan 9
# shellcheck disable=SC2119 # no module parameters
rdma_test_start
"$KVODCTL" listen http 127.0.0.1:8080 || ktap_bail_out "cannot listen on http"

# Version A: 3 chunks and a ragged tail; version B: smaller, other bytes.
race_film "$RACE_TMP/A" $((4 << 20 | 4321)) || ktap_bail_out "cannot make A"
race_film "$RACE_TMP/B" $((2 << 20 | 777)) || ktap_bail_out "cannot make B"
"$KVODCTL" add film "$RACE_TMP/A" || ktap_bail_out "cannot add film"

clients() {
	race_loop http1 race_http "$HTTP_URL" "$RACE_TMP/A" "$RACE_TMP/B"
	race_loop http2 race_http "$HTTP_URL" "$RACE_TMP/A" "$RACE_TMP/B"
	race_loop rdma1 race_rdma "$RDMA_URL/film" "$RACE_TMP/A" "$RACE_TMP/B"
	race_loop rdma2 race_rdma "$RDMA_URL/film" "$RACE_TMP/A" "$RACE_TMP/B"
	race_loop push1 race_push film 5004 "$PUSH_RATE" \
		"$RACE_TMP/A.ts188" "$RACE_TMP/B.ts188"
}

# readd: one DEL and ADD of film, from the next version.
v=0
readd() {
	local f

	f=$([ $((v++ % 2)) = 0 ] && echo B || echo A)
	"$KVODCTL" del film &&
		sleep "0.$((RANDOM % 3))" &&
		"$KVODCTL" add film "$RACE_TMP/$f"
}

clients
race_cycles readd "DEL and ADD"
race_check http1 "HTTP client 1: one whole version or an error, never hung"
race_check http2 "HTTP client 2: one whole version or an error, never hung"
race_check rdma1 "RDMA client 1: one whole version or an error, never hung"
race_check rdma2 "RDMA client 2: one whole version or an error, never hung"
race_check push1 "push client: one whole version or no push, never hung"
[ -s "$RACE_TMP/push.stats" ] &&
	ktap_print_msg "last push: $(tail -n1 "$RACE_TMP/push.stats")"

# no_zombies: one movie, no zombie; its last reading is the one checked.
# shellcheck disable=SC2317 # wait_for runs it
no_zombies() {
	kvod_stats &&
		[ "${KVOD_STATS[movies]:-} ${KVOD_STATS[zombies]:-}" = "1 0" ]
}
wait_for 20 no_zombies
check_eq "one movie left, no deleted one still resident" "1 0" \
	"${KVOD_STATS[movies]:-} ${KVOD_STATS[zombies]:-}"

# rmmod with every kind of client running and the name being re-added.
# Back to back, the re-adds left the name absent nearly all the time and
# no client was found served in 60 s: each version stays for
# race_serve_pause.
# shellcheck disable=SC2317 # race_rmmod_while calls it
readd_then_serve() {
	readd
	race_serve_pause
}
rm -f "$RACE_TMP"/*.out
clients
race_rmmod_while readd_then_serve
rc=$?
check_eq "rmmod under load (readers attached) succeeds, clients none corrupt, none hung" \
	"yes 0 no 0 0" "$RACE_READERS $rc $(race_after_rmmod)"
check_eq "no kvod PD, MR or QP left on the device" "0 0 0" \
	"$(kvod_rdma_objects | tr '\n' ' ' | sed 's/ $//')"

ktap_finish
