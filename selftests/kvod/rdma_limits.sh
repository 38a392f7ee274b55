#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# What a remote client cannot make the RDMA server do: open more than
# rdma_max_conns_per_addr connections from one address or rdma_max_conns
# on one listener (each over-limit connect is rejected with its own
# status, which kvod-fetch names, and counted; 0 means no limit for
# both), or make the rdma_cm event handler map and register a movie: the
# function tracer shows every MR allocated from kvod's setup work, none
# from an rdma_cm handler. A movie counts its connected readers, and no
# rejected connection stays counted. Two connections to one movie share
# one DMA mapping of it (kvodctl stats: rdma_maps), a reader over a
# second device maps it once more, and none is left, nor any
# connection's own registration bytes or MR pages, once they are gone.
#
# timeout: 600
# transports: rxe siw:debug

# shellcheck source=selftests/lib/ktap.sh
. "$(dirname "$0")/../lib/ktap.sh"
# shellcheck source=selftests/lib/rdma.sh
. "$(dirname "$0")/../lib/rdma.sh"
rdma_test_init
T=/sys/kernel/tracing
P=/sys/module/kvod/parameters
# clients: the active_clients of movies film and small.
clients() {
	local m

	for m in film small; do
		movie_clients "$m"
	done | paste -sd' '
}
# rdma_stats: kvodctl stats' rdma_maps, rdma_map_bytes, rdma_conn_bytes,
# rdma_mr_pages.
rdma_stats() {
	"$KVODCTL" stats |
		awk -F': ' '$1 ~ /^rdma_/ { printf "%s%s", sep, $2; sep = " " }'
}
# trace_off: no tracer, tracing_on 1, as at boot.
trace_off() {
	echo 0 >"$T/tracing_on"
	echo 0 >"$T/options/func_stack_trace" 2>/dev/null
	echo nop >"$T/current_tracer"
	echo >"$T/set_ftrace_filter"
	echo 1 >"$T/tracing_on"
}
# A second device of the same transport, on a veth of its own.
DEV2=${RXE_DEV%0}1
ADDR2=198.18.1.1
dev2_del() {
	rdma link del "$DEV2" 2>/dev/null
	ip link del kvodr2 2>/dev/null
}
rdma_on_exit() {
	trace_off 2>/dev/null
	[ -n "${pids[*]}" ] && kill "${pids[@]}" 2>/dev/null
	dev2_del
}

ktap_header
ktap_plan 15
[ -d "$T/events" ] || mount -t tracefs nodev "$T" 2>/dev/null
rdma_test_start rdma_max_conns_per_addr=2

movie_add film $((20 << 20)) || ktap_bail_out "cannot add a movie"
movie_add small $((1 << 20)) || ktap_bail_out "cannot add a movie"
want=$(sha256sum <"$RDMA_TMP/small")

# Two slow readers hold two connections from 198.18.0.1 through the
# checks below, which kill them: film takes them 671 s at 250 kbit/s,
# times the kernel's KVOD_TIMEOUT_SCALE. On the debug kernel the checks
# up to the second device's took 500 s at scale 4, and readers at
# 2 Mbit/s (336 s there) had left before it.
pids=()
for _ in 1 2; do
	"$KVOD_FETCH" -q --rate $((250000 / ${KVOD_TIMEOUT_SCALE:-1})) \
		--cache 200 -o /dev/null --timeout 20000 "$RDMA_URL/film" &
	pids+=($!)
done
wait_test "$(time_limit 20)" -ge 2 rdma_counter active
read -r maps map_bytes conn_bytes mr_pages <<<"$(rdma_stats)"
ktap_print_msg "two readers of film: rdma_maps $maps, rdma_map_bytes $map_bytes, rdma_conn_bytes $conn_bytes, rdma_mr_pages $mr_pages"
check_eq "film's two readers share one DMA mapping of it, counted with the connections' own bytes" \
	"1 yes yes" \
	"$maps $([ "${map_bytes:-0}" -gt 0 ] && echo yes) $([ "${conn_bytes:-0}" -gt 0 ] && echo yes)"
# Each reader's MRs hold film's 20 MiB and its table's page: in 2 MiB
# pages at the fewest, in 4 KiB pages at the most.
check_eq "their MR pages are counted" yes \
	"$( ((${mr_pages:-0} >= 2 * (10 + 1) && ${mr_pages:-0} <= 2 * (5120 + 1))) && echo yes)"

check_eq "a third connection from the address: rejected, said clearly" \
	"kvod-fetch: small: too many connections from this address" \
	"$("$KVOD_FETCH" -q "$RDMA_URL/small" 2>&1 >/dev/null)"
check_eq "counted as busy, nothing accepted for it" "1 2" \
	"$(rdma_counter rej_busy) $(rdma_counter accepted)"
check_eq "film counts its two readers, small none of the rejected" "2 0" \
	"$(clients)"
echo 0 >"$P/rdma_max_conns_per_addr"
check_eq "rdma_max_conns_per_addr=0: no per-address limit" "$want" \
	"$("$KVOD_FETCH" -q "$RDMA_URL/small" | sha256sum)"

echo 2 >"$P/rdma_max_conns"
check_eq "rdma_max_conns=2 with two connected: rejected as busy" \
	"kvod-fetch: small: server busy" \
	"$("$KVOD_FETCH" -q "$RDMA_URL/small" 2>&1 >/dev/null)"
echo 0 >"$P/rdma_max_conns"
check_eq "rdma_max_conns=0: no limit" "$want" \
	"$("$KVOD_FETCH" -q "$RDMA_URL/small" | sha256sum)"
echo 1024 >"$P/rdma_max_conns"

# A reader of film over a second device: the mapping is per device, so
# film is mapped again for it, and that mapping goes when it leaves
# while the first device's two readers keep theirs.
dev2_del
{ ip link add kvodr2 type veth peer name kvodr3 &&
	ip addr add "$ADDR2/24" dev kvodr2 &&
	ip link set kvodr3 up && ip link set kvodr2 up &&
	RXE_DEV=$DEV2 RXE_NETDEV=kvodr2 rxe_link_add &&
	"$KVODCTL" listen rdma "$ADDR2:$RXE_PORT"; } ||
	ktap_bail_out "cannot set up a second device"
"$KVOD_FETCH" -q --rate $((4000000 / ${KVOD_TIMEOUT_SCALE:-1})) \
	--cache 200 -o /dev/null --timeout 20000 \
	"rdma://$ADDR2:$RXE_PORT/film" &
pid2=$!
wait_test "$(time_limit 20)" -ge 3 rdma_counter active
maps2=$(rdma_stats | cut -d' ' -f1)
kill "$pid2"
wait "$pid2" 2>/dev/null
wait_test "$(time_limit 20)" = 2 rdma_counter active
maps1=$(rdma_stats | cut -d' ' -f1)
check_eq "a reader over a second device maps film again, and that goes with it" \
	"2 1" "$maps2 $maps1"
"$KVODCTL" unlisten rdma "$ADDR2:$RXE_PORT"
dev2_del

kill "${pids[@]}" 2>/dev/null
wait "${pids[@]}" 2>/dev/null
pids=()
wait_test "$(time_limit 20)" = 0 rdma_counter active
check_eq "no connection left active" 0 "$(rdma_counter active)"
wait_test "$(time_limit 20)" = "0 0 0 0" rdma_stats
check_eq "... no mapping, no registration bytes, no MR page left" \
	"0 0 0 0" "$(rdma_stats)"
wait_test "$(time_limit 20)" = "0 0" clients
check_eq "... nor a reader counted" "0 0" "$(clients)"

# Who allocates the MRs: a stack trace of every ib_alloc_mr() call. Both
# kernels have the function tracer: without it, skipped; with it, a
# filter that cannot be set fails the checks.
if grep -qsw function "$T/available_tracers"; then
	: >"$RDMA_TMP/trace"
	got=
	traced=no
	if echo ib_alloc_mr >"$T/set_ftrace_filter"; then
		traced=yes
		echo function >"$T/current_tracer"
		echo 1 >"$T/options/func_stack_trace"
		echo >"$T/trace"
		echo 1 >"$T/tracing_on"
		got=$("$KVOD_FETCH" -q "$RDMA_URL/small" | sha256sum)
		echo 0 >"$T/tracing_on"
		cp "$T/trace" "$RDMA_TMP/trace"
		trace_off
	else
		ktap_print_msg "cannot set the function filter to ib_alloc_mr"
	fi
	calls=$(grep -c 'ib_alloc_mr' "$RDMA_TMP/trace")
	ktap_print_msg "$(grep -m1 -A12 'ib_alloc_mr' "$RDMA_TMP/trace")"
	check_eq "traced: the fetch is byte-exact and kvod allocated MRs" \
		"$want yes" "$got $([ "$calls" -gt 0 ] && echo yes)"
	check_eq "every MR allocated in kvod's setup work, none in an rdma_cm handler" \
		"yes 0" "$traced $(grep -cE 'cma_ib_req_handler|cma_cm_event_handler|kvod_rdma_cm_handler|iw_conn_req_handler' "$RDMA_TMP/trace")"
	check_eq "and the setup work is what the stacks show" yes \
		"$(grep -q 'conn_setup_work' "$RDMA_TMP/trace" && echo yes)"
else
	for t in "traced: the fetch is byte-exact and kvod allocated MRs" \
		"every MR allocated in kvod's setup work, none in an rdma_cm handler" \
		"and the setup work is what the stacks show"; do
		ktap_skip "$t: no function tracer"
	done
fi

rdma_test_stop
ktap_finish
