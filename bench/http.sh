#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# HTTP serving cost, in one selftests/qemu/vm-run guest boot: the same movie and the
# same client load against
#
#   kvod          kvod.ko's zero-copy HTTP server (MSG_SPLICE_PAGES)
#   nginx-sf      nginx with sendfile on (the file in tmpfs)
#   nginx-copy    nginx with sendfile off (read() + write() copies)
#   kvod-proxy    tools/kvod-proxy: HTTP to the players, the bytes pulled
#                 with RDMA READs from kvod.ko's RDMA server over Soft-RoCE
#                 (selftests/lib/rdma.sh) and copied into the players'
#                 sockets. On one host this row holds the proxy, the
#                 server (no work per chunk) and rxe, a software NIC whose
#                 READ responses are made by the CPU (a copy) where an
#                 RNIC would DMA; the proxy process's own CPU is printed
#                 on its own line.
#
# usage: bench/http.sh [GIB_PER_SERVER]	(on the host; boots a guest)
#
# Load: CLIENTS curl processes on 127.0.0.1, each downloading the movie
# over one keep-alive connection until GIB_PER_SERVER GiB are moved in all.
# Measured per server, over the same window: busy CPU jiffies of the whole
# guest from /proc/stat (user+nice+system+irq+softirq+steal) minus an idle
# baseline (an equally long window with nothing running), and context
# switches from /proc/stat's ctxt minus the same baseline. The clients are
# the same in all three runs, so the differences are the servers'; the
# ratios kvod / nginx include the clients' share in both terms and so
# understate the servers' difference. The curl processes' own CPU (the
# shell's "times") is printed too, but is not subtracted: under software
# emulation per-task and /proc/stat accounting disagree (the per-task sum
# can exceed the machine's). Results per GB (10^9 bytes). Method and
# results: Documentation/http.rst.
set -u

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(dirname "$HERE")
GIB=${1:-${KVOD_BENCH_GIB:-2}}

if [ "${KVOD_IN_GUEST:-}" != 1 ]; then
	exec "$REPO/selftests/qemu/vm-run" --name bench-http --timeout 2400 -- \
		env KVOD_BENCH_GIB="$GIB" "$HERE/http.sh" "$GIB"
fi

export KVOD_REPO=$REPO
# shellcheck source=selftests/lib/guest.sh
. "$REPO/selftests/lib/guest.sh"
kvod_in_guest || { echo "bench: not in a selftests/qemu/vm-run guest" >&2; exit 1; }

OUT=${KVOD_RESULTS:-$REPO/results}/bench-http.txt
B=$(mktemp -d /tmp/kvod-bench.XXXXXX)
MOVIE_MIB=64
CLIENTS=4
KVODCTL=$REPO/tools/kvodctl
MOVIE_BYTES=$((MOVIE_MIB * 1024 * 1024))
PER_CLIENT=$(((GIB * 1024 / MOVIE_MIB + CLIENTS - 1) / CLIENTS))
TOTAL=$((PER_CLIENT * CLIENTS * MOVIE_BYTES))
HZ=$(getconf CLK_TCK)

# shellcheck source=bench/lib.bash
. "$REPO/bench/lib.bash"

# task_jiffies PID: utime + stime of PID so far, from /proc/PID/stat.
task_jiffies() {
	awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"
}

# busy jiffies and context switches, all CPUs, "BUSY CTXT"
stat_now() {
	awk '/^cpu / { b = $2 + $3 + $4 + $7 + $8 + $9 } /^ctxt/ { c = $2 }
	     END { print b, c }' /proc/stat
}

# load URL: run the clients; prints "SECONDS CLIENT_JIFFIES BUSY CTXT OK"
load() {
	local url=$1 i args s0 s1 t0 t1 times ok=0

	args=()
	for _ in $(seq "$PER_CLIENT"); do
		args+=(-o /dev/null "$url")
	done
	read -r -a s0 <<<"$(stat_now)"
	t0=$(date +%s.%N)
	# "times" in a pipe would run in a child with no children of its own.
	(
		for i in $(seq "$CLIENTS"); do
			curl -sS -w '%{size_download}\n' "${args[@]}" >"$B/c$i" &
		done
		wait
		times >"$B/times"
	)
	times=$(tail -n1 "$B/times")
	t1=$(date +%s.%N)
	read -r -a s1 <<<"$(stat_now)"
	ok=$(cat "$B"/c* | awk -v m="$MOVIE_BYTES" '$1 == m { n++ } END { print n + 0 }')
	# "times": children's user and system time, as 0m1.234s 0m5.678s
	echo "$t0 $t1 $times" | awk -v hz="$HZ" -v b=$((s1[0] - s0[0])) \
		-v c=$((s1[1] - s0[1])) -v ok="$ok" '
		function secs(x) { split(x, p, "m"); sub("s", "", p[2]); return p[1] * 60 + p[2] }
		{ printf "%.2f %d %d %d %d\n", $2 - $1, (secs($3) + secs($4)) * hz, b, c, ok }'
}

# idle SECONDS: busy jiffies and ctxt over SECONDS with nothing running
idle() {
	local s0 s1

	read -r -a s0 <<<"$(stat_now)"
	sleep "$1"
	read -r -a s1 <<<"$(stat_now)"
	echo "$((s1[0] - s0[0])) $((s1[1] - s0[1]))"
}

nginx_conf() {
	mkdir -p "$B/ngx/logs" "$B/ngx/tmp"
	cat >"$B/ngx/nginx.conf" <<EOF
worker_processes $(nproc);
daemon on;
pid $B/ngx/nginx.pid;
error_log $B/ngx/logs/error.log warn;
user root;
events { worker_connections 1024; }
http {
	access_log off;
	sendfile $1;
	tcp_nopush on;
	keepalive_requests 1000000;
	client_body_temp_path $B/ngx/tmp/body;
	proxy_temp_path $B/ngx/tmp/proxy;
	fastcgi_temp_path $B/ngx/tmp/fastcgi;
	uwsgi_temp_path $B/ngx/tmp/uwsgi;
	scgi_temp_path $B/ngx/tmp/scgi;
	types { video/mp2t ts; }
	server {
		listen 127.0.0.1:8081;
		root $B/www;
	}
}
EOF
}

# run NAME URL: one measured load; appends "NAME ..." to $B/results
run() {
	local name=$1 url=$2 r

	curl -sS -o /dev/null "$url" || die "$name does not serve $url"
	sleep 2
	r=$(load "$url")
	log "# $name: seconds client_jiffies busy_jiffies ctxt complete_downloads: $r"
	echo "$name $r" >>"$B/results"
}

: >"$OUT"
log "# bench/http.sh: $(uname -r), $(nproc) CPUs, HZ=$HZ, ${MOVIE_MIB} MiB movie,"
log "# $CLIENTS curl clients x $PER_CLIENT downloads = $TOTAL bytes per server"

mkdir -p "$B/www"
head -c "$MOVIE_BYTES" /dev/urandom >"$B/www/movie.ts"
chmod -R a+rX "$B"

modprobe -q -a ib_core rdma_cm
insmod "$REPO/kmod/kvod.ko" || die "cannot load kvod.ko"
"$KVODCTL" add movie.ts "$B/www/movie.ts" || die "cannot add the movie"
"$KVODCTL" listen http 127.0.0.1:8080 || die "cannot listen"
run kvod http://127.0.0.1:8080/movie.ts
"$KVODCTL" unlisten http 127.0.0.1:8080

# shellcheck source=selftests/lib/rdma.sh
. "$REPO/selftests/lib/rdma.sh"
rxe_setup || die "cannot set up rxe"
"$KVODCTL" listen rdma "$RXE_ADDR:$RXE_PORT" || die "cannot listen on RDMA"
"$REPO/tools/kvod-proxy" -f --listen 127.0.0.1:8554 \
	"rdma://$RXE_ADDR:$RXE_PORT" 2>"$B/proxy.log" &
proxy=$!
sleep 2
p0=$(task_jiffies "$proxy")
run kvod-proxy http://127.0.0.1:8554/movie.ts
p1=$(task_jiffies "$proxy")
echo "$((p1 - p0))" >"$B/proxy-jiffies"
log "# kvod-proxy process: $((p1 - p0)) jiffies (utime + stime)"
kill "$proxy"
wait "$proxy"
"$KVODCTL" unlisten rdma "$RXE_ADDR:$RXE_PORT"
rxe_teardown
rmmod kvod

for mode in on off; do
	nginx_conf "$mode"
	nginx -c "$B/ngx/nginx.conf" -p "$B/ngx" -e "$B/ngx/logs/error.log" ||
		die "nginx does not start"
	[ "$mode" = on ] && name=nginx-sf || name=nginx-copy
	run "$name" http://127.0.0.1:8081/movie.ts
	kill "$(cat "$B/ngx/nginx.pid")"
	sleep 2
done

# The idle baseline, as long as the longest run.
secs=$(awk '{ if ($2 > m) m = $2 } END { printf "%d", m + 1 }' "$B/results")
read -r idle_busy idle_ctxt <<<"$(idle "$secs")"
log "# idle baseline over ${secs} s: $idle_busy busy jiffies, $idle_ctxt context switches"

log ""
awk -v hz="$HZ" -v ib="$idle_busy" -v ic="$idle_ctxt" -v is="$secs" \
    -v total="$TOTAL" -v movie="$MOVIE_BYTES" \
    -v pj="$(cat "$B/proxy-jiffies")" '
	{
		t = $2
		srv = ($4 - ib * t / is) / hz
		cli = $3 / hz / (total / 1e9)
		cs = $5 - ic * t / is
		gb = total / 1e9
		cpu[$1] = srv / gb; ctx[$1] = cs / gb
		printf "%-11s %6.1f s  %6.1f MB/s  %6.2f CPU-s/GB  %7.0f ctxsw/GB  (curl %5.2f CPU-s/GB)  %s/%d complete\n",
			$1, t, total / t / 1e6, cpu[$1], ctx[$1], cli, $6, total / movie
	}
	END {
		gb = total / 1e9
		printf "kvod-proxy process alone: %.2f CPU-s/GB\n", pj / hz / gb
		printf "\nkvod / nginx-sf:          CPU %.2fx   ctxsw %.2fx\n", cpu["kvod"] / cpu["nginx-sf"], ctx["kvod"] / ctx["nginx-sf"]
		printf "kvod / nginx-copy:        CPU %.2fx   ctxsw %.2fx\n", cpu["kvod"] / cpu["nginx-copy"], ctx["kvod"] / ctx["nginx-copy"]
		printf "kvod-proxy / kvod:        CPU %.2fx   ctxsw %.2fx\n", cpu["kvod-proxy"] / cpu["kvod"], ctx["kvod-proxy"] / ctx["kvod"]
		printf "kvod-proxy / nginx-copy:  CPU %.2fx   ctxsw %.2fx\n", cpu["kvod-proxy"] / cpu["nginx-copy"], ctx["kvod-proxy"] / ctx["nginx-copy"]
	}' "$B/results" | tee -a "$OUT"
rm -rf "$B"
