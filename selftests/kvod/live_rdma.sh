#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Live channels over RDMA: kvod-fetch plays a channel created with --rdma
# by READing its mirror (<linux/kvod_rdma.h>), and live_tool.py checks
# every numbered MPEG-TS packet it writes out. A reader from the first
# chunk gets all of it; one that falls a ring behind is moved ahead at
# chunk boundaries, missing exactly the chunks it says it skipped, and
# nothing torn ever reaches its output; the delay from writer to reader is
# measured; ffprobe finds the streams of an ffmpeg-fed channel in
# kvod-fetch's output; DEL ends every reader; a channel
# without --rdma is refused; a client that plays movies only refuses a
# channel. And the mirror's memory is counted.
# timeout: 300
# transports: rxe siw

# shellcheck source=selftests/kvod/rdma_lib.bash
. "$(dirname "$0")/rdma_lib.bash"

# shellcheck source=selftests/kvod/live_lib.bash
. "$(dirname "$0")/live_lib.bash"

# play NAME TAG [ARGS...]: kvod-fetch NAME into live_tool.py check (with
# $CHECK_ARGS), in the background; results in $RDMA_TMP/TAG.check and
# TAG.fetch (its summary).
play() {
	local name=$1 tag=$2

	shift 2
	# shellcheck disable=SC2086 # CHECK_ARGS is a list of words
	{ "$KVOD_FETCH" "$@" "$RDMA_URL/$name" 2>"$RDMA_TMP/$tag.fetch" |
		"${LT[@]}" check --ppc $PPC ${CHECK_ARGS:-} \
			>"$RDMA_TMP/$tag.check"; } &
}

# summary TAG KEY: a number from kvod-fetch's "live:" summary line.
summary() {
	sed -n "s/.* \([0-9]*\) $2\b.*/\1/p" "$RDMA_TMP/$1.fetch"
}

ktap_header
ktap_plan 14
rdma_test_start

"$KVODCTL" live create tv --rdma --chunk "$CHUNK" --chunks 512 ||
	ktap_bail_out "cannot create channel tv"
# 512 slots of a page, twice (ring and mirror), and the head with 512
# entries of 16 bytes (8256 bytes: a compound page of 16 KiB).
check_eq "the mirror is resident and counted" $((2 * 512 * 4096 + 16384)) \
	"$(movie_field tv resident)"

# --- From the first chunk: everything -----------------------------------
play tv all
wait_for "$(time_limit 30)" grep -q "from chunk 0" "$RDMA_TMP/all.fetch"
live_feed tv 8000
"$KVODCTL" del tv
wait
r=$(cat "$RDMA_TMP/all.check")
ktap_print_msg "reader: $r" "$(cat "$RDMA_TMP/all.fetch")"
check_eq "an RDMA reader from the first chunk: every packet, whole, in order" \
	"0 7999 0 0 0" "$(fields "$r" first last torn gaps backwards)"
check_eq "... 500 chunks, none skipped" "500 0" \
	"$(summary all chunks) $(summary all skipped)"
check_eq "DEL ended it" 0 "$(grep -c 'error\|failed' "$RDMA_TMP/all.fetch")"

# --- A reader that falls a ring behind ---------------------------------
"$KVODCTL" live create slow --rdma --chunk "$CHUNK" --chunks 4 ||
	ktap_bail_out "cannot create channel slow"
play slow slow --poll 200
wait_for "$(time_limit 30)" grep -q "from chunk" "$RDMA_TMP/slow.fetch"
live_feed slow 3000
live_feed slow 16 --start 3000	# one more chunk, after the burst
sleep 2
"$KVODCTL" del slow
wait
r=$(cat "$RDMA_TMP/slow.check")
ktap_print_msg "slow reader: $r" "$(cat "$RDMA_TMP/slow.fetch")"
check_eq "a slow RDMA reader: nothing torn, out of order or off a chunk boundary" \
	"0 0 0" "$(fields "$r" torn backwards misaligned)"
check_ok "... it was moved ahead, past $(summary slow skipped) chunks ($(summary slow torn) of them torn while READ)" \
	test "$(summary slow skipped)" -gt 0
# It started at chunk 0: the packets before its first one are missed too.
check_eq "... missing exactly the chunks it says it skipped" \
	"$(($(summary slow skipped) * PPC))" \
	"$(($(field skipped "$r") + $(field first "$r")))"
check_eq "... and it got the last chunk" 3015 "$(field last "$r")"

# --- The delay from writer to RDMA reader ------------------------------
"$KVODCTL" live create tvd --rdma --chunk "$CHUNK" --chunks 256 ||
	ktap_bail_out "cannot create channel tvd"
CHECK_ARGS="--delay $RDMA_TMP/stamp" play tvd delay
wait_for "$(time_limit 30)" grep -q "from chunk 0" "$RDMA_TMP/delay.fetch"
live_feed tvd 2000 --rate 1000 --stamp "$RDMA_TMP/stamp"
sleep 1
"$KVODCTL" del tvd
wait
r=$(cat "$RDMA_TMP/delay.check")
ktap_print_msg "delay over RDMA: $r"
check_ok "delay from writer to RDMA reader (polling every 20 ms): p50 $(field delay_p50 "$r") ms, p99 $(field delay_p99 "$r") ms (under 2 s), all 2000 packets" \
	test "$(field delay_p99 "$r")" -lt 2000 -a "$(field packets "$r")" = 2000

# --- A real encoder and a real player -------------------------------------
"$KVODCTL" live create tvf --rdma --chunk 3760 --chunks 256 ||
	ktap_bail_out "cannot create channel tvf"
ffmpeg -v error -re -f lavfi -i testsrc=size=160x120:rate=10 \
	-f lavfi -i sine=frequency=440:sample_rate=22050 -t 60 \
	-c:v mpeg2video -b:v 200k -g 10 -c:a mp2 -b:a 64k -f mpegts - |
	"$KVODCTL" live feed tvf 2>/dev/null &
wait_test "$(time_limit 30)" -gt 10 movie_field tvf chunks_done
streams=$("$KVOD_FETCH" -q "$RDMA_URL/tvf" |
	timeout "$(time_limit 60)" ffprobe -v error \
		-show_entries stream=codec_type,codec_name -of csv=p=0 - \
		2>/dev/null | sed 's/,*$//; /^ *$/d' | LC_ALL=C sort -u |
	paste -sd' ')
"$KVODCTL" del tvf
wait
check_eq "ffprobe finds video and audio in kvod-fetch's output, live" \
	"mp2,audio mpeg2video,video" "$streams"

# --- Refusals ----------------------------------------------------------------
"$KVODCTL" live create plain --chunk "$CHUNK" --chunks 4 ||
	ktap_bail_out "cannot create channel plain"
check_eq "a channel without --rdma is refused" \
	"kvod-fetch: plain: a live channel, not served over RDMA (created without --rdma)" \
	"$("$KVOD_FETCH" "$RDMA_URL/plain" 2>&1 >/dev/null)"
"$KVODCTL" live create tv2 --rdma --chunk "$CHUNK" --chunks 4 ||
	ktap_bail_out "cannot create channel tv2"
out=$("$RDMA_CLIENT" "$RXE_ADDR" table tv2 2>&1)
check_ok "a client that plays movies only refuses a channel ($out)" \
	grep -q "a live channel: this client plays movies only" <<<"$out"
wait_test "$(time_limit 10)" = 0 rdma_counter active
check_eq "no connection left" 0 "$(rdma_counter active)"
"$KVODCTL" del plain
"$KVODCTL" del tv2
check_eq "nothing resident" 0 "$("$KVODCTL" stats | sed -n 's/^resident: //p')"

rdma_test_stop
ktap_finish
