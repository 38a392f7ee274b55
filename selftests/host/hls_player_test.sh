#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Host-side test of bench/hls_player.py, the HLS client of
# bench/pair-live.sh: python's http.server (bound to 127.0.0.1 only, on a
# port the kernel picks) serves a playlist of three segments. The player
# must start at the newest and count its bytes; a newest segment that is
# gone (404) must count no bytes and be reported missed; no server at all
# gives 0. Boots nothing.
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
# shellcheck source=selftests/lib/ktap.sh
. "$REPO/selftests/lib/ktap.sh"

PLAYER=$REPO/bench/hls_player.py
TMP=$(mktemp -d)
srv_pid=
cleanup() {
	[ -z "$srv_pid" ] || kill "$srv_pid" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT

mkdir -p "$TMP/www/hls"
for n in 5 6 7; do
	printf '#EXTINF:1.000,\nseg%s.ts\n' "$n"
done | sed '1i #EXTM3U\n#EXT-X-MEDIA-SEQUENCE:5' >"$TMP/www/hls/live.m3u8"
head -c 100 /dev/zero >"$TMP/www/hls/seg5.ts"
head -c 200 /dev/zero >"$TMP/www/hls/seg6.ts"
head -c 300 /dev/zero >"$TMP/www/hls/seg7.ts"
cp "$TMP/www/hls/live.m3u8" "$TMP/www/hls/gone.m3u8"
sed -i 's/seg7/seg8/' "$TMP/www/hls/gone.m3u8"

# A server on a port of the kernel's choosing, which it prints.
python3 - "$TMP/www" >"$TMP/port" 2>/dev/null <<'EOF' &
import functools
import http.server
import sys

handler = functools.partial(http.server.SimpleHTTPRequestHandler,
                            directory=sys.argv[1])
handler.func.log_message = lambda *a: None
srv = http.server.HTTPServer(("127.0.0.1", 0), handler)
print(srv.server_address[1], flush=True)
srv.serve_forever()
EOF
srv_pid=$!
wait_for 10 test -s "$TMP/port" || ktap_bail_out "the HTTP server did not start"
URL=http://127.0.0.1:$(cat "$TMP/port")/hls

ktap_header
ktap_plan 5
check_eq "starts at the newest segment, counts its bytes" 300 \
	"$(python3 -S "$PLAYER" "$URL/live.m3u8" 1.2 0.2 2>"$TMP/err")"
check_eq "nothing missed, nothing said" "" "$(cat "$TMP/err")"
check_eq "a segment gone before it is asked for counts nothing" 0 \
	"$(python3 -S "$PLAYER" "$URL/gone.m3u8" 1 0.2 2>"$TMP/err")"
check_ok "and is reported missed" \
	grep -qE '^hls_player: [0-9]+ playlist loads, 0 segments got, 1 missed$' "$TMP/err"
kill "$srv_pid"
wait "$srv_pid" 2>/dev/null
srv_pid=
check_eq "no server: 0 bytes" 0 "$(python3 -S "$PLAYER" "$URL/live.m3u8" 0.5 0.2 2>/dev/null)"
ktap_finish
