#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A run of rejected connects, interleaved with accepted ones: every
# reject must reach the client with kvod's status in its private data,
# never as a bare reset, and every accept must still be accepted. The
# server closes a rejected connection at once, so its reply and its FIN
# often travel together: over siw that lost the reply (a reject came as
# RDMA_CM_EVENT_REJECTED -ECONNRESET without private data) until
# selftests/qemu/siw/0002-siw-mpa-reply-with-fin.patch; rdma_hostile.sh met it
# once in a whole-suite run. This test makes 180 rejects (the unpatched
# siw.ko lost 2 of 450 in one run with KVOD_REJECT_ROUNDS=150).
#
# timeout: 600
# transports: rxe siw siwlo:debug

# shellcheck source=selftests/lib/ktap.sh
. "$(dirname "$0")/../lib/ktap.sh"
# shellcheck source=selftests/lib/rdma.sh
. "$(dirname "$0")/../lib/rdma.sh"
rdma_test_init

# On the debug kernel (KVOD_TIMEOUT_SCALE above 1) a connect over siw on
# lo takes 9 to 15 s and the race above is a matter of timing the
# checkers change anyway: there 3 rounds run each reject path under
# KASAN and lockdep, which report a bad access or lock order the first
# time it runs.
ROUNDS=60
[ "${KVOD_TIMEOUT_SCALE:-1}" -le 1 ] || ROUNDS=3
ROUNDS=${KVOD_REJECT_ROUNDS:-$ROUNDS}

ktap_header
ktap_plan 3
rdma_test_start

movie_add alpha $((1 << 20)) || ktap_bail_out "cannot add a movie"

magic=4b564f44
name=$(printf 'alpha' | od -An -tx1 | tr -d ' \n')
declare -A want=(
	[missing]="result: rejected status=1 version=1"
	[version]="result: rejected status=3 version=1"
	[badmagic]="result: rejected status=4 version=1"
	[good]="result: accepted size=1048576"
)
declare -A hex=(
	[missing]="${magic}01000000$(printf 'nosuch' | od -An -tx1 | tr -d ' \n')00"
	[version]="${magic}02000000${name}00"
	[badmagic]="4b564f4501000000${name}00"
	[good]="${magic}01000000${name}00"
)

# One client after another, the kinds in turn; each result is compared
# without the accept's segment count.
bad=0
for i in $(seq "$ROUNDS"); do
	for kind in missing version badmagic good; do
		out=$("$RDMA_CLIENT" "$RXE_ADDR" raw "${hex[$kind]}" 2>&1)
		out=${out% segments=*}
		if [ "$out" != "${want[$kind]}" ]; then
			bad=$((bad + 1))
			[ "$bad" -le 5 ] &&
				ktap_print_msg "round $i, $kind: '$out'"
		fi
	done
done
check_eq "$((ROUNDS * 4)) connects: every result as expected" 0 "$bad"
check_eq "rejects counted by reason (not_found version bad_request)" \
	"$ROUNDS $ROUNDS $ROUNDS" \
	"$(rdma_counter rej_not_found) $(rdma_counter rej_version) $(rdma_counter rej_bad_request)"
wait_test "$(time_limit 10)" = 0 rdma_counter active
check_eq "the accepted connections are all released" "$ROUNDS 0" \
	"$(rdma_counter accepted) $(rdma_counter active)"

rdma_test_stop
ktap_finish
