#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Live channels over RDMA while their writer comes and goes (live_rdma.sh
# covers the readers' side): kvod-fetch joining a channel that already has
# chunks starts at the newest complete one; readers (one with notes, one
# polling) wait, not fail, across a writer's pause and a writer's death
# (which completes its last chunk with whole packets only), take every
# chunk of the next writer, and DEL while that writer feeds
# ends them cleanly and tells the writer; a chunk the ring overwrites
# between the READ of its bytes and the second READ of its slot entry is
# dropped and counted as torn, and the reader goes on at the newest chunk
# with nothing torn in its output (kvod-fetch's KVOD_FETCH_TEST_STALL
# holds it between the two READs while the test overwrites the slot).
# Every reader's output is checked packet by packet by live_tool.py.
# timeout: 600
# transports: rxe siw

# shellcheck source=selftests/kvod/live_rdma_lib.bash
. "$(dirname "$0")/live_rdma_lib.bash"

# finish NAME TAG LAST: once reader TAG took packet LAST, DEL channel
# NAME; wait for the reader to end, print what it said, and put its
# check line in $r.
finish() {
	wait_test "$(time_limit 60)" = "$3" last "$2"
	"$KVODCTL" del "$1"
	wait
	r=$(cat "$RDMA_TMP/$2.check")
	ktap_print_msg "reader $2: $r" "$(cat "$RDMA_TMP/$2.fetch")"
}

# running TAG...: "running" if every reader TAG's kvod-fetch still runs
# (it has not left its status in TAG.rc), else the first that stopped.
running() {
	local t

	for t; do
		if [ -e "$RDMA_TMP/$t.rc" ]; then
			echo "$t stopped (exit $(cat "$RDMA_TMP/$t.rc"))"
			return
		fi
	done
	echo running
}

# reader_end TAG BASE: "FIRST TORN GAPS BACKWARDS whole-chunks|cut exit
# RC" of reader TAG's check line and status: kvod-fetch writes whole
# chunks, so its last packet ends one of those from packet BASE on.
reader_end() {
	local r

	r=$(cat "$RDMA_TMP/$1.check")
	echo "$(fields "$r" first torn gaps backwards)" \
		"$([ $(($(field last "$r") + 1 - $2)) -gt 0 ] &&
			[ $((($(field last "$r") + 1 - $2) % PPC)) = 0 ] &&
			echo whole-chunks || echo cut)" \
		"exit $(cat "$RDMA_TMP/$1.rc")"
}

ktap_header
ktap_plan 9
rdma_test_start

# --- A reader that joins late ------------------------------------------
# Ten chunks are complete before it connects: it starts at chunk 9, the
# newest, and takes it and the next one, whole.
"$KVODCTL" live create late --rdma --chunk "$CHUNK" --chunks 16 ||
	ktap_bail_out "cannot create channel late"
live_feed late $((10 * PPC))
play late late
live_feed late "$PPC" --start $((10 * PPC))
finish late late $((11 * PPC - 1))
check_eq "a reader joining after 10 chunks starts at the newest, chunk 9" \
	"kvod-fetch: live: from chunk 9" \
	"$(grep -o 'kvod-fetch: live: from chunk [0-9]*' "$RDMA_TMP/late.fetch")"
check_eq "... and takes chunks 9 and 10 whole, in order, then ends with DEL" \
	"$((9 * PPC)) $((11 * PPC - 1)) 0 0 0 0 exit 0" \
	"$(fields "$r" first last torn gaps backwards) $(summary late skipped) exit $(cat "$RDMA_TMP/late.rc")"

# --- A writer that pauses, one that dies, and DEL under a third ----------
# Two readers from the first chunk, one with notes (over iWARP it polls
# too) and one polling. The first writer writes five chunks through a
# FIFO, pauses, writes five more and half a chunk, and is killed
# (SIGKILL) in the middle of a packet; a second writer then feeds until
# DEL.
"$KVODCTL" live create wr --rdma --chunk "$CHUNK" --chunks 64 ||
	ktap_bail_out "cannot create channel wr"
play wr wn
play wr wp --poll 20
mkfifo "$RDMA_TMP/feed"
"$KVODCTL" live feed wr <"$RDMA_TMP/feed" &
writer=$!
exec 7>"$RDMA_TMP/feed"
"${LT[@]}" gen $((5 * PPC)) >&7
wait_test "$(time_limit 30)" = $((5 * PPC - 1)) last wn
wait_test "$(time_limit 30)" = $((5 * PPC - 1)) last wp
sleep "$(time_limit 3)"
check_eq "a writer that pauses: both readers took its 5 chunks and wait" \
	"$((5 * PPC - 1)) $((5 * PPC - 1)) running" \
	"$(last wn) $(last wp) $(running wn wp)"

# Five chunks more, then 8 packets and 100 bytes of a ninth: the chunk
# the writer's death completes must hold the 8 whole packets alone.
"${LT[@]}" gen $((5 * PPC + 8)) --start $((5 * PPC)) >&7
"${LT[@]}" gen 1 --start $((10 * PPC + 8)) | head -c 100 >&7
wait_test "$(time_limit 30)" = $((10 * CHUNK + 8 * 188 + 100)) \
	movie_field wr written
kill -KILL "$writer"
wait "$writer" 2>/dev/null
exec 7>&-
NEXT=$((10 * PPC + 8))	# the next writer's first packet
wait_test "$(time_limit 30)" = $((NEXT - 1)) last wn
wait_test "$(time_limit 30)" = $((NEXT - 1)) last wp
sleep "$(time_limit 2)"
check_eq "a writer killed mid-packet: its death completed an 11th chunk of the 8 whole packets; both readers took all and wait" \
	"11 $((NEXT - 1)) $((NEXT - 1)) running" \
	"$(movie_field wr chunks_done) $(last wn) $(last wp) $(running wn wp)"

# The next writer, at 100 packets a second (divided by the timeout
# scale), numbered on from the first; DEL while it feeds (and breaks
# the generator's pipe: no word of that).
"${LT[@]}" gen 1000000 --start "$NEXT" \
	--rate $((100 / ${KVOD_TIMEOUT_SCALE:-1})) 2>/dev/null |
	"$KVODCTL" live feed wr 2>"$RDMA_TMP/writer2.err" &
wait_test "$(time_limit 60)" -ge 16 movie_field wr chunks_done
"$KVODCTL" del wr
wait
rn=$(cat "$RDMA_TMP/wn.check")
rp=$(cat "$RDMA_TMP/wp.check")
ktap_print_msg "notes: $rn" "$(cat "$RDMA_TMP/wn.fetch")" \
	"polling: $rp" "$(cat "$RDMA_TMP/wp.fetch")"
check_eq "DEL under a feeding writer: both readers took every chunk from the first, whole, in order, and exit 0" \
	"0 0 0 0 whole-chunks exit 0; 0 0 0 0 whole-chunks exit 0" \
	"$(reader_end wn "$NEXT"); $(reader_end wp "$NEXT")"
check_ok "... past the second writer's first 5 chunks (last packets $(field last "$rn") and $(field last "$rp"))" \
	test "$(field last "$rn")" -ge $((NEXT + 5 * PPC - 1)) \
	-a "$(field last "$rp")" -ge $((NEXT + 5 * PPC - 1))
check_eq "... and the writer was told" \
	"kvodctl: live feed wr: the channel was deleted" \
	"$(cat "$RDMA_TMP/writer2.err")"

# --- A chunk overwritten between its READs --------------------------------
# A ring of 4 slots. The reader READs chunk 0's bytes and stalls before
# READing the entry again; meanwhile chunks 1 to 8 are written, so slot 0
# holds chunk 8. It must drop chunk 0 as torn and go on at chunk 8.
"$KVODCTL" live create tt --rdma --chunk "$CHUNK" --chunks 4 ||
	ktap_bail_out "cannot create channel tt"
touch "$RDMA_TMP/stall"
KVOD_FETCH_TEST_STALL=$RDMA_TMP/stall play tt tt
live_feed tt "$PPC"
wait_for "$(time_limit 30)" grep -q "test stall after chunk 0's bytes" \
	"$RDMA_TMP/tt.fetch"
live_feed tt $((8 * PPC)) --start "$PPC"
stalled=$(grep -c "test stall" "$RDMA_TMP/tt.fetch")
rm "$RDMA_TMP/stall"
finish tt tt $((9 * PPC - 1))
check_eq "a chunk overwritten between its READs: 1 torn, counted and dropped; the reader goes on at chunk 8, 8 skipped" \
	"stalled 1: 1 torn 8 skipped" \
	"stalled $stalled: $(summary tt torn) torn $(summary tt skipped) skipped"
check_eq "... nothing torn written: it output chunk 8 alone, whole, and exits 0" \
	"$((8 * PPC)) $((9 * PPC - 1)) 0 0 0 exit 0" \
	"$(fields "$r" first last torn gaps backwards) exit $(cat "$RDMA_TMP/tt.rc")"

rdma_test_stop
ktap_finish
