#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Stress: the RDMA device is deleted (rdma link del) and added again
# while clients connect and read, for $KVOD_STRESS_SECONDS (see lib/race.sh),
# through a listener on the device's address (which waits for the device
# and binds it again) and a wildcard listener (which rdma_cm moves to the
# new device), and through a third (wildcard) listener that is removed
# and added again all along, so that a listener's teardown meets the
# device's. Every download that claims success is byte-exact, none
# hangs, every rdma link del returns, every LISTEN and UNLISTEN succeeds;
# afterwards the listeners serve again, nothing is left, and rmmod during
# link changes unloads cleanly.
#
# timeout: 900
# tier: debug
# transports: rxe siw

HERE=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
# shellcheck source=selftests/lib/race.sh
. "$HERE/../lib/race.sh"
rdma_require_transport

ANY_PORT=$((RXE_PORT + 1))
ANY_URL=rdma://$RXE_ADDR:$ANY_PORT
CYC_PORT=$((RXE_PORT + 2))
CYC_URL=rdma://$RXE_ADDR:$CYC_PORT
trap 'race_cleanup; rdma_test_stop' EXIT

ktap_header
ktap_plan 11
# shellcheck disable=SC2119 # no module parameters
rdma_test_start
"$KVODCTL" listen rdma "0.0.0.0:$ANY_PORT" ||
	ktap_bail_out "cannot listen on the wildcard address"
"$KVODCTL" listen rdma "0.0.0.0:$CYC_PORT" ||
	ktap_bail_out "cannot listen on the third port"
movie_add film $((3 << 20 | 999)) || ktap_bail_out "cannot add film"

clients() {
	race_loop rdma1 race_rdma "$RDMA_URL/film" "$RDMA_TMP/film"
	race_loop rdma2 race_rdma "$RDMA_URL/film" "$RDMA_TMP/film"
	race_loop rdma3 race_rdma "$ANY_URL/film" "$RDMA_TMP/film"
	race_loop rdma4 race_rdma "$ANY_URL/film" "$RDMA_TMP/film"
	race_loop rdma5 race_rdma "$CYC_URL/film" "$RDMA_TMP/film"
}

# cycle_listener: the third listener removed (its connections closed and
# released) and added again; a line for each that fails. Not once the
# stress is over (race_settle).
cycle_listener() {
	if [ -e "$RACE_TMP/settle" ]; then
		sleep 0.5
		return
	fi
	"$KVODCTL" unlisten rdma "0.0.0.0:$CYC_PORT" >/dev/null ||
		echo "unlisten failed"
	sleep "0.$((RANDOM % 3))"
	"$KVODCTL" listen rdma "0.0.0.0:$CYC_PORT" >/dev/null ||
		echo "listen failed"
	sleep "0.$((RANDOM % 5))"
}

# stuck_stacks: where every task waiting in RDMA code is (proc_where).
stuck_stacks() {
	local p stuck=()

	for p in /proc/[0-9]*; do
		grep -qE 'ib_|rdma|cma_|siw|rxe|uverbs' "$p/stack" 2>/dev/null &&
			stuck+=("${p#/proc/}")
	done
	[ "${#stuck[@]}" = 0 ] || ktap_print_msg "$(proc_where "${stuck[@]}")"
}

# relink: one rdma link del and add; fails if either fails or hangs.
relink() {
	local err pid i

	rdma link del "$RXE_DEV" 2>"$RDMA_TMP/del.err" &
	pid=$!
	for i in $(seq 600); do
		kill -0 "$pid" 2>/dev/null || break
		if [ "$i" = 100 ]; then
			ktap_print_msg "rdma link del: still waiting after 10 s"
			stuck_stacks
			ktap_print_msg "$(ps -o pid,stat,etimes,wchan:32,args -C kvod-fetch)"
			[ -s "$RACE_TMP/rdma.err" ] &&
				ktap_print_msg "$(sort "$RACE_TMP/rdma.err" | uniq -c)"
		fi
		sleep_nofork 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		ktap_print_msg "rdma link del: no answer in 60 s"
		stuck_stacks
		kill -9 "$pid"
		return 1
	fi
	if ! wait "$pid"; then
		ktap_print_msg "rdma link del: $(cat "$RDMA_TMP/del.err")"
		return 1
	fi
	sleep "0.$((RANDOM % 5))"
	if ! err=$(rxe_link_add 2>&1); then
		ktap_print_msg "rdma link add: ${err:-the port did not become ACTIVE}"
		return 1
	fi
}

# serve_then_relink: the device stays for race_serve_pause, then relink
# (back to back, the rmmod below found no reader attached in 60 s on rxe).
# Serving first lets race_rmmod_while see a reader in the first cycle:
# an rdma link del over rxe takes about a minute on the debug kernel,
# and the rmmod, which takes 10 to 25 s there, meets the del that
# follows the pause.
# shellcheck disable=SC2317 # race_rmmod_while calls it
serve_then_relink() {
	race_serve_pause
	relink
}

clients
race_loop listener cycle_listener
race_cycles relink "rdma link del and add"
for i in 1 2 3 4 5; do
	race_check "rdma$i" "client loop $i: byte-exact or refused, never hung"
done
ktap_print_msg "listener cycles: $(grep -c . "$RACE_TMP/listener.out") failed"
check_eq "every UNLISTEN and LISTEN of the third listener succeeded" "" \
	"$(sort "$RACE_TMP/listener.out" | uniq -c | paste -sd' ')"
# shellcheck disable=SC2317 # wait_for runs it
bound() {
	[ "$(rdma_counter devices)" = 1 ]
}
wait_for 10 bound
check_eq "no connection and no reader left; the device is bound again" \
	"0 0 1" \
	"$(rdma_counter active) $(movie_clients film) $(rdma_counter devices)"
check_eq "both listeners serve byte-exact again" "ok ok" \
	"$(race_rdma "$RDMA_URL/film" "$RDMA_TMP/film") $(race_rdma "$ANY_URL/film" "$RDMA_TMP/film")"

# rmmod while the link comes and goes and clients connect. The fast
# downloads of the loops above last under a second, too short for
# race_rmmod_while to see one attached on a loaded host; two loops of
# players paced at 8 Mbit/s (3 s a download, more on a slow guest) stay
# attached between relinks.
rm -f "$RACE_TMP"/*.out
clients
RACE_RDMA_RATE=8M race_loop paced1 race_rdma "$RDMA_URL/film" "$RDMA_TMP/film"
RACE_RDMA_RATE=8M race_loop paced2 race_rdma "$ANY_URL/film" "$RDMA_TMP/film"
race_rmmod_while serve_then_relink
rc=$?
rdma link show "$RXE_DEV/1" >/dev/null 2>&1 || rxe_link_add
check_eq "rmmod under load (readers attached) succeeds, clients none corrupt, none hung" \
	"yes 0 no 0 0" "$RACE_READERS $rc $(race_after_rmmod)"
check_eq "no kvod PD, MR or QP left on the device" "0 0 0" \
	"$(kvod_rdma_objects | tr '\n' ' ' | sed 's/ $//')"

ktap_finish
