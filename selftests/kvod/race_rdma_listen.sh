#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Stress: many RDMA clients connect, read and disconnect while the
# listener is removed (UNLISTEN) and added again (LISTEN), for
# $KVOD_STRESS_SECONDS (see lib/race.sh). Every download that claims success
# must be byte-exact, none may hang, every LISTEN after an UNLISTEN must
# succeed, and afterwards nothing is left: no connection, no reader on the
# movie, and rmmod with clients still connecting leaves no kvod PD, MR or
# QP on the device.
#
# timeout: 900
# tier: debug
# transports: rxe siw

HERE=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
# shellcheck source=selftests/lib/race.sh
. "$HERE/../lib/race.sh"
rdma_require_transport

trap 'race_cleanup; rdma_test_stop' EXIT

ktap_header
ktap_plan 9
# shellcheck disable=SC2119 # no module parameters
rdma_test_start

# Two movies: one of several chunks with a ragged tail, one tiny.
movie_add big $((5 << 20 | 12345)) || ktap_bail_out "cannot add big"
movie_add small 4097 || ktap_bail_out "cannot add small"

clients() {
	local i

	for i in 1 2 3; do
		race_loop "rdma$i" race_rdma "$RDMA_URL/big" "$RDMA_TMP/big"
	done
	race_loop rdma4 race_rdma "$RDMA_URL/small" "$RDMA_TMP/small"
}

# relisten: UNLISTEN, a pause, LISTEN again; fails if either fails.
# shellcheck disable=SC2317 # race_cycles calls it
relisten() {
	local rc=0

	"$KVODCTL" unlisten rdma "$RXE_EP" || rc=1
	sleep "0.$((RANDOM % 5))"
	"$KVODCTL" listen rdma "$RXE_EP" || rc=1
	return "$rc"
}

# relisten_then_serve: UNLISTEN and LISTEN at once (with rmmod), then the
# listener stays for race_serve_pause (back to back, the rmmod below could
# wait its whole period on the debug kernel without a reader attached).
# shellcheck disable=SC2317 # race_rmmod_while calls it
relisten_then_serve() {
	"$KVODCTL" unlisten rdma "$RXE_EP" && "$KVODCTL" listen rdma "$RXE_EP"
	race_serve_pause
}

clients
race_cycles relisten "UNLISTEN and LISTEN"
for i in 1 2 3 4; do
	race_check "rdma$i" "client loop $i: byte-exact or refused, never hung"
done
check_eq "no connection and no reader left" "0 0 0" \
	"$(rdma_counter active) $(movie_clients big) $(movie_clients small)"
check_eq "the listener still serves byte-exact" ok \
	"$(race_rdma "$RDMA_URL/big" "$RDMA_TMP/big")"

# rmmod while clients connect, read and the listener is being recycled.
rm -f "$RACE_TMP"/*.out "$RDMA_TMP/rdma.err"
clients
race_rmmod_while relisten_then_serve
rc=$?
check_eq "rmmod under load (readers attached) succeeds, clients none corrupt, none hung" \
	"yes 0 no 0 0" "$RACE_READERS $rc $(race_after_rmmod)"
check_eq "no kvod PD, MR or QP left on the device" "0 0 0" \
	"$(kvod_rdma_objects | tr '\n' ' ' | sed 's/ $//')"

ktap_finish
