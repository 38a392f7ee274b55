#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Paced sending, in one selftests/qemu/vm-run guest boot: the same stream (PPS
# packets/s of 1316-byte payloads for SECONDS s, UDP over a veth pair into
# another namespace) sent by
#
#   busy     userspace, spinning on clock_gettime() until each packet is due
#   sleep    userspace, clock_nanosleep(TIMER_ABSTIME) until each is due
#   fq       userspace, SO_MAX_PACING_RATE, bursts every 10 ms, sch_fq paces
#   etf      userspace, SO_TXTIME (CLOCK_TAI) 20 ms ahead, through sch_etf
#   tsock    userspace, SO_TXTIME (CLOCK_MONOTONIC) 20 ms ahead, through tsock
#   push     kvod's kernel push (window 20 ms) through tsock
#
# and then all again with a CPU hog (one spinning process per CPU, same
# priority) running.
#
# usage: bench/tsock.sh [PPS [SECONDS]]	(on the host; boots a guest)
#
# Departure error: txrecv's receive timestamps (SO_TIMESTAMPNS) at the
# peer, against each packet's due time. "err" is |arrival - due|; "jit"
# removes the median of (arrival - due), the constant path delay, and is
# the only one reported for push (its due times come from RTP sequence
# numbers, relative to the stream). Sender CPU: busy jiffies of the whole
# guest from /proc/stat over the run, minus an idle baseline of the same
# length; that includes the receiver and the softirq work, which is the
# same for every sender. txsend's own CPU (getrusage) is shown too.
# Method and results: Documentation/tsock.rst.
set -u

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(dirname "$HERE")
PPS=${1:-${KVOD_BENCH_PPS:-500}}
SECS=${2:-${KVOD_BENCH_SECS:-4}}

if [ "${KVOD_IN_GUEST:-}" != 1 ]; then
	exec "$REPO/selftests/qemu/vm-run" --name bench-tsock --timeout 1800 -- \
		env KVOD_BENCH_PPS="$PPS" KVOD_BENCH_SECS="$SECS" \
		"$HERE/tsock.sh" "$PPS" "$SECS"
fi

export KVOD_REPO=$REPO
# shellcheck source=selftests/lib/tsock.sh
. "$REPO/selftests/lib/tsock.sh"
kvod_in_guest || { echo "bench: not in a selftests/qemu/vm-run guest" >&2; exit 1; }

OUT=${KVOD_RESULTS:-$REPO/results}/bench-tsock.txt
B=$(mktemp -d /tmp/kvod-bench.XXXXXX)
KVODCTL=$REPO/tools/kvodctl
N=$((PPS * SECS))
RATE=$((PPS * 1316 * 8))
HZ=$(getconf CLK_TCK)
HOGS=()

# shellcheck source=bench/lib.bash
. "$REPO/bench/lib.bash"

cleanup() {
	local p

	for p in "${HOGS[@]}"; do
		kill "$p" 2>/dev/null
	done
	"$KVODCTL" del bench >/dev/null 2>&1
	netns_down
	kmod_unload kvod
	kmod_unload sch_tsock
	rm -rf "$B"
}
trap cleanup EXIT

: >"$OUT"
log "# bench/tsock.sh: $PPS packets/s x $SECS s, 1316-byte payloads ($RATE bit/s)"
log "# guest: $(nproc) CPUs, $(uname -r), clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
modprobe -q sch_fq sch_etf || die "modprobe sch_fq sch_etf failed"
kmod_load sch_tsock || die "insmod sch_tsock failed"
kvod_load || die "insmod kvod failed"
netns_up || die "netns setup failed"

# A movie of N RTP payloads of null TS packets, for the push.
python3 -c '
import sys
pkt = b"\x47\x1f\xff\x10" + b"\xff" * 184
sys.stdout.buffer.write(pkt * 7 * int(sys.argv[1]))' "$N" >"$B/bench.ts"
"$KVODCTL" add bench "$B/bench.ts" --bitrate "$RATE" >/dev/null ||
	die "kvodctl add failed"

set_qdisc() {
	tx tc qdisc del dev "$DEV_TX" root 2>/dev/null
	[ "$1" = none ] || tx tc qdisc add dev "$DEV_TX" root "$@" ||
		die "tc qdisc add $* failed"
}

# run NAME RXARGS SENDER...: one measured run; prints a result line.
run() {
	local name=$1 rxargs=$2 b0 b1 cpu txcpu

	shift 2
	# shellcheck disable=SC2086
	rx "$TXRECV" -p "$PORT" -n "$N" -t 3000 -T $((SECS * 1000 + 20000)) \
		$rxargs >"$B/rx" &
	local rxpid=$!
	wait_for 30 grep -q listening "$B/rx"
	b0=$(busy_now)
	TX_OUT=$("$@" 2>&1)
	# The push returns at once: wait for the stream to end.
	wait "$rxpid"
	b1=$(busy_now)
	RX_OUT=$(tail -n +2 "$B/rx")
	cpu=$(awk -v d=$((b1 - b0)) -v base="$BASE" -v hz="$HZ" -v s="$SECS" \
		'BEGIN { printf "%.1f", ((d - base) / hz) * 100 / s }')
	txcpu=$(sed -n 's/.*cpu_ms=\([0-9.]*\).*/\1/p' <<<"$TX_OUT")
	printf '%-6s %-4s received=%-5s err_p50_us=%-9s err_p99_us=%-9s jit_p50_us=%-9s jit_p99_us=%-9s cpu_pct=%-6s txsend_cpu_ms=%s\n' \
		"$name" "$HOG" "$(val received)" "$(v err_p50_us)" \
		"$(v err_p99_us)" "$(val jit_p50_us)" "$(val jit_p99_us)" \
		"$cpu" "${txcpu:--}" | tee -a "$OUT"
}

# v KEY: val KEY, or "-" if txrecv did not report it.
v() {
	local x

	x=$(val "$1")
	echo "${x:--}"
}

send() {
	tx "$TXSEND" -d "$ADDR_RX:$PORT" -r "$PPS" -n "$N" -l 1316 -D 100 "$@"
}

push() {
	tx "$KVODCTL" push bench "udp://$ADDR_RX:$PORT" --window 20
}

all_senders() {
	set_qdisc none
	run busy "" send -m busy
	run sleep "" send -m sleep
	set_qdisc fq
	run fq "" send -m fq -W 20
	set_qdisc etf clockid CLOCK_TAI delta 2000000
	run etf "" send -m txtime -c tai -W 20
	set_qdisc tsock
	run tsock "" send -m txtime -W 20
	run push "-R $(awk -v p="$PPS" 'BEGIN { print p }')" push
}

# Idle baseline: busy jiffies over an idle window as long as one run.
b0=$(busy_now)
sleep "$SECS"
BASE=$(($(busy_now) - b0))
log "# idle baseline: $BASE jiffies over $SECS s"

HOG=idle
all_senders
HOG=hog
for _ in $(seq "$(nproc)"); do
	sh -c 'while :; do :; done' &
	HOGS+=($!)
done
all_senders
log "# done"
