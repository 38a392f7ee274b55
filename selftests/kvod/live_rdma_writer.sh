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
# The same with kvod-fetch --fence, which posts that second READ together
# with the bytes' READs, fenced: where a fenced READ is served (rxe; siw
# serves neither it nor any READ after it, and kvod-fetch does not fence
# over iWARP), the order of the READs as rxe sends them (fprobes) shows
# none sent before the READs posted ahead of it ended; a chunk overwritten
# between its READs is dropped as torn; and under a writer that laps a
# ring of 2 slots the reader writes whole chunks alone, byte-exact.
# Every reader's output is checked packet by packet by live_tool.py.
# timeout: 600
# transports: rxe siw

# shellcheck source=selftests/lib/ktap.sh
. "$(dirname "$0")/../lib/ktap.sh"
# shellcheck source=selftests/lib/rdma.sh
. "$(dirname "$0")/../lib/rdma.sh"
# shellcheck source=selftests/lib/live.sh
. "$(dirname "$0")/../lib/live.sh"
rdma_test_init

T=/sys/kernel/tracing

rdma_on_exit() {
	fence_probes_del
}

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

# fence_probes_add: fprobes on rxe_post_send() (work posted, by the task
# named in the trace line: a user QP's doorbell has no work request,
# wr=0x0, a kernel caller's, such as rdma_cm's MADs, has) and
# rxe_xmit_packet() (a packet rxe sends, its BTH opcode and PSN, read
# through BTF). Fails without them (siw, or a kernel without BTF).
fence_probes_add() {
	[ "$RDMA_LINK_TYPE" = rxe ] && [ -e /sys/kernel/btf/vmlinux ] ||
		return 1
	[ -d "$T/events" ] || mount -t tracefs nodev "$T"
	# shellcheck disable=SC2016 # $arg2 is the probe's, not the shell's
	echo 'f:kvodfence/post rxe_post_send wr=$arg2:x64' >>"$T/dynamic_events" &&
		echo 'f:kvodfence/xmit rxe_xmit_packet op=pkt->opcode:u8 psn=pkt->psn:u32' 			>>"$T/dynamic_events"
}

fence_probes_del() {
	[ -d "$T/events/kvodfence" ] || return 0
	echo 0 >"$T/events/kvodfence/enable"
	echo '-:kvodfence/post' >>"$T/dynamic_events"
	echo '-:kvodfence/xmit' >>"$T/dynamic_events"
}

fence_trace_on() {
	echo >"$T/trace"
	echo 1 >"$T/events/kvodfence/enable"
}

# fence_trace_off: "reads=N pipelined=N overlapped=N" since
# fence_trace_on, on a device where only kvod-fetch READs, and only
# READs: its READs (requests of new PSNs, opcode 12), its posts made
# while a READ it posted before had not had its last response (15 or 16)
# sent, and the READs sent while one sent before had not.
fence_trace_off() {
	echo 0 >"$T/events/kvodfence/enable"
	awk '
	/ post: / {
		if ($1 !~ /^kvod-fetch-/ || $NF != "wr=0x0")
			next
		if (posts > lasts)
			piped++
		posts++
		next
	}
	/ xmit: / {
		op = psn = ""
		for (i = 1; i <= NF; i++) {
			if ($i ~ /^op=/)
				op = substr($i, 4)
			if ($i ~ /^psn=/)
				psn = substr($i, 5)
		}
		if (op == 12 && !(("q" psn) in seen)) {
			seen["q" psn] = 1
			if (reads > lasts)
				over++
			reads++
		} else if ((op == 15 || op == 16) && !(("r" psn) in seen)) {
			seen["r" psn] = 1
			lasts++
		}
	}
	END { printf "reads=%d pipelined=%d overlapped=%d\n", reads, piped, over }
	' "$T/trace"
}

# fence_outcomes: rdma_client fence's lines as "plain OUTCOME fenced
# OUTCOME after OUTCOME", each OUTCOME "success" or "failed".
fence_outcomes() {
	awk -F': ' '{ printf "%s%s %s", (NR > 1 ? " " : ""), $1,
		($2 == "success" ? "success" : "failed") } END { print "" }'
}

ktap_header
ktap_plan 16
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

# --- A fenced reader -------------------------------------------------------
# kvod-fetch --fence posts the READs of a chunk's bytes and the second
# READ of its slot entry together, that one with IBV_SEND_FENCE: the
# device must send it only once the bytes' READs ended (kvod_rdma.h).
# First what a device does with a fenced READ: rxe serves it, and the
# connection serves on; siw refuses it and serves neither it nor a READ
# posted after it, so kvod-fetch fences no READ over iWARP.
movie_add fm 65536 || ktap_bail_out "cannot add movie fm"
out=$("$RDMA_CLIENT" "$RXE_ADDR" fence fm 2>&1)
ktap_print_msg "$out"
if rdma_iwarp; then
	check_eq "siw serves no fenced READ, nor a READ posted after it" \
		"plain success fenced failed after failed" \
		"$(fence_outcomes <<<"$out")"
else
	check_eq "a fenced READ completes, and the connection serves on" \
		"plain success fenced success after success" \
		"$(fence_outcomes <<<"$out")"
fi

# The READs in the order rxe sends them. The probe first sees READs
# overlap: kvod-fetch reading a movie with 16 READs in flight. Then a
# fenced reader takes 16 chunks of 1024 packets: rxe sends a READ of
# them in 188 packets of its 1024-byte MTU from a work item, so the
# reader's post of the entry's READ mostly comes while the bytes' READ
# is not done (with chunks of 16 packets, rarely). Yet no READ goes out
# before the one ahead of it had its last response.
t1="the probe sees READs overlap: a movie read with 16 READs in flight"
t2="a fenced reader posts a chunk's READs together, and rxe sends none before the one ahead ended"
if fence_probes_add; then
	fence_trace_on
	"$KVOD_FETCH" -q --depth 16 --chunk 4k -o /dev/null "$RDMA_URL/fm"
	order=$(fence_trace_off)
	check_ok "$t1 ($order)" test "$(field overlapped "$order")" -gt 0
	ppc0=$PPC
	PPC=1024
	"$KVODCTL" live create fo --rdma --chunk $((PPC * 188)) --chunks 16 ||
		ktap_bail_out "cannot create channel fo"
	fence_trace_on
	play fo fo --fence
	live_feed fo $((16 * PPC))
	finish fo fo $((16 * PPC - 1))
	order=$(fence_trace_off)
	PPC=$ppc0
	check_eq "$t2 ($order)" "0 16 yes 0 0 0 exit 0" \
		"$(field overlapped "$order") $(summary fo chunks) $([ "$(field pipelined "$order")" -gt 0 ] && echo yes || echo no) $(fields "$r" torn gaps backwards) exit $(cat "$RDMA_TMP/fo.rc")"
	fence_probes_del
elif rdma_iwarp; then
	ktap_skip "$t1" "iWARP fences no READ"
	ktap_skip "$t2" "iWARP fences no READ"
else
	ktap_skip "$t1" "no BTF to read rxe's packets with"
	ktap_skip "$t2" "no BTF to read rxe's packets with"
fi

# A chunk overwritten between its READs, as above: the fenced reader
# stops after posting chunk 0's bytes' READs (they complete meanwhile)
# and before posting the fenced READ of the entry; chunks 1 to 8 are
# written, so slot 0 holds chunk 8. It must drop chunk 0 as torn and go
# on at chunk 8. Over iWARP kvod-fetch says it does not fence, and reads
# as without --fence.
"$KVODCTL" live create ft --rdma --chunk "$CHUNK" --chunks 4 ||
	ktap_bail_out "cannot create channel ft"
touch "$RDMA_TMP/stall"
KVOD_FETCH_TEST_STALL=$RDMA_TMP/stall play ft ft --fence
live_feed ft "$PPC"
wait_for "$(time_limit 30)" grep -q "test stall after .*chunk 0's bytes" \
	"$RDMA_TMP/ft.fetch"
live_feed ft $((8 * PPC)) --start "$PPC"
stalled=$(grep -o "test stall after .*chunk 0's bytes" "$RDMA_TMP/ft.fetch")
rm "$RDMA_TMP/stall"
finish ft ft $((9 * PPC - 1))
if rdma_iwarp; then
	how="not fenced (iWARP fences no READ)"
	when="test stall after chunk 0's bytes"
else
	how=fenced
	when="test stall after posting chunk 0's bytes"
fi
check_eq "--fence, a chunk overwritten between its READs: 1 torn, counted and dropped; the reader goes on at chunk 8, 8 skipped" \
	"$how; $when: 1 torn 8 skipped" \
	"$(sed -n 's/.*from chunk 0\(, with notes\)*, //p' "$RDMA_TMP/ft.fetch"); $stalled: $(summary ft torn) torn $(summary ft skipped) skipped"
check_eq "... nothing torn written: it output chunk 8 alone, whole, and exits 0" \
	"$((8 * PPC)) $((9 * PPC - 1)) 0 0 0 exit 0" \
	"$(fields "$r" first last torn gaps backwards) exit $(cat "$RDMA_TMP/ft.rc")"

# Under a writer that laps a ring of 2 slots as fast as it can, 300
# chunks, then one more once it is through: the fenced reader is moved
# ahead, drops what was overwritten while it READ it, and writes whole
# chunks alone, every packet byte-exact and in order.
"$KVODCTL" live create fl --rdma --chunk "$CHUNK" --chunks 2 ||
	ktap_bail_out "cannot create channel fl"
play fl fl --fence
live_feed fl $((300 * PPC))
live_feed fl "$PPC" --start $((300 * PPC))
finish fl fl $((301 * PPC - 1))
check_eq "--fence under a writer lapping 2 slots: nothing torn, out of order or off a chunk boundary; whole chunks; exit 0" \
	"0 0 0 whole-chunks exit 0" \
	"$(fields "$r" torn backwards misaligned) $(reader_end fl 0 | cut -d' ' -f5-)"
check_eq "... it skipped $(summary fl skipped) chunks ($(summary fl torn) of them torn while READ), exactly the ones missing from its output" \
	"$(($(summary fl skipped) * PPC))" \
	"$(($(field skipped "$r") + $(field first "$r")))"

rdma_test_stop
ktap_finish
