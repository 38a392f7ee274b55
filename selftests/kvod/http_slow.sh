#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Slow and stalled readers. A Connection: close client reading slowly for
# much longer than the 2 s linger gets every byte and a clean EOF (with its
# write side open, and half-closed). A client that reads a byte a second
# is reset by http_send_timeout, both while kvod still queues its response
# and once all of it is queued but not acknowledged; a movie deleted
# meanwhile stays counted (a zombie) until then and is freed then, while a
# client reading at a normal pace gets every byte. Connections closed
# unanswered past the 503 slack, and every other socket kvod releases,
# carry no callback of kvod's when TCP closes them (an fprobe on
# tcp_close() reads them).
#
# timeout: 600

HERE=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
# shellcheck source=selftests/lib/http.sh
. "$HERE/../lib/http.sh"

P=/sys/module/kvod/parameters
T=/sys/kernel/tracing
# The checks between a response's stall and its reset (four processes)
# must fit in the send timeout: 10 s, plus 5 s that grow with the
# kernel's slowness (time_limit; make test-debug). Each second more is a
# second that both stalled clients wait for their reset.
SEND_TIMEOUT=$((10 + $(time_limit 5)))

# Builtins rather than awk, jq, cat and cut: on the debug kernel a
# process costs a second or more.

# tcp_inuse: the TCP sockets in use (/proc/net/sockstat).
tcp_inuse() {
	local key n

	while read -r key _ n _; do
		[ "$key" != TCP: ] || echo "$n"
	done </proc/net/sockstat
}

# timeouts: the listener's "timeouts" counter into TIMEOUTS.
timeouts() {
	local kv

	TIMEOUTS=
	kvod_listener_counters http "$HTTP_ADDR:$HTTP_PORT" || return 0
	for kv in "${KVOD_COUNTERS[@]}"; do
		[ "${kv%%:*}" != timeouts ] || TIMEOUTS=${kv#*:}
	done
}

# zombies_gone: kvod_stats, true once no deleted movie is held.
zombies_gone() {
	kvod_stats && [ "${KVOD_STATS[zombies]}" = 0 ]
}

# report FILE: a reader's line in FILE (http_client.py prints one) into
# REPORT, and how it ended ("complete", "reset", ...) into HOW.
report() {
	REPORT=
	IFS= read -r REPORT <"$1"
	HOW=${REPORT%% *}
}

# write_param NAME VALUE: set kvod's module parameter NAME.
write_param() {
	echo "$2" >"$P/$1"
}

# reader OUT ARGS...: a reader of big.ts in the background; $! is it.
reader() {
	local out=$1

	shift
	"${HC[@]}" reader "$HTTP_ADDR" "$HTTP_PORT" "$@" >"$out" &
}

# queues: log the server's Send-Q and the client's Recv-Q of the
# connection to $HTTP_PORT, from one ss.
queues() {
	local recvq sendq here peer srv='' cli=''

	while read -r recvq sendq here peer _; do
		[[ $here != *:$HTTP_PORT ]] || srv+="server Send-Q $sendq "
		[[ $peer != *:$HTTP_PORT ]] || cli+="client Recv-Q $recvq"$'\n'
	done < <(ss -tnH state established \
		"( sport = :$HTTP_PORT or dport = :$HTTP_PORT )")
	ktap_print_msg "$srv${cli%$'\n'}"
}

ktap_header
ktap_plan 19
ulimit -n 4096
tcp0=$(tcp_inuse)

# Every tcp_close() from here on, with the callbacks its socket carries.
# The probe reads struct sock's fields by name, through BTF; a kernel
# without BTF (the debug tier's) skips that one check, nothing else.
[ -d "$T/events" ] || mount -t tracefs nodev "$T"
traced=yes
if [ ! -e /sys/kernel/btf/vmlinux ]; then
	traced=no
else
	echo 'f:kvodrel/close tcp_close dr=sk->sk_data_ready:x64 sc=sk->sk_state_change:x64 ws=sk->sk_write_space:x64' \
		>>"$T/dynamic_events" || ktap_bail_out "cannot probe tcp_close"
	echo >"$T/trace"
	echo 1 >"$T/events/kvodrel/close/enable"
fi

http_setup
# Only the traced check reads them, and /proc/kallsyms is long.
[ "$traced" = no ] ||
	awk '$4 == "[kvod]" { print "0x" $1 }' /proc/kallsyms >"$TMP/kvod.syms"
# Item 7: Connection: close, read at about 10 KiB/s through a 4 KiB
# receive buffer, about 20 s in all: TCP holds the end of the body long
# after kvod queued it, which the old 2 s linger reset away. (The default
# send timeout, 60 s, accepts this pace; 5 s would not.)
head -c 196608 /dev/urandom >"$TMP/slow.ts"
"$KVODCTL" add slow.ts "$TMP/slow.ts" || ktap_bail_out "cannot add slow.ts"
"${HC[@]}" reader "$HTTP_ADDR" "$HTTP_PORT" slow.ts "$TMP/slow.ts" --close \
	--rcvbuf 4096 --chunk 1024 --interval 0.1 --give-up 300 >"$TMP/r1"
report "$TMP/r1"
ktap_print_msg "$REPORT"
check_eq "Connection: close read slowly for ~20 s: every byte, then EOF" \
	complete "$HOW"
"${HC[@]}" reader "$HTTP_ADDR" "$HTTP_PORT" slow.ts "$TMP/slow.ts" --close \
	--shut --rcvbuf 4096 --chunk 2048 --interval 0.1 --give-up 300 >"$TMP/r2"
report "$TMP/r2"
ktap_print_msg "$REPORT"
check_eq "... the same from a client that shut its write side" \
	complete "$HOW"
timeouts
check_eq "... and neither counted as a timeout" 0 "$TIMEOUTS"
"$KVODCTL" del slow.ts

check_ok "http_send_timeout can be set to ${SEND_TIMEOUT} s" \
	write_param http_send_timeout "$SEND_TIMEOUT"
# Only the send timeout may cut the stalled clients below.
echo 600 >"$P/http_idle_timeout"

# Section 5: two clients read a 32 MiB movie at a steady pace (the slower
# would take about a minute); it is deleted under them; then one of them
# reads a byte a second while kvod still has most of the movie to queue.
# (The client starts trickling only after the checks, which take seconds
# here, so that the send timeout cannot fire before them.)
http_movie big.ts 32 || ktap_bail_out "cannot register big.ts"
reader "$TMP/normal" big.ts "$TMP/big.ts" --first 1048576 --chunk 262144 \
	--interval 0.125 --ready "$TMP/n.ready" --give-up 300
normal_pid=$!
reader "$TMP/trickle" big.ts "$TMP/big.ts" --first 1048576 --chunk 65536 \
	--interval 0.125 --ready "$TMP/t.ready" --go "$TMP/go" \
	--give-up "$(time_limit 150)"
trickle_pid=$!
wait_for 120 test -e "$TMP/n.ready" -a -e "$TMP/t.ready"
check_eq "two downloads hold big.ts" 2 "$(movie_clients big.ts)"
timeouts
to0=$TIMEOUTS
"$KVODCTL" del big.ts
kvod_stats
check_eq "DEL under them leaves a zombie" 1 "${KVOD_STATS[zombies]:-}"
: >"$TMP/go"
wait "$trickle_pid"
report "$TMP/trickle"
ktap_print_msg "trickle: $REPORT"
check_eq "a client reading a byte a second is reset by the send timeout" \
	reset "$HOW"
timeouts
check_eq "... counted as a timeout" 1 "$((TIMEOUTS - to0))"
wait "$normal_pid"
report "$TMP/normal"
ktap_print_msg "normal: $REPORT"
check_eq "... while a client reading at a normal pace gets every byte" \
	complete "$HOW"
wait_for 10 zombies_gone
check_eq "... and then the deleted movie is freed" 0 "${KVOD_STATS[zombies]:-}"
kvod_stats
check_eq "... and no byte is resident" 0 "${KVOD_STATS[resident]:-}"

# The same once kvod queued all of the response: 8 KiB and its head fit
# in the send buffer TCP starts with (16 KiB), the client's 2 KiB window
# takes part, the rest waits for acknowledgements that never come. The
# checks before the reset must take less than the send timeout here
# (SEND_TIMEOUT above).
"$KVODCTL" add big.ts "$TMP/big.ts" || ktap_bail_out "cannot add big.ts"
reader "$TMP/drain" big.ts "$TMP/big.ts" --range 0-8191 --rcvbuf 2048 \
	--chunk 1 --interval 1 --ready "$TMP/d.ready" --give-up "$(time_limit 90)"
trickle_pid=$!
wait_for 60 test -e "$TMP/d.ready"
timeouts
to0=$TIMEOUTS
queues
"$KVODCTL" del big.ts
kvod_stats
check_eq "an unacknowledged response holds its deleted movie" 1 \
	"${KVOD_STATS[zombies]:-}"
wait "$trickle_pid"
report "$TMP/drain"
ktap_print_msg "drain: $REPORT"
check_eq "... until the send timeout resets it" reset "$HOW"
wait_for 10 zombies_gone
check_eq "... which frees the movie" 0 "${KVOD_STATS[zombies]:-}"
timeouts
check_eq "... and counts a timeout" 1 "$((TIMEOUTS - to0))"

# Item 10: past the 503 slack (64 answers in flight), connections are
# closed unanswered; before the fix they kept the listener's callbacks.
# A refusal lasts from its accept until the client closes or its 2 s
# linger ends (an error answer's deadline runs from the answer,
# kmod/http.c); the client closes none before it reads, so more than 64
# must be accepted within 2 s. 150 connects one after another came
# slower than that on the debug kernel (149 answered, none dropped). So
# the client's packets to the port, all but its SYNs, wait in a plug
# band on lo until every connect is done (a connect completes at the
# SYN-ACK), and are let go at once: the handshakes' last ACKs reach the
# listener together.
hold_acks() {
	tc qdisc add dev lo root handle 1: prio &&
		tc qdisc add dev lo parent 1:3 handle 30: plug limit 10000000 &&
		tc qdisc change dev lo parent 1:3 handle 30: plug block &&
		tc filter add dev lo parent 1: protocol ip prio 1 u32 \
			match ip protocol 6 0xff match ip dport "$HTTP_PORT" 0xffff \
			match u8 0 0x02 at 33 flowid 1:3
}
trap 'tc qdisc del dev lo root 2>/dev/null; http_cleanup' EXIT
hold_acks || ktap_bail_out "cannot hold packets on lo"
echo 1 >"$P/http_max_conns"
# Once connected: count what waits (the plug's backlog, "150p" or more
# with the ACKs of retransmitted SYN-ACKs), let go.
release="tc -s qdisc show dev lo handle 30: |
	awk '/backlog/ { sub(/p\$/, \"\", \$3); print \$3 }' >$TMP/held &&
	tc qdisc change dev lo parent 1:3 handle 30: plug release_indefinite"
"${HC[@]}" refused "$HTTP_ADDR" "$HTTP_PORT" 150 "$release" >"$TMP/refused"
echo 16384 >"$P/http_max_conns"
tc qdisc del dev lo root
held=
read -r held 2>/dev/null <"$TMP/held"
check_ok "the client's packets waited until every connect was done ($held held)" \
	test "${held:-0}" -ge 150
report "$TMP/refused"
ktap_print_msg "refused: $REPORT"
check_ok "past the slack, connections are closed unanswered" \
	grep -Eq 'none=[1-9]' "$TMP/refused"

kvod_unload
if [ "$traced" = yes ]; then
	echo 0 >"$T/events/kvodrel/close/enable"
	grep -o '[a-z][a-z]=0x[0-9a-f]*' "$T/trace" | cut -d= -f2 | sort -u \
		>"$TMP/ptrs"
	closes=$(grep -c 'close:' "$T/trace")
	ktap_print_msg "$closes tcp_close() calls traced"
	echo >"$T/trace"
	echo '-:kvodrel/close' >>"$T/dynamic_events"
	# Some were traced (the probe works) and kvod's symbols are known;
	# no callback traced is one of them.
	check_eq "no socket reached tcp_close() with a callback of kvod's" \
		"traced, kvod symbols: " \
		"$( ((closes > 0)) && echo traced || echo "none traced"), $([ -s "$TMP/kvod.syms" ] && echo kvod symbols || echo no symbols): $(grep -Fxf "$TMP/ptrs" "$TMP/kvod.syms" | paste -sd' ')"
else
	ktap_skip "no socket reached tcp_close() with a callback of kvod's" \
		"no BTF in this kernel: fprobe events cannot read struct sock"
fi
wait_test 20 -le "$tcp0" tcp_inuse
check_ok "no TCP socket is left ($(tcp_inuse) in use, $tcp0 before)" \
	test "$(tcp_inuse)" -le "$tcp0"

ktap_finish
