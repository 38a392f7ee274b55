#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# RDMA READ benchmark on Soft-RoCE, in one selftests/qemu/vm-run guest boot:
#
#  1. peak: perftest's ib_read_bw (rdma_cm, 1 MiB READs, the device's
#     outstanding-READ maximum) against kvod-fetch pulling a resident
#     movie from kvod.ko (1 MiB chunks, 16 and 64 outstanding), same link;
#  2. READ-size sweep 1 KiB .. 1 MiB for both, 64 READs outstanding, and
#     the smallest size that reaches 90% of the sweep's peak.
#
# usage: bench/rdma.sh [SECONDS_PER_POINT]	(on the host; boots a guest)
#
# Results: a table on stdout and in results/bench-rdma.txt. Units: MB/s
# is 10^6 bytes/s for both tools (perftest's MiB/s converted). Method
# and results: Documentation/rdma.rst.
set -u

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(dirname "$HERE")
SECS=${1:-${KVOD_BENCH_SECS:-4}}

if [ "${KVOD_IN_GUEST:-}" != 1 ]; then
	exec "$REPO/selftests/qemu/vm-run" --name bench-rdma --timeout 1500 -- \
		env KVOD_BENCH_SECS="$SECS" "$HERE/rdma.sh" "$SECS"
fi

KVOD_REPO=$REPO
# shellcheck source=selftests/lib/ktap.sh
. "$REPO/selftests/lib/ktap.sh"
# shellcheck source=selftests/lib/rdma.sh
. "$REPO/selftests/lib/rdma.sh"
OUT=${KVOD_RESULTS:-$REPO/results}/bench-rdma.txt
RDMA_TMP=$(mktemp -d)
SIZES="1024 2048 4096 8192 16384 32768 65536 131072 262144 524288 1048576"

# shellcheck source=bench/lib.bash
. "$REPO/bench/lib.bash"

# perftest: average MiB/s of ib_read_bw -s SIZE [ARGS] -> MB/s (10^6).
read_bw() {
	local size=$1 port=$2 bw

	shift 2
	ib_read_bw -R -F -d "$RXE_DEV" -p "$port" -s "$size" -D "$SECS" "$@" \
		>/dev/null 2>&1 &
	sleep 1
	bw=$(ib_read_bw -R -F -d "$RXE_DEV" -p "$port" -s "$size" -D "$SECS" \
		"$@" "$RXE_ADDR" 2>/dev/null | awk '$1 == '"$size"' { print $4 }')
	wait
	awk -v b="${bw:-0}" 'BEGIN { printf "%.1f", b * 1.048576 }'
}

# kvod-fetch: MB/s for --chunk SIZE --depth DEPTH over SECS seconds.
fetch_bw() {
	"$KVOD_FETCH" -o /dev/null --chunk "$1" --depth "$2" --duration "$SECS" \
		"$RDMA_URL/film" 2>&1 | sed -n 's/.* s, \([0-9.]*\) MB\/s.*/\1/p'
}

: >"$OUT"
rxe_setup || die "cannot set up rxe"
modprobe -q -a ib_core rdma_cm
insmod "$REPO/kmod/kvod.ko" || die "cannot load kvod.ko"
"$KVODCTL" listen rdma "$RXE_ADDR:$RXE_PORT" || die "cannot listen"
head -c $((512 << 20)) /dev/urandom >"$RDMA_TMP/film"
"$KVODCTL" add film "$RDMA_TMP/film" || die "cannot add the movie"
rm -f "$RDMA_TMP/film"

log "# kvod RDMA benchmark: $(uname -r), $(nproc) CPUs, rxe on veth, ${SECS} s per point"
log "# $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)"
ref=$(read_bw 1048576 18515)
log "peak ib_read_bw    1 MiB READs, device max outstanding: $ref MB/s"
f16=$(fetch_bw 1M 16)
log "peak kvod-fetch    1 MiB chunks, depth 16:              $f16 MB/s"
f64=$(fetch_bw 1M 64)
log "peak kvod-fetch    1 MiB chunks, depth 64:              $f64 MB/s"
best=$(printf '%s\n%s\n' "$f16" "$f64" | sort -g | tail -n1)
log "ratio kvod-fetch / ib_read_bw: $(awk -v a="$best" -v b="$ref" 'BEGIN { printf "%.2f", b ? a / b : 0 }')"

log ""
log "# READ-size sweep, 64 outstanding: size ib_read_bw kvod-fetch (MB/s)"
for s in $SIZES; do
	p=$(read_bw "$s" 18516 -o 64 -t 64)
	k=$(fetch_bw "$s" 64)
	log "$s $p $k"
	echo "$s $p" >>"$RDMA_TMP/sweep.perftest"
	echo "$s $k" >>"$RDMA_TMP/sweep.fetch"
done
log_size90 ib_read_bw "$RDMA_TMP/sweep.perftest"
log_size90 kvod-fetch "$RDMA_TMP/sweep.fetch"

rmmod kvod
rxe_teardown
rm -rf "$RDMA_TMP"
