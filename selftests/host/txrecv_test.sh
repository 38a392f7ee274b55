#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Host-side test of txrecv (selftests/txtime), the receiver of the push
# and tsock tests, in RTP mode (-R): it is fed a few RTP packets over the
# host's loopback (bound to 127.0.0.1 only, on a port it picks), one of
# them late and across the 16-bit wrap, and must count one duplicate and
# one gap and give every packet its own k, so that a late packet shifts
# no due time after it. With -w it waits longer for the first packet than
# it waits after one (the race tests' receiver: 30 s for a push to
# start, 2 s after its end), and -P writes the payloads it counts in
# bytes. Bad numbers on its command line are refused.
# Pure userspace: no module.
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
# shellcheck source=selftests/lib/ktap.sh
. "$REPO/selftests/lib/ktap.sh"

TXRECV=$REPO/selftests/txtime/txrecv
TMP=$(mktemp -d)
rx_pid=
cleanup() {
	[ -z "$rx_pid" ] || kill "$rx_pid" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT

# send PORT SEQ...: one RTP packet per SEQ to 127.0.0.1:PORT, in that
# order: version 2, payload type 33, seven MPEG-TS packets.
send() {
	python3 - "$@" <<'EOF'
import socket
import struct
import sys

port = int(sys.argv[1])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for seq in map(int, sys.argv[2:]):
    head = struct.pack('!BBHII', 0x80, 33, seq, seq * 90, 0x6b766f64)
    s.sendto(head + (b'\x47' + bytes(187)) * 7, ('127.0.0.1', port))
EOF
}

# val KEY: KEY's value in txrecv's report.
val() {
	tr ' ' '\n' <"$TMP/out" | sed -n "s/^$1=//p" | head -n1
}

ktap_header
ktap_plan 9
[ -x "$TXRECV" ] || ktap_bail_out "$TXRECV not built (make selftests)"
command -v python3 >/dev/null || ktap_bail_out "python3 is not installed"

# 1000 packets/s: packet k is due k ms after the first.
"$TXRECV" -a 127.0.0.1 -p 0 -R 1000 -n 6 -t 5000 -T 10000 \
	-o "$TMP/pkts" >"$TMP/out" 2>"$TMP/err" &
rx_pid=$!
wait_for 10 grep -qs '^listening port=[1-9]' "$TMP/out"
port=$(sed -n 's/^listening port=//p' "$TMP/out")
check_ok "txrecv binds 127.0.0.1 on a port it picks (-p 0)" \
	test -n "$port"
# 65535 then 1 skip 0, which comes late; the wrap is crossed both ways.
[ -z "$port" ] || send "$port" 65533 65534 65535 1 0 2
wait "$rx_pid"
rc=$?
rx_pid=
ktap_print_msg "txrecv: $(tr '\n' ' ' <"$TMP/out")$(cat "$TMP/err")"
check_eq "all six received, none malformed, their payload counted" \
	"0 6 0 $((6 * 7 * 188))" "$rc $(val received) $(val bad) $(val bytes)"
check_eq "the late packet: one duplicate, late, one gap, out of order" \
	"1 1 1 0" "$(val seq_dup) $(val seq_late) $(val seq_gap) $(val in_order)"
check_eq "each packet's k is its own, the late one's too" "0 1 2 4 3 5" \
	"$(awk '{ print $2 }' "$TMP/pkts" 2>/dev/null | paste -sd' ')"
check_eq "due times k ms: the late packet does not shift the next one" \
	"0 1000000 2000000 4000000 3000000 5000000" \
	"$(awk '{ print $3 }' "$TMP/pkts" 2>/dev/null | paste -sd' ')"

# -w: the first packet comes 1 s in, long after IDLE (0.3 s) but within
# FIRST (5 s): all three are received, the last a repeat of the one
# before, and the payload file holds them.
"$TXRECV" -a 127.0.0.1 -p 0 -R 1000 -t 300 -w 5000 -T 10000 \
	-P "$TMP/payload" >"$TMP/out" 2>"$TMP/err" &
rx_pid=$!
wait_for 10 grep -qs '^listening port=[1-9]' "$TMP/out"
port=$(sed -n 's/^listening port=//p' "$TMP/out")
sleep 1
[ -z "$port" ] || send "$port" 7 8 8
wait "$rx_pid"
rc=$?
rx_pid=
ktap_print_msg "txrecv -w: $(tr '\n' ' ' <"$TMP/out")$(cat "$TMP/err")"
check_eq "-w: waits FIRST ms, not IDLE, for the first packet" "0 3 0" \
	"$rc $(val received) $(val bad)"
check_eq "a repeat of the newest: a duplicate, not late, no gap" "1 0 0" \
	"$(val seq_dup) $(val seq_late) $(val seq_gap)"
check_eq "-P: the payloads, as many bytes as counted" \
	"$((3 * 7 * 188)) $((3 * 7 * 188))" \
	"$(val bytes) $(stat -c %s "$TMP/payload" 2>/dev/null)"

# After valid ones, so that a value taken wrongly ends it within 0.2 s
# (and on loopback).
bad=
for args in "-p 65536" "-p 5x" "-p -1" "-p ''" "-a localhost" "-n x" \
	    "-t 0" "-w 0" "-w 1s" "-T 1e3" "-R 0" "-R nan" "-R 5pps"; do
	out=$(eval "'$TXRECV' -a 127.0.0.1 -p 0 -t 100 -T 200 $args" 2>&1 </dev/null)
	rc=$?
	[ "$rc" = 2 ] && [[ $out == "txrecv: invalid -"* ]] || bad+=" [$args: $rc $out]"
done
check_eq "bad numbers and addresses: refused, exit 2, with the option" \
	"" "$bad"
ktap_finish
