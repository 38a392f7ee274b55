#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A live channel's writer against its number of watchers, in one
# selftests/qemu/vm-run guest boot: how long the kernel takes over one write() that
# completes a chunk (the writer's per-chunk latency) with N HTTP responses
# following the channel, for N in WATCHERS (default 10 1000 10000), with
#
#   wake     kvod.ko built from git ref $KVOD_BENCH_FANOUT_BASE (default
#            335e1a2, the last commit whose writer woke every watcher
#            itself, under the channel's wait queue lock with interrupts
#            off)
#   fanout   this tree's kvod.ko: the writer queues the channel's fan-out
#            work, which tells the watchers in process context
#
# the two in turn at each N. The watchers are bench/watchers.py's
# connections, which read nothing (a chunk is one 188-byte TS packet, so
# CHUNKS of them fit in every receive buffer); kvodctl live feed takes one
# chunk a second from a pipe, so that each of its splices is one write of
# one whole chunk. The latency is feed_write_iter()'s, from the function
# graph tracer with that function alone traced, over CHUNKS chunks after
# the watchers are in. Reported per point: the median, 90th percentile
# and max in microseconds, and the ratio of the medians, fanout / wake.
# The HTTP work the chunks cause runs meanwhile in both rounds; with the
# wake-up it may run inside the writer's write(), on the writer's CPU.
#
# usage: bench/live-fanout.sh	(on the host; builds the baseline module,
#        then boots a guest)
#
# Results: $KVOD_RESULTS/bench-live-fanout.txt and .dat, plotted by
# bench/bench-plot. Method and results: Documentation/benchmarks.rst.
set -u

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(dirname "$HERE")
BASE_REF=${KVOD_BENCH_FANOUT_BASE:-335e1a2}
BASE_DIR=$REPO/build/bench-fanout-base
WATCHERS=${KVOD_BENCH_WATCHERS:-10 1000 10000}
CHUNKS=${KVOD_BENCH_CHUNKS:-20}

if [ "${KVOD_IN_GUEST:-}" != 1 ]; then
	# shellcheck source=bench/lib.bash
	. "$HERE/lib.bash"
	if ! build_base "$BASE_REF" "$BASE_DIR"; then
		echo "bench: cannot build kvod.ko from $BASE_REF" >&2
		exit 1
	fi
	"$REPO/selftests/qemu/vm-run" --name bench-live-fanout --timeout 3600 -- \
		env KVOD_BENCH_FANOUT_BASE="$BASE_REF" \
		KVOD_BENCH_WATCHERS="$WATCHERS" KVOD_BENCH_CHUNKS="$CHUNKS" \
		"$HERE/live-fanout.sh" || exit 1
	exec "$REPO/bench/bench-plot"
fi

export KVOD_REPO=$REPO
# shellcheck source=selftests/lib/ktap.sh
. "$REPO/selftests/lib/ktap.sh"
kvod_in_guest || { echo "bench: not in a selftests/qemu/vm-run guest" >&2; exit 1; }

RES=${KVOD_RESULTS:-$REPO/results}
OUT=$RES/bench-live-fanout.txt
DAT=$RES/bench-live-fanout.dat
B=$(mktemp -d /tmp/kvod-bench.XXXXXX)
KVODCTL=$REPO/tools/kvodctl
NS=kvfan
ADDR=198.18.9.1
PORT=8080
T=/sys/kernel/tracing
PACER=

# shellcheck source=bench/lib.bash
. "$REPO/bench/lib.bash"

cleanup() {
	echo 0 >"$T/tracing_on" 2>/dev/null
	echo nop >"$T/current_tracer" 2>/dev/null
	[ -n "$PACER" ] && kill "$PACER" 2>/dev/null
	touch "$B/go"
	wait
	kvod_unload
	ip netns del "$NS" 2>/dev/null
	rm -rf "$B"
}
trap cleanup EXIT

ns() { ip netns exec "$NS" "$@"; }

# pace: one 188-byte TS packet a second, each written at once, to stdout.
pace() {
	while :; do
		cat "$B/pkt" || return
		sleep 1
	done
}

# point DIR N: with the kvod.ko in DIR and N watchers, the latencies of
# feed_write_iter() over CHUNKS chunks, in us, one a line, to stdout.
point() {
	local dir=$1 n=$2 w

	KVOD_KMOD_DIR=$dir kvod_load http_max_conns=0 \
		http_max_conns_per_addr=0 || die "insmod $dir/kvod.ko failed"
	ns "$KVODCTL" listen http "$ADDR:$PORT" >/dev/null ||
		die "kvodctl listen failed"
	"$KVODCTL" live create tv --chunk 188 --chunks 64 >/dev/null ||
		die "kvodctl live create failed"
	pace | "$KVODCTL" live feed tv &
	PACER=$!
	rm -f "$B/go"
	ns python3 "$HERE/watchers.py" "$ADDR" "$PORT" tv "$n" "$B/go" \
		>"$B/watchers" &
	w=$!
	wait_for 600 grep -q opened "$B/watchers" ||
		die "$n watchers did not connect"
	wait_for 120 test "$("$KVODCTL" info tv |
		sed -n 's/^active_clients: //p')" = "$n" ||
		die "not $n responses on tv"
	# A module's functions are traceable while it is loaded only.
	echo feed_write_iter >"$T/set_ftrace_filter" ||
		die "cannot trace feed_write_iter"
	echo function_graph >"$T/current_tracer"
	echo >"$T/trace"
	echo 1 >"$T/tracing_on"
	sleep "$CHUNKS"
	echo 0 >"$T/tracing_on"
	# " 1)   12.345 us   |  feed_write_iter [kvod]();", maybe with + or !
	awk '/feed_write_iter/ { for (i = 2; i <= NF; i++) if ($i == "us") {
		print $(i - 1); next } }' "$T/trace"
	# (A change of tracer empties the buffer: only after it was read.)
	echo nop >"$T/current_tracer"
	echo >"$T/set_ftrace_filter"
	touch "$B/go"
	wait "$w"
	kill "$PACER" 2>/dev/null
	wait "$PACER" 2>/dev/null
	PACER=
	"$KVODCTL" del tv >/dev/null
	ns "$KVODCTL" unlisten http "$ADDR:$PORT" >/dev/null
	wait_for 120 kvod_unload || die "rmmod kvod failed"
}

# pct P FILE: the P-th percentile of the numbers in FILE.
pct() {
	sort -g "$2" | awk -v p="$1" '{ v[NR] = $1 }
		END { i = int((NR - 1) * p / 100 + 0.5) + 1; print v[i] }'
}

mkdir -p "$RES"
# A null TS packet.
printf '\x47\x1f\xff\x10' >"$B/pkt"
head -c 184 /dev/zero | tr '\0' '\377' >>"$B/pkt"
: >"$OUT"
: >"$DAT"
ulimit -n 65536
sysctl -qw net.ipv4.ip_local_port_range="10000 65000"
[ -d "$T/events" ] || mount -t tracefs nodev "$T"
echo nop >"$T/current_tracer"
echo 0 >"$T/tracing_on"
if ! ip netns add "$NS" || ! ns ip link set lo up ||
	! ns ip addr add "$ADDR/32" dev lo; then
	die "netns setup failed"
fi

log "# bench/live-fanout.sh: the writer's time in write() per chunk, $CHUNKS chunks a point"
log "# guest: $(nproc) CPUs, $(uname -r); wake = kvod.ko of $BASE_REF, fanout = this tree's"
log "# watchers  module  chunks  p50_us  p90_us  max_us"
echo "# watchers wake_p50 wake_p90 wake_max fanout_p50 fanout_p90 fanout_max" >>"$DAT"
for n in $WATCHERS; do
	line="$n"
	for s in wake fanout; do
		case $s in
		wake) dir=$BASE_DIR/kmod ;;
		fanout) dir=$REPO/kmod ;;
		esac
		point "$dir" "$n" >"$B/$s.$n"
		[ -s "$B/$s.$n" ] || die "no writes traced at $n watchers ($s)"
		p50=$(pct 50 "$B/$s.$n")
		p90=$(pct 90 "$B/$s.$n")
		max=$(pct 100 "$B/$s.$n")
		log "$n  $s  $(wc -l <"$B/$s.$n")  $p50  $p90  $max"
		line+=" $p50 $p90 $max"
	done
	echo "$line" >>"$DAT"
	read -r _ w50 _ _ f50 _ _ <<<"$line"
	log "$n watchers: fanout / wake, medians: $(awk -v a="$f50" -v b="$w50" 'BEGIN { printf "%.2fx", a / b }')"
done
log "# done"
