#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Paced sending across two guests (selftests/qemu/vm-pair), the issue's fifth
# experiment: the server guest sends one stream (PPS packets/s of
# 1316-byte payloads for SECONDS s, UDP) out of its link NIC to a
# receiver on the client guest, paced by
#
#   busy     userspace, spinning on clock_gettime() until each packet is due
#   sleep    userspace, clock_nanosleep(TIMER_ABSTIME) until each is due
#   fq       userspace, SO_MAX_PACING_RATE, bursts every 10 ms, sch_fq paces
#   etf      userspace, SO_TXTIME (CLOCK_TAI) 20 ms ahead, through sch_etf
#   tsock    userspace, SO_TXTIME (CLOCK_MONOTONIC) 20 ms ahead, through tsock
#   push     kvod's kernel push (window 20 ms) through tsock
#
# (the qdisc is the root qdisc of the server's virtio-net NIC), first on
# an idle server, then with a CPU hog on it (one spinning process per
# CPU, same priority). bench/tsock.sh is the same on one guest's veth.
#
# Departure error: the receiver (selftests/txtime/txrecv) timestamps
# each packet on arrival (SO_TIMESTAMPNS) against its due time in the
# sender's clock. The two guests' clocks differ by a constant, so only
# the jitter is reported: |arrival - due| after removing the median of
# (arrival - due), p50 and p99, in microseconds. Sender cost: the server
# guest's busy CPU from the sender's start until the stream is sent
# (txsend exits; a push's SECONDS are over), in CPU-ms per second (1000:
# one CPU busy all along), next to the idle server's (measured first; not
# subtracted: a sender that fills the CPU leaves no room for the idle
# guest's own work, which under TCG is a third of a CPU); it is the
# server's alone now (the receiver runs on the other guest), and
# includes the NIC's transmit work. Not with the hog, which keeps the
# guest busy by construction. txsend's own CPU time (getrusage) is shown
# too, per second of stream. RUNS runs per sender;
# medians with min..max; each run's receiver output is kept in the pair
# directory.
#
# One vCPU per guest (KVOD_VM_CPUS, default 1 here): software emulation
# runs all of a guest's vCPUs in one host thread, taking turns, so a
# second vCPU would only add the emulator's round robin to every delay;
# with one each, the two guests' threads have the host's two cores.
#
# Without icount: the two guests' clocks must both follow the host's for
# the jitter to mean anything, and under -icount each runs on its own
# instruction count. KVOD_ICOUNT is ignored here.
#
# usage: bench/pair-pacing.sh [PPS [SECONDS [RUNS]]]	(on the host)
# Results: stdout and results/bench-pair-pacing.txt (.dat for the plot).
set -u

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(dirname "$HERE")
PPS=${1:-${KVOD_BENCH_PPS:-500}}
SECS=${2:-${KVOD_BENCH_SECS:-4}}
RUNS=${3:-${KVOD_BENCH_RUNS:-3}}

if [ "${KVOD_IN_GUEST:-}" != 1 ]; then
	env -u KVOD_ICOUNT KVOD_VM_CPUS="${KVOD_VM_CPUS:-1}" \
		"$REPO/selftests/qemu/vm-pair" --name bench-pair-pacing \
		--timeout 3600 -- env KVOD_BENCH_PPS="$PPS" \
		KVOD_BENCH_SECS="$SECS" KVOD_BENCH_RUNS="$RUNS" "$0" || exit
	exec "$REPO/bench/bench-plot"
fi

# shellcheck source=bench/pair.bash
. "$HERE/pair.bash"
# shellcheck source=bench/lib.bash
. "$HERE/lib.bash"
# kmod_path: where the modules are.
# shellcheck source=selftests/lib/ktap.sh
. "$REPO/selftests/lib/ktap.sh"
OUT=$PAIR_DIR/report.$PAIR_ROLE
FINAL=${KVOD_RESULTS:-$REPO/results}/bench-pair-pacing.txt
# For bench/bench-plot, a line a sender and load: SENDER-LOAD, jitter p99
# median, min, max (us), server CPU-ms per stream second median, min, max.
DAT=${KVOD_RESULTS:-$REPO/results}/bench-pair-pacing.dat
TXT=$REPO/selftests/txtime
export TC_LIB_DIR=$REPO/tools/tc
N=$((PPS * SECS))
RATE=$((PPS * 1316 * 8))
PORT=9000
B=/tmp/pair-pacing

pair_net_up || die "no link NIC"
mkdir -p "$B"

if [ "$PAIR_ROLE" = server ]; then
	# handler WHAT ARGS: the requests pair_serve passes on.
	handler() {
		local p

		case $1 in
		qdisc)
			tc qdisc del dev "$PAIR_NETDEV" root 2>/dev/null
			# shellcheck disable=SC2086 # the qdisc's words
			[ "$2" = none ] || tc qdisc add dev "$PAIR_NETDEV" root $2 ||
				{ echo "tc qdisc add $2 failed"; return; }
			echo ok ;;
		start)
			echo "$(pair_stat) $(date +%s.%N)" >"$B/t0"
			if [ "$2" = push ]; then
				"$REPO/tools/kvodctl" push bench \
					"udp://$PAIR_CLIENT:$PORT" --window 20 \
					>"$B/tx.out" 2>&1
				echo started
				return
			fi
			# shellcheck disable=SC2086 # txsend's options
			"$TXT/txsend" -d "$PAIR_CLIENT:$PORT" -r "$PPS" -n "$N" \
				-l 1316 -D 100 $2 >"$B/tx.out" 2>&1 &
			echo $! >"$B/tx.pid"
			echo started ;;
		stop)
			stop ;;
		hog)
			for _ in $(seq "$(nproc)"); do
				sh -c 'while :; do :; done' >/dev/null 2>&1 &
				echo $! >>"$B/hogs"
			done
			echo ok ;;
		esac
	}

	# stop: once the stream is sent (txsend exited; a push's SECONDS are
	# over), "CPU TX": the guest's busy CPU-ms per second since "start",
	# and txsend's CPU-ms per second of stream ("-" for a push).
	stop() {
		local p t0 now

		p=$(cat "$B/tx.pid" 2>/dev/null)
		rm -f "$B/tx.pid"
		while [ -n "$p" ] && kill -0 "$p" 2>/dev/null; do
			sleep 0.05
		done
		t0=$(awk '{ print $5 }' "$B/t0")
		if [ -z "$p" ]; then
			sleep "$(awk -v t0="$t0" -v s="$SECS" -v now="$(date +%s.%N)" \
				'BEGIN { d = t0 + s + 0.2 - now; print (d > 0 ? d : 0) }')"
		fi
		now="$(pair_stat) $(date +%s.%N)"
		awk -v a="$(cat "$B/t0")" -v b="$now" -v s="$SECS" \
			-v tx="$(sed -n 's/.*cpu_ms=\([0-9.]*\).*/\1/p' "$B/tx.out")" 'BEGIN {
			split(a, x, " "); split(b, y, " ")
			t = y[5] - x[5]
			printf "%.1f %s", (y[1] - x[1]) / x[4] * 1000 / t,
				tx == "" ? "-" : sprintf("%.1f", tx / s) }'
	}

	modprobe -q sch_fq sch_etf || die "modprobe sch_fq sch_etf failed"
	insmod "$(kmod_path sch_tsock)" || die "insmod sch_tsock failed"
	modprobe -q -a ib_core rdma_cm || die "modprobe rdma_cm failed"
	insmod "$(kmod_path kvod)" || die "insmod kvod failed"
	# A movie of N RTP payloads of null TS packets, for the push.
	python3 -c '
import sys
pkt = b"\x47\x1f\xff\x10" + b"\xff" * 184
sys.stdout.buffer.write(pkt * 7 * int(sys.argv[1]))' "$N" >"$B/bench.ts"
	"$REPO/tools/kvodctl" add bench "$B/bench.ts" --bitrate "$RATE" >/dev/null ||
		die "kvodctl add failed"
	pair_signal ready
	pair_serve handler || die "the client went quiet"
	# shellcheck disable=SC2046 # one pid a word
	[ ! -s "$B/hogs" ] || kill $(cat "$B/hogs")
	tc qdisc del dev "$PAIR_NETDEV" root 2>/dev/null
	"$REPO/tools/kvodctl" del bench
	rmmod kvod sch_tsock
	exit 0
fi

# ---- client ----
# val KEY: a key=value of the receiver's output, or "-".
val() {
	local x

	x=$(sed -n "s/.*\b$1=\([^ ]*\).*/\1/p" "$B/rx" | head -n1)
	echo "${x:--}"
}

# run SENDER TXSEND_ARGS: one stream; "received jit_p50 jit_p99 CPU TX"
# where CPU is the server's busy CPU-ms per second while it sent and TX
# txsend's own per second of stream (the server's "stop").
run() {
	local rxargs="" rxpid cpu

	[ "$1" != push ] || rxargs="-R $PPS"
	# The first packet may take seconds: the server answers requests by
	# polling files, slowly with a hog on its CPU.
	# shellcheck disable=SC2086 # txrecv's options
	"$TXT/txrecv" -p "$PORT" -n "$N" -t 20000 -T $((SECS * 1000 + 60000)) \
		$rxargs >"$B/rx" &
	rxpid=$!
	for _ in $(seq 100); do
		! grep -q listening "$B/rx" || break
		sleep 0.1
	done
	[ "$(ask start "$2")" = started ] || die "$1 did not start"
	cpu=$(ask stop)
	wait "$rxpid"
	cp "$B/rx" "$PAIR_DIR/rx.$LOAD.$1.$RUN"
	echo "$(val received) $(val jit_p50_us) $(val jit_p99_us) $cpu"
}

# sender NAME QDISC TXSEND_ARGS: RUNS runs, one report line.
sender() {
	local lines=() i r p50 p99 plo phi cm clo chi tx cpu

	[ "$(ask qdisc "$2")" = ok ] || die "qdisc $2 on the server failed"
	for i in $(seq "$RUNS"); do
		RUN=$i
		lines+=("$(run "$1" "$3")")
		progress "$LOAD $1 run $i: ${lines[-1]}"
	done
	read -r r _ <<<"$(col 1 "${lines[@]}")"
	read -r p50 _ <<<"$(col 2 "${lines[@]}")"
	read -r p99 plo phi <<<"$(col 3 "${lines[@]}")"
	read -r cm clo chi <<<"$(col 4 "${lines[@]}")"
	read -r tx _ <<<"$(col 5 "${lines[@]}")"
	cpu="$cm ($clo..$chi)"
	# With the hog the guest is busy by construction.
	if [ "$LOAD" = hog ]; then
		cpu=-
		cm=nan clo=nan chi=nan
	fi
	log "$(printf '%-6s %-4s  %5s/%-5s  %8s  %8s (%s..%s)  %-22s %s' \
		"$1" "$LOAD" "$r" "$N" "$p50" "$p99" "$plo" "$phi" "$cpu" "$tx")"
	echo "$1-$LOAD $p99 $plo $phi $cm $clo $chi" >>"$DAT.new"
}

# progress TEXT: a line on the console (not in the report) while it runs.
progress() {
	echo "  ... $*" >&2
}

all_senders() {
	sender busy none "-m busy"
	sender sleep none "-m sleep"
	sender fq fq "-m fq -W 20"
	sender etf "etf clockid CLOCK_TAI delta 2000000" "-m txtime -c tai -W 20"
	sender tsock tsock "-m txtime -W 20"
	sender push tsock push
}

pair_wait ready 900 || die "the server did not get ready"
IDLE=$(pair_idle_rate 10) || die "the server did not answer"
rm -f "$DAT.new"
log "# paced sending across two guests: $(uname -r), $PPS packets/s x $SECS s,"
log "# 1316-byte payloads ($RATE bit/s), from the server guest's NIC to the client guest; $RUNS runs"
log "# CPU: ms a second; the server guest's while it sends (not with the hog, which keeps it"
log "# busy), and txsend's own per second of stream; the idle server's (10 s):"
log "# $(awk -v i="$IDLE" 'BEGIN { split(i, z, " "); printf "%.1f", z[1] * 1000 / '"$(getconf CLK_TCK)"' }') CPU-ms a second"
log "# sender load  received      jitter p50 us  p99 us (min..max)   server CPU (min..max)  txsend CPU"
LOAD=idle
all_senders
[ "$(ask hog)" = ok ] || die "the hog did not start"
LOAD=hog
all_senders
ask qdisc none >/dev/null
ask end >/dev/null
cp "$OUT" "$FINAL"
mv "$DAT.new" "$DAT"
