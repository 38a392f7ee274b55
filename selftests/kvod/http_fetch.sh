#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# kvod-fetch over HTTP (http://HOST:PORT/NAME) against kvod's HTTP server:
# whole movie and ranges byte-exact, its errors (past the end, unknown
# movie, nobody listening, bad URL), and player mode: no late chunk at a
# rate the server keeps up with, late chunks counted at one it cannot,
# read-ahead bounded by the cache, and a seek as a new connection.
# bench/pair-capacity.sh counts late chunks with it.

HERE=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
# shellcheck source=selftests/kvod/http_lib.bash
. "$HERE/http_lib.bash"

FETCH=$KVOD_REPO/tools/kvod-fetch

# field WORD TEXT: the number before WORD in kvod-fetch's summary line
field() {
	sed -n "s/.* \([0-9]*\) $1.*/\1/p" <<<"$2"
}

ktap_header
ktap_plan 14
http_setup
http_movie m.ts 2 || ktap_bail_out "cannot register m.ts"
size=$(stat -c %s "$TMP/m.ts")

"$FETCH" -q -o "$TMP/out" "$URL/m.ts"
check_eq "whole movie byte-exact" "$(sha "$TMP/m.ts")" "$(sha "$TMP/out")"
got=$("$FETCH" -q --offset 1000 --length 300000 --chunk 7777 "$URL/m.ts" |
	sha256sum | cut -d' ' -f1)
check_eq "a range in chunks that do not divide it, byte-exact" \
	"$(tail -c +1001 "$TMP/m.ts" | head -c 300000 | sha256sum | cut -d' ' -f1)" "$got"
got=$("$FETCH" -q --offset $((size - 1)) "$URL/m.ts" | od -An -tx1 | tr -d ' ')
check_eq "the last byte" "$(tail -c 1 "$TMP/m.ts" | od -An -tx1 | tr -d ' ')" "$got"

# Errors: a message, exit status 1 (2 for bad usage), nothing written.
err=$("$FETCH" --offset "$size" -o "$TMP/e1" "$URL/m.ts" 2>&1)
check_eq "offset at the end: refused" \
	"1 kvod-fetch: m.ts: range beyond the movie's $size bytes 0" \
	"$? $err $(stat -c %s "$TMP/e1")"
err=$("$FETCH" --length $((size + 1)) -o /dev/null "$URL/m.ts" 2>&1)
check_eq "length past the end: refused" \
	"1 kvod-fetch: m.ts: range beyond the movie's $size bytes" "$? $err"
err=$("$FETCH" -o /dev/null "$URL/nosuch.ts" 2>&1)
check_eq "unknown movie: the server's 404" \
	"1 kvod-fetch: nosuch.ts: HTTP/1.1 404 Not Found" "$? $err"
err=$("$FETCH" -o /dev/null "http://$HTTP_ADDR:$((HTTP_PORT + 1))/m.ts" 2>&1)
check_eq "nobody listening: refused" \
	"1 kvod-fetch: $HTTP_ADDR:$((HTTP_PORT + 1)): Connection refused" "$? $err"
"$FETCH" -o /dev/null "http:/$HTTP_ADDR/m.ts" 2>/dev/null
check_eq "bad URL: usage error" 2 "$?"

# Player mode. 8 Mbit/s is far below what loopback carries here.
out=$("$FETCH" --rate 8M --cache 300 --chunk 64k "$URL/m.ts" 2>&1 >"$TMP/out")
rc=$?
ktap_print_msg "$out"
check_eq "player at 8 Mbit/s: byte-exact, every chunk, none late" \
	"0 $(sha "$TMP/m.ts") $(((size + 65535) / 65536)) 0" \
	"$rc $(sha "$TMP/out") $(field chunks "$out") $(field late "$out")"
secs=$(sed -n 's/.* in \([0-9]*\)\..* s,.*/\1/p' <<<"$out")
# 2 MiB at 1 MB/s, less the 300 ms cache and the last chunk's read-ahead.
check_ok "... paced: at least 1 s for 2 MiB" test "${secs:-0}" -ge 1
# 40 Gbit/s with a 1 ms cache: no server here keeps up.
out=$("$FETCH" --rate 40G --cache 1 --chunk 64k -o /dev/null "$URL/m.ts" 2>&1)
ktap_print_msg "$out"
check_ok "player at 40 Gbit/s: late chunks counted" \
	test "$(field late "$out")" -gt 0
# Read-ahead: in 0.5 s at 8 Mbit/s a player takes its cache (300 ms of
# stream), what it played since play began (0.2 s) and at most one chunk
# more: 524288 bytes here, well under 1 MB of the 2 MiB.
out=$("$FETCH" --rate 8M --cache 300 --chunk 64k --duration 0.5 -o /dev/null \
	"$URL/m.ts" 2>&1)
ktap_print_msg "$out"
b=$(sed -n 's/^kvod-fetch: \([0-9]*\) bytes.*/\1/p' <<<"$out")
check_ok "a player reads no further ahead than its cache" \
	test "${b:-9999999}" -gt 0 -a "${b:-9999999}" -lt 1000000
acc=$(http_counter accepted)
out=$("$FETCH" --rate 8M --cache 300 --chunk 64k --seek-every 0.5 --duration 3 \
	--seed 7 -o /dev/null "$URL/m.ts" 2>&1)
rc=$?
ktap_print_msg "$out"
seeks=$(field seeks "$out")
check_eq "player with seeks: runs, none late" "0 yes 0" \
	"$rc $([ "${seeks:-0}" -ge 4 ] && echo yes) $(field late "$out")"
check_eq "... each seek a new connection" $((${seeks:-0} + 1)) \
	$(($(http_counter accepted) - acc))

"$KVODCTL" unlisten http "$HTTP_ADDR:$HTTP_PORT"
kvod_unload
ktap_finish
