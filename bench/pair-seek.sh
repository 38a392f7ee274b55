#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# VCR seeks across two guests (tools/vm-pair): what a seek costs the
# server. One player at a stream rate on the client guest, first for
# DURATION seconds without seeking, then as long with a seek to a random
# offset every SEEK seconds (the thesis seeks every 30 s of stream time;
# here the time is compressed), against
#
#   kvod-rdma     kvod-fetch --rate --seek-every: a seek is READs at
#                 another offset on the same connection
#   kvod-http     kvod.ko's HTTP server: a seek is a new Range request
#   nginx-sf      nginx, sendfile on: the same
#
# The HTTP player is curl at the same rate (--limit-rate), one request
# per stretch between seeks. Reported per server: the server guest's
# busy CPU milliseconds per second in both periods (the idle server's
# rate subtracted), their difference per seek, with the spread over RUNS
# runs, and for kvod-rdma the connections the server accepted in the
# seeking period (1: the player's own, which every seek reuses).
#
# usage: bench/pair-seek.sh [DURATION [SEEK [RUNS]]]	(on the host)
#	KVOD_BENCH_RATE (default 8M, bits/s) the stream rate
#
# Results: stdout and results/bench-pair-seek.txt.
set -u

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(dirname "$HERE")
DURATION=${1:-${KVOD_BENCH_DURATION:-20}}
SEEK=${2:-${KVOD_BENCH_SEEK:-2}}
RUNS=${3:-${KVOD_BENCH_RUNS:-3}}
RATE=${KVOD_BENCH_RATE:-8M}

if [ "${KVOD_IN_GUEST:-}" != 1 ]; then
	exec "$REPO/tools/vm-pair" --name bench-pair-seek --timeout 5400 -- \
		env KVOD_BENCH_DURATION="$DURATION" KVOD_BENCH_SEEK="$SEEK" \
		KVOD_BENCH_RUNS="$RUNS" KVOD_BENCH_RATE="$RATE" "$0"
fi

# shellcheck source=bench/pair.bash
. "$HERE/pair.bash"
# shellcheck source=bench/lib.bash
. "$HERE/lib.bash"
OUT=$PAIR_DIR/report.$PAIR_ROLE
FINAL=${KVOD_RESULTS:-$REPO/results}/bench-pair-seek.txt
SERVERS="kvod-rdma kvod-http nginx-sf"
B=/tmp/pair-seek
MOVIE_MIB=64

pair_rdma_up || die "the link or rxe did not come up"

# "accepted": the RDMA listener's accepted connections so far.
serve() {
	[ "$1" = accepted ] || return 0
	"$REPO/tools/kvodctl" list --json |
		jq -r --arg a "$PAIR_SERVER:7471" '.listeners[] |
			select(.proto == "rdma" and .address == $a) |
			.counters.accepted'
}

if [ "$PAIR_ROLE" = server ]; then
	mkdir -p "$B/www"
	pair_kvod_up "$B/www/film" "$MOVIE_MIB" || die "kvod did not come up"
	chmod -R a+rX "$B"
	pair_nginx_start "$B/ngx" 8081 on "$B/www" || die "nginx does not start"
	pair_signal ready
	pair_serve serve || die "the client went quiet"
	kill "$(cat "$B/ngx/nginx.pid")"
	rmmod kvod
	exit 0
fi

# ---- client ----
ask() {
	pair_ask "$@" || die "the server did not answer $*"
}

url() {
	case $1 in
	kvod-http) echo "http://$PAIR_SERVER:8080/film" ;;
	nginx-sf) echo "http://$PAIR_SERVER:8081/film" ;;
	esac
}

# play SERVER SEEKING: one player for DURATION s; with SEEKING=1 it
# seeks to a random offset every SEEK s.
play() {
	local bytes_s i off

	if [ "$1" = kvod-rdma ]; then
		local seek=()

		[ "$2" = 1 ] && seek=(--seek-every "$SEEK")
		"$REPO/tools/kvod-fetch" -q -o /dev/null --rate "$RATE" \
			--cache 500 "${seek[@]}" --duration "$DURATION" \
			"rdma://$PAIR_SERVER:7471/film"
		return
	fi
	bytes_s=$(awk -v r="$RATE" 'BEGIN { m = 1
		if (r ~ /k$/) m = 1e3; if (r ~ /M$/) m = 1e6; if (r ~ /G$/) m = 1e9
		printf "%d", r * m / 8 }')
	if [ "$2" = 0 ]; then
		curl -s -o /dev/null --limit-rate "$bytes_s" \
			--max-time "$DURATION" "$(url "$1")"
		return 0
	fi
	for i in $(seq $((DURATION / SEEK))); do
		off=$(((RANDOM * 32768 + RANDOM) % ((MOVIE_MIB - 8) << 20)))
		curl -s -o /dev/null --limit-rate "$bytes_s" --max-time "$SEEK" \
			-r "$off-" "$(url "$1")"
		: "$i"
	done
	return 0
}

# period SERVER SEEKING: "CPU_MS_PER_S ACCEPTED" of the server over one
# play: its busy CPU in milliseconds per second, less the idle rate, and
# the RDMA connections it accepted meanwhile.
period() {
	local a b c0 c1 t0 t1

	c0=$(ask accepted)
	a=$(ask stat)
	t0=$(date +%s.%N)
	play "$1" "$2"
	t1=$(date +%s.%N)
	b=$(ask stat)
	c1=$(ask accepted)
	awk -v a="$a" -v b="$b" -v t0="$t0" -v t1="$t1" -v idle="$IDLE" \
		-v acc=$((${c1:-0} - ${c0:-0})) 'BEGIN {
		split(a, x, " "); split(b, y, " "); split(idle, z, " ")
		t = t1 - t0
		printf "%.1f %d", ((y[1] - x[1]) / t - z[1]) * 1000 / x[4], acc }'
}

# med V...: "median min max".
med() {
	printf '%s\n' "$@" | sort -g |
		awk '{ v[NR] = $1 } END { printf "%s %s %s", v[int((NR + 1) / 2)], v[1], v[NR] }'
}

pair_wait ready 900 || die "the server did not get ready"
IDLE=$(pair_idle_rate 10) || die "the server did not answer"
seeks=$((DURATION / SEEK))
log "# VCR seeks across two guests: $(uname -r), one player at $RATE bit/s,"
log "# $DURATION s steady then $DURATION s with a seek every $SEEK s ($seeks seeks), $RUNS runs${KVOD_ICOUNT:+; icount shift=$KVOD_ICOUNT}"
log "# the server idle (10 s; its busy jiffies subtracted): $IDLE busy jiffies, ctxt, intr per second"
log "# server      steady CPU-ms/s  seeking CPU-ms/s  CPU-ms per seek (min..max)  RDMA connects while seeking"
for s in $SERVERS; do
	st=() sk=() per=() acc=()
	for _ in $(seq "$RUNS"); do
		read -r a _ <<<"$(period "$s" 0)"
		read -r b c <<<"$(period "$s" 1)"
		st+=("$a")
		sk+=("$b")
		acc+=("$c")
		per+=("$(awk -v a="$a" -v b="$b" -v d="$DURATION" -v n="$seeks" \
			'BEGIN { printf "%.2f", (b - a) * d / n }')")
	done
	read -r stm _ <<<"$(med "${st[@]}")"
	read -r skm _ <<<"$(med "${sk[@]}")"
	read -r pm plo phi <<<"$(med "${per[@]}")"
	read -r am _ <<<"$(med "${acc[@]}")"
	[ "$s" = kvod-rdma ] || am=-
	log "$(printf '%-11s %10.1f %17.1f %11.2f (%.2f..%.2f) %12s' \
		"$s" "$stm" "$skm" "$pm" "$plo" "$phi" "$am")"
done
ask end >/dev/null
cp "$OUT" "$FINAL"
