#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# kvod-fetch over HTTP (http://HOST:PORT/NAME) against kvod's HTTP server:
# whole movie and ranges byte-exact, its errors (past the end, unknown
# movie, nobody listening, bad URL, a --duration that is no time), and
# player mode: no late chunk at a rate the server keeps up with, late
# chunks counted at one it cannot, read-ahead bounded by the cache, and a
# seek as a new connection. Then a SIGTERM mid-transfer (exit 143, not
# 0), an IPv6 literal URL, the Host header as a listener of our own
# receives it, and a name whose first address refuses.
# bench/pair-capacity.sh counts late chunks with it.

HERE=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
# shellcheck source=selftests/lib/http.sh
. "$HERE/../lib/http.sh"

FETCH=$KVOD_BIN/kvod-fetch

# field WORD TEXT: the number before WORD in kvod-fetch's summary line
field() {
	sed -n "s/.* \([0-9]*\) $1.*/\1/p" <<<"$2"
}

# in_hosts HOSTS CMD...: CMD in a mount namespace of its own, where the
# file HOSTS is /etc/hosts
in_hosts() {
	# shellcheck disable=SC2016 # expanded by the inner shell
	unshare -m sh -c 'mount --bind "$1" /etc/hosts && shift && exec "$@"' \
		sh "$@"
}

ktap_header
ktap_plan 19
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
err=$("$FETCH" -o /dev/null "http:/$HTTP_ADDR/m.ts" 2>&1)
check_eq "bad URL: usage error" \
	"2 kvod-fetch: bad URL 'http:/$HTTP_ADDR/m.ts' (rdma://HOST[:PORT]/NAME or http://HOST[:PORT]/NAME)" \
	"$? $err"
# Times that are no number of seconds, or that overflow an int of ms:
# before, inf and 1e300 switched the --timeout watchdog off for good.
rcs=
for d in inf nan 1e300 0x10 2000000 0 -1; do
	"$FETCH" --duration "$d" -o /dev/null "$URL/m.ts" 2>"$TMP/err"
	rcs+="$? "
	grep -q "^kvod-fetch: invalid argument to --duration: '$d' (seconds" \
		"$TMP/err" || rcs+="(no message) "
done
"$FETCH" --rate 8M --seek-every inf -o /dev/null "$URL/m.ts" 2>/dev/null
rcs+=$?
check_eq "--duration inf, nan, 1e300, 0x10, 2000000, 0, -1 and --seek-every inf: usage errors" \
	"2 2 2 2 2 2 2 2" "$rcs"

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

# SIGTERM mid-transfer: the movie is not done, and the exit status says
# so (128 + 15), where it was 0 with a truncated output.
got=$(sigterm_midway "$(time_limit 20)" "$size" "$TMP/part" "$TMP/err" \
	"$FETCH" --rate 1M --cache 300 --chunk 64k -o "$TMP/part" "$URL/m.ts")
ktap_print_msg "$(cat "$TMP/err")"
check_eq "SIGTERM mid-transfer: exit 143, says so, output cut short" \
	"143 yes yes" "$got"

# An IPv6 literal: kvod's listener on [::1] (IPv6 only), byte-exact.
rm -f "$TMP/out"
if ! grep -q . /proc/net/if_inet6 2>/dev/null; then
	ktap_skip "IPv6 literal URL: byte-exact" "no IPv6 in this guest"
elif http_listen "[::1]" "$HTTP_PORT"; then
	"$FETCH" -q -o "$TMP/out" "http://[::1]:$HTTP_PORT/m.ts"
	rc=$?
	check_eq "IPv6 literal URL: byte-exact" "0 $(sha "$TMP/m.ts")" \
		"$rc $(sha "$TMP/out")"
	http_unlisten "[::1]" "$HTTP_PORT"
else
	# kvod refused a listener on [::1]: its failure, not the guest's
	ktap_fail "IPv6 literal URL: byte-exact (kvod cannot listen on [::1])"
fi

# The Host header (RFC 9110 7.2): kvod's server does not look at its
# value, so a listener of our own records it, for an IPv6 literal and a
# port other than 80 (nginx answers "Host: ::1" with 400), and for port
# 80, which is left out. It answers 404, so kvod-fetch exits 1.
hport=$((HTTP_PORT + 2))
rm -f "$TMP/up" "$TMP/hosts"
"$PY" -S -c '
import socket, sys
out, up, port, limit = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
socks = []
for fam, addr in ((socket.AF_INET6, ("::1", port)), (socket.AF_INET, ("127.0.0.1", port)),
                  (socket.AF_INET, ("127.0.0.1", 80))):
    s = socket.socket(fam)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(addr)
    s.listen(1)
    s.settimeout(limit)
    socks.append(s)
open(up, "w").close()
with open(out, "w") as f:
    for s in socks:
        c, _ = s.accept()
        c.settimeout(limit)
        req = b""
        while b"\r\n\r\n" not in req:
            got = c.recv(4096)
            if not got:
                break
            req += got
        hosts = [l[5:].strip() for l in req.decode().split("\r\n")
                 if l.lower().startswith("host:")]
        f.write(",".join(hosts) + "\n")
        f.flush()
        c.sendall(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
        c.close()
' "$TMP/hosts" "$TMP/up" "$hport" "$(time_limit 60)" &
lis=$!
if wait_for "$(time_limit 30)" test -e "$TMP/up"; then
	for u in "[::1]:$hport" "127.0.0.1:$hport" 127.0.0.1; do
		"$FETCH" -o /dev/null "http://$u/m.ts" 2>/dev/null
	done
fi
wait "$lis"
check_eq "Host header: [::1]:PORT, 127.0.0.1:PORT, and 127.0.0.1 for port 80" \
	"[::1]:$hport 127.0.0.1:$hport 127.0.0.1" \
	"$(tr '\n' ' ' <"$TMP/hosts" 2>/dev/null | sed 's/ $//')"

# A name whose first address refuses: kvod-fetch tries the next one,
# which it did not when the first connect was under way asynchronously.
# A /etc/hosts of our own in a mount namespace gives the name two
# addresses; getaddrinfo() orders them, so kvod listens on the second.
printf '127.0.0.2 kvodfb\n127.0.0.3 kvodfb\n' >"$TMP/etc-hosts"
read -r first second _ <<<"$(in_hosts "$TMP/etc-hosts" getent ahosts kvodfb |
	awk '$2 == "STREAM" { printf "%s ", $1 }')"
desc="a name whose first address refuses: the next one serves it"
rm -f "$TMP/out"
if [ -z "$second" ]; then
	ktap_skip "$desc" "no name with two addresses here (unshare, /etc/hosts)"
elif http_listen "$second" "$HTTP_PORT"; then
	ktap_print_msg "kvodfb is $first (nobody listens), then $second"
	in_hosts "$TMP/etc-hosts" "$FETCH" -q -o "$TMP/out" \
		"http://kvodfb:$HTTP_PORT/m.ts"
	rc=$?
	check_eq "$desc" "0 $(sha "$TMP/m.ts")" "$rc $(sha "$TMP/out")"
	http_unlisten "$second" "$HTTP_PORT"
else
	ktap_fail "$desc"
fi

"$KVODCTL" unlisten http "$HTTP_ADDR:$HTTP_PORT"
kvod_unload
ktap_finish
