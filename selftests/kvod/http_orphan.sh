#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A connection kvod closes gracefully leaves TCP an orphan that must still
# get its FIN acknowledged. TCP keeps such an orphan of a kernel socket
# alive only if it holds its namespace: here the client's side drops
# every FIN the server sends (a u32 filter on lo's egress counts them),
# and the server must send it again and give the orphan up within
# tcp_orphan_retries, both when the client half-closes (LAST-ACK) and
# when an idle keep-alive connection times out (FIN-WAIT-1); one refused
# past the 503 slack is reset, not left as an orphan. A namespace
# whose listener leaves such an orphan behind is still dismantled, once
# the orphan is gone.
#
# timeout: 600

HERE=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
# shellcheck source=selftests/lib/http.sh
. "$HERE/../lib/http.sh"

P=/sys/module/kvod/parameters
NS=kvod-orphan-$$
# TCP gives an orphan with N retries up at its first RTO past
# (2^(N+1) - 1) x 200 ms from its first FIN (TCP_RTO_MIN's model, not its
# RTO): on lo, with 5 retries, after six FINs in about 6 s, at about 13 s.
# The debug kernel's checkers see a FIN sent again and an orphan's end
# the first time they run: there an orphan gets 2 retries (three FINs,
# about 1.5 s), the fewest for which the RETRIES FINs that the checks
# want include one sent again.
RETRIES=5
[ "${KVOD_TIMEOUT_SCALE:-1}" -le 1 ] || RETRIES=2
DIES=$(time_limit 60)
# The clients outlive every check: one that closes sends a FIN of its own,
# which would wake the server's orphan.
HOLD=3600

in_ns() {
	ip netns exec "$NS" "$@"
}

# fins_dropped: how many FINs from port $HTTP_PORT lo dropped so far.
fins_dropped() {
	in_ns tc -s -j filter show dev lo egress |
		jq '[.[] | select(.pref == 1) | .options.actions[]? |
			.stats.packets] | add // 0'
}

# orphans STATE: kvod's sockets in STATE (ss's name).
orphans() {
	in_ns ss -tanH state "$1" "( sport = :$HTTP_PORT )" | wc -l
}

# watch_orphan STATE FINS: true once lo dropped FINS FINs from the
# server, which it sets $fins to; sets $seen once ss saw kvod's socket in
# STATE, looking only until then.
watch_orphan() {
	if [ "$seen" != 1 ] && [ "$(orphans "$1")" -ge 1 ]; then
		seen=1
	fi
	fins=$(fins_dropped)
	[ "$fins" -ge "$2" ]
}

cleanup() {
	kill "${holders[@]}" 2>/dev/null
	wait
	ip netns del "$NS" 2>/dev/null
	http_cleanup
}

holders=()
trap cleanup EXIT

ktap_header
ktap_plan 8

# The server and its clients in a namespace of their own, on its lo:
# - lo's egress drops every FIN sent from port $HTTP_PORT (pref 1);
# - the route acknowledges at once (quickack), so that the server's ACK
#   of a client's FIN leaves before kvod closes, not with the FIN that
#   is dropped: the client then has nothing to send again, which would
#   wake the server's orphan;
# - orphans get $RETRIES retries, and the clients' FIN-WAIT-2 3 s.
# shellcheck disable=SC2119 # no module parameters
kvod_load || ktap_bail_out "cannot load kvod.ko"
{ ip netns add "$NS" &&
	in_ns ip link set lo up &&
	in_ns ip route change table local local 127.0.0.1 dev lo \
		proto kernel scope host src 127.0.0.1 quickack 1 &&
	in_ns sysctl -qw net.ipv4.tcp_orphan_retries=$RETRIES \
		net.ipv4.tcp_fin_timeout=3 &&
	in_ns tc qdisc add dev lo clsact &&
	in_ns tc filter add dev lo egress protocol ip pref 1 u32 \
		match ip protocol 6 0xff \
		match ip sport "$HTTP_PORT" 0xffff \
		match u8 0x01 0x01 at 33 action drop &&
	in_ns "$KVODCTL" listen http "$HTTP_ADDR:$HTTP_PORT" &&
	http_movie m.ts 1; } ||
	ktap_bail_out "cannot set up namespace $NS"

# orphan HOW STATE: a connection the server closes (http_client.py hold
# HOW), its FINs dropped; checks that TCP sends the FIN again while the
# socket is in STATE, then gives it up.
orphan() {
	local how=$1 state=$2 fins0 fins=0 seen=0 left=0

	fins0=$(fins_dropped)
	# Not through in_ns(): $! must be the client, for kill to end it.
	ip netns exec "$NS" "${HC[@]}" hold "$HTTP_ADDR" "$HTTP_PORT" m.ts \
		"$how" "$HOLD" >"$TMP/$how" &
	holders+=($!)
	# A Python start takes long on a loaded guest: from its "ready" on.
	# The FINs after the first say that the socket was closed and lived
	# on as an orphan, whether or not ss looked while it did: the eof
	# case's orphan is made as soon as the client connects, before it
	# says "ready", and on a slow guest it may be over by then. So ss
	# looks only until the FINs are counted, not for a time of its own.
	wait_for "$(time_limit 120)" file_has "$TMP/$how" ready
	wait_for "$DIES" watch_orphan "$state" $((fins0 + RETRIES))
	[ "$seen" = 1 ] ||
		ktap_print_msg "$how: ss did not see the socket in $state"
	fins=$((fins - fins0))
	ktap_print_msg "$how: $fins FINs sent"
	check_eq "$state: the server sends its FIN again" yes \
		"$([ "$fins" -ge $RETRIES ] && echo yes || echo no)"
	wait_test "$DIES" = 0 orphans "$state" || left=$(orphans "$state")
	check_eq "$state: the orphan is gone within tcp_orphan_retries" 0 \
		"$left"
}

# The client half-closes: the server answers with its FIN (LAST-ACK).
orphan eof last-ack
# A keep-alive connection idle past http_idle_timeout (FIN-WAIT-1).
echo 1 >"$P/http_idle_timeout"
orphan idle fin-wait-1
echo 60 >"$P/http_idle_timeout"
check_eq "the listener counted both connections" 2 \
	"$(http_counter accepted)"
kill "${holders[@]}"
wait

# With one connection allowed, 100 at once: one admitted, 64 answered
# 503 (the slack), the rest closed unanswered. Nothing is owed to those:
# they are reset, not left to TCP as orphans, even while their clients
# hold them open (the 503 answers and the admitted connection's 408 go
# with FINs that are dropped, and are reset after their linger).
max0=$(cat "$P/http_max_conns")
echo 1 >"$P/http_max_conns"
ip netns exec "$NS" "${HC[@]}" flood "$HTTP_ADDR" "$HTTP_PORT" 100 "$HOLD" \
	>"$TMP/flood" &
holders=($!)
wait_for "$(time_limit 60)" file_has "$TMP/flood" "opened 100 "
ktap_print_msg "flood: $(<"$TMP/flood")"
left=0
wait_test "$(time_limit 30)" = 0 orphans fin-wait-1 ||
	left=$(orphans fin-wait-1)
check_eq "connections refused past the 503 slack: none left as an orphan" \
	"yes 0" \
	"$([ "$(http_counter refused)" -ge 99 ] && echo yes || echo no) $left"
kill "${holders[@]}"
wait
echo "$max0" >"$P/http_max_conns"

# An orphan left when the namespace goes: the namespace is dismantled
# (its listener stopped) once TCP gave the orphan up, not held for ever.
in_ns "${HC[@]}" hold "$HTTP_ADDR" "$HTTP_PORT" m.ts eof 1 >"$TMP/ns"
check_eq "the last client was answered" ready "$(<"$TMP/ns")"
ip netns del "$NS"
left=
wait_test "$((DIES * 2))" = "" http_counters "$HTTP_ADDR" "$HTTP_PORT" ||
	left=$(http_counters "$HTTP_ADDR" "$HTTP_PORT")
check_eq "the namespace is dismantled once its orphan is gone" "" "$left"

"$KVODCTL" del m.ts
kvod_unload
ktap_finish
