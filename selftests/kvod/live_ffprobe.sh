#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A real encoder's stream and real players on a live channel: ffmpeg
# feeds test video and a sine tone in real time into "kvodctl live feed"
# (the clip make selftests encoded, replayed: lib/live.sh); while it
# runs, ffprobe finds both streams over HTTP, over RDMA (kvod-fetch with
# notes, over rxe) and over RTP from a push of the channel, all three at
# the same time, and an ffmpeg player decodes the channel from the newest
# chunk on until DEL ends it. (Joining a live MPEG-2 stream between two
# key frames makes a decoder complain until the next one, so what they
# print on stderr is only reported.)
# timeout: 300
# transports: rxe

HERE=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
# shellcheck source=selftests/lib/http.sh
. "$HERE/../lib/http.sh"
# shellcheck source=selftests/lib/live.sh
. "$HERE/../lib/live.sh"
# shellcheck source=selftests/lib/rdma.sh
. "$HERE/../lib/rdma.sh"

# The feed runs until DEL, or this long at most: stretched as the waits
# are, so that on a slow kernel its stream cannot end before the player
# starts.
SECS=$(time_limit 180)

ktap_header
ktap_plan 7
media_into CLIP clip.ts
rxe_setup || ktap_bail_out "cannot set up rxe on $RXE_NETDEV"
http_setup
"$KVODCTL" listen rdma "$RXE_EP" || ktap_bail_out "cannot listen on $RXE_EP"
# 20 packets a chunk: about 0.1 s of this stream.
"$KVODCTL" live create tv --rdma --chunk 3760 --chunks 256 ||
	ktap_bail_out "cannot create channel tv"

# Once, short, to load ffmpeg: in a fresh debug guest, whose libraries
# come over 9p, that took minutes.
live_replay "$CLIP" -t 0.5 >/dev/null 2>&1
live_replay "$CLIP" -t "$SECS" | "$KVODCTL" live feed tv &
wait_test "$(time_limit 30)" -gt 10 movie_field tv chunks_done

# streams SOURCE: the codecs and types ffprobe finds, on one line.
streams() {
	timeout "$(time_limit 120)" ffprobe -v error -show_entries stream=codec_type,codec_name \
		-of csv=p=0 "$@" | sed 's/,*$//; /^ *$/d' | LC_ALL=C sort -u |
		paste -sd' '
}

# Over HTTP, over RDMA and, from a push of the channel, over RTP at the
# same time.
streams -timeout 30000000 rtp://127.0.0.1:5010 >"$TMP/rtp.streams" \
	2>"$TMP/rtp.err" &
rtp_probe=$!
"$KVODCTL" push tv udp://127.0.0.1:5010 --rate 1M >/dev/null ||
	ktap_bail_out "cannot push tv"
# (kvod-fetch waits for chunks as long as the channel lives: bounded too.)
{ timeout "$(time_limit 150)" "$KVOD_FETCH" "$RDMA_URL/tv" 2>"$TMP/fetch.err" |
	streams - >"$TMP/rdma.streams" 2>"$TMP/rdma.err"; } &
rdma_probe=$!
http=$(streams "$URL/tv" 2>"$TMP/probe.err")
wait "$rtp_probe" "$rdma_probe"
ktap_print_msg "ffprobe's stderr: $(head -c 300 "$TMP/probe.err")" \
	"over RTP: $(head -c 300 "$TMP/rtp.err")" \
	"over RDMA: $(head -c 300 "$TMP/rdma.err")" "$(cat "$TMP/fetch.err")"
check_eq "ffprobe finds video and audio over HTTP while the channel is fed" \
	"mp2,audio mpeg2video,video" "$http"
check_eq "... and over RDMA at the same time, from kvod-fetch with notes" \
	"mp2,audio mpeg2video,video" "$(cat "$TMP/rdma.streams")"
check_eq "... and over RTP, from a push of it" \
	"mp2,audio mpeg2video,video" "$(cat "$TMP/rtp.streams")"

ffmpeg -v error -i "$URL/tv" -map 0:v -f framecrc - >"$TMP/frames" \
	2>"$TMP/player.err" &
player=$!
played() {
	grep -c '^0,' "$TMP/frames"
}
wait_test "$(time_limit 60)" -ge 50 played
check_ok "the player decodes the channel live ($(played) frames)" \
	test "$(played)" -ge 50
"$KVODCTL" del tv
wait "$player"
rc=$?
n=$(played)
ktap_print_msg "the player decoded $n frames; stderr: $(head -c 300 "$TMP/player.err")"
check_eq "DEL ends the player's stream cleanly" 0 "$rc"
check_ok "... after all it decoded" test "$n" -ge 50
wait
wait_test "$(time_limit 20)" = 0 http_counter active
check_eq "no connection left" 0 "$(http_counter active)"

http_unlisten "$HTTP_ADDR" "$HTTP_PORT"
kvod_unload
rxe_teardown
ktap_finish
