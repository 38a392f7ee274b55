#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# CPU per GB of a paced push, in one selftests/qemu/vm-run guest boot: the same
# looping push (PPS packets/s of 1316-byte payloads, 50 ms window, SECS s)
# sent by
#
#   copy     kvod.ko built from git ref $KVOD_BENCH_PUSH_BASE (default
#            7a97f42, the last commit whose push copied every payload
#            into its skb)
#   kvod     this tree's kvod.ko: the payload spliced as page references
#   user     userspace with SO_TXTIME (txsend -m txtime -W 50), a copying
#            sendmsg per packet: the peer
#
# each to a dummy device (which drops what it is given, so only sending
# costs CPU), five rounds in turn, the median reported.
#
# usage: bench/push.sh [PPS [SECS]]	(on the host; builds the baseline
#        module, then boots a guest)
#
# CPU: busy jiffies of the whole guest from /proc/stat over the run, minus
# an idle baseline of the same length, divided by the payload bytes the
# sender reports (kvodctl list for a push, packets x 1316 for txsend).
# Method and results: Documentation/tsock.rst.
set -u

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(dirname "$HERE")
PPS=${1:-${KVOD_BENCH_PPS:-8000}}
SECS=${2:-${KVOD_BENCH_SECS:-5}}
BASE_REF=${KVOD_BENCH_PUSH_BASE:-7a97f42}
BASE_DIR=$REPO/build/bench-push-base

if [ "${KVOD_IN_GUEST:-}" != 1 ]; then
	# shellcheck source=bench/lib.bash
	. "$HERE/lib.bash"
	if ! build_base "$BASE_REF" "$BASE_DIR"; then
		echo "bench: cannot build kvod.ko from $BASE_REF" >&2
		exit 1
	fi
	exec "$REPO/selftests/qemu/vm-run" --name bench-push --timeout 1800 -- \
		env KVOD_BENCH_PPS="$PPS" KVOD_BENCH_SECS="$SECS" \
		KVOD_BENCH_PUSH_BASE="$BASE_REF" "$HERE/push.sh" "$PPS" "$SECS"
fi

export KVOD_REPO=$REPO
# shellcheck source=selftests/lib/tsock.sh
. "$REPO/selftests/lib/tsock.sh"
kvod_in_guest || { echo "bench: not in a selftests/qemu/vm-run guest" >&2; exit 1; }

OUT=${KVOD_RESULTS:-$REPO/results}/bench-push.txt
B=$(mktemp -d /tmp/kvod-bench.XXXXXX)
KVODCTL=$REPO/tools/kvodctl
RATE=$((PPS * 1316 * 8))
HZ=$(getconf CLK_TCK)
ROUNDS=5
DUMMY=kvdummy
DST=198.18.7.2

# shellcheck source=bench/lib.bash
. "$REPO/bench/lib.bash"

cleanup() {
	kmod_unload kvod
	netns_down
	rm -rf "$B"
}
trap cleanup EXIT

: >"$OUT"
log "# bench/push.sh: $PPS packets/s x $SECS s, 1316-byte payloads ($RATE bit/s), to a dummy device"
log "# guest: $(nproc) CPUs, $(uname -r); copy = kvod.ko of $BASE_REF"
netns_up || die "netns setup failed"
if ! tx ip link add "$DUMMY" type dummy ||
	! tx ip addr add 198.18.7.1/24 dev "$DUMMY" ||
	! tx ip link set "$DUMMY" up; then
	die "dummy device setup failed"
fi
log "# $DUMMY: $(tx ethtool -k "$DUMMY" 2>/dev/null |
	grep -E '^(scatter-gather|tx-checksumming):' | tr -s ' \n' ' ')"

# A 16 MiB movie of null TS packets; the push loops over it.
python3 -c '
import sys
pkt = b"\x47\x1f\xff\x10" + b"\xff" * 184
sys.stdout.buffer.write(pkt * 7 * 6400)' >"$B/bench.ts"

# Idle baseline: busy jiffies over an idle window as long as one run.
b0=$(busy_now)
sleep "$SECS"
IDLE=$(($(busy_now) - b0))
log "# idle baseline: $IDLE jiffies over $SECS s"

# cpu_per_gb JIFFIES BYTES: CPU-seconds per GB, the idle baseline removed.
cpu_per_gb() {
	awk -v d="$1" -v base="$IDLE" -v hz="$HZ" -v b="$2" \
		'BEGIN { printf "%.2f", (b > 0 ? ((d - base) / hz) / (b / 1e9) : -1) }'
}

# run_push DIR: one push with the kvod.ko in DIR; prints "JIFFIES BYTES".
run_push() {
	local b0 b1 id bytes

	KVOD_KMOD_DIR=$1 kvod_load || die "insmod $1/kvod.ko failed"
	"$KVODCTL" add bench "$B/bench.ts" >/dev/null || die "kvodctl add failed"
	b0=$(busy_now)
	id=$(tx "$KVODCTL" push bench "udp://$DST:5004" --rate "$RATE" --loop) ||
		die "kvodctl push failed"
	sleep "$SECS"
	bytes=$("$KVODCTL" list --json | jq -r '.pushes[0].bytes')
	b1=$(busy_now)
	"$KVODCTL" stop "$id"
	kvod_unload
	echo "$((b1 - b0)) $bytes"
}

# run_user: the same stream from txsend; prints "JIFFIES BYTES".
run_user() {
	local b0 b1 out n

	b0=$(busy_now)
	out=$(tx "$TXSEND" -d "$DST:5004" -m txtime -W 50 -r "$PPS" \
		-n $((PPS * SECS)) -l 1316 -D 100 2>&1)
	b1=$(busy_now)
	n=$(sed -n 's/.*sent=\([0-9]*\).*/\1/p' <<<"$out")
	echo "$((b1 - b0)) $((${n:-0} * 1316))"
}

declare -A R
for round in $(seq "$ROUNDS"); do
	for s in copy kvod user; do
		case $s in
		copy) res=$(run_push "$BASE_DIR/kmod") ;;
		kvod) res=$(run_push "$REPO/kmod") ;;
		user) res=$(run_user) ;;
		esac
		read -r j b <<<"$res"
		R[$s]+="$(cpu_per_gb "$j" "$b") "
		log "round $round $s: $j jiffies, $b payload bytes, $(cpu_per_gb "$j" "$b") CPU-s/GB"
	done
done

median() {
	tr ' ' '\n' <<<"$1" | grep . | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}
mc=$(median "${R[copy]}")
mk=$(median "${R[kvod]}")
mu=$(median "${R[user]}")
log "median CPU-s/GB: copy $mc  kvod $mk  user $mu"
log "kvod / copy: $(awk -v a="$mk" -v b="$mc" 'BEGIN { printf "%.2fx", a / b }')  kvod / user: $(awk -v a="$mk" -v b="$mu" 'BEGIN { printf "%.2fx", a / b }')"
log "# done"
