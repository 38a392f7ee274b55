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
# net.core.rmem_max, read and written without sysctl(8): a process costs
# a second or more on the debug kernel.
RMEM=/proc/sys/net/core/rmem_max
read -r RMEM_MAX <"$RMEM"
sinkpid=
cleanup() {
	[ -n "$sinkpid" ] && kill "$sinkpid" 2>/dev/null
	echo "$RMEM_MAX" >"$RMEM"
	netns_down
	rm -rf "$TMP"
}
trap cleanup EXIT

NPKT=5000				# RTP packets, 7 TS packets each
RATE=40000000				# 3800 packets/s: > 1024 per window
# A synthetic MPEG-TS movie: sync byte, then random bytes; made at once,
# not a packet at a time, which the emulated CPU takes seconds for.
python3 -c '
import os, sys
n = int(sys.argv[2]) * 7
b = bytearray(os.urandom(n * 188))
b[::188] = b"\x47" * n
with open(sys.argv[1], "wb") as f:
    f.write(b)
' "$TMP/m.ts" "$NPKT" || ktap_bail_out "cannot make the movie"

# txrecv's 16 MiB receive buffer holds the whole push.
echo $((64 << 20)) >"$RMEM"
kvod_load || ktap_bail_out "insmod kvod failed"
netns_up || ktap_bail_out "netns setup failed"
"$KVODCTL" add m "$TMP/m.ts" >/dev/null || ktap_bail_out "kvodctl add failed"

# Its limits and the wait for it stretch on a slow kernel (time_limit):
# on the debug kernel beside other guests it bound later than 30 s and
# stopped waiting before the push began.
# ip netns exec itself, not tx: a function would be a process more.
ip netns exec "$NS_TX" "$TXRECV" -p 5010 -R $((RATE / (1316 * 8))) -n "$NPKT" \
	-t $(($(time_limit 10) * 1000)) -T $(($(time_limit 60) * 1000)) \
	-P "$TMP/rx.ts" >"$TMP/rx" &
rxpid=$!
wait_for "$(time_limit 30)" file_has "$TMP/rx" listening ||
	ktap_print_msg "txrecv did not start"
check_ok "push with a 2 s window" ip netns exec "$NS_TX" \
	"$KVODCTL" push m udp://127.0.0.1:5010 --rate "$RATE" --window 2000
wait "$rxpid"
# txrecv's report, after its "listening" line.
mapfile -t -s 1 lines <"$TMP/rx"
printf -v RX_OUT '%s\n' "${lines[@]}"
RX_OUT=${RX_OUT%$'\n'}
ktap_print_msg "txrecv: $RX_OUT"
declare -A got
for key in received bad seq_dup seq_gap; do
	kv_into "got[$key]" "$key" "$RX_OUT"
done
check_eq "every packet arrived" "$NPKT" "${got[received]}"
check_eq "well-formed RTP/MP2T" 0 "${got[bad]}"
check_eq "no sequence number twice" 0 "${got[seq_dup]}"
check_eq "no sequence number skipped" 0 "${got[seq_gap]}"
check_ok "payload byte-exact against the movie" cmp "$TMP/m.ts" "$TMP/rx.ts"

# --- at most 64 pushes at once ---
# Looping pushes at the lowest rate (about a packet a second each) into a
# socket that never reads: they run until stopped.
# push_ids: the pushes listed, their ids into PUSH_IDS (ascending,
# space-separated) and their number into NPUSH; both empty if kvodctl
# fails. One kvodctl and builtins (list --json is one line of compact
# JSON, the pushes last), not jq: a process costs a second or more on
# the debug kernel.
push_ids() {
	local out id
	local -a ids=()

	PUSH_IDS=
	NPUSH=
	out=$("$KVODCTL" list --json) || return 0
	NPUSH=0
	out=${out#*\"pushes\":\[}
	while [[ $out == *'{"id":'* ]]; do
		out=${out#*'{"id":'}
		id=${out%%[!0-9]*}
		ids[id]=$id
		NPUSH=$((NPUSH + 1))
	done
	PUSH_IDS=${ids[*]}
}
# In this namespace (the pushes too: an ip netns exec per push cost the
# debug kernel minutes), and with no hold on our output, which the
# runner reads to its end. It ends itself after 600 s.
python3 -c 'import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.1", 5011))
time.sleep(600)' </dev/null >/dev/null 2>&1 &
sinkpid=$!
started=0
for ((i = 0; i < 64; i++)); do
	"$KVODCTL" push m udp://127.0.0.1:5011 --rate 10000 --loop \
		>/dev/null && started=$((started + 1))
done
push_ids
check_eq "64 pushes run at once" "64 64" "$started $NPUSH"
before=$PUSH_IDS
check_says "a 65th is refused: too many pushes" "too many pushes" \
	"$KVODCTL" push m udp://127.0.0.1:5011 --rate 10000 --loop
push_ids
check_eq "... and the 64 are left as they were" "$before" "$PUSH_IDS"
first=${before%% *}
"$KVODCTL" stop "$first"
check_ok "after one stop, a push starts again" \
	"$KVODCTL" push m udp://127.0.0.1:5011 --rate 10000 --loop
push_ids
for id in $PUSH_IDS; do
	"$KVODCTL" stop "$id"
done
push_ids
check_eq "every push stopped" 0 "$NPUSH"
kill "$sinkpid" 2>/dev/null
wait "$sinkpid" 2>/dev/null
sinkpid=

kvod_unload
ktap_finish
