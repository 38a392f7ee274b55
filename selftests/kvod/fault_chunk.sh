#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Chunk allocation that falls back below 2 MiB: with fail_page_alloc
# failing every other order-9 allocation made from kvod's code (min-order
# 9, interval 2), a movie is made of 2 MiB and 1 MiB chunks in turn, so
# most of its 2 MiB chunks start at offsets that are not 2 MiB-aligned.
# The movie must still be byte-exact over HTTP (whole and a range across
# chunks), over RDMA (whole and a range) and as a push; and once the
# injection stops, a new movie is made of 2 MiB chunks again.
#
# Needs a kernel with fault injection (the debug kernel); skips on
# Debian's.
#
# timeout: 600

HERE=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
# shellcheck source=selftests/lib/race.sh
. "$HERE/../lib/race.sh"

HTTP_URL=http://127.0.0.1:8080
trap 'fault_off 2>/dev/null; race_cleanup; rdma_test_stop' EXIT

ktap_header
fault_require
ktap_plan 9
# shellcheck disable=SC2119 # no module parameters
rdma_test_start
"$KVODCTL" listen http 127.0.0.1:8080 || ktap_bail_out "cannot listen on http"
leak_mark
fault_filter

# 12 MiB and a ragged tail: 6 chunks and a few small ones unfragmented.
SIZE=$((12 << 20 | 54321))
race_film "$RACE_TMP/film" "$SIZE" || ktap_bail_out "cannot make the film"

"$KVODCTL" add plain "$RACE_TMP/film" || ktap_bail_out "cannot add plain"
plain=$("$KVODCTL" info plain --json | jq .chunks)
"$KVODCTL" del plain

fault_on fail_page_alloc 100 min-order=9 interval=2
"$KVODCTL" add film "$RACE_TMP/film"
rc=$?
fault_off
chunks=$("$KVODCTL" info film --json | jq .chunks)
ktap_print_msg "chunks: $plain without faults, $chunks with every other 2 MiB allocation failed"
check_eq "ADD succeeds with smaller chunks" "0 yes" \
	"$rc $([ "${chunks:-0}" -gt "$plain" ] && echo yes)"

# range FROM LEN: those bytes of the source.
range() {
	tail -c +"$(($1 + 1))" "$RACE_TMP/film" | head -c "$2"
}
# Across the first 2 MiB/1 MiB boundary and the next, unaligned 2 MiB one.
OFF=$(((2 << 20) - 4096))
LEN=$(((2 << 20) + 8192))
range "$OFF" "$LEN" >"$RACE_TMP/range"

check_eq "HTTP: the whole movie is byte-exact" ok \
	"$(race_http "$HTTP_URL/film" "$RACE_TMP/film")"
curl -sSf -r "$OFF-$((OFF + LEN - 1))" -o "$RACE_TMP/http.range" \
	"$HTTP_URL/film"
check_ok "HTTP: a range across chunks is byte-exact" \
	cmp "$RACE_TMP/http.range" "$RACE_TMP/range"
check_eq "RDMA: the whole movie is byte-exact" ok \
	"$(race_rdma "$RDMA_URL/film" "$RACE_TMP/film")"
"$KVOD_FETCH" -q --offset "$OFF" --length "$LEN" -o "$RACE_TMP/rdma.range" \
	"$RDMA_URL/film"
check_ok "RDMA: a range across chunks is byte-exact" \
	cmp "$RACE_TMP/rdma.range" "$RACE_TMP/range"
"$RDMA_CLIENT" "$RXE_ADDR" table film >"$RACE_TMP/table" 2>&1
ktap_print_msg "RDMA segments (offset addr length rkey):" \
	"$(head -n 12 "$RACE_TMP/table")"
check_eq "push: the movie arrives byte-exact" ok \
	"$(race_push film 5004 40M "$RACE_TMP/film.ts188")"
[ -s "$RACE_TMP/push.err" ] && ktap_print_msg "push: $(cat "$RACE_TMP/push.err")"
[ -s "$RACE_TMP/push.stats" ] && ktap_print_msg "push: $(cat "$RACE_TMP/push.stats")"

"$KVODCTL" add again "$RACE_TMP/film"
check_eq "without injection, 2 MiB chunks again" "$plain" \
	"$("$KVODCTL" info again --json | jq .chunks)"
check_eq "no reader left on the movies" "0 0" \
	"$(movie_clients film) $(movie_clients again)"
leak_check "no leak through kvod (kmemleak)"

ktap_finish
