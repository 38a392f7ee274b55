#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# VCR seeks across two guests (selftests/qemu/vm-pair): what a seek costs the
# server. PLAYERS players at a stream rate on the client guest, first for
# DURATION seconds without seeking, then as long with each seeking to a
# random offset every SEEK seconds (the thesis seeks every 30 s of stream
# time; here the time is compressed), against
#
#   kvod-rdma     kvod-fetch --rate --seek-every: a seek is READs at
#                 another offset on the same connection
#   kvod-http     kvod.ko's HTTP server: a seek is a new Range request
#   nginx-sf      nginx, sendfile on: the same
#
# Every player is kvod-fetch in player mode (--rate, --seek-every), with
# an http:// URL for the HTTP servers, where a seek closes the connection
# and sends a new Range request on a new one, as players do. Reported per
# server: the server guest's busy CPU milliseconds per second in both
# periods (the idle server's rate subtracted), their difference per seek,
# with the spread over RUNS runs, and for kvod the connections its
# listener accepted in the seeking period (RDMA: PLAYERS, the players'
# own, which every seek reuses; HTTP: one more per seek).
#
# usage: bench/pair-seek.sh [DURATION [SEEK [RUNS]]]	(on the host)
#	KVOD_BENCH_RATE (default 8M, bits/s) the stream rate
#	KVOD_BENCH_PLAYERS (default 4) the players
#
# Results: stdout and results/bench-pair-seek.txt.
set -u

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(dirname "$HERE")
DURATION=${1:-${KVOD_BENCH_DURATION:-20}}
SEEK=${2:-${KVOD_BENCH_SEEK:-2}}
RUNS=${3:-${KVOD_BENCH_RUNS:-3}}
RATE=${KVOD_BENCH_RATE:-8M}
PLAYERS=${KVOD_BENCH_PLAYERS:-4}

if [ "${KVOD_IN_GUEST:-}" != 1 ]; then
	"$REPO/selftests/qemu/vm-pair" --name bench-pair-seek --timeout 5400 -- \
		env KVOD_BENCH_DURATION="$DURATION" KVOD_BENCH_SEEK="$SEEK" \
		KVOD_BENCH_RUNS="$RUNS" KVOD_BENCH_RATE="$RATE" \
		KVOD_BENCH_PLAYERS="$PLAYERS" "$0" || exit
	exec "$REPO/bench/bench-plot"
fi

# shellcheck source=bench/pair.bash
. "$HERE/pair.bash"
# shellcheck source=bench/lib.bash
. "$HERE/lib.bash"
OUT=$PAIR_DIR/report.$PAIR_ROLE
FINAL=${KVOD_RESULTS:-$REPO/results}/bench-pair-seek.txt
# For bench/bench-plot, a line a server: SERVER, the median, min and max
# CPU-ms per seek.
DAT=${KVOD_RESULTS:-$REPO/results}/bench-pair-seek.dat
SERVERS="kvod-rdma kvod-http nginx-sf"
B=/tmp/pair-seek
MOVIE_MIB=64

pair_rdma_up || die "the link or $PAIR_RDMA did not come up"

# "accepted PROTO PORT": that kvod listener's accepted connections so far.
serve() {
	local proto port

	[ "$1" = accepted ] || return 0
	read -r proto port <<<"$2"
	"$REPO/tools/kvodctl" list --json |
		jq -r --arg p "$proto" --arg a "$PAIR_SERVER:$port" '.listeners[] |
			select(.proto == $p and .address == $a) |
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

# listener SERVER: "PROTO PORT" of its kvod listener, or nothing.
listener() {
	case $1 in
	kvod-rdma) echo "rdma 7471" ;;
	kvod-http) echo "http 8080" ;;
	esac
}

# play SERVER SEEKING: PLAYERS players for DURATION s; with SEEKING=1
# each seeks to a random offset every SEEK s. Prints the seeks they made,
# from their summaries (-1 if a player failed).
play() {
	local seek=() i

	[ "$2" = 1 ] && seek=(--seek-every "$SEEK")
	for i in $(seq "$PLAYERS"); do
		"$REPO/tools/kvod-fetch" -o /dev/null --rate "$RATE" \
			--cache 500 "${seek[@]}" --duration "$DURATION" \
			--seed "$i$RANDOM" --timeout 30000 "$(pair_url "$1")" \
			2>"$B/play.$i" &
	done
	wait
	for i in $(seq "$PLAYERS"); do
		sed -n 's/^kvod-fetch: .* \([0-9]*\) seeks.*/\1/p' "$B/play.$i" |
			grep . || echo -1000000
	done | awk '{ n += $1 } END { print n < 0 ? -1 : n }'
}

# period SERVER SEEKING: "CPU_MS_PER_S ACCEPTED SEEKS" of the server over
# one play: its busy CPU in milliseconds per second, less the idle rate,
# the connections its kvod listener accepted meanwhile, and the seeks.
period() {
	local a b c0 c1 t0 t1 n

	c0=$(ask accepted "$(listener "$1")")
	a=$(ask stat)
	t0=$(date +%s.%N)
	n=$(play "$1" "$2")
	[ "$n" -ge 0 ] || die "$1: a player failed: $(cat "$B"/play.*)"
	t1=$(date +%s.%N)
	b=$(ask stat)
	c1=$(ask accepted "$(listener "$1")")
	awk -v a="$a" -v b="$b" -v t0="$t0" -v t1="$t1" -v idle="$IDLE" \
			-v acc=$((${c1:-0} - ${c0:-0})) -v n="$n" 'BEGIN {
		split(a, x, " "); split(b, y, " "); split(idle, z, " ")
		t = t1 - t0
		printf "%.1f %d %d", ((y[1] - x[1]) / t - z[1]) * 1000 / x[4], acc, n }'
}

mkdir -p "$B"
pair_wait ready 900 || die "the server did not get ready"
IDLE=$(pair_idle_rate 10) || die "the server did not answer"
log "# VCR seeks across two guests: $(uname -r), $PLAYERS players at $RATE bit/s,"
log "# $DURATION s steady then $DURATION s with each seeking every $SEEK s, $RUNS runs${KVOD_ICOUNT:+; icount shift=$KVOD_ICOUNT}"
log "# the server idle (10 s; its busy jiffies subtracted): $IDLE busy jiffies, ctxt, intr per second"
rm -f "$DAT.new"
log "# server      steady CPU-ms/s  seeking CPU-ms/s  CPU-ms per seek (min..max)  seeks  kvod connects while seeking"
for s in $SERVERS; do
	st=() sk=() per=() acc=() ns=()
	for _ in $(seq "$RUNS"); do
		read -r a _ <<<"$(period "$s" 0)"
		read -r b c n <<<"$(period "$s" 1)"
		st+=("$a")
		sk+=("$b")
		acc+=("$c")
		ns+=("$n")
		per+=("$(awk -v a="$a" -v b="$b" -v d="$DURATION" -v n="$n" \
			'BEGIN { printf "%.2f", n ? (b - a) * d / n : 0 }')")
	done
	read -r stm _ <<<"$(stats "${st[@]}")"
	read -r skm _ <<<"$(stats "${sk[@]}")"
	read -r pm plo phi <<<"$(stats "${per[@]}")"
	read -r am _ <<<"$(stats "${acc[@]}")"
	read -r nm _ <<<"$(stats "${ns[@]}")"
	[ -n "$(listener "$s")" ] || am=-
	log "$(printf '%-11s %10.1f %17.1f %11.2f (%.2f..%.2f) %6s %12s' \
		"$s" "$stm" "$skm" "$pm" "$plo" "$phi" "$nm" "$am")"
	echo "$s $pm $plo $phi" >>"$DAT.new"
done
ask end >/dev/null
cp "$OUT" "$FINAL"
mv "$DAT.new" "$DAT"
