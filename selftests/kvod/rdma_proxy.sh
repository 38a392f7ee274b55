#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# kvod-proxy: HTTP players stream from the RDMA server through it. curl
# gets whole movies and ranges byte-exact (across the segment table's
# boundaries), HEAD and 416 and 404 as kvod's own HTTP server answers
# them, keep-alive and several players share one RDMA connection per
# movie, ffprobe decodes an MP4 whose index is at the end (Range
# requests), ffmpeg seeks into the middle, VLC plays it, a player that
# leaves mid-stream does not disturb the rest, a server that goes away gets 502
# with a reason, and the proxy reconnects once it is back; a connect in
# progress stalls no other player, and a server too slow to answer the
# connect gets 504. Out of file descriptors (a low ulimit -n), the proxy
# warns at start, waits for a free one without spinning or flooding its
# log, and serves again once players leave. A movie's connection outlives
# its last player by --linger seconds, then closes, even if the player
# stays connected. A player that asks for Connection: close and sends more
# gets all of the response before the end. Players that find the READ
# queue full take turns.
#
# timeout: 1200
# transports: rxe siw:debug siwlo:debug

# shellcheck source=selftests/lib/ktap.sh
. "$(dirname "$0")/../lib/ktap.sh"
# shellcheck source=selftests/lib/rdma.sh
. "$(dirname "$0")/../lib/rdma.sh"
# shellcheck source=selftests/lib/media.sh
. "$(dirname "$0")/../lib/media.sh"
rdma_test_init

KVOD_PROXY=$KVOD_BIN/kvod-proxy
# The system interpreter: a pyenv shim costs half a minute per start here.
HC=(/usr/bin/python3 -S "$(dirname "$0")/http_client.py")
PROXY=127.0.0.1:8554
PURL=http://$PROXY

proxy_pid=
proxy3=
rdma_on_exit() {
	[ -n "$proxy_pid" ] && kill "$proxy_pid" 2>/dev/null
	[ -n "$proxy3" ] && kill "$proxy3" 2>/dev/null
	wait 2>/dev/null
}

# fetch PATH [CURL_ARGS...]: the body, through the proxy.
fetch() {
	local path=$1

	shift
	curl -sf --max-time "$(time_limit 60)" "$@" "$PURL/$path"
}

# status PATH [CURL_ARGS...]: the HTTP status the proxy answers.
status() {
	local path=$1

	shift
	curl -s -o /dev/null -w '%{http_code}' \
		--max-time "$(time_limit 60)" "$@" "$PURL/$path"
}

# range FILE FIRST LAST: those bytes of FILE.
range() {
	tail -c +$(($2 + 1)) "$1" | head -c $(($3 - $2 + 1))
}

# vlc_frames URL: the video frames VLC remuxes from URL (lib/media.sh).
vlc_frames() {
	vlc_remux "$1" 2>/dev/null >"$RDMA_TMP/vlc.ts"
	frames "$RDMA_TMP/vlc.ts"
}

# cpu_ms PID: the user and system CPU time PID has used, in ms. Fields
# 14 and 15 of /proc/PID/stat, counted after the ")" that ends its name.
cpu_ms() {
	local stat

	stat=$(<"/proc/$1/stat")
	read -r -a stat <<<"${stat##*) }"
	echo $(((stat[11] + stat[12]) * 1000 / $(getconf CLK_TCK)))
}

ktap_header
ktap_plan 32
[ -x "$KVOD_PROXY" ] || ktap_bail_out "$KVOD_PROXY not built (make tools)"
rdma_test_start

MiB=$((1 << 20))
movie_add alpha $((20 * MiB + 4321)) || ktap_bail_out "cannot add a movie"
movie_add beta $((5 * MiB)) || ktap_bail_out "cannot add a movie"
media_into SAMPLE sample.mp4
"$KVODCTL" add sample.mp4 "$SAMPLE" || ktap_bail_out "cannot add sample.mp4"

# The proxy's --timeout per connect step, scaled on slow kernels, but
# over iWARP under 10 s: siw gives up on a server that has not answered
# the connect (its MPA reply) after 10 s (MPAREQ_TIMEOUT), and the slow
# connects below must end by the proxy's timeout, or not at all.
TIMEOUT=$((4000 * ${KVOD_TIMEOUT_SCALE:-1}))
if rdma_iwarp && ((TIMEOUT > 8000)); then
	TIMEOUT=8000
fi
# A linger longer than the test, so that every connection counted below
# is one the proxy needed: on the debug kernel a movie can go unused for
# minutes between two checks.
"$KVOD_PROXY" -f --listen "$PROXY" --chunk 64k --depth 4 \
	--timeout "$TIMEOUT" --linger "$(time_limit 1200)" "$RDMA_URL" \
	2>"$RDMA_TMP/proxy.log" &
proxy_pid=$!
wait_for "$(time_limit 10)" curl -s -o /dev/null "$PURL/" ||
	ktap_bail_out "kvod-proxy does not answer on $PROXY: $(cat "$RDMA_TMP/proxy.log")"

size=$(stat -c %s "$RDMA_TMP/alpha")
head=$(curl -s -I "$PURL/alpha" | tr -d '\r')
check_eq "HEAD: 200, the movie's length, byte ranges" \
	"HTTP/1.1 200 OK|Accept-Ranges: bytes|Content-Length: $size" \
	"$(grep -E '^(HTTP/|Content-Length|Accept-Ranges)' <<<"$head" | paste -sd'|')"
check_eq "GET: the whole movie, byte-exact" "$(sha256sum <"$RDMA_TMP/alpha")" \
	"$(fetch alpha | sha256sum)"

# Ranges across every segment boundary the server's table has, over
# siw some twenty: one curl asks for them all, one after another on its
# connection, and cmp compares each with the file in place.
ranges=() args=() limit=$(time_limit 60)
for o in $("$RDMA_CLIENT" "$RXE_ADDR" table alpha | awk '/^seg:/ { print $2 }') \
	$((7 * MiB + 1)) $((size - 10)); do
	first=$((o > 70000 ? o - 70000 : 0))
	last=$((first + 200000 < size ? first + 200000 : size - 1))
	((${#ranges[@]} == 0)) || args+=(--next)
	args+=(-sf --max-time "$limit" -r "$first-$last"
		-o "$RDMA_TMP/range${#ranges[@]}" "$PURL/alpha")
	ranges+=("$first-$last")
done
curl "${args[@]}"
declare -A got=()
while read -r f n; do
	got[$f]=$n
done < <(stat -c '%n %s' "$RDMA_TMP"/range* 2>/dev/null)
bad=
for i in "${!ranges[@]}"; do
	first=${ranges[i]%-*} len=$((${ranges[i]#*-} - ${ranges[i]%-*} + 1))
	[ "${got[$RDMA_TMP/range$i]:-}" = "$len" ] &&
		cmp -s -n "$len" -i "$first:0" "$RDMA_TMP/alpha" "$RDMA_TMP/range$i" ||
		bad+=" ${ranges[i]}"
done
ktap_print_msg "${#ranges[@]} ranges"
check_eq "ranges across the segment boundaries, byte-exact" "" "$bad"
check_eq "Range: 206 and its Content-Range" \
	"HTTP/1.1 206 Partial Content|Content-Range: bytes 100-199/$size" \
	"$(curl -s -D - -o /dev/null -r 100-199 "$PURL/alpha" | tr -d '\r' |
		grep -E '^(HTTP/|Content-Range)' | paste -sd'|')"
check_eq "suffix range: the last 1000 bytes" \
	"$(tail -c 1000 "$RDMA_TMP/alpha" | sha256sum)" \
	"$(fetch alpha -r -1000 | sha256sum)"
check_eq "a range past the end: 416" 416 "$(status alpha -r "$size-")"
check_eq "an unknown movie: 404; an invalid name: 404" "404 404" \
	"$(status nosuchmovie) $(status ..)"
check_eq "a method other than GET and HEAD: 405" 405 \
	"$(status alpha -X DELETE)"

# "Connection: close" with more bytes sent after the request, read slowly:
# the proxy must read them before it closes, or the close resets the
# connection and the reset throws away what its send queue still holds.
r=$("${HC[@]}" reader "${PROXY%:*}" "${PROXY#*:}" alpha "$RDMA_TMP/alpha" \
	--close --range 0-$((4 * MiB - 1)) --rcvbuf 65536 --chunk 65536 \
	--interval 0.005 --trail 'GET /beta HTTP/1.1\r\nHost: t\r\n\r\n')
check_eq "Connection: close and another request after it, read slowly: the whole body, then the end" \
	"complete $((4 * MiB)) of $((4 * MiB))" "${r% bytes in *}"

# Keep-alive: three requests on one TCP connection (curl --next keeps it).
accepted=$(rdma_counter accepted)
out=$(curl -s -w '%{num_connects}\n' -o "$RDMA_TMP/k1" "$PURL/beta" \
	--next -s -w '%{num_connects}\n' -r 0-99 -o "$RDMA_TMP/k2" "$PURL/beta" \
	--next -s -w '%{num_connects}\n' -o "$RDMA_TMP/k3" "$PURL/alpha")
range "$RDMA_TMP/beta" 0 99 >"$RDMA_TMP/beta.0-99"
bad=
for k in k1:beta k2:beta.0-99 k3:alpha; do
	cmp "$RDMA_TMP/${k%%:*}" "$RDMA_TMP/${k#*:}" >&2 || bad+=" ${k%%:*}"
done
check_eq "keep-alive: three responses on one connection, byte-exact" \
	"1 0 0|" "$(paste -sd' ' <<<"$out")|$bad"

# Several players at once, on two movies.
pids=()
for i in 1 2 3 4; do
	fetch "$([ $((i % 2)) = 0 ] && echo alpha || echo beta)" \
		-o "$RDMA_TMP/p$i" &
	pids+=("$!")
done
wait "${pids[@]}"
bad=
for i in 1 2 3 4; do
	cmp "$RDMA_TMP/p$i" "$RDMA_TMP/$([ $((i % 2)) = 0 ] && echo alpha || echo beta)" >&2 ||
		bad+=" p$i"
done
check_eq "four players at once on two movies, byte-exact" "" "$bad"
# One connection was new (beta's), and each movie has one, held by the
# proxy; the proxy's log names any connection that died in between.
out="$(($(rdma_counter accepted) - accepted)) new; alpha $(movie_clients alpha), beta $(movie_clients beta)"
[ "$out" = "1 new; alpha 1, beta 1" ] ||
	ktap_print_msg "proxy log: $(tr '\n' ' ' <"$RDMA_TMP/proxy.log")"
check_eq "every request for a movie shared one RDMA connection" \
	"1 new; alpha 1, beta 1" "$out"

# A player that leaves after 1 MiB; the next one is served in full.
fetch alpha | head -c "$MiB" >/dev/null
check_eq "after a player left mid-stream, the next gets it all" \
	"$(sha256sum <"$RDMA_TMP/alpha")" "$(fetch alpha | sha256sum)"

# --linger: a second proxy keeps beta's connection LINGER seconds after
# its one player, then closes it (the first proxy holds one of its own).
LINGER=$((5 * ${KVOD_TIMEOUT_SCALE:-1}))
PROXY3=127.0.0.1:8556
"$KVOD_PROXY" -f --listen "$PROXY3" --linger "$LINGER" \
	--idle-timeout "$(time_limit 600)" "$RDMA_URL" 2>"$RDMA_TMP/proxy3.log" &
proxy3=$!
wait_for "$(time_limit 10)" curl -s -o /dev/null "http://$PROXY3/" ||
	ktap_bail_out "kvod-proxy does not answer on $PROXY3: $(cat "$RDMA_TMP/proxy3.log")"
base=$(movie_clients beta)
curl -sf -r 0-99 -o /dev/null "http://$PROXY3/beta"
start=$SECONDS
check_eq "--linger $LINGER: the movie's connection outlives its player" \
	$((base + 1)) "$(movie_clients beta)"
wait_test "$(time_limit 30)" = "$base" movie_clients beta
check_eq "... and is closed after it ($((SECONDS - start)) s)" \
	"$base gone" "$(movie_clients beta) $( ((SECONDS - start + 1 >= LINGER)) && echo gone || echo early)"
# A player that stays connected, idle, keeps it no longer: the buffer it
# had registered on the connection is let go of (tools/proxy-client.c,
# client_rings_release()), and its next request connects anew.
exec 8<>"/dev/tcp/${PROXY3%:*}/${PROXY3#*:}"
printf 'GET /beta HTTP/1.1\r\nHost: t\r\nRange: bytes=0-99\r\n\r\n' >&8
# response_head: the status line of the response on fd 8, its fields
# read up to the empty line.
response_head() {
	local line status=

	while IFS= read -r -t "$(time_limit 30)" line <&8; do
		line=${line%$'\r'}
		[ -z "$status" ] && status=$line
		[ -z "$line" ] && break
	done
	echo "$status"
}
first=$(response_head)
head -c 100 <&8 >/dev/null
start=$SECONDS
up=$(movie_clients beta)
wait_test "$(time_limit 30)" = "$base" movie_clients beta
check_eq "an idle keep-alive player does not keep a movie's connection past --linger ($((SECONDS - start)) s)" \
	"206: $((base + 1)), then $base, not early" \
	"${first:9:3}: $up, then $(movie_clients beta), $( ((SECONDS - start + 1 >= LINGER)) && echo not early || echo early)"
printf 'GET /beta HTTP/1.1\r\nHost: t\r\nRange: bytes=100-199\r\n\r\n' >&8
check_eq "... and its next request on that connection is served (a new connection)" \
	"HTTP/1.1 206 Partial Content $((base + 1))" "$(response_head) $(movie_clients beta)"
exec 8>&-
kill "$proxy3"
wait "$proxy3"
proxy3=

# --qp-depth 1: one READ in flight for all the players of a movie, so
# every completion frees room for one. Two players, the second started
# once the first has 1 MiB: they take turns (tools/proxy-client.c,
# client_room_queue()), so the first finishes first. Were the room given
# to the newest player, as it was, the first would get none until the
# second was done. 4 KiB READs of beta (5 MiB), so that the first is far
# from done when the second starts; alpha's 20 MiB in 4 KiB READs, one
# at a time, took four minutes on the debug kernel.
PROXY3=127.0.0.1:8557
"$KVOD_PROXY" -f --listen "$PROXY3" --chunk 4k --depth 1 --qp-depth 1 \
	"$RDMA_URL" 2>"$RDMA_TMP/proxy4.log" &
proxy3=$!
wait_for "$(time_limit 10)" curl -s -o /dev/null "http://$PROXY3/" ||
	ktap_bail_out "kvod-proxy does not answer on $PROXY3: $(cat "$RDMA_TMP/proxy4.log")"
: >"$RDMA_TMP/order"
# turn N: player N's whole beta into $RDMA_TMP/turnN, then its name in
# the order file.
turn() {
	curl -sf --max-time "$(time_limit 300)" -o "$RDMA_TMP/turn$1" \
		"http://$PROXY3/beta" && echo "$1" >>"$RDMA_TMP/order"
}
turn 1 &
t1=$!
wait_test "$(time_limit 60)" -ge "$MiB" size_of "$RDMA_TMP/turn1"
had=$(size_of "$RDMA_TMP/turn1")
turn 2 &
wait "$t1" "$!"
bad=
for i in 1 2; do
	cmp "$RDMA_TMP/turn$i" "$RDMA_TMP/beta" >&2 || bad+=" turn$i"
done
ktap_print_msg "the first player had $had bytes when the second started"
check_eq "--qp-depth 1: two players of one movie take turns, the first started finishes first, both byte-exact" \
	"1 2|" "$(paste -sd' ' "$RDMA_TMP/order")|$bad"
kill "$proxy3"
wait "$proxy3"
proxy3=

n=$(frames "$SAMPLE")
# (the file's count first shown to be one: two failures would be equal)
check_eq "ffprobe through the proxy: same frames as the file (moov at end; $n)" \
	"decodes $n" "$([ "${n:-0}" -gt 0 ] && echo decodes) $(frames "$PURL/sample.mp4")"
check_ok "ffmpeg seeks into the middle (-ss 2) through the proxy" \
	ffmpeg -v error -ss 2 -i "$PURL/sample.mp4" -f null -

# VLC through the proxy remuxes as many frames as from the file itself
# (lib/media.sh: as make selftests counted them, with the same VLC).
n=$(vlc_reference)
check_eq "VLC (cvlc) through the proxy: as many frames as from the file ($n)" \
	"decodes $n" "$([ "${n:-0}" -gt 0 ] && echo decodes) $(vlc_frames "$PURL/sample.mp4")"

# The server goes away (UNLISTEN disconnects its clients), and comes back.
"$KVODCTL" unlisten rdma "$RXE_EP"
wait_for "$(time_limit 10)" grep -q '^kvod-proxy: beta: ' \
	"$RDMA_TMP/proxy.log"
check_eq "server gone: 502, and the reason in the body" "502 yes" \
	"$(curl -s -o "$RDMA_TMP/body" -w '%{http_code}' "$PURL/beta") $(grep -qE '^502 Bad Gateway: .+' "$RDMA_TMP/body" && echo yes)"
ktap_print_msg "$(cat "$RDMA_TMP/body")"
"$KVODCTL" listen rdma "$RXE_EP" || ktap_bail_out "cannot listen again"
check_eq "server back: the proxy reconnects, byte-exact" \
	"$(sha256sum <"$RDMA_TMP/beta")" "$(fetch beta | sha256sum)"

# A slow connect stalls no other player: the server's setup work sleeps
# (a kvod test knob) for 3/4 of the proxy's --timeout, and while the
# connect for alpha (closed with the others at UNLISTEN) waits for it, a
# range of beta, whose connection is open, is answered.
delay=$(kvod_knob rdma_setup_delay_ms)
echo $((TIMEOUT * 3 / 4)) >"$delay"
curl -s -o "$RDMA_TMP/slow" -r 1000-70999 "$PURL/alpha" &
slow=$!
sleep 0.5
curl -s -o "$RDMA_TMP/quick" -r 5000-69999 "$PURL/beta"
check_eq "a connect in progress (alpha) stalls no other player (beta)" \
	"exact waiting" \
	"$(cmp -s "$RDMA_TMP/quick" <(tail -c +5001 "$RDMA_TMP/beta" | head -c 65000) && echo exact) $(kill -0 "$slow" 2>/dev/null && echo waiting)"
wait "$slow"
check_eq "and the slow connect then answers, byte-exact" "yes" \
	"$(cmp -s "$RDMA_TMP/slow" <(tail -c +1001 "$RDMA_TMP/alpha" | head -c 70000) && echo yes)"

# The server answers too late: its setup work sleeps for twice the
# proxy's --timeout, so a new connect (the proxy's alpha connection is
# dropped first) times out waiting for the answer.
"$KVODCTL" unlisten rdma "$RXE_EP"
wait_test "$(time_limit 10)" -ge 2 grep -c '^kvod-proxy: alpha: ' \
	"$RDMA_TMP/proxy.log"
"$KVODCTL" listen rdma "$RXE_EP" || ktap_bail_out "cannot listen again"
echo $((TIMEOUT * 2)) >"$delay"
check_eq "server too slow to answer: 504, and the reason in the body" \
	"504 yes" \
	"$(curl -s -o "$RDMA_TMP/body" -w '%{http_code}' "$PURL/alpha") $(grep -qE '^504 Gateway Timeout: .+' "$RDMA_TMP/body" && echo yes)"
ktap_print_msg "$(cat "$RDMA_TMP/body")"
echo 0 >"$delay"
wait_test "$(time_limit 60)" = 0 movie_clients alpha
check_eq "the server releases the connection the proxy gave up on" 0 \
	"$(movie_clients alpha)"

kill "$proxy_pid"
wait "$proxy_pid"
rc=$?
proxy_pid=
check_eq "SIGTERM: the proxy exits 0" 0 "$rc"
wait_test 10 = 0 rdma_counter active
check_eq "its RDMA connections are gone from the server" 0 \
	"$(rdma_counter active)"
ktap_print_msg "proxy log: $(tr '\n' ' ' <"$RDMA_TMP/proxy.log")"

# Out of descriptors: a proxy allowed 64 of them (the hard limit too, so
# it cannot raise it) and 80 players, who only connect. Past about 59 of
# them accept4() fails with EMFILE and leaves the rest in the backlog; the
# proxy must then wait for a descriptor, neither spinning on its
# level-triggered listening socket nor logging each failure.
PROXY2=127.0.0.1:8555
(ulimit -n 64 && exec "$KVOD_PROXY" -f --listen "$PROXY2" --chunk 64k \
	--depth 4 --timeout "$TIMEOUT" "$RDMA_URL" 2>"$RDMA_TMP/proxy2.log") &
proxy_pid=$!
wait_for "$(time_limit 10)" curl -s -o /dev/null "http://$PROXY2/" ||
	ktap_bail_out "kvod-proxy does not answer on $PROXY2: $(cat "$RDMA_TMP/proxy2.log")"
check_eq "RLIMIT_NOFILE too low for --max-clients: a warning at start" 1 \
	"$(grep -c '^kvod-proxy: --max-clients 1024 needs about [0-9]* descriptors, but RLIMIT_NOFILE is 64' "$RDMA_TMP/proxy2.log")"
fds=()
for i in $(seq 80); do
	exec {fd}<>"/dev/tcp/${PROXY2%:*}/${PROXY2#*:}" && fds+=("$fd")
done
wait_for "$(time_limit 10)" grep -q '^kvod-proxy: accept: ' \
	"$RDMA_TMP/proxy2.log"
cpu=$(cpu_ms "$proxy_pid")
sleep 3
cpu=$(($(cpu_ms "$proxy_pid") - cpu))
logged=$(grep -c '^kvod-proxy: accept: ' "$RDMA_TMP/proxy2.log")
ktap_print_msg "${#fds[@]} players connected; in 3 s the proxy used $cpu ms of CPU and logged $logged accept failure(s)"
check_eq "at EMFILE: no busy loop (< 300 ms of CPU in 3 s), one log line" \
	"yes yes" \
	"$([ "$cpu" -lt 300 ] && echo yes) $([ "$logged" -ge 1 ] && [ "$logged" -le 2 ] && echo yes)"
for fd in "${fds[@]}"; do
	exec {fd}>&-
done
# The waiting players are accepted and find their peer gone: the proxy is
# down to its own few descriptors again.
wait_test "$(time_limit 10)" -le 8 \
	sh -c "ls /proc/$proxy_pid/fd | wc -l"
check_eq "once players leave, a fresh one is served, byte-exact" \
	"$(sha256sum <"$RDMA_TMP/beta")" \
	"$(curl -sf --max-time "$(time_limit 60)" "http://$PROXY2/beta" | sha256sum)"
kill "$proxy_pid"
wait "$proxy_pid"
proxy_pid=
ktap_print_msg "proxy log: $(head -c 2000 "$RDMA_TMP/proxy2.log" | tr '\n' ' ')"

rdma_test_stop
ktap_finish
