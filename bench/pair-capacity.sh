#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Capacity across two guests (selftests/qemu/vm-pair), the thesis's first
# experiment: how many players at one stream rate a server serves with no
# chunk late. The server guest serves one resident movie
#
#   kvod-rdma     kvod.ko's RDMA server; players: kvod-fetch rdma:// over
#                 rxe on the NICs
#   kvod-http     kvod.ko's zero-copy HTTP server
#   nginx-sf      nginx, sendfile on (the file in tmpfs)
#   nginx-copy    nginx, sendfile off
#   kvod-proxy    kvod.ko's RDMA server, read by one kvod-proxy on the
#                 client guest, whose HTTP players are local to it (the
#                 proxy's intended place: the viewer's side)
#
# and every player is kvod-fetch in player mode (--rate, --cache, --chunk,
# --duration; over HTTP with http:// URLs), so a late chunk means the
# same thing for all five: a chunk whose last byte came after the
# player needed its first. Each player starts at a random offset.
#
# The rate: the emulated link carries far less than a real one, so the
# thesis's 8.7 Mbit/s is scaled. First the peak is measured: 4 whole
# downloads at once from kvod-http, nginx-sf and kvod-rdma, the highest
# aggregate; the rate is that peak over LINK_STREAMS (default 24), unless
# KVOD_BENCH_RATE gives one. The scale factor printed is 8.7 Mbit/s over
# the rate.
#
# A point is N players for SECONDS; it passes if every player ran to the
# end with no late chunk. Per server and run, N doubles from 2 until a
# point fails (or reaches 2 * LINK_STREAMS), then bisects down to 1/8;
# the capacity is the largest N that passed. Reported per server: the
# median capacity with its spread over RUNS runs, and at the capacity
# point of the median run the busy CPUs of the server and of the client
# guest (CPU-seconds per second, out of 2), which tell a server that ran
# out of CPU from a link or a client that did.
#
# usage: bench/pair-capacity.sh [SECONDS [RUNS]]	(on the host)
#	KVOD_BENCH_RATE (bits/s), KVOD_BENCH_LINK_STREAMS (default 24),
#	KVOD_BENCH_SERVERS (default all five)
#
# Results: stdout and results/bench-pair-capacity.txt (.dat for the plot).
set -u

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(dirname "$HERE")
SECS=${1:-${KVOD_BENCH_SECS:-8}}
RUNS=${2:-${KVOD_BENCH_RUNS:-3}}
STREAMS=${KVOD_BENCH_LINK_STREAMS:-24}
SERVERS=${KVOD_BENCH_SERVERS:-"kvod-rdma kvod-http nginx-sf nginx-copy kvod-proxy"}

if [ "${KVOD_IN_GUEST:-}" != 1 ]; then
	"$REPO/selftests/qemu/vm-pair" --name bench-pair-capacity --timeout 7200 -- \
		env KVOD_BENCH_SECS="$SECS" KVOD_BENCH_RUNS="$RUNS" \
		KVOD_BENCH_LINK_STREAMS="$STREAMS" KVOD_BENCH_SERVERS="$SERVERS" \
		${KVOD_BENCH_RATE:+KVOD_BENCH_RATE="$KVOD_BENCH_RATE"} "$0" || exit
	exec "$REPO/bench/bench-plot"
fi

# shellcheck source=bench/pair.bash
. "$HERE/pair.bash"
# shellcheck source=bench/lib.bash
. "$HERE/lib.bash"
OUT=$PAIR_DIR/report.$PAIR_ROLE
FINAL=${KVOD_RESULTS:-$REPO/results}/bench-pair-capacity.txt
# For bench/bench-plot, a line a server: SERVER, the median, min and max
# capacity (players).
DAT=${KVOD_RESULTS:-$REPO/results}/bench-pair-capacity.dat
MOVIE_MIB=64
CACHE_MS=400
CHUNK=64k
FETCH=$REPO/tools/kvod-fetch
B=/tmp/pair-capacity

pair_rdma_up || die "the link or $PAIR_RDMA did not come up"

if [ "$PAIR_ROLE" = server ]; then
	pair_servers_up "$B" "$MOVIE_MIB" || die "the servers did not come up"
	# Every player comes from the client's one address.
	echo 0 >/sys/module/kvod/parameters/rdma_max_conns_per_addr
	echo 0 >/sys/module/kvod/parameters/rdma_max_conns
	pair_signal ready
	pair_serve true || die "the client went quiet"
	pair_servers_down "$B"
	exit 0
fi

# ---- client ----
# busy CPU-seconds per second between two pair_stat lines over T seconds
busy() {
	awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN {
		split(a, x, " "); split(b, y, " ")
		printf "%.2f", (y[1] - x[1]) / x[4] / t }'
}

# peak SERVER: MB/s of 4 whole downloads at once.
peak() {
	local t0 t1 i

	t0=$(date +%s.%N)
	for i in 1 2 3 4; do
		"$FETCH" -q -o /dev/null "$(pair_url "$1")" &
	done
	wait
	t1=$(date +%s.%N)
	awk -v t="$(echo "$t1 - $t0" | bc)" -v m=$MOVIE_MIB \
		'BEGIN { printf "%.1f", 4 * m * 1048576 / t / 1e6 }'
}

# point SERVER N: N players for SECS; "PASS LATE FAILED SRV CLI" where
# PASS is 1 or 0, LATE the late chunks of all players, FAILED the players
# that did not run to the end, SRV and CLI the busy CPUs of both guests.
point() {
	local s=$1 n=$2 a b ca cb t0 t1 t i off span late=0 failed=0 out

	span=$(((MOVIE_MIB << 20) - (SECS + 2) * RATE / 8))
	a=$(ask stat)
	ca=$(pair_stat)
	t0=$(date +%s.%N)
	for i in $(seq "$n"); do
		off=$(((RANDOM << 15 | RANDOM) % span))
		"$FETCH" -o /dev/null --rate "$RATE" --cache "$CACHE_MS" \
			--chunk "$CHUNK" --duration "$SECS" --offset "$off" \
			--timeout 30000 "$(pair_url "$s")" 2>"$B/p.$i" &
	done
	wait
	t1=$(date +%s.%N)
	cb=$(pair_stat)
	b=$(ask stat)
	for i in $(seq "$n"); do
		out=$(sed -n 's/^kvod-fetch: [0-9]* bytes in .* \([0-9]*\) late.*/\1/p' "$B/p.$i")
		if [ -z "$out" ]; then
			failed=$((failed + 1))
			[ "$failed" -gt 1 ] || note "$s, $n players: $(head -c 300 "$B/p.$i")"
		else
			late=$((late + out))
		fi
	done
	rm -f "$B"/p.*
	t=$(echo "$t1 - $t0" | bc)
	echo "$(((late + failed) == 0)) $late $failed $(busy "$a" "$b" "$t") $(busy "$ca" "$cb" "$t")"
}

# note TEXT: a note in the report and on stderr, on one line (not on
# stdout: point's callers read its result there).
note() {
	echo "#   $(tr '\n' ' ' <<<"$*")" | tee -a "$OUT" >&2
}

# capacity SERVER: one ramp; "N SRV CLI" of the largest passing point.
capacity() {
	local s=$1 n=2 lo=0 hi=0 p best="0 - -" max=$((2 * STREAMS))

	while :; do
		p=$(point "$s" "$n")
		progress "$s: $n players: late $(cut -d' ' -f2 <<<"$p"), failed $(cut -d' ' -f3 <<<"$p"), server $(cut -d' ' -f4 <<<"$p") CPUs busy"
		if [ "${p%% *}" = 1 ]; then
			lo=$n
			best="$n $(cut -d' ' -f4,5 <<<"$p")"
			[ "$n" -lt "$max" ] || break
			if [ "$hi" = 0 ]; then
				n=$((n * 2 > max ? max : n * 2))
				continue
			fi
		else
			hi=$n
		fi
		[ $((hi - lo)) -gt $((lo / 8 > 1 ? lo / 8 : 1)) ] || break
		n=$(((lo + hi) / 2))
		[ "$n" -gt 0 ] || break
	done
	echo "$best"
}

# progress TEXT: a line on the console (not in the report) while it runs.
progress() {
	echo "  ... $*" >&2
}

mkdir -p "$B"
pair_wait ready 900 || die "the server did not get ready"
want=$(cat "$PAIR_DIR/film.sha256")
if [[ " $SERVERS " = *" kvod-proxy "* ]]; then
	"$REPO/tools/kvod-proxy" -f --listen 127.0.0.1:8554 --max-clients 4096 \
		--timeout 30000 "rdma://$PAIR_SERVER:7471" 2>"$B/proxy.log" &
	proxy=$!
	sleep 1
fi
for s in $SERVERS; do
	[ "$("$FETCH" -q "$(pair_url "$s")" | sha256sum)" = "$want" ] ||
		die "$s is not byte-exact: $(tail -n 3 "$B/proxy.log" 2>/dev/null)"
done

if [ -n "${KVOD_BENCH_RATE:-}" ]; then
	RATE=$KVOD_BENCH_RATE
	how="given"
else
	best=0
	for s in kvod-http nginx-sf kvod-rdma; do
		[[ " $SERVERS " = *" $s "* ]] || continue
		p=$(peak "$s")
		progress "peak of $s: $p MB/s"
		how+="${how:+, }$s $p MB/s"
		best=$(awk -v a="$best" -v b="$p" 'BEGIN { print (b > a ? b : a) }')
	done
	RATE=$(awk -v p="$best" -v n="$STREAMS" 'BEGIN { printf "%d", p * 8e6 / n }')
	how="the peak of 4 downloads ($how) over $STREAMS"
fi
[ $(((MOVIE_MIB << 20) - (SECS + 2) * RATE / 8)) -gt 0 ] ||
	die "$SECS s at $RATE bit/s is more than the ${MOVIE_MIB} MiB movie"
log "# capacity across two guests: $(uname -r), ${MOVIE_MIB} MiB movie, players at $RATE bit/s"
log "# ($how; scale factor $(awk -v r="$RATE" 'BEGIN { printf "%.1f", 8.7e6 / r }') against 8.7 Mbit/s),"
log "# ${CACHE_MS} ms cache, $CHUNK chunks, $SECS s a point, $RUNS runs${KVOD_ICOUNT:+; icount shift=$KVOD_ICOUNT}"
log "# ($((2 * STREAMS)) players, the ramp's cap, means at least that many)"
log "# server       players (min..max)   at the median run's capacity: server CPUs, client CPUs busy"
rm -f "$DAT.new"
declare -A caps=() srv=()
for r in $(seq "$RUNS"); do
	for s in $SERVERS; do
		c=$(capacity "$s")
		progress "run $r, $s: capacity $c"
		caps[$s]+="${c%% *} "
		srv[$s]+="$c"$'\n'
	done
done
for s in $SERVERS; do
	# shellcheck disable=SC2086 # one number a word
	read -r cm clo chi <<<"$(stats ${caps[$s]})"
	at=$(printf '%s' "${srv[$s]}" | awk -v m="$cm" '$1 == m { print $2, $3; exit }')
	log "$(printf '%-11s  %4d (%d..%d)          %s' "$s" "$cm" "$clo" "$chi" "$at")"
	echo "$s $cm $clo $chi" >>"$DAT.new"
done
[ -z "${proxy:-}" ] || kill "$proxy"
ask end >/dev/null
cp "$OUT" "$FINAL"
mv "$DAT.new" "$DAT"
