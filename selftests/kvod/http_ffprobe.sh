#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Real players: ffprobe decodes as many frames from http://.../NAME as from
# the file, for an MPEG-TS and for an MP4 whose index (moov) sits at the
# end, which a player can only reach with Range requests.

HERE=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
# shellcheck source=selftests/lib/http.sh
. "$HERE/../lib/http.sh"
# shellcheck source=selftests/lib/media.sh
. "$HERE/../lib/media.sh"

ktap_header
ktap_plan 5
http_setup
media_into TS sample.ts
media_into MP4 sample.mp4
"$KVODCTL" add sample.ts "$TS" || ktap_bail_out "cannot add sample.ts"
"$KVODCTL" add sample.mp4 "$MP4" || ktap_bail_out "cannot add sample.mp4"

n=$(frames "$TS")
check_ok "the sample decodes ($n frames)" test "${n:-0}" -gt 0
check_eq "ffprobe over HTTP: same frames as the file (MPEG-TS)" "$n" \
	"$(frames "$URL/sample.ts")"
p0=$(http_counter 206)
n=$(frames "$MP4")
check_eq "ffprobe over HTTP: same frames as the file (MP4, moov at end; $n)" \
	"decodes $n" "$([ "${n:-0}" -gt 0 ] && echo decodes) $(frames "$URL/sample.mp4")"
check_ok "... which took Range requests" test "$(http_counter 206)" -gt "$p0"
wait_test 20 = 0 http_counter active
check_eq "no connection left" 0 "$(http_counter active)"

http_unlisten "$HTTP_ADDR" "$HTTP_PORT"
kvod_unload
ktap_finish
