#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# tsock's data path, measured at the far end of a veth pair: packets
# without a time pass through; timed packets leave in departure-time order
# across flows, never early, and on time within a tolerance; the horizon,
# the late policy, the clock check and the per-flow limit drop what they
# should. Timing tolerances are wide enough for a TCG guest yet each check
# fails for a qdisc that does not hold packets (span, never-early) or does
# not sort them (in_order).
#
# timeout: 600

# shellcheck source=selftests/lib/tsock.sh
. "$(dirname "$0")/../lib/tsock.sh"

ktap_header
ktap_plan 36

trap netns_down EXIT
kmod_load sch_tsock || ktap_bail_out "insmod sch_tsock failed"
netns_up || ktap_bail_out "netns setup failed"
qd add root tsock || ktap_bail_out "tc qdisc add failed"

# fresh ARGS...: a new root tsock with ARGS, so its counters start at 0
# (the delete and the add in one tc).
fresh() {
	local out

	tc_batch out "qdisc del dev $DEV_TX root
qdisc add dev $DEV_TX root tsock $*" -force
	[ -z "${TC_FAILED[2]+set}" ] ||
		ktap_print_msg "tc qdisc add tsock $* failed: ${TC_FAILED[2]}"
}

# Untimed packets pass straight through.
stream "-n 20 -t 6000" -m plain -n 20
check_eq "untimed: all received" 20 "$(val received)"
read -r untimed on_time <<<"$(qstats untimed on_time)"
check_cmp "untimed: counted as untimed" "$untimed" ">=" 20
check_eq "untimed: none counted as timed" 0 "$on_time"

# 30 packets on 3 flows, 20 ms apart, handed over at once: the last flow
# first, each flow in order. They must come out interleaved by time.
stream "-n 30 -t 6000" -m batch -r 50 -n 30 -F 3 -o flows -D 300
check_eq "order across flows: all received" 30 "$(val received)"
check_eq "order across flows: in departure order" 1 "$(val in_order)"
check_cmp "order across flows: none early" "$(val min_err_us)" ">" -2000

# Every packet handed over in reverse order of its time.
stream "-n 30 -t 6000" -m batch -r 50 -n 30 -F 2 -o reverse -D 300
check_eq "reverse order: in departure order" 1 "$(val in_order)"
check_eq "reverse order: no flow left counted once drained" 0 "$(qstat flows)"

# The flows gauge counts while packets wait: 2 flows, the first packet
# 1.5 s ahead. One look at the gauge (tc in the namespace) takes seconds
# on the debug kernel, where 1.5 s and then 6 s passed between two looks
# begun while txsend was still starting. The looks begin once txsend has
# handed the packets over (stream_send), and on a slow kernel the lead is
# twice KVOD_TIMEOUT_SCALE's stretch (12 s at 4): room for several. The
# horizon and the receiver's idle limit grow with it, and the horizon is
# 2 s again after.
lead=$(time_limit 1500)
[ "${KVOD_TIMEOUT_SCALE:-1}" -le 1 ] || lead=$((lead * 2))
qd change root tsock horizon "$((lead + 1000))ms"
stream_send "-n 10 -t $((6000 + lead))" -m batch -r 50 -n 10 -F 2 -D "$lead"
held=no
wait_test "$(time_limit 30)" = 2 qstat flows && held=yes
stream_wait
qd change root tsock horizon 2s
check_eq "flows gauge: 2 while two flows wait, 0 once they left" "yes 0" \
	"$held $(qstat flows)"

# Departure times honoured: 36 packets over 1.75 s (within the default
# horizon of 2 s), all handed over at once. Without pacing they would all
# arrive within milliseconds.
stream "-n 36 -t 6000" -m batch -r 20 -n 36 -F 2 -D 100
check_eq "tolerance: all received" 36 "$(val received)"
check_cmp "tolerance: none early (>2 ms)" "$(val min_err_us)" ">" -2000
check_cmp "tolerance: first not before its time" "$(val first_ms)" ">" -2
check_cmp "tolerance: spread over the schedule" "$(val last_ms)" ">" 1700
check_cmp "tolerance: median error < 50 ms" "$(val err_p50_us)" "<" 50000
check_cmp "tolerance: p99 error < 500 ms" "$(val err_p99_us)" "<" 500000
read -r wakeups lateness <<<"$(qstats wakeups lateness_mean_ns)"
check_cmp "tolerance: wakeups by the timer" "$wakeups" ">=" 20
check_cmp "tolerance: mean lateness in stats < 50 ms" \
	"$lateness" "<" 50000000

# The same through pfifo: proves the checks above can fail.
qd replace root pfifo
stream "-n 36 -t 6000" -m batch -r 20 -n 36 -F 2 -D 100
check_cmp "control: pfifo does not pace (all early)" "$(val min_err_us)" "<" -1000000
check_cmp "control: pfifo does not spread" "$(val last_ms)" "<" 500
fresh horizon 300ms

# Horizon: 20 packets due 100..1050 ms ahead, horizon 300 ms. Up to 4 s
# for the first, then they come 50 ms apart: 2 s without one is the end
# (both stretched by the scale).
stream "-w 4000 -t 2000" -m batch -r 20 -n 20 -D 100
got=$(val received)
dropped=$(qstat drop_horizon)
check_eq "horizon: every packet sent or dropped" 20 "$((got + dropped))"
check_cmp "horizon: far packets dropped" "$dropped" ">=" 14
check_cmp "horizon: near packets sent" "$got" ">=" 4

# Late policy: packets due 200 ms ago.
fresh late send
stream "-n 10 -t 6000" -m batch -r 100 -n 10 -D -200
check_eq "late send: all received" 10 "$(val received)"
check_eq "late send: counted late" 10 "$(qstat late)"
qd change root tsock late drop tolerance 5ms
stream "-t 800" -m batch -r 100 -n 10 -D -200
check_eq "late drop: none received" 0 "$(val received)"
read -r drop_late drops <<<"$(qstats drop_late drops)"
check_eq "late drop: counted" 10 "$drop_late"
check_eq "late drop: counted as qdisc drops" 10 "$drops"

# Clocks: TAI stamps into a CLOCK_MONOTONIC tsock are dropped.
fresh
stream "-t 800" -m batch -r 100 -n 10 -c tai -D 50
check_eq "clock mismatch: none received" 0 "$(val received)"
check_eq "clock mismatch: counted" 10 "$(qstat drop_clock)"
fresh clockid CLOCK_TAI
stream "-n 10 -t 6000" -m batch -r 100 -n 10 -c tai -D 100
check_eq "CLOCK_TAI tsock: all received" 10 "$(val received)"
check_cmp "CLOCK_TAI tsock: none early" "$(val min_err_us)" ">" -2000

# TCP stamps every segment with a CLOCK_MONOTONIC departure hint (EDT),
# which a CLOCK_TAI tsock cannot read: it must pass such traffic as
# untimed, not drop it for its clock (SO_TXTIME was not set). The
# receiver's count comes through a pipe: no file to make, read and
# remove, a process each.
tcp_limit=$(time_limit 60)
exec {tcp_fd}< <(ip netns exec "$NS_RX" timeout "$tcp_limit" \
	/usr/bin/python3 -S -c '
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], 5050))
s.listen(1)
c, _ = s.accept()
n = 0
while True:
    b = c.recv(65536)
    if not b:
        break
    n += len(b)
print(n)
' "$ADDR_RX")
tcp_rx=$!
# The sender tries again while the receiver (a slow start here) binds.
tx timeout "$tcp_limit" /usr/bin/python3 -S -c '
import socket, sys, time
while True:
    try:
        c = socket.create_connection((sys.argv[1], 5050), timeout=30)
        break
    except ConnectionRefusedError:
        time.sleep(0.2)
c.sendall(bytes(1 << 20))
c.close()
' "$ADDR_RX" || ktap_print_msg "TCP sender failed"
tcp_got=
read -r -u "$tcp_fd" tcp_got
exec {tcp_fd}<&-
wait "$tcp_rx"
check_eq "CLOCK_TAI tsock: TCP passes (1 MiB received)" $((1 << 20)) \
	"$tcp_got"
check_eq "CLOCK_TAI tsock: TCP's monotonic hints not dropped" 0 \
	"$(qstat drop_clock)"

# Per-flow limit: 5 packets per flow.
fresh flow_limit 5
stream "-n 5 -t 6000" -m batch -r 50 -n 20 -F 1 -D 300
check_eq "flow limit: one flow keeps 5" 5 "$(val received)"
check_eq "flow limit: drops counted" 15 "$(qstat drop_flow_limit)"
fresh flow_limit 5
stream "-n 20 -t 6000" -m batch -r 50 -n 20 -F 4 -D 300
check_eq "flow limit: per flow, 4 flows keep 20" 20 "$(val received)"

qd del root
netns_down
kmod_unload sch_tsock
ktap_finish
