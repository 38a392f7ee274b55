#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# RDMA READ size sweep across two guests (selftests/qemu/vm-pair): kvod.ko and
# the ib_read_bw servers on the server guest, kvod-fetch and the
# ib_read_bw clients on the client guest, rxe on each side's virtio-net
# NIC, so the READs cross a real (emulated) link and the server's CPU is
# the server guest's own. For every READ size, RUNS runs of each tool,
# alternating, 64 READs outstanding; reported: the median MB/s of each
# and its spread (min..max), their ratio, the server guest's busy CPU
# time per GB while kvod-fetch pulls, less what it does idle (measured
# for 10 s first; kvod itself does no work per READ), the requests the
# server's rxe saw twice in each kvod-fetch run (its duplicate_request
# counter: the client's retransmissions), and the smallest size reaching
# 90% of each tool's peak. A run that fails or runs out of time is tried
# again (RUN_LIMIT, TRIES) and the failed tries are counted.
#
# usage: bench/pair-rdma.sh [SECONDS_PER_RUN [RUNS]]	(on the host)
#	KVOD_PAIR_RDMA=siw: soft-iWARP instead of rxe (bench/pair.bash)
#	KVOD_BENCH_PERFTEST_EVENTS=0: the ib_read_bw client busy-polls its
#	CQ (perftest's default) instead of sleeping on completion events
#	(-e), as kvod-fetch does; perftest refuses -e in duration mode, so
#	with it each run is a count of READs instead: 32 MiB, at least 64
#	KVOD_BENCH_PERFTEST_OPTS: more options for the ib_read_bw client
#	KVOD_BENCH_PERFTEST_CM=rdma_cm: perftest exchanges its QPs'
#	details over rdma_cm (-R), not TCP (see CM below); the default
#	with siw
#
# Before the sweep the client checks that the link and RDMA work: the
# movie over HTTP and over RDMA, byte-exact. Results: stdout and
# results/bench-pair-rdma.txt; method: Documentation/benchmarks.rst.
set -u

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(dirname "$HERE")
SECS=${1:-${KVOD_BENCH_SECS:-4}}
RUNS=${2:-${KVOD_BENCH_RUNS:-3}}

if [ "${KVOD_IN_GUEST:-}" != 1 ]; then
	"$REPO/selftests/qemu/vm-pair" --name bench-pair-rdma --timeout 5400 -- \
		env KVOD_BENCH_SECS="$SECS" KVOD_BENCH_RUNS="$RUNS" "$0" || exit
	exec "$REPO/bench/bench-plot"
fi

# shellcheck source=bench/pair.bash
. "$HERE/pair.bash"
# shellcheck source=bench/lib.bash
. "$HERE/lib.bash"
OUT=$PAIR_DIR/report.$PAIR_ROLE
FINAL=${KVOD_RESULTS:-$REPO/results}/bench-pair-rdma.txt
# For bench/bench-plot, a line a size: SIZE, then median, min and max
# of ib_read_bw MB/s, of kvod-fetch MB/s and of the server's CPU-s/GB.
DAT=${KVOD_RESULTS:-$REPO/results}/bench-pair-rdma.dat
SIZES=${KVOD_BENCH_SIZES:-"4096 8192 16384 32768 65536 131072 262144 524288 1048576"}
# pair_rdma_up and pair_kvod_up: the rxe device and kvod's RDMA port
DEV=kvod_pair
PORT=7471
MOVIE_MB=256
# The longest one run of either tool may take (connection setup in a
# slow guest included). A run that fails (perftest's client has crashed
# in librdmacm over rxe, and then hung the sweep) or runs out of time is
# tried again, up to TRIES times, and counted in the report.
RUN_LIMIT=$((SECS * 4 + 60))
TRIES=3

# The ib_read_bw client's options beyond the fixed ones: -e unless
# KVOD_BENCH_PERFTEST_EVENTS=0, then KVOD_BENCH_PERFTEST_OPTS.
PT_OPTS=${KVOD_BENCH_PERFTEST_OPTS:-}
[ "${KVOD_BENCH_PERFTEST_EVENTS:-1}" = 0 ] || PT_OPTS="-e${PT_OPTS:+ $PT_OPTS}"

# perftest_len SIZE: how long a perftest run lasts, on both sides:
# SECS, or with -e (which perftest refuses in duration mode) a count of
# READs, 32 MiB of them and at least 64.
perftest_len() {
	local n

	case " $PT_OPTS " in
	*" -e "*)
		n=$(((32 << 20) / $1))
		echo "-n $((n < 64 ? 64 : n))"
		;;
	*)
		echo "-D $SECS"
		;;
	esac
}

# How the perftest client and server exchange their QPs' details: a TCP
# connection (the default), or with KVOD_BENCH_PERFTEST_CM=rdma_cm,
# rdma_cm (-R). In -R mode perftest's server waits for the client's
# closing message by busy-polling a CQ (rdma_read_keys() in its
# perftest_communication.c) for the whole run, on the CPU that also runs
# the server's rxe (an emulated guest's vCPUs share one host thread);
# over a socket it sleeps in read(). kvod's server runs nothing there.
# siw is iWARP, whose QPs connect only through rdma_cm (over a socket
# exchange perftest's siw runs move nothing): there -R is the default.
if [ "$PAIR_RDMA" = siw ]; then
	: "${KVOD_BENCH_PERFTEST_CM:=rdma_cm}"
fi
if [ "${KVOD_BENCH_PERFTEST_CM:-socket}" = rdma_cm ]; then
	CM=-R
else
	CM=
fi

pair_rdma_up || die "the link or $PAIR_RDMA did not come up"

# ---- server: kvod, then the client's requests (pair_serve) ----
# "ibbw SIZE": start an ib_read_bw server for one run (once the last
# one has exited), answer once its rdma_cm id listens. "dup": the
# device's duplicate_request counter (rxe: requests it saw again, the
# client's retransmissions), or nothing.
serve() {
	if [ "$1" = dup ]; then
		rdma statistic show link "$DEV/1" 2>/dev/null | awk '{
			for (i = 1; i < NF; i++)
				if ($i == "duplicate_request") print $(i + 1) }'
		return 0
	fi
	[ "$1" = ibbw ] || return 0
	# The last run's server exits once its client is done; one whose
	# client died never does, and would hold the port.
	for _ in $(seq 300); do
		pgrep -x ib_read_bw >/dev/null || break
		sleep 0.1
	done
	pkill -x ib_read_bw && sleep 1
	# shellcheck disable=SC2046,SC2086 # the options' words
	timeout -k 5 "$RUN_LIMIT" ib_read_bw $CM -F -d "$DEV" -p 18515 -s "$2" \
		$(perftest_len "$2") -o 64 -t 64 >/dev/null 2>&1 </dev/null &
	for _ in $(seq 100); do
		if [ -n "$CM" ]; then
			rdma resource show cm_id 2>/dev/null |
				grep -q 'LISTEN.*:18515' && break
		else
			ss -Hltn 'sport = :18515' 2>/dev/null | grep -q . && break
		fi
		sleep 0.2
	done
}

if [ "$PAIR_ROLE" = server ]; then
	pair_kvod_up "$PAIR_DIR/film" "$MOVIE_MB" || die "kvod did not come up"
	pair_signal ready
	pair_serve serve || die "the client went quiet"
	rmmod kvod
	exit 0
fi

# ---- client: drives the sweep ----

# perftest: average MiB/s of one run of SIZE -> MB/s (10^6).
# Nothing if every try failed; each failed try is a line in
# $PAIR_DIR/failed.perftest.
read_bw() {
	local bw _

	for _ in $(seq "$TRIES"); do
		ask ibbw "$1" >/dev/null
		# shellcheck disable=SC2046,SC2086 # the options' words
		bw=$(timeout -k 5 "$RUN_LIMIT" ib_read_bw $CM -F -d "$DEV" \
			-p 18515 -s "$1" $(perftest_len "$1") -o 64 -t 64 \
			$PT_OPTS "$PAIR_SERVER" 2>/dev/null |
			awk '$1 == '"$1"' { print $4 }')
		# A run that moved nothing failed too.
		awk -v b="${bw:-0}" 'BEGIN { if (b <= 0) exit 1
			printf "%.1f", b * 1.048576 }' && return 0
		echo "$1" >>"$PAIR_DIR/failed.perftest"
	done
	return 1
}

# kvod-fetch: MB/s of one run at --chunk SIZE --depth 64, and the
# server's busy CPU-seconds per GB moved in it, and the requests the
# server saw twice: "MB/s CPU-s/GB DUPS". Nothing if every try failed;
# each failed try is a line in $PAIR_DIR/failed.fetch.
fetch_bw() {
	local a b bw d0 d1 _

	for _ in $(seq "$TRIES"); do
		d0=$(ask dup)
		a=$(ask stat)
		bw=$(timeout -k 5 "$RUN_LIMIT" "$REPO/tools/kvod-fetch" \
			-o /dev/null --chunk "$1" --depth 64 --duration "$SECS" \
			"rdma://$PAIR_SERVER:$PORT/film" 2>&1 |
			sed -n 's/.* s, \([0-9.]*\) MB\/s.*/\1/p')
		b=$(ask stat)
		d1=$(ask dup)
		[ -n "$bw" ] && break
		echo "$1" >>"$PAIR_DIR/failed.fetch"
	done
	[ -n "$bw" ] || return 1
	awk -v a="$a" -v b="$b" -v bw="$bw" -v s="$SECS" -v idle="$IDLE" \
		-v d0="$d0" -v d1="$d1" 'BEGIN {
		split(a, x, " "); split(b, y, " "); split(idle, z, " ")
		gb = bw * s / 1000
		printf "%.1f %.2f %s", bw, gb ? (y[1] - x[1] - z[1] * s) / x[4] / gb : 0,
			d1 == "" ? "-" : d1 - d0 }'
}

pair_wait ready 900 || die "the server did not get ready"
want=$(sha256sum <"$PAIR_DIR/film")
[ "$(curl -s "http://$PAIR_SERVER:8080/film" | sha256sum)" = "$want" ] ||
	die "HTTP over the link is not byte-exact"
[ "$("$REPO/tools/kvod-fetch" -q "rdma://$PAIR_SERVER:$PORT/film" | sha256sum)" = "$want" ] ||
	die "RDMA over the link is not byte-exact"

IDLE=$(pair_idle_rate 10) || die "the server did not answer"
rm -f "$DAT.new"
log "# kvod RDMA READ sweep across two guests: $(uname -r), $PAIR_RDMA on virtio-net; ib_read_bw ${CM:-with a TCP exchange}${PT_OPTS:+ $PT_OPTS}"
log "# the server idle (10 s, subtracted): $IDLE busy jiffies, ctxt, intr per second${KVOD_ICOUNT:+; icount shift=$KVOD_ICOUNT}"
log "# ${SECS} s per run, $RUNS runs per tool and size, alternating; 64 READs outstanding"
log "# size  ib_read_bw MB/s (min..max)  kvod-fetch MB/s (min..max)  ratio  server CPU-s/GB (min..max)  retransmitted requests"
for s in $SIZES; do
	p=() k=() c=() d=()
	for _ in $(seq "$RUNS"); do
		bw=$(read_bw "$s") && p+=("$bw")
		if r=$(fetch_bw "$s"); then
			read -r bw cpu dup <<<"$r"
			k+=("$bw")
			c+=("$cpu")
			d+=("$dup")
		fi
	done
	# Every run of a tool failed: its figures are 0.
	[ ${#p[@]} -gt 0 ] || p=(0)
	[ ${#k[@]} -gt 0 ] || k=(0) c=(0) d=(-)
	read -r pm plo phi <<<"$(stats "${p[@]}")"
	read -r km klo khi <<<"$(stats "${k[@]}")"
	read -r cm clo chi <<<"$(stats "${c[@]}")"
	log "$(awk -v s="$s" -v pm="$pm" -v plo="$plo" -v phi="$phi" \
		-v km="$km" -v klo="$klo" -v khi="$khi" -v cm="$cm" -v clo="$clo" \
		-v chi="$chi" -v d="${d[*]}" 'BEGIN { printf "%7d  %7.1f (%.1f..%.1f)  %7.1f (%.1f..%.1f)  %5.2f  %6.2f (%.2f..%.2f)  %s",
			s, pm, plo, phi, km, klo, khi, pm ? km / pm : 0, cm, clo, chi, d }')"
	echo "$s $pm $plo $phi $km $klo $khi $cm $clo $chi" >>"$DAT.new"
	echo "$s $pm" >>"$PAIR_DIR/sweep.perftest"
	echo "$s $km" >>"$PAIR_DIR/sweep.fetch"
done
log_size90 ib_read_bw "$PAIR_DIR/sweep.perftest"
log_size90 kvod-fetch "$PAIR_DIR/sweep.fetch"
for t in perftest fetch; do
	[ -s "$PAIR_DIR/failed.$t" ] &&
		log "# failed $t runs, tried again (at sizes): $(sort -n "$PAIR_DIR/failed.$t" | uniq -c | awk '{ printf "%s%dx %d", (NR > 1 ? ", " : ""), $1, $2 }')"
done
ask end >/dev/null
cp "$OUT" "$FINAL"
mv "$DAT.new" "$DAT"
