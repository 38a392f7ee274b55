#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Server cost per GB against the number of clients, across two guests
# (selftests/qemu/vm-pair): the server guest serves one resident movie four ways,
#
#   kvod-rdma     kvod.ko's RDMA server (clients: kvod-fetch; rxe on the
#                 NICs)
#   kvod-http     kvod.ko's zero-copy HTTP server
#   nginx-sf      nginx, sendfile on (the file in tmpfs)
#   nginx-copy    nginx, sendfile off
#
# and the client guest runs N clients at once, each downloading the
# whole movie, for every N in CLIENTS. For each server and N, RUNS runs;
# reported: the median of the server guest's busy CPU-seconds per GB
# moved, with its spread (min..max), and the medians of its context
# switches and interrupts per GB (thousands), and the aggregate MB/s.
# Then where that CPU time went (pair_cpu, the tick's sample): the
# medians of system, of interrupt (hard and soft) and of user
# CPU-seconds per GB, and of NET_RX softirqs and TCP segments received
# (mostly the clients' ACKs) per GB (thousands). Last,
# the median CPU-s/GB less what a point with no download costs the
# server (the benchmark's own samples; measured RUNS times first, at
# least 5, and reported): that cost weighs N times less per GB with N
# clients, so it is what hides a rise with N. Then the interrupts of
# the link NIC's (virtio-net's) receive and transmit queues per GB
# (thousands), which tell whether the interrupts follow the clients'
# ACKs or the server's sends.
# The CPU time the idle server spends in as long (measured for 10 s
# first; in total and in each part of the split) is subtracted;
# context switches and interrupts are not (a busy
# server no longer makes the idle one's switches into and out of idle, so
# subtracting those can go below zero). The
# servers take turns within each run, so a drift of the host's speed
# spreads over all of them. With KVOD_ICOUNT the CPU figures count
# instructions (Documentation/benchmarks.rst).
#
# usage: bench/pair-cost.sh [MOVIE_MIB [RUNS]]	(on the host)
#	KVOD_BENCH_CLIENTS="1 2 4" (default) the numbers of clients
#	KVOD_BENCH_SERVERS (default all four)
#
# Results: stdout and results/bench-pair-cost.txt.
set -u

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(dirname "$HERE")
MOVIE_MIB=${1:-${KVOD_BENCH_MIB:-32}}
RUNS=${2:-${KVOD_BENCH_RUNS:-3}}
CLIENTS=${KVOD_BENCH_CLIENTS:-"1 2 4"}
SERVERS=${KVOD_BENCH_SERVERS:-"kvod-rdma kvod-http nginx-sf nginx-copy"}

for s in $SERVERS; do
	case $s in
	kvod-rdma | kvod-http | nginx-sf | nginx-copy) ;;
	*)
		echo "pair-cost.sh: no server \"$s\" (kvod-rdma kvod-http nginx-sf nginx-copy)" >&2
		exit 2
		;;
	esac
done
[ -n "${SERVERS// /}" ] || { echo "pair-cost.sh: no servers" >&2; exit 2; }

if [ "${KVOD_IN_GUEST:-}" != 1 ]; then
	"$REPO/selftests/qemu/vm-pair" --name bench-pair-cost --timeout 5400 -- \
		env KVOD_BENCH_MIB="$MOVIE_MIB" KVOD_BENCH_RUNS="$RUNS" \
		KVOD_BENCH_CLIENTS="$CLIENTS" KVOD_BENCH_SERVERS="$SERVERS" \
		"$0" || exit
	exec "$REPO/bench/bench-plot"
fi

# shellcheck source=bench/pair.bash
. "$HERE/pair.bash"
# shellcheck source=bench/lib.bash
. "$HERE/lib.bash"
OUT=$PAIR_DIR/report.$PAIR_ROLE
FINAL=${KVOD_RESULTS:-$REPO/results}/bench-pair-cost.txt
# For bench/bench-plot, a line a point: SERVER N, the median, min and max
# CPU-s/GB, then kctxt/GB, kintr/GB, MB/s, sys-s/GB, irq-s/GB,
# kNET_RX/GB, user-s/GB, CPU-s/GB less the empty point's, kInSegs/GB,
# and the link NIC's receive and transmit interrupts, kRXint/GB and
# kTXint/GB (medians).
DAT=${KVOD_RESULTS:-$REPO/results}/bench-pair-cost.dat
B=/tmp/pair-cost

pair_rdma_up || die "the link or $PAIR_RDMA did not come up"

if [ "$PAIR_ROLE" = server ]; then
	pair_servers_up "$B" "$MOVIE_MIB" || die "the servers did not come up"
	pair_signal ready
	pair_serve true || die "the client went quiet"
	pair_servers_down "$B"
	exit 0
fi

# ---- client ----

# fetch SERVER: one client's download of the whole movie to stdout.
fetch() {
	case $1 in
	kvod-rdma) "$REPO/tools/kvod-fetch" -q "$(pair_url "$1")" ;;
	*) curl -sS "$(pair_url "$1")" ;;
	esac
}

# point SERVER N: N clients at once; "CPU-s/GB ctxt/GB intr/GB MB/s
# sys-s/GB irq-s/GB NET_RX/GB user-s/GB InSegs/GB RXint/GB TXint/GB" (the
# counts per GB in thousands), or nothing if a download was short. One
# "cpu" sample (pair_cpu) on each side of the downloads. With N = 0, no download:
# "CPU-s user-s sys-s irq-s" of the server between the two samples.
point() {
	local a b t0 t1 i bad

	a=$(ask cpu)
	t0=$(date +%s.%N)
	for i in $(seq "$2"); do
		fetch "$1" | wc -c >"$B/got.$i" &
	done
	wait
	t1=$(date +%s.%N)
	b=$(ask cpu)
	bad=$(cat "$B"/got.* 2>/dev/null |
		awk -v m=$((MOVIE_MIB << 20)) '$1 != m' | wc -l)
	rm -f "$B"/got.*
	[ "$bad" = 0 ] || return 0
	awk -v a="$a" -v b="$b" -v n="$2" -v mib="$MOVIE_MIB" -v t0="$t0" \
		-v t1="$t1" -v idle="$IDLE" 'BEGIN {
		split(a, x, " "); split(b, y, " "); split(idle, z, " ")
		t = t1 - t0
		hz = x[4]
		busy = (y[1] - x[1] - z[1] * t) / hz
		user = (y[5] - x[5] - z[4] * t) / hz
		sys = (y[6] - x[6] - z[5] * t) / hz
		irq = (y[7] + y[8] - x[7] - x[8] - z[6] * t) / hz
		if (n == 0) {
			printf "%.3f %.3f %.3f %.3f", busy, user, sys, irq
			exit
		}
		gb = n * mib * 1048576 / 1e9
		printf "%.2f %.1f %.1f %.1f %.2f %.2f %.1f %.2f %.1f %.1f %.1f",
			busy / gb, (y[2] - x[2]) / gb / 1000,
			(y[3] - x[3]) / gb / 1000, gb * 1000 / t, sys / gb,
			irq / gb, (y[9] - x[9]) / gb / 1000, user / gb,
			(y[11] - x[11]) / gb / 1000,
			(y[12] - x[12]) / gb / 1000,
			(y[13] - x[13]) / gb / 1000 }'
}

mkdir -p "$B"
pair_wait ready 900 || die "the server did not get ready"
want=$(cat "$PAIR_DIR/film.sha256")
for s in $SERVERS; do
	[ "$(fetch "$s" | sha256sum)" = "$want" ] || die "$s is not byte-exact"
done

IDLE=$(pair_idle_rate 10 cpu) || die "the server did not answer"
empty=()
for _ in $(seq $((RUNS < 5 ? 5 : RUNS))); do
	empty+=("$(point none 0)")
done
read -r EMPTY elo ehi <<<"$(col 1 "${empty[@]}")"
read -r eu _ <<<"$(col 2 "${empty[@]}")"
read -r es _ <<<"$(col 3 "${empty[@]}")"
read -r eq _ <<<"$(col 4 "${empty[@]}")"
rm -f "$DAT.new"
log "# server cost per GB across two guests: $(uname -r), ${MOVIE_MIB} MiB movie,"
log "# each client downloads it whole; $RUNS runs per point, the servers in turn${KVOD_ICOUNT:+; icount shift=$KVOD_ICOUNT}"
log "# the server idle (10 s; its busy jiffies, and those of each part of the split, are subtracted from every point): $IDLE busy jiffies, ctxt, intr, user, sys, irq per second"
log "# a point with no download (the two samples alone; ${#empty[@]} times): $EMPTY CPU-s ($elo..$ehi): user $eu, sys $es, irq $eq; less-empty = CPU-s/GB less $EMPTY / GB"
log "# server      N  CPU-s/GB (min..max)    kctxt/GB  kintr/GB  MB/s   sys-s/GB  irq-s/GB  kNET_RX/GB  user-s/GB  less-empty  kInSegs/GB  kRXint/GB  kTXint/GB"
for n in $CLIENTS; do
	declare -A r=()
	for _ in $(seq "$RUNS"); do
		for s in $SERVERS; do
			p=$(point "$s" "$n")
			[ -n "$p" ] || die "$s, $n clients: a short download"
			r[$s]+="$p"$'\n'
		done
	done
	for s in $SERVERS; do
		mapfile -t lines < <(printf '%s' "${r[$s]}")
		read -r cm clo chi <<<"$(col 1 "${lines[@]}")"
		read -r xm _ <<<"$(col 2 "${lines[@]}")"
		read -r im _ <<<"$(col 3 "${lines[@]}")"
		read -r bm _ <<<"$(col 4 "${lines[@]}")"
		read -r sm _ <<<"$(col 5 "${lines[@]}")"
		read -r qm _ <<<"$(col 6 "${lines[@]}")"
		read -r nm _ <<<"$(col 7 "${lines[@]}")"
		read -r um _ <<<"$(col 8 "${lines[@]}")"
		read -r gm _ <<<"$(col 9 "${lines[@]}")"
		read -r rm _ <<<"$(col 10 "${lines[@]}")"
		read -r tm _ <<<"$(col 11 "${lines[@]}")"
		le=$(awk -v c="$cm" -v e="$EMPTY" -v n="$n" -v mib="$MOVIE_MIB" \
			'BEGIN { printf "%.2f", c - e / (n * mib * 1048576 / 1e9) }')
		log "$(printf '%-11s %2d  %6.2f (%.2f..%.2f)  %8.1f  %8.1f  %5.1f  %8.2f  %8.2f  %10.1f  %9.2f  %10.2f  %10.1f  %9.1f  %9.1f' \
			"$s" "$n" "$cm" "$clo" "$chi" "$xm" "$im" "$bm" \
			"$sm" "$qm" "$nm" "$um" "$le" "$gm" "$rm" "$tm")"
		echo "$s $n $cm $clo $chi $xm $im $bm $sm $qm $nm $um $le $gm $rm $tm" >>"$DAT.new"
	done
	unset r
done
ask end >/dev/null
cp "$OUT" "$FINAL"
mv "$DAT.new" "$DAT"
