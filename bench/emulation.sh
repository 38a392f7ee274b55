#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# What software emulation does to a guest's CPU figures, which every
# other benchmark's cost figures stand on. Two guest boots of 2 vCPUs
# (vm-run's defaults: TCG, the vCPUs in one host thread), one with
# instruction counting (KVOD_ICOUNT, default 3) and one without; in each:
#
#   1. a loop of LOOP_N counts (bench/periodic.py) on vCPU 0, then on
#      vCPU 1, then on both at once: the CPU seconds each copy used.
#      The same work should take the same CPU time whether or not the
#      other vCPU is busy.
#   2. two periodic loads, A (every 20 ms, 2000 counts) and B (every 7 ms,
#      300 counts), for SECS each: the guest's busy CPU (% of one CPU,
#      from /proc/uptime's idle time, as bench/pair-live.sh measures it)
#      with nothing running, A alone on vCPU 0, B alone on vCPU 1, A and
#      B together on their two vCPUs, and together on vCPU 0. If busy
#      time added up, "together" would be A + B - nothing. The excess is
#      what a figure got by subtracting a baseline from a point (the
#      baseline running beside the point's own work) can be off by.
#
# usage: bench/emulation.sh [SECS [RUNS]]	(on the host; defaults 20, 3)
#	KVOD_BENCH_LOOP_N=1000000 (part 1's counts)
#
# Results: stdout and results/bench-emulation.txt (median, min..max of
# RUNS runs).
set -u

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(dirname "$HERE")
SECS=${1:-${KVOD_BENCH_SECS:-20}}
RUNS=${2:-${KVOD_BENCH_RUNS:-3}}
LOOP_N=${KVOD_BENCH_LOOP_N:-1000000}
RESULTS=${KVOD_RESULTS:-$REPO/results}
OUT=$RESULTS/bench-emulation.txt
# shellcheck source=bench/lib.bash
. "$HERE/lib.bash"

if [ "${KVOD_IN_GUEST:-}" != 1 ]; then
	mkdir -p "$RESULTS"
	: >"$OUT"
	log "# what software emulation does to CPU figures: 2 vCPUs in one host thread, $RUNS runs, median (min..max)"
	rc=0
	for ic in "${KVOD_ICOUNT:-3}" ""; do
		KVOD_KVM=0 KVOD_ICOUNT=$ic "$REPO/selftests/qemu/vm-run" \
			--name "bench-emulation${ic:+-icount$ic}" --timeout 3600 -- \
			env KVOD_BENCH_SECS="$SECS" KVOD_BENCH_RUNS="$RUNS" \
			KVOD_BENCH_LOOP_N="$LOOP_N" \
			KVOD_BENCH_MODE="${ic:+icount shift=$ic}" "$0" || rc=1
	done
	exit "$rc"
fi

PERIODIC=("/usr/bin/python3" -S "$HERE/periodic.py")
MODE=${KVOD_BENCH_MODE:-no icount}
T=$(mktemp -d)

# on CPU ARGS...: periodic.py ARGS on vCPU CPU; "PERIODS CPU_SECONDS".
on() {
	local cpu=$1

	shift
	taskset -c "$cpu" "${PERIODIC[@]}" "$@"
}

# busy NAME CMD...: run CMD (its output in $T/NAME); print the busy % of
# one CPU of the whole guest while it ran.
busy() {
	local name=$1 u0 i0 u1 i1

	shift
	read -r u0 i0 </proc/uptime
	"$@" >"$T/$name"
	read -r u1 i1 </proc/uptime
	awk -v a="$u0" -v b="$i0" -v c="$u1" -v d="$i1" -v n="$(nproc)" \
		'BEGIN { t = c - a; printf "%.2f", (n * t - (d - b)) / t * 100 }'
}

A() { on 0 20 2000 "$SECS"; }
B() { on "$1" 7 300 "$SECS"; }
two() { A & B 1; wait; }
one() { A & B 0; wait; }

[ "$(nproc)" -ge 2 ] || die "needs 2 vCPUs"
loops=() adds=() periods=""
for _ in $(seq "$RUNS"); do
	a0=$(on 0 0 "$LOOP_N" 0 | cut -d' ' -f2)
	a1=$(on 1 0 "$LOOP_N" 0 | cut -d' ' -f2)
	on 0 0 "$LOOP_N" 0 >"$T/t0" & on 1 0 "$LOOP_N" 0 >"$T/t1"
	wait
	loops+=("$(awk -v a0="$a0" -v a1="$a1" -v t0="$(cut -d' ' -f2 "$T/t0")" \
		-v t1="$(cut -d' ' -f2 "$T/t1")" 'BEGIN {
		a = (a0 + a1) / 2; t = (t0 + t1) / 2
		printf "%.2f %.2f %.3f", a, t, t / a }')")

	n=$(busy n sleep "$SECS")
	ba=$(busy a A)
	bb=$(busy b B 1)
	b2=$(busy two two)
	b1=$(busy one one)
	adds+=("$(awk -v n="$n" -v a="$ba" -v b="$bb" -v t2="$b2" -v t1="$b1" \
		'BEGIN { p = a + b - n
		printf "%.2f %.2f %.2f %.2f %.2f %.2f %.2f", n, a, b, p, t2, t2 - p, t1 - p }')")
	# The periods each load ran, alone and in both pairings: equal work.
	periods+="$(cut -d' ' -f1 "$T/a" "$T/b" | paste -sd/)"
	periods+=" $(sort "$T/two" | cut -d' ' -f1 | paste -sd/)"
	periods+=" $(sort "$T/one" | cut -d' ' -f1 | paste -sd/); "
done

fmt() {	# fmt K LINES...: "median (min..max)" of field K
	local k=$1

	shift
	read -r m lo hi <<<"$(col "$k" "$@")"
	printf '%s (%s..%s)' "$m" "$lo" "$hi"
}

log "## $MODE"
log "1. a loop of $LOOP_N counts, CPU seconds: alone $(fmt 1 "${loops[@]}"), with the other vCPU busy too $(fmt 2 "${loops[@]}"); ratio $(fmt 3 "${loops[@]}")"
log "2. busy % of one CPU, $SECS s each: nothing $(fmt 1 "${adds[@]}"); A on vCPU 0 $(fmt 2 "${adds[@]}"); B on vCPU 1 $(fmt 3 "${adds[@]}")"
log "   A and B together: A + B - nothing would be $(fmt 4 "${adds[@]}"); on two vCPUs $(fmt 5 "${adds[@]}"), $(fmt 6 "${adds[@]}") more; on vCPU 0 alone $(fmt 7 "${adds[@]}") more"
log "   periods run (A/B alone, together on two vCPUs, on one): $periods"
rm -rf "$T"
