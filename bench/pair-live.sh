#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Live streaming's server cost across two guests (selftests/qemu/vm-pair). The
# server guest runs one live source, 30 s of numbered MPEG-TS packets
# (live_tool.py gen) played over and over at PPS packets a second
# (bench/pace.py; 2660 a second is 4 Mbit/s), into
#
#   a kvod live channel "tv" created with --rdma (chunks of CHUNK_PKTS
#   packets, 64 of them) for the players,
#   a second one, "notes", for the note sinks (chunks of SINK_PKTS
#   packets, 16 of them: a ring of about the same size that completes
#   fewer chunks a second, so that 1000 sinks fit in what an emulated
#   guest can send: at tv's 7.6 chunks a second the server guest ran
#   out of CPU near 640 sinks, 4,900 notes a second), and
#   hls_segment.py, a minimal HLS packager: segments of one second of
#   the stream and a playlist, in a tmpfs directory that nginx (sendfile
#   on) serves; the peer, as a growing file cannot be followed by plain
#   HTTP players and nginx has no live module here.
#
# The source and packager run all the time, so the server's cost with no
# client is the baseline subtracted from every point: measured first, for
# IDLE_S seconds, for part 2; for SECS just before each point of part 1,
# so that a point with few sinks stands against the server as it was just
# then. Every figure comes from two samples the server takes of itself
# (its uptime and idle time, its counters), so the time the two guests
# take to talk is in neither the numerator nor the denominator.
# Two parts, both reporting the server guest's busy CPU in percent of
# one CPU:
#
#   1. Notes alone, the thesis's figure ("less than 5% CPU load for
#      sending notifications to the 1'000 clients"): N connections that
#      ask for notes and take them, doing nothing else
#      (selftests/kvod/note_sink), for N in SINKS; reported with the
#      notes sent and dropped, and the CPU per note; then, for
#      TRACE_S seconds more, kvod's own part of a note: the mean time
#      of note_notify() under the function graph tracer (the wake-up that
#      builds and posts a note, ib_post_send() included; the rest of the
#      CPU per note is rxe making, sending and completing the packet).
#   2. Players, N at once for SECS seconds, for N in CLIENTS:
#        kvod-rdma       kvod-fetch, notes (one SEND per chunk) + READs
#        kvod-rdma-poll  kvod-fetch --poll 20: the server does nothing
#        kvod-http       curl of http://server:8080/tv, zero-copy chunks
#        nginx-hls       bench/hls_player.py: reloads the playlist every
#                        0.5 s and fetches each new segment, over one
#                        kept-alive connection
#      reported: the server's CPU per client (the point's busy CPU less
#      the baseline, over N), and the bytes each client got as a share
#      of what the source wrote meanwhile (the samples bracket the
#      players' start-up too, so a share below 1 alone is no fault; a
#      point whose share is below its peers' is not comparable per
#      client, and the last column, CPU per GB delivered, compares it).
#      RUNS runs per point, the servers in turn.
#      Each round also measures "none", N players that do nothing: its
#      spread is the noise floor the other rows stand on.
#
# The server's CPU includes rxe's, which does in software what an RDMA
# NIC does in hardware: the protocol work of every SEND and READ
# response. Documentation/benchmarks.rst has the method.
#
# usage: bench/pair-live.sh [SECS [RUNS]]	(on the host)
#	KVOD_BENCH_CLIENTS="1 4 16" (default), KVOD_BENCH_SINKS="10 100 1000"
#	(default), KVOD_BENCH_PPS=2660, KVOD_BENCH_CHUNK_PKTS=348,
#	KVOD_BENCH_SINK_PKTS=1330, KVOD_BENCH_SERVERS (part 2's servers,
#	default all four; "none" is always measured)
#
# Results: stdout and results/bench-pair-live.txt.
set -u

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(dirname "$HERE")
SECS=${1:-${KVOD_BENCH_SECS:-20}}
RUNS=${2:-${KVOD_BENCH_RUNS:-3}}
CLIENTS=${KVOD_BENCH_CLIENTS:-"1 4 16"}
SINKS=${KVOD_BENCH_SINKS:-"10 100 1000"}
PPS=${KVOD_BENCH_PPS:-2660}
CHUNK_PKTS=${KVOD_BENCH_CHUNK_PKTS:-348}
SINK_PKTS=${KVOD_BENCH_SINK_PKTS:-1330}
SERVERS=${KVOD_BENCH_SERVERS:-"kvod-rdma kvod-rdma-poll kvod-http nginx-hls"}

if [ "${KVOD_IN_GUEST:-}" != 1 ]; then
	"$REPO/selftests/qemu/vm-pair" --name bench-pair-live --timeout 7200 -- \
		env KVOD_BENCH_SECS="$SECS" KVOD_BENCH_RUNS="$RUNS" \
		KVOD_BENCH_CLIENTS="$CLIENTS" KVOD_BENCH_SINKS="$SINKS" \
		KVOD_BENCH_PPS="$PPS" KVOD_BENCH_CHUNK_PKTS="$CHUNK_PKTS" \
		KVOD_BENCH_SINK_PKTS="$SINK_PKTS" KVOD_BENCH_SERVERS="$SERVERS" \
		"$0"
	exit
fi

# shellcheck source=bench/pair.bash
. "$HERE/pair.bash"
# shellcheck source=bench/lib.bash
. "$HERE/lib.bash"
OUT=$PAIR_DIR/report.$PAIR_ROLE
FINAL=${KVOD_RESULTS:-$REPO/results}/bench-pair-live.txt
KVODCTL=$REPO/tools/kvodctl
LT=(/usr/bin/python3 -S "$REPO/selftests/kvod/live_tool.py")
IDLE_S=20
TRACE_S=5
B=/tmp/pair-live

pair_rdma_up || die "the link or $PAIR_RDMA did not come up"

# ---- server ----

# listener_counter (with $KVODCTL as set above).
# shellcheck source=selftests/lib/ktap.sh
. "$REPO/selftests/lib/ktap.sh"

# counter NAME: the RDMA listener's counter NAME.
counter() {
	listener_counter rdma "$PAIR_SERVER:7471" "$1"
}

# nstat start|end: "BUSY CTXT INTR HZ UPTIME NOTES DROPPED WRITTEN IDLE
# CPUS CUPTIME": pair_stat, the seconds since boot, the RDMA listener's
# notes sent and dropped, the channel's bytes written, the seconds all
# CPUs were idle (read with UPTIME) and their number, and the seconds
# since boot when the counters were read (rates of the counters use
# CUPTIME, of the CPU UPTIME). Reading the counters
# runs kvodctl three times, which under emulation costs the server more
# than a client does: so the CPU sample is taken after them at a
# point's start and before them at its end, and the window between two
# samples holds none of this work: a fixed cost per point, which a
# point twice as long in the server's time, as the HLS player's are,
# would spread twice as thin (Documentation/benchmarks.rst).
nstat() {
	local n d w up idle st cup

	[ "$1" != end ] || cpu_sample
	n=$(counter notes)
	d=$(counter notes_dropped)
	w=$("$KVODCTL" info tv | sed -n 's/^written: //p')
	read -r cup _ </proc/uptime
	[ "$1" = end ] || cpu_sample
	echo "$st $up $n $d $w $idle $(nproc) $cup"
}

# cpu_sample: nstat's CPU sample, into its st, up and idle.
cpu_sample() {
	st=$(pair_stat)
	read -r up idle </proc/uptime
}

# qp_states: this guest's RC QPs counted by state ("RTS 138 ERR 2").
qp_states() {
	rdma resource show qp 2>/dev/null |
		awk '/type RC/ { for (i = 1; i < NF; i++) if ($i == "state")
			n[$(i + 1)]++ }
			END { for (k in n) printf "%s %d ", k, n[k] }'
}

# ntrace SECONDS: kvod's own part of a note, in us: the function
# graph tracer on note_notify() alone for that long, the wake-up of a
# connection that builds and posts its note (ib_post_send() included:
# with an RDMA NIC, a doorbell; rxe does the rest, the packet, later in
# its own work), and the mean time of a call; 0 without tracefs or calls.
ntrace() {
	local t=/sys/kernel/tracing

	if ! echo note_notify >"$t/set_ftrace_filter" 2>/dev/null; then
		echo 0
		return
	fi
	echo note_notify >"$t/set_graph_function"
	echo 16384 >"$t/buffer_size_kb"
	echo function_graph >"$t/current_tracer"
	echo >"$t/trace"
	echo 1 >"$t/tracing_on"
	pair_nap "$1"
	echo 0 >"$t/tracing_on"
	# " 0)   4.567 us    |  note_notify [kvod]();", maybe with a + or !
	awk '/note_notify/ { for (i = 2; i <= NF; i++) if ($i == "us") {
			n++; s += $(i - 1); break } }
		END { printf "%.2f", n ? s / n : 0 }' "$t/trace"
	echo nop >"$t/current_tracer"
	echo >"$t/set_graph_function"
	echo >"$t/set_ftrace_filter"
	echo >"$t/trace"
}

# pstat: where the server's CPU went so far, for the log: "NAME TICKS"
# pairs, the tick's samples of user plus system time by command (kernel
# threads by their name up to its "/"), and /proc/stat's irq and softirq
# (those of no task) as "[irq]" and "[softirq]", and "busy:all", all its
# busy ticks (lib.bash's busy_now); then "sirq:TYPE COUNT",
# the softirqs raised so far by type (/proc/softirqs, all CPUs); then
# "pace:wakeups N", the source's sleeps so far (its voluntary context
# switches: it writes what is due at each wake-up, so late wake-ups mean
# fewer, bigger writes down the pipeline), and "pace:seconds" its uptime.
pstat() {
	{
		cat /proc/[0-9]*/stat 2>/dev/null |
			sed 's/^[0-9]* (\(.*\)) /\1\t/' |
			awk -F'\t' '{ split($2, f, " "); sub("/.*", "", $1)
				gsub(" ", "_", $1); n[$1] += f[12] + f[13] }
				END { for (k in n) print k, n[k] }'
		awk '/^cpu / { print "[irq]", $7; print "[softirq]", $8 }' \
			/proc/stat
		echo "busy:all $(busy_now)"
		awk 'NR > 1 { n = 0; for (i = 2; i <= NF; i++) n += $i
			sub(":", "", $1); print "sirq:" $1, n }' /proc/softirqs
		echo "pace:wakeups $(awk '/^voluntary_ctxt_switches/ { print $2 }' \
			"/proc/$(pgrep -of bench/pace.py)/status" 2>/dev/null || echo 0)"
		echo "pace:seconds $(cut -d' ' -f1 /proc/uptime)"
	} | paste -sd' '
}

serve() {
	case $1 in
	nstat) nstat "$2" ;;
	pstat) pstat ;;
	ntrace) ntrace "$2" ;;
	active) counter active ;;
	diag) echo "active $(counter active), QPs by state: $(qp_states)" ;;
	esac
}

if [ "$PAIR_ROLE" = server ]; then
	mkdir -p "$B/www"
	mount -t tmpfs none "$B/www" || die "no tmpfs for the segments"
	mkdir -p "$B/www/hls"
	pair_kvod_up "$B/film" 1 || die "kvod did not come up"
	echo 0 >/sys/module/kvod/parameters/rdma_max_conns
	echo 0 >/sys/module/kvod/parameters/rdma_max_conns_per_addr
	"$KVODCTL" live create tv --rdma --chunk $((CHUNK_PKTS * 188)) \
		--chunks 64 || die "cannot create the channel"
	"$KVODCTL" live create notes --rdma --chunk $((SINK_PKTS * 188)) \
		--chunks 16 || die "cannot create the sinks' channel"
	chmod -R a+rX "$B/www"
	pair_nginx_start "$B/ngx" 8081 on "$B/www" ||
		die "nginx does not start"
	"${LT[@]}" gen $((PPS * 30)) >"$B/src.ts" || die "no source file"
	/usr/bin/python3 -S "$HERE/pace.py" "$B/src.ts" $((PPS * 188)) |
		tee >(/usr/bin/python3 -S "$HERE/hls_segment.py" "$B/www/hls" \
			"$PPS" 1 6) >("$KVODCTL" live feed notes) |
		"$KVODCTL" live feed tv &
	for _ in $(seq 300); do
		[ -e "$B/www/hls/live.m3u8" ] && break
		sleep 0.2
	done
	[ -e "$B/www/hls/live.m3u8" ] || die "the packager wrote no playlist"
	pair_signal ready
	pair_serve serve || die "the client went quiet"
	"$KVODCTL" del tv
	"$KVODCTL" del notes
	kill "$(cat "$B/ngx/nginx.pid")"
	exit 0
fi

# ---- client ----

# hls SECONDS: an HLS player without the decoding, on nginx
# (bench/hls_player.py: the playlist every 0.5 s, each new segment, over
# one kept-alive connection, forking nothing); prints the bytes it got.
hls() {
	/usr/bin/python3 -S "$HERE/hls_player.py" \
		"http://$PAIR_SERVER:8081/hls/live.m3u8" "$1"
}

# player SERVER SECONDS: one client for that long; prints its bytes.
player() {
	case $1 in
	kvod-rdma) "$REPO/tools/kvod-fetch" -q --duration "$2" \
		"rdma://$PAIR_SERVER:7471/tv" | wc -c ;;
	kvod-rdma-poll) "$REPO/tools/kvod-fetch" -q --duration "$2" \
		--poll 20 "rdma://$PAIR_SERVER:7471/tv" | wc -c ;;
	kvod-http) curl -s --max-time "$2" "http://$PAIR_SERVER:8080/tv" |
		wc -c ;;
	nginx-hls) hls "$2" ;;
	none) sleep "$2"; echo 0 ;;
	esac
}

# cpu A B: percent of one CPU the server was busy between nstats A and
# B, less the baseline $IDLE (the same percent with no client): the time
# its CPUs were not idle. The kernel measures idle time at each entry and
# exit (NO_HZ), while its user and system times are samples at the tick
# (pair_stat's BUSY), which work that keeps time with the tick, as the
# source's 20 ms steps do, can bias; part 2 reports both.
cpu() {
	awk -v a="$1" -v b="$2" -v idle="${IDLE:-0}" 'BEGIN {
		split(a, x, " "); split(b, y, " "); t = y[5] - x[5]
		printf "%.3f", (x[10] * t - (y[9] - x[9])) / t * 100 - idle }'
}

# ticks A B: the same from the tick's samples, with no baseline.
ticks() {
	awk -v a="$1" -v b="$2" 'BEGIN {
		split(a, x, " "); split(b, y, " ")
		printf "%.3f", (y[1] - x[1]) / x[4] / (y[5] - x[5]) * 100 }'
}

# busiest WHAT A B: to stderr (the guest's log, not the report), the
# server's busiest commands between pstats A and B, in ticks (with
# "[other]", the busy ticks of none of them), the softirqs raised
# meanwhile by type, and the source's wake-ups.
busiest() {
	awk -v what="$1" -v a="$2" -v b="$3" '
	function top(arr, label, k, best, c, line) {
		line = "# " what ", " label ":"
		for (k = 0; k < 8; k++) {
			best = ""
			for (c in arr) if (best == "" || arr[c] > arr[best]) best = c
			if (best == "" || arr[best] <= 0) break
			line = line " " best " " arr[best]; delete arr[best]
		}
		print line
	}
	BEGIN {
		n = split(a, x, " "); for (i = 1; i < n; i += 2) t[x[i]] = x[i + 1]
		n = split(b, y, " ")
		for (i = 1; i < n; i += 2) {
			v = y[i + 1] - t[y[i]]
			if (y[i] ~ /^sirq:/)
				s[substr(y[i], 6)] = v
			else if (y[i] ~ /^pace:/)
				p[substr(y[i], 6)] = v
			else if (y[i] == "busy:all")
				all = v
			else {
				d[y[i]] = v
				named += v
			}
		}
		# Busy ticks of no task, not irq or softirq either: the idle
		# task outside idle (its way into and out of idle), and tasks
		# that ended between the two samples.
		d["[other]"] = all - named
		top(d, "busiest (ticks)"); top(s, "softirqs raised")
		if (p["seconds"] > 0)
			printf "# %s, the source: %d wake-ups in %.1f s of the server, %.1f a second\n",
				what, p["wakeups"], p["seconds"], p["wakeups"] / p["seconds"] }' >&2
}

# point SERVER N: N players for SECS; "CPU%/client min-share source
# ticks CPU-s/GB" where the share is the fewest bytes a player got over
# what the source wrote from just before the players started to just
# after they ended, source is the source's rate meanwhile over its
# nominal rate (below 1: the source itself fell behind, and the point
# measured less work), ticks the first figure by the tick's samples, and
# CPU-s/GB the server's CPU-seconds (less the baseline) per GB the
# players got together (0 if they got nothing): the cost of what was
# delivered, whatever share of the stream each player kept up with.
point() {
	local a b i pa

	quiet
	pa=$(ask pstat)
	a=$(ask nstat start)
	for i in $(seq "$2"); do
		player "$1" "$SECS" >"$B/got.$i" &
	done
	wait
	b=$(ask nstat end)
	busiest "$1 $2" "$pa" "$(ask pstat)"
	awk -v c="$(cpu "$a" "$b")" -v n="$2" -v a="$a" -v b="$b" \
		-v k="$(ticks "$a" "$b")" -v k0="$TICKS" -v rate=$((PPS * 188)) '
		NR == 1 || $1 < min { min = $1 }
		{ sum += $1 }
		END { split(a, x, " "); split(b, y, " ")
			# what the source wrote between the two server
			# samples, which the players run within (the two
			# guests do not agree on time under icount)
			w = y[8] - x[8]
			printf "%.3f %.2f %.2f %.3f %.2f", c / n, w ? min / w : 0,
				w / (y[11] - x[11]) / rate, (k - k0) / n,
				sum ? c / 100 * (y[5] - x[5]) / (sum / 1e9) : 0 }' \
		"$B"/got.*
	rm -f "$B"/got.*
}

# quiet: until the server has released every RDMA connection.
quiet() {
	local deadline=$((SECONDS + 300))

	while [ "$SECONDS" -lt "$deadline" ]; do
		[ "$(ask active)" = 0 ] && return 0
		sleep 1
	done
	# What is left, on both sides, for whoever reads the log.
	echo "client: $(pgrep -c note_sink) note_sink, $(pgrep -c kvod-fetch) kvod-fetch; QPs by state:" \
		"$(qp_states)" >&2
	echo "server: $(ask diag)" >&2
	die "the server still holds RDMA connections"
}

# sinks N: N note sinks; "IDLE% CPU% notes/s dropped/s KVOD_US": the
# server's CPU for SECS with no sink, then less that for SECS once they
# are connected, KVOD_US from ntrace.
sinks() {
	local a b tr pid deadline out=$B/sink.out

	quiet
	# This point's own baseline, just before it (a few % of a CPU, the
	# cost of 100 sinks at 2 notes a second, is inside the noise of one
	# taken at the start).
	a=$(ask nstat start)
	sleep "$SECS"
	b=$(ask nstat end)
	IDLE=$(IDLE=0 cpu "$a" "$b")
	"$REPO/selftests/kvod/note_sink" "$PAIR_SERVER" notes "$1" \
		$((3 * SECS + 600)) >"$out" 2>&1 &
	pid=$!
	# A connection takes up to about 2 s to set up under icount.
	deadline=$((SECONDS + 120 + 3 * $1))
	until grep -q '^connected:' "$out" || [ "$SECONDS" -ge "$deadline" ]; do
		sleep 1
	done
	if ! grep -q "^connected: $1\$" "$out"; then
		cat "$out" >&2
		kill "$pid"
		return 1
	fi
	sleep 2		# the last connections' setup work is done
	a=$(ask nstat start)
	sleep "$SECS"
	b=$(ask nstat end)
	tr=$(ask ntrace "$TRACE_S")
	kill "$pid" 2>/dev/null
	wait "$pid"
	grep -v '^connected:' "$out" >&2	# what went wrong, if anything
	awk -v c="$(cpu "$a" "$b")" -v a="$a" -v b="$b" -v tr="$tr" \
		-v idle="$IDLE" 'BEGIN {
		split(a, x, " "); split(b, y, " "); t = y[11] - x[11]
		printf "%s %s %.1f %.1f %s", idle, c, (y[6] - x[6]) / t,
			(y[7] - x[7]) / t, tr }'
}

mkdir -p "$B"
ulimit -n 65536
pair_wait ready 900 || die "the server did not get ready"
for s in $SERVERS; do
	got=$(player "$s" 5)
	[ "${got:-0}" -gt 0 ] || die "$s: a player got nothing"
done

quiet
a=$(ask nstat start)
sleep "$IDLE_S"
b=$(ask nstat end)
IDLE=$(cpu "$a" "$b")
TICKS=$(ticks "$a" "$b")
log "# live streaming's server cost across two guests: $(uname -r), $PAIR_RDMA on virtio-net, the server with $(echo "$a" | cut -d' ' -f10) vCPUs"
log "# source: $PPS TS packets/s ($((PPS * 188 * 8 / 1000)) kbit/s); kvod chunks of $CHUNK_PKTS packets ($(awk -v p="$PPS" -v c="$CHUNK_PKTS" 'BEGIN { printf "%.1f", p / c }')/s), HLS segments of 1 s"
log "# baseline, the source and packager with no client ($IDLE_S s, subtracted from every point of part 2): $IDLE % of a CPU (by the tick's samples: $TICKS %)${KVOD_ICOUNT:+; icount shift=$KVOD_ICOUNT}"
log "# 1. notes alone: N connections taking notes of channel \"notes\" (chunks of $SINK_PKTS packets, $(awk -v p="$PPS" -v c="$SINK_PKTS" 'BEGIN { printf "%.1f", p / c }')/s), ${SECS} s each"
log "#    then ${TRACE_S} s more with note_notify() traced: kvod's part of a note (the wake-up, ib_post_send included)"
log "#    baseline: the server's CPU for ${SECS} s just before the point, which it subtracts"
log "#    N  baseline %  server CPU %  notes/s  dropped/s  CPU us/note  kvod us/note"
for n in $SINKS; do
	if ! r=$(sinks "$n"); then
		log "$(printf '%6d  could not connect them all:' "$n")" \
			"$(tail -n 3 "$B/sink.out" | paste -sd' ')"
		continue
	fi
	read -r idle c sent dropped own <<<"$r"
	log "$(awk -v n="$n" -v i="$idle" -v c="$c" -v s="$sent" \
		-v d="$dropped" -v o="$own" 'BEGIN {
		printf "%6d  %10.2f  %12.2f  %7.1f  %9.1f  %11.2f  %12.2f",
			n, i, c, s, d,
			s ? c / 100 / s * 1e6 : 0, o }')"
done
# Every sink's connection is released once note_sink is gone (killed, all
# at once): part 2 and the end wait for that, and say what is left if not.
[ -z "${SINKS// }" ] || quiet
log "# 2. players: server CPU % per client (median, min..max of $RUNS runs), fewest bytes a client got / bytes written, the source's rate / its nominal rate, CPU %/client by the tick's samples, the server's CPU-s (less the baseline) per GB the clients got (medians)"
log "# server          N  CPU %/client (min..max)   share  source  by ticks  CPU-s/GB"
for n in $CLIENTS; do
	declare -A r=()
	for _ in $(seq "$RUNS"); do
		for s in none $SERVERS; do
			r[$s]+="$(point "$s" "$n")"$'\n'
		done
	done
	for s in none $SERVERS; do
		mapfile -t lines < <(printf '%s' "${r[$s]}")
		read -r cm clo chi <<<"$(col 1 "${lines[@]}")"
		read -r sm _ <<<"$(col 2 "${lines[@]}")"
		read -r rm _ <<<"$(col 3 "${lines[@]}")"
		read -r km _ <<<"$(col 4 "${lines[@]}")"
		read -r gm _ <<<"$(col 5 "${lines[@]}")"
		log "$(printf '%-14s %3d  %7.3f (%.3f..%.3f)  %5.2f  %6.2f  %7.3f  %8.2f' \
			"$s" "$n" "$cm" "$clo" "$chi" "$sm" "$rm" "$km" "$gm")"
	done
	unset r
done
ask end >/dev/null
cp "$OUT" "$FINAL"
