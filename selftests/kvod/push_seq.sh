#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# A push of thousands of packets, received whole: RTP sequence numbers
# strictly consecutive (none sent twice, none skipped) and the payload
# byte-exact against the movie. With a 2 s window the push hands over
# more than PUSH_BATCH_MAX (1024) packets per wakeup, so every batch
# boundary is crossed several times. Loopback, no pacing qdisc: nothing
# is dropped on the way, so any difference is the sender's. Then the push
# table's bound: 64 pushes run at once, a 65th is refused with ENOSPC and
# a clear message, leaving the 64, and one stop makes room again.
#
# timeout: 600

# shellcheck source=selftests/lib/tsock.sh
. "$(dirname "$0")/../lib/tsock.sh"

ktap_header
ktap_plan 11

TMP=$(mktemp -d)
RMEM_MAX=$(sysctl -n net.core.rmem_max)
sinkpid=
cleanup() {
	[ -n "$sinkpid" ] && kill "$sinkpid" 2>/dev/null
	sysctl -qw net.core.rmem_max="$RMEM_MAX"
	netns_down
	rm -rf "$TMP"
}
trap cleanup EXIT

NPKT=5000				# RTP packets, 7 TS packets each
RATE=40000000				# 3800 packets/s: > 1024 per window
# A synthetic MPEG-TS movie: sync byte, then random bytes.
python3 -c '
import os, sys
with open(sys.argv[1], "wb") as f:
    for _ in range(int(sys.argv[2]) * 7):
        f.write(b"\x47" + os.urandom(187))
' "$TMP/m.ts" "$NPKT" || ktap_bail_out "cannot make the movie"

# txrecv's 16 MiB receive buffer holds the whole push.
sysctl -qw net.core.rmem_max=$((64 << 20))
kvod_load || ktap_bail_out "insmod kvod failed"
netns_up || ktap_bail_out "netns setup failed"
"$KVODCTL" add m "$TMP/m.ts" >/dev/null || ktap_bail_out "kvodctl add failed"

# Its limits and the wait for it stretch on a slow kernel (time_limit):
# on the debug kernel beside other guests it bound later than 30 s and
# stopped waiting before the push began.
tx "$TXRECV" -p 5010 -R $((RATE / (1316 * 8))) -n "$NPKT" \
	-t $(($(time_limit 10) * 1000)) -T $(($(time_limit 60) * 1000)) \
	-P "$TMP/rx.ts" >"$TMP/rx" &
rxpid=$!
wait_for "$(time_limit 30)" grep -q listening "$TMP/rx" ||
	ktap_print_msg "txrecv did not start"
check_ok "push with a 2 s window" \
	tx "$KVODCTL" push m udp://127.0.0.1:5010 --rate "$RATE" --window 2000
wait "$rxpid"
RX_OUT=$(tail -n +2 "$TMP/rx")
ktap_print_msg "txrecv: $RX_OUT"
check_eq "every packet arrived" "$NPKT" "$(val received)"
check_eq "well-formed RTP/MP2T" 0 "$(val bad)"
check_eq "no sequence number twice" 0 "$(val seq_dup)"
check_eq "no sequence number skipped" 0 "$(val seq_gap)"
check_ok "payload byte-exact against the movie" cmp "$TMP/m.ts" "$TMP/rx.ts"

# --- at most 64 pushes at once ---
# Looping pushes at the lowest rate (about a packet a second each) into a
# socket that never reads: they run until stopped.
push_ids() {
	"$KVODCTL" list --json | jq -r '[.pushes[].id] | sort | join(" ")'
}
# In this namespace (the pushes too: an ip netns exec per push cost the
# debug kernel minutes), and with no hold on our output, which the
# runner reads to its end.
timeout 600 python3 -c 'import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.1", 5011))
time.sleep(3600)' </dev/null >/dev/null 2>&1 &
sinkpid=$!
started=0
for _ in $(seq 64); do
	"$KVODCTL" push m udp://127.0.0.1:5011 --rate 10000 --loop \
		>/dev/null && started=$((started + 1))
done
check_eq "64 pushes run at once" "64 64" "$started $(pushes)"
before=$(push_ids)
check_says "a 65th is refused: too many pushes" "too many pushes" \
	"$KVODCTL" push m udp://127.0.0.1:5011 --rate 10000 --loop
check_eq "... and the 64 are left as they were" "$before" "$(push_ids)"
first=${before%% *}
"$KVODCTL" stop "$first"
check_ok "after one stop, a push starts again" \
	"$KVODCTL" push m udp://127.0.0.1:5011 --rate 10000 --loop
for id in $(push_ids); do
	"$KVODCTL" stop "$id"
done
check_eq "every push stopped" 0 "$(pushes)"
kill "$sinkpid" 2>/dev/null
wait "$sinkpid" 2>/dev/null
sinkpid=

kvod_unload
ktap_finish
