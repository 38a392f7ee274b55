#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The readers' works never wait for storage (Documentation/kvod.rst,
# "Titles in the page cache"; DOC: Cursor waits in kmod/cursor.c). The
# library guest's disk is mounted through dm-delay (lib/library.sh), whose
# reads then take DELAY_MS each. A hot title, pinned, is played by an HTTP
# player (kvod-fetch --rate) while cold titles, left in their files with
# their page cache dropped, are read by HTTP readers and pushed. The cold
# readers' and the pushes' bytes must be exact; the hot player may have
# no more late chunks than when it played alone but one in 32 (the CPU
# noise of a TCG guest, below); and the probe of the
# readers' works (lib/trace.sh, wq_probe_on: every run of conn_work and
# push_work, from the workqueue tracepoints) must see them run, none for
# BOUND_MS or more, half the delay. The control proves that the probe can
# see a work that waits for storage: with the cursor_sync test knob set,
# the readers' works wait for the disk in place, as a naive server's
# would, and the same probe must see a run of at least 90% of the delay
# (dm-delay holds a read at least the delay, less a jiffy). The hot
# player's late chunks there are only reported: the workqueue runs the
# hot connection's work on another worker while one sleeps.
#
# guest: library

HERE=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
# shellcheck source=selftests/lib/http.sh
. "$HERE/../lib/http.sh"
# shellcheck source=selftests/lib/trace.sh
. "$HERE/../lib/trace.sh"
# shellcheck source=selftests/lib/library.sh
. "$HERE/../lib/library.sh"

FETCH=$KVOD_BIN/kvod-fetch
SCALE=${KVOD_TIMEOUT_SCALE:-1}
MiB=$((1 << 20))
# A read takes DELAY_MS; a run of a reader's work may take up to BOUND_MS
# (a scheduling delay under TCG, another vCPU's interrupts): half each way.
DELAY_MS=$((400 * SCALE))
BOUND_MS=$((DELAY_MS / 2))
# The hot player: 1 MB/s with 3/4 of the delay in its cache, so that a
# wait for one read would make it late.
RATE=8000000
CACHE_MS=$((DELAY_MS * 3 / 4))
PLAY_BYTES=$((RATE * 12 * SCALE / 8))
CHUNK=65536
# Cold readers: 24 MiB each, about 12 reads' time at 2 MiB per readahead.
COLD_BYTES=$((24 * MiB))
PKT=1316		# a push's payload
NPKT=1000		# packets of each push checked
PUSH_RATE=2000000
PORT0=5010

cleanup() {
	local -a left

	mapfile -t left < <(jobs -p)
	((${#left[@]} == 0)) || kill "${left[@]}" 2>/dev/null
	wq_probe_off 2>/dev/null
	[ ! -e "$SYNC_KNOB" ] || echo 0 >"$SYNC_KNOB"
	http_unlisten "$HTTP_ADDR" "$HTTP_PORT" 2>/dev/null
	kvod_unload
	[ -z "$LIB_MAPPED" ] || library_delay 0
	library_down
	http_cleanup
}
SYNC_KNOB=
trap cleanup EXIT
library_up --delayed

# field WORD TEXT: the number before WORD in kvod-fetch's summary line
field() {
	sed -n "s/.* \([0-9]*\) $1.*/\1/p" <<<"$2"
}

# read_delay: the mapping's read delay in ms, from its table.
read_delay() {
	dmsetup table "$LIB_DM" | awk '{ print $6 }'
}

# runs TAG FUNC: "RUNS MAX_MS" of FUNC in phase TAG's probe ("0 0" if none)
runs() {
	awk -v f="$2" '$1 == f { r = $2 " " $3 } END { print r ? r : "0 0" }' \
		"$TMP/runs.$1"
}

# player OUT: the hot player, its summary line into OUT.
player() {
	"$FETCH" --rate "$RATE" --cache "$CACHE_MS" --chunk "$CHUNK" \
		--length "$PLAY_BYTES" --timeout $((60000 * SCALE)) -o /dev/null \
		"$URL/$hot" 2>"$1"
}

# push_rx TAG PORT...: receive NPKT RTP packets on each 127.0.0.1:PORT
# and write their payloads, in sequence order, to $TMP/push.PORT.TAG;
# prints "listening" once bound, then the packets received per port.
push_rx() {
	"$PY" -S - "$NPKT" "$(time_limit 60)" "$TMP" "$@" <<'PY'
import select, socket, sys, time
n, limit, tmp, tag = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3], sys.argv[4]
rx = {}
for port in map(int, sys.argv[5:]):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    # past rmem_max, so that a slow receiver drops none of the NPKT
    s.setsockopt(socket.SOL_SOCKET, getattr(socket, "SO_RCVBUFFORCE", 33),
                 16 << 20)
    s.bind(("127.0.0.1", port))
    rx[s] = (port, {}, [None])
print("listening", flush=True)
end = time.monotonic() + limit
while time.monotonic() < end and any(len(g) < n for _, g, _ in rx.values()):
    ready, _, _ = select.select(list(rx), [], [], 1)
    for s in ready:
        d = s.recv(2048)
        _, got, first = rx[s]
        seq = int.from_bytes(d[2:4], "big")
        if first[0] is None:
            first[0] = seq
        k = (seq - first[0]) & 0xffff
        if k < n:
            got[k] = d[12:]
for port, got, _ in rx.values():
    with open("%s/push.%d.%s" % (tmp, port, tag), "wb") as f:
        for k in sorted(got):
            f.write(got[k])
    print(port, len(got), flush=True)
PY
}

# phase TAG: from a dropped page cache, with the probe on, the hot player;
# a second into its play, the cold readers and pushes; then wait for
# everyone. Results in $TMP/*.TAG, the probe's in $TMP/runs.TAG.
phase() {
	local tag=$1 i n rx pl
	local -a pids=() ids=()

	sync
	echo 3 >/proc/sys/vm/drop_caches
	wq_probe_on kvod:conn_work kvod:push_work
	player "$TMP/player.$tag" &
	pl=$!
	sleep_nofork 1
	push_rx "$tag" "${ports[@]}" >"$TMP/rx.$tag" &
	rx=$!
	wait_for "$(time_limit 30)" grep -q listening "$TMP/rx.$tag" ||
		ktap_print_msg "push receiver did not start"
	for i in "${!pushed[@]}"; do
		ids+=("$("$KVODCTL" push "${pushed[$i]}" \
			"udp://127.0.0.1:${ports[$i]}" --rate "$PUSH_RATE")")
	done
	for n in "${cold[@]}"; do
		curl -sf --max-time "$(time_limit 120)" -r "0-$((COLD_BYTES - 1))" \
			"$URL/$n" |
			library_check "$n" 0 "$COLD_BYTES" /dev/stdin \
				>"$TMP/cold.$n.$tag" &
		pids+=($!)
	done
	wait "${pids[@]}"
	wait "$rx"
	for n in "${ids[@]}"; do
		[ -z "$n" ] || "$KVODCTL" stop "$n" 2>/dev/null
	done
	wait "$pl"
	wq_runs >"$TMP/runs.$tag"
	wq_probe_off
	ktap_print_msg "$tag: player: $(cat "$TMP/player.$tag")" \
		"$tag: push receiver: $(tr '\n' ' ' <"$TMP/rx.$tag")" \
		"$tag: work runs (name, runs, longest ms):" "$(cat "$TMP/runs.$tag")"
}

# cold_ok TAG: each cold reader's and push's check, "ok" for each good one
cold_ok() {
	local n

	for n in "${cold[@]}"; do
		[ "$(cat "$TMP/cold.$n.$1")" = "ok $COLD_BYTES bytes" ] &&
			echo -n "ok " || echo -n "$n: $(cat "$TMP/cold.$n.$1") "
	done
}

push_ok() {
	local i r

	for i in "${!pushed[@]}"; do
		r=$(library_check "${pushed[$i]}" 0 $((NPKT * PKT)) \
			"$TMP/push.${ports[$i]}.$1")
		[ "$r" = "ok $((NPKT * PKT)) bytes" ] && echo -n "ok " ||
			echo -n "${pushed[$i]}: $r "
	done
}

ktap_header
ktap_plan 12
http_setup
SYNC_KNOB=$(kvod_knob cursor_sync)
[ -e "$SYNC_KNOB" ] || ktap_bail_out "no cursor_sync knob"
echo 1 >"$(kvod_knob add_lazy)" || ktap_bail_out "no add_lazy knob"

# The smallest title is hot (pinned: read at ADD), the next five cold.
mapfile -t T < <(for n in "${!LIB_SIZE[@]}"; do
	echo "${LIB_SIZE[$n]} $n"
done | sort -n | head -n 6 | cut -d' ' -f2)
((${#T[@]} == 6)) || ktap_bail_out "fewer than 6 titles"
hot=${T[0]}
cold=("${T[@]:1:3}")
pushed=("${T[@]:4:2}")
ports=("$PORT0" $((PORT0 + 1)))
"$KVODCTL" add "$hot" "$LIB_DIR/titles/$hot" --pin ||
	ktap_print_msg "kvodctl add --pin $hot failed"
for n in "${cold[@]}" "${pushed[@]}"; do
	"$KVODCTL" add "$n" "$LIB_DIR/titles/$n" ||
		ktap_print_msg "kvodctl add $n failed"
done
lazy=
for n in "${cold[@]}" "${pushed[@]}"; do
	lazy+="$(movie_field "$n" resident) "
done
check_eq "the hot title is in memory, the five cold ones in their files" \
	"yes 0 0 0 0 0 " \
	"$([ "$(movie_field "$hot" resident)" -ge "${LIB_SIZE[$hot]}" ] &&
		echo yes || echo no) $lazy"

player "$TMP/player.alone"
out=$(<"$TMP/player.alone")
ktap_print_msg "alone: player: $out"
base=$(field late "$out")
check_eq "the hot player alone: every chunk" \
	$(((PLAY_BYTES + CHUNK - 1) / CHUNK)) "$(field chunks "$out")"

library_delay "$DELAY_MS" || ktap_print_msg "library_delay $DELAY_MS failed"
check_eq "reads from the disk take $DELAY_MS ms" "$DELAY_MS" "$(read_delay)"

phase async
read -r nconn mconn <<<"$(runs async conn_work)"
read -r npush mpush <<<"$(runs async push_work)"
check_eq "cold HTTP readers byte-exact through the delay" "ok ok ok " \
	"$(cold_ok async)"
check_eq "pushes of cold titles byte-exact through the delay" "ok ok " \
	"$(push_ok async)"
check_ok "the probe saw the readers' works run ($nconn conn_work, $npush push_work)" \
	test "$nconn" -gt 0 -a "$npush" -gt 0
check_ok "no run of a reader's work took $BOUND_MS ms (longest: conn_work $mconn ms, push_work $mpush ms)" \
	test "$mconn" -lt "$BOUND_MS" -a "$mpush" -lt "$BOUND_MS"
# Under TCG the cold readers' own CPU work (curl, the mkpattern checks of
# 72 MiB, a Python receiver) stalls the player's process now and then for
# longer than its cache: 0 to 3 late chunks of 184 were seen, as many with
# the readers' works waiting in place (the control) as without. The probe
# above is what tells a wait for storage; this bounds the player's share
# of the CPU noise to one chunk in 32.
late=$(field late "$(cat "$TMP/player.async")")
chunks=$(field chunks "$(cat "$TMP/player.async")")
slack=$(((${chunks:-0} + 31) / 32))
check_ok "the hot player: at most $slack more late chunks than alone (${late:-?} vs ${base:-?})" \
	test "${late:-$((slack + 1))}" -le $((${base:-0} + slack))

echo 1 >"$SYNC_KNOB"
phase sync
read -r _ mconn <<<"$(runs sync conn_work)"
read -r _ mpush <<<"$(runs sync push_work)"
max=$((mconn > mpush ? mconn : mpush))
ktap_print_msg "control: the hot player had $(field late "$(cat "$TMP/player.sync")") late chunks (alone: $base)"
check_eq "control: cold HTTP readers byte-exact, waiting in place" \
	"ok ok ok " "$(cold_ok sync)"
check_ok "control: the probe sees a run of the delay ($max ms >= 90% of $DELAY_MS ms)" \
	test "$max" -ge $((DELAY_MS * 9 / 10))

echo 0 >"$SYNC_KNOB"
echo 0 >"$(kvod_knob add_lazy)"
library_delay 0 || ktap_print_msg "library_delay 0 failed"
check_eq "cursor_sync and add_lazy off, reads no longer delayed" "0 0 0" \
	"$(cat "$SYNC_KNOB") $(cat "$(kvod_knob add_lazy)") $(read_delay)"
http_unlisten "$HTTP_ADDR" "$HTTP_PORT"
kvod_unload
# The titles' files close as rmmod returns; the umount may still race it.
wait_for "$(time_limit 10)" library_down
rc=$?
check_eq "the disk unmounted and its mapping removed" "0 gone" \
	"$rc $(dmsetup info "$LIB_DM" >/dev/null 2>&1 && echo mapped || echo gone)"
ktap_finish
