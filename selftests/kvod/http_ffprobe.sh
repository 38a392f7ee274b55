#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Real players: ffprobe decodes as many frames from http://.../NAME as from
# the file, for an MPEG-TS and for an MP4 whose index (moov) sits at the
# end, which a player can only reach with Range requests.

HERE=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
# shellcheck source=selftests/lib/http.sh
. "$HERE/../lib/http.sh"

# frames SOURCE: decoded video frames.
frames() {
	ffprobe -v error -count_frames -select_streams v:0 \
		-show_entries stream=nb_read_frames -of csv=p=0 "$1" |
		awk 'NF { print; exit }'
}

ktap_header
ktap_plan 5
http_setup
for f in sample.ts sample.mp4; do
	{ ffmpeg -v error -f lavfi -i testsrc=size=160x120:rate=25 -t 4 \
		-c:v mpeg4 -g 25 "$TMP/$f" && "$KVODCTL" add "$f" "$TMP/$f"; } ||
		ktap_bail_out "cannot make $f"
done

n=$(frames "$TMP/sample.ts")
check_ok "the sample decodes ($n frames)" test "${n:-0}" -gt 0
check_eq "ffprobe over HTTP: same frames as the file (MPEG-TS)" "$n" \
	"$(frames "$URL/sample.ts")"
p0=$(http_counter 206)
n=$(frames "$TMP/sample.mp4")
check_eq "ffprobe over HTTP: same frames as the file (MP4, moov at end; $n)" \
	"decodes $n" "$([ "${n:-0}" -gt 0 ] && echo decodes) $(frames "$URL/sample.mp4")"
check_ok "... which took Range requests" test "$(http_counter 206)" -gt "$p0"
wait_test 20 = 0 http_counter active
check_eq "no connection left" 0 "$(http_counter active)"

http_unlisten "$HTTP_ADDR" "$HTTP_PORT"
kvod_unload
ktap_finish
