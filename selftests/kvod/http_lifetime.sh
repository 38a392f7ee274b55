#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Lifetimes under load: DEL of a movie mid-download lets the download
# finish byte-exact; UNLISTEN closes its connections at once; a listener
# lives in its network namespace (reached over a veth from 198.18.0.0/15)
# and goes away with it; rmmod with downloads running finishes within 10 s
# and leaves no socket or movie behind.
#
# timeout: 600

HERE=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
# shellcheck source=selftests/lib/http.sh
. "$HERE/../lib/http.sh"

NS=kvod-http-$$
NS_ADDR=198.18.1.1
HOST_ADDR=198.18.1.2

tcp_inuse() {
	awk '/^TCP:/ { print $3 }' /proc/net/sockstat
}

zombies() {
	"$KVODCTL" stats --json | jq .zombies
}

# stalled N: N downloads of big.ts that read 1 MiB and stop reading, so
# the server has the rest still to send; returns once they all stalled.
stalled() {
	rm -f "$TMP/go"
	"${HC[@]}" stall "$HTTP_ADDR" "$HTTP_PORT" big.ts "$TMP/big.ts" \
		"$TMP/go" "$1" >"$TMP/stall" &
	stall_pid=$!
	wait_for 120 grep -q stalled "$TMP/stall"
}

# resume: let them read on, and wait for them (not in a subshell).
resume() {
	touch "$TMP/go"
	wait "$stall_pid"
}

# outcome: how they ended, as "N complete", "N cut".
outcome() {
	grep -v stalled "$TMP/stall" | sort | uniq -c |
		awk '{ print $1, $2 }' | paste -sd' '
}

ktap_header
ktap_plan 12
tcp0=$(tcp_inuse)
http_setup
http_movie big.ts 16 || ktap_bail_out "cannot register big.ts"

# DEL mid-download.
stalled 1
check_eq "a download holds the movie" 1 "$(movie_clients big.ts)"
"$KVODCTL" del big.ts
check_eq "DEL mid-download leaves a zombie" 1 "$(zombies)"
resume
check_eq "... and the download finishes byte-exact" "1 complete" "$(outcome)"
wait_test 10 = 0 zombies
check_eq "... after which the movie is freed" 0 "$(zombies)"

# UNLISTEN closes its connections.
"$KVODCTL" add big.ts "$TMP/big.ts"
stalled 3
t0=$SECONDS
http_unlisten "$HTTP_ADDR" "$HTTP_PORT"
check_ok "UNLISTEN returns within 5 s with downloads running" test $((SECONDS - t0)) -le "$(time_limit 5)"
resume
check_eq "... and cuts all 3 downloads short" "3 cut" "$(outcome)"

# A listener in another namespace, reached over a veth.
{ ip netns add "$NS" &&
	ip link add kvh0 type veth peer name kvh1 netns "$NS" &&
	ip addr add "$HOST_ADDR/30" dev kvh0 && ip link set kvh0 up &&
	ip -n "$NS" addr add "$NS_ADDR/30" dev kvh1 &&
	ip -n "$NS" link set kvh1 up && ip -n "$NS" link set lo up; } ||
	ktap_bail_out "cannot build the namespace"
ip netns exec "$NS" "$KVODCTL" listen http "$NS_ADDR:$HTTP_PORT"
curl -sS -o "$TMP/ns" "http://$NS_ADDR:$HTTP_PORT/big.ts"
check_eq "a listener in a netns serves over the veth" "$(sha "$TMP/big.ts")" "$(sha "$TMP/ns")"
ip netns del "$NS"
wait_test 20 = "" http_counters "$NS_ADDR" "$HTTP_PORT"
check_eq "... and goes away with the namespace" "" \
	"$(http_counters "$NS_ADDR" "$HTTP_PORT")"

# rmmod with downloads running.
http_listen "$HTTP_ADDR" "$HTTP_PORT"
stalled 4
t0=$SECONDS
kvod_unload
check_ok "rmmod with 4 downloads running returns within 10 s" test $((SECONDS - t0)) -le "$(time_limit 10)"
check_fail "... and the module is gone" test -d /sys/module/kvod
resume
check_eq "... its downloads were cut short" "4 cut" "$(outcome)"
wait_test 20 -le "$tcp0" tcp_inuse
check_ok "... and no TCP socket is left ($(tcp_inuse) in use, $tcp0 before)" \
	test "$(tcp_inuse)" -le "$tcp0"

ktap_finish
