#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Load and defences: 200 concurrent downloads byte-exact; 1000 idle
# keep-alive connections held open at no CPU cost (not one run of a
# connection's work while they idle, counted by a kprobe, and no more busy
# CPU than an idle guest, within noise); a client trickling one
# byte a second is cut off by the header deadline while a normal client is
# served; afterwards every gauge is back to zero.
#
# timeout: 600

HERE=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
# shellcheck source=selftests/lib/http.sh
. "$HERE/../lib/http.sh"

PARAMS=/sys/module/kvod/parameters
CONCURRENT=200
IDLE=1000

T=/sys/kernel/tracing

# busy_jiffies: CPU time not idle or iowait, all CPUs, from /proc/stat.
busy_jiffies() {
	awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 }' /proc/stat
}

ktap_header
ktap_plan 12
ulimit -n 8192
http_setup
http_movie s.ts 1 || ktap_bail_out "cannot register s.ts"

# The deadlines are for clients, not for this guest: on the debug kernel
# curl took 40 s and more to send 200 request heads (the late ones got
# 408 bodies), and opening 1000 connections longer than the 60 s an idle
# one lives. Widen them for the parts that measure something else; the
# header deadline has its own check below (the trickle client).
echo 600 >"$PARAMS/http_header_timeout"
echo 600 >"$PARAMS/http_idle_timeout"

# 200 concurrent downloads, one curl process, 200 connections at once.
args=() files=()
for ((i = 1; i <= CONCURRENT; i++)); do
	args+=(-o "$TMP/c$i" "$URL/s.ts")
	files+=("$TMP/c$i")
done
acc=$(http_counter accepted)
curl -sSf -Z --parallel-max $CONCURRENT --parallel-immediate "${args[@]}"
want=$(sha "$TMP/s.ts")
good=$(sha_count "$want" "${files[@]}")
rm -f "${files[@]}"
check_eq "$CONCURRENT concurrent downloads byte-exact" $CONCURRENT "$good"
check_eq "... on $CONCURRENT connections" $((acc + CONCURRENT)) "$(http_counter accepted)"

# 1000 idle keep-alive connections: held, and no CPU spent on them.
[ -d "$T/events" ] || mount -t tracefs nodev "$T"
echo 'p:kvodidle/work kvod:conn_work' >>"$T/kprobe_events" ||
	ktap_bail_out "cannot probe conn_work"
b0=$(busy_jiffies)
sleep 10
base=$(($(busy_jiffies) - b0))
# They idle until told (a fixed time raced the steps below on a loaded host).
"${HC[@]}" idle "$HTTP_ADDR" "$HTTP_PORT" s.ts $IDLE "$TMP/idle.go" >"$TMP/idle" &
idle_pid=$!
wait_for 240 grep -q opened "$TMP/idle"
sleep 2
echo >"$T/trace"
echo 1 >"$T/events/kvodidle/enable"
b0=$(busy_jiffies)
sleep 10
b1=$(busy_jiffies)
runs=$(grep -c ' work: ' "$T/trace")
# The probe's positive control: one request, and it counts runs.
curl -sSf -o /dev/null "$URL/s.ts"
seen=$(($(grep -c ' work: ' "$T/trace") - runs))
echo 0 >"$T/events/kvodidle/enable"
echo '-:kvodidle/work' >>"$T/kprobe_events"
active=$(http_counter active)
touch "$TMP/idle.go"
wait "$idle_pid"
check_eq "$IDLE idle keep-alive connections open at once" $IDLE "$active"
check_eq "... and all still open after idling" "alive $IDLE" "$(tail -n1 "$TMP/idle")"
hz=$(getconf CLK_TCK)
ktap_print_msg "busy jiffies over 10 s: $((b1 - b0)) with $IDLE idle connections, $base without (HZ=$hz, $(nproc) CPUs)"
ktap_print_msg "runs of a connection's work: $runs while they idled, $seen for one request after"
check_eq "... not one run of a connection's work while they idle (a request's are seen)" \
	"0 yes" "$runs $([ "$seen" -gt 0 ] && echo yes)"
# The noise of an emulated guest grows on the debug kernel, and with a
# second guest on the host: 5% there is 5% times KVOD_TIMEOUT_SCALE.
# The probe above is the exact check.
pct=$(time_limit 5)
check_ok "... no more busy CPU than without them, within $pct% of one CPU" \
	test $(((b1 - b0 - base) * 100)) -le $((hz * 10 * pct))

# The trickle client against the header deadline, next to a normal one.
echo 3 >"$PARAMS/http_header_timeout"
to=$(http_counter timeouts)
"${HC[@]}" trickle "$HTTP_ADDR" "$HTTP_PORT" s.ts >"$TMP/trickle" &
trickle_pid=$!
sleep 1
curl -sS -o "$TMP/out" "$URL/s.ts"
check_eq "a normal client is served while one trickles" "$want" "$(sha "$TMP/out")"
wait "$trickle_pid"
r=$(cat "$TMP/trickle")
ktap_print_msg "trickle: $r"
check_eq "the trickler gets 408" "HTTP/1.1 408 Request Timeout" "${r% after *}"
secs=${r##* after }
check_ok "... within the deadline plus slack ($secs)" test "${secs%%.*}" -le "$(time_limit 10)"
check_eq "... counted as a timeout" $((to + 1)) "$(http_counter timeouts)"
echo 10 >"$PARAMS/http_header_timeout"
echo 60 >"$PARAMS/http_idle_timeout"

wait_test 30 = 0 http_counter active
check_eq "no connection left" 0 "$(http_counter active)"
check_eq "no active client left on the movie" 0 "$(movie_clients s.ts)"

http_unlisten "$HTTP_ADDR" "$HTTP_PORT"
kvod_unload
ktap_finish
