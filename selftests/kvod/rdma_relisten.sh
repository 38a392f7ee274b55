#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Listener teardown racing connections: UNLISTEN and LISTEN again while
# clients connect, are set up and read (connections in every state meet
# the stopping listener, and the last release wakes the stopper), then
# rdma link del / add while clients connect to a listener bound to the
# device's address (the listener unbinds and rebinds each time). Every
# step must return in bounded time, every client must end (byte-exact or
# with an error), the listeners must have accepted some of them (the
# last round of each kind waits for one), the server must serve
# byte-exact afterwards, and nothing of kvod may stay on the device. Races: a pass is evidence, and
# the debug kernel (KASAN, lockdep) is what sees a lost one.
#
# timeout: 900
# transports: rxe siw

# shellcheck source=selftests/lib/ktap.sh
. "$(dirname "$0")/../lib/ktap.sh"
# shellcheck source=selftests/lib/rdma.sh
. "$(dirname "$0")/../lib/rdma.sh"
rdma_test_init

ktap_header
ktap_plan 10
rdma_test_start

movie_add film $((3 << 20)) || ktap_bail_out "cannot add a movie"
want=$(sha256sum <"$RDMA_TMP/film")

# clients N: N background fetches of film, each checked when reaped.
clients() {
	local i

	for i in $(seq "$1"); do
		"$KVOD_FETCH" -q --timeout 20000 -o "$RDMA_TMP/out.$i" \
			"$RDMA_URL/film" 2>>"$RDMA_TMP/errs" &
		pids+=($!)
	done
}

# reap: wait for every client; $wrong counts outputs that are neither
# byte-exact nor from a client that reported an error (exit status 1),
# and clients that died of a signal (a crash is no error report).
reap() {
	local p i=0 rc

	wrong=0
	for p in "${pids[@]}"; do
		i=$((i + 1))
		wait "$p"
		rc=$?
		if [ "$rc" = 0 ]; then
			[ "$(sha256sum <"$RDMA_TMP/out.$i")" = "$want" ] ||
				wrong=$((wrong + 1))
		elif [ "$rc" -gt 128 ]; then
			ktap_print_msg "client $i died of signal $((rc - 128))"
			wrong=$((wrong + 1))
		fi
	done
	pids=()
}

# accepted: the listener's accepted connections (0 if it is not there).
accepted() {
	local n

	n=$(rdma_counter accepted)
	echo "${n:-0}"
}

# Each round's listener is new; the last round waits for a connection
# before UNLISTEN, so that at least one meets it established. $met sums
# what each listener accepted before its UNLISTEN.
slow=0 met=0 n=$(rounds 10)
for ((round = 1; round <= n; round++)); do
	pids=()
	clients 4
	sleep 0.$((RANDOM % 10))
	[ "$round" != "$n" ] ||
		wait_test "$(time_limit 30)" -ge 1 accepted
	met=$((met + $(accepted)))
	t0=$SECONDS
	timeout 60 "$KVODCTL" unlisten rdma "$RXE_EP" || slow=$((slow + 1))
	[ $((SECONDS - t0)) -le 30 ] || slow=$((slow + 1))
	timeout 60 "$KVODCTL" listen rdma "$RXE_EP" || slow=$((slow + 1))
	reap
	[ "$wrong" = 0 ] || ktap_print_msg "round $round: $wrong wrong output(s)"
	bad=$((${bad:-0} + wrong))
done
ktap_print_msg "client errors: $(sort "$RDMA_TMP/errs" | uniq -c | tr '\n' ';')"
check_eq "$n x UNLISTEN/LISTEN under 4 connecting clients: each within 30 s" \
	0 "$slow"
check_eq "every client ended, byte-exact or with an error" 0 "$bad"
check_ok "clients met the listeners ($met accepted before an UNLISTEN)" \
	test "$met" -gt 0
check_eq "then serves byte-exact, nothing left active" "$want 0" \
	"$("$KVOD_FETCH" -q "$RDMA_URL/film" | sha256sum) $(rdma_counter active)"

: >"$RDMA_TMP/errs"
# The listener stays: what it accepted over the rounds, the last one
# waiting for a connection before the link goes.
slow=0 bad=0 met=$(accepted)
for round in $(seq 4); do
	pids=()
	r0=$(accepted)
	clients 3
	sleep 0.$((RANDOM % 10))
	[ "$round" != 4 ] ||
		wait_test "$(time_limit 30)" -gt "$r0" accepted
	timeout 60 rdma link del "$RXE_DEV" || slow=$((slow + 1))
	rxe_link_add || slow=$((slow + 1))
	reap
	bad=$((bad + wrong))
	wait_test 20 = 1 rdma_counter devices || slow=$((slow + 1))
done
ktap_print_msg "client errors: $(sort "$RDMA_TMP/errs" | uniq -c | tr '\n' ';')"
check_eq "4 x rdma link del/add under connecting clients: no hang, rebinds" \
	0 "$slow"
check_eq "every client ended, byte-exact or with an error" 0 "$bad"
met=$(($(accepted) - met))
check_ok "clients met the listener ($met accepted)" test "$met" -gt 0
check_eq "then serves byte-exact" "$want" \
	"$(timeout 60 "$KVOD_FETCH" -q --timeout 20000 "$RDMA_URL/film" | sha256sum)"

t0=$SECONDS
timeout 60 rmmod kvod
check_eq "rmmod within 30 s" "0 yes" "$? $([ $((SECONDS - t0)) -le 30 ] && echo yes)"
check_eq "no kvod PD, MR or QP left on the device" "0 0 0" \
	"$(kvod_rdma_objects | tr '\n' ' ' | sed 's/ $//')"

rdma_test_stop
ktap_finish
