#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# kvod-fetch against the in-kernel RDMA server on Soft-RoCE: byte-exact
# whole movies and random ranges (chunks straddling segments), 64 READs
# outstanding with their requests cut across TCP segments, 16
# concurrent clients, player mode with seeks, a SIGTERM mid-transfer, a
# player whose server stalls (siw), a movie over 1 GiB that needs several
# MRs, DEL while clients read, and a SIGTERM while the connect waits.
#
# timeout: 900
# transports: rxe siw siwlo

# shellcheck source=selftests/lib/ktap.sh
. "$(dirname "$0")/../lib/ktap.sh"
# shellcheck source=selftests/lib/rdma.sh
. "$(dirname "$0")/../lib/rdma.sh"
rdma_test_init

# catches PID SIG: process PID has a handler for signal number SIG
catches() {
	local mask

	mask=$(awk '$1 == "SigCgt:" { print $2 }' "/proc/$1/status" 2>/dev/null)
	[ -n "$mask" ] && (((16#$mask >> ($2 - 1)) & 1))
}

# lo_cut: lo as a 1500-byte link with no segmentation offloads and 5 ms
# of delay, so that TCP packs the READ requests it has queued (50 bytes
# each on siw) into full segments and cuts some of their headers in
# three; lo_uncut puts lo back as it was. siw's connections run over lo
# (the server's address is local); rxe's do not touch lo's TCP.
LO_MTU=
LO_OFFLOADS=
lo_cut() {
	LO_MTU=$(cat /sys/class/net/lo/mtu) || return 1
	LO_OFFLOADS=$(ethtool -k lo | awk -F': ' '
		$1 == "tcp-segmentation-offload" { printf "tso %s ", $2 }
		$1 == "generic-segmentation-offload" { printf "gso %s ", $2 }
		$1 == "generic-receive-offload" { printf "gro %s ", $2 }')
	modprobe -q sch_netem 2>/dev/null	# built in on the debug kernel
	ip link set lo mtu 1500 &&
		ethtool -K lo tso off gso off gro off &&
		tc qdisc replace dev lo root netem delay 5ms
}
lo_uncut() {
	[ -n "$LO_MTU" ] || return 0
	tc qdisc del dev lo root 2>/dev/null
	# shellcheck disable=SC2086 # "feature state" pairs
	[ -z "$LO_OFFLOADS" ] || ethtool -K lo $LO_OFFLOADS 2>/dev/null
	ip link set lo mtu "$LO_MTU"
	LO_MTU=
}
rdma_on_exit() {
	lo_uncut
}

ktap_header
ktap_plan 17
rdma_test_start

MiB=$((1 << 20))
movie_add small $((10 * MiB + 12345)) || ktap_bail_out "cannot add a movie"
movie_add tiny 1000 || ktap_bail_out "cannot add a movie"
want=$(sha256sum <"$RDMA_TMP/small")

got=$("$KVOD_FETCH" -q "$RDMA_URL/small" | sha256sum)
check_eq "whole movie, byte-exact" "$want" "$got"

got=$("$KVOD_FETCH" -q --chunk 4k --depth 1 "$RDMA_URL/tiny" | sha256sum)
check_eq "movie smaller than a page" "$(sha256sum <"$RDMA_TMP/tiny")" "$got"

# Random ranges with odd chunk sizes, so READs start and end mid-page and
# the planner must split at segment boundaries.
bad=
n=$(rounds 12)
for ((i = 0; i < n; i++)); do
	off=$((RANDOM * RANDOM % (10 * MiB)))
	len=$((RANDOM * 97 % (10 * MiB + 12345 - off) + 1))
	chunk=$(((RANDOM % 300) + 1))k
	depth=$(((RANDOM % 32) + 1))
	w=$(tail -c +$((off + 1)) "$RDMA_TMP/small" | head -c "$len" | sha256sum)
	g=$("$KVOD_FETCH" -q --offset "$off" --length "$len" --chunk "$chunk" \
		--depth "$depth" "$RDMA_URL/small" | sha256sum)
	[ "$w" = "$g" ] || bad+=" off=$off len=$len chunk=$chunk depth=$depth"
done
check_eq "$n random ranges, byte-exact" "" "$bad"

# 6.12's siw wrote past a header that came in three pieces and crashed
# (Documentation/rdma.rst, "Deep READ queues"; selftests/qemu/siw/0003).
# Each 4 KiB READ is a request; the debug kernel, whose KASAN sees such a
# write the first time, takes a quarter of them (640).
desc="64 READs outstanding, their requests cut across 1500-byte segments: byte-exact"
len=$(((10 * MiB + 12345) / ${KVOD_TIMEOUT_SCALE:-1}))
if lo_cut; then
	got=$(timeout "$(time_limit 120)" "$KVOD_FETCH" -q --chunk 4k --depth 64 \
		--length "$len" "$RDMA_URL/small" | sha256sum)
	lo_uncut
	check_eq "$desc" "$(head -c "$len" "$RDMA_TMP/small" | sha256sum)" "$got"
else
	lo_uncut
	ktap_fail "$desc (lo could not be set up: MTU, offloads or netem)"
fi

segs=$("$RDMA_CLIENT" "$RXE_ADDR" table small | grep -c '^seg:')
ktap_print_msg "small: $segs segment(s)"
check_eq "segment table READ by the hostile client agrees" "$want" \
	"$("$RDMA_CLIENT" "$RXE_ADDR" read small 0 $((10 * MiB + 12345)) | sha256sum)"

# 16 clients at once, each given 15 s (60 s on the debug kernel, where
# the last ones wait longer than kvod-fetch's default 5 s for the answer,
# as kvod sets up 4 at a time, and over siw a READ may wait more than
# 20 s behind the others' 16 x 16 READs of 256 KiB). On a slow kernel 8
# clients, still twice the 4 set up at a time, each take the movie's
# first 2 MiB and a bit, a dozen READs all in flight with the others'.
len=$((10 * MiB + 12345)) sum=$want nclients=16
if [ "${KVOD_TIMEOUT_SCALE:-1}" -gt 1 ]; then
	len=$((2 * MiB + 12345)) nclients=8
	sum=$(head -c "$len" "$RDMA_TMP/small" | sha256sum)
fi
pids=() outs=()
for i in $(seq "$nclients"); do
	outs+=("$RDMA_TMP/out$i")
	"$KVOD_FETCH" -q --timeout "$(time_limit 15)000" -o "$RDMA_TMP/out$i" \
		--length "$len" "$RDMA_URL/small" &
	pids+=($!)
done
fails=0
for p in "${pids[@]}"; do wait "$p" || fails=$((fails + 1)); done
same=$(sha_count "${sum%% *}" "${outs[@]}")
rm -f "${outs[@]}"
check_eq "$nclients concurrent clients all byte-exact" "0 $nclients" "$fails $same"
check_eq "no connection left active" 0 "$(rdma_counter active)"

# Player mode: 8 Mbit/s (rxe under TCG moves 5-10 MB/s), 300 ms cache,
# 64 KiB chunks, a seek every 0.5 s for 3 s. A debug kernel moves a
# fraction of that (siw there was late at 8 Mbit/s, rxe at 2 beside
# another guest, with 300 ms of cache), so it plays the same in slow
# motion: the rate divided by KVOD_TIMEOUT_SCALE, the cache, the seeks'
# period and the duration multiplied by it.
scale=${KVOD_TIMEOUT_SCALE:-1}
RATE=$((8000000 / scale))
out=$("$KVOD_FETCH" -o /dev/null --rate "$RATE" --cache $((300 * scale)) \
	--chunk 64k --seek-every "$((500 * scale / 1000)).$((500 * scale % 1000))" \
	--duration $((3 * scale)) --seed 7 "$RDMA_URL/small" 2>&1)
rc=$?
ktap_print_msg "$out"
seeks=$(sed -n 's/.* \([0-9]*\) seeks.*/\1/p' <<<"$out")
check_eq "player mode with seeks runs" "0 yes" "$rc $([ "${seeks:-0}" -ge 4 ] && echo yes)"
late=$(sed -n 's/.* \([0-9]*\) late.*/\1/p' <<<"$out")
check_eq "player mode at $RATE bit/s with seeks: no late chunk" 0 "$late"

# Player mode, no seeks, plays through byte-exact.
got=$("$KVOD_FETCH" -q --rate 200M --cache 100 --chunk 64k "$RDMA_URL/small" | sha256sum)
check_eq "player mode output byte-exact" "$want" "$got"

# SIGTERM mid-transfer: the movie is not done, and the exit status says
# so (128 + 15), where it was 0 with a truncated output.
got=$(sigterm_midway "$(time_limit 30)" $((10 * MiB + 12345)) \
	"$RDMA_TMP/part" "$RDMA_TMP/err" "$KVOD_FETCH" --rate 8M --cache 300 \
	--chunk 64k -o "$RDMA_TMP/part" "$RDMA_URL/small")
ktap_print_msg "$(cat "$RDMA_TMP/err")"
check_eq "SIGTERM mid-transfer: exit 143, says so, output cut short" \
	"143 yes yes" "$got"

# A player whose server stalls fails --timeout after the stall. It used
# to wait until all its --depth READs were in flight, which here never
# happens: the movie (80 s of it at 1 Mbit/s) ends first, so it failed
# some 80 s late. A connection over TCP (siw) stalls when its packets are
# dropped on lo; rxe loops them back inside the device, out of tc's reach.
desc="player, server stalled: no completion within --timeout, in time"
to=$(($(time_limit 3) * 1000))
if ! rdma_iwarp; then
	ktap_skip "$desc" "rxe: no packets to drop"
else
	rm -f "$RDMA_TMP/part"
	"$KVOD_FETCH" -q --rate 1M --cache 300 --chunk 16k --depth 1024 \
		--timeout "$to" -o "$RDMA_TMP/part" "$RDMA_URL/small" \
		2>"$RDMA_TMP/err" &
	pid=$!
	wait_test "$(time_limit 30)" -gt 0 size_of "$RDMA_TMP/part"
	t0=$SECONDS
	if tc qdisc add dev lo root handle 1: prio &&
		tc filter add dev lo parent 1: protocol ip prio 1 u32 \
			match ip sport "$RXE_PORT" 0xffff action drop &&
		tc filter add dev lo parent 1: protocol ip prio 1 u32 \
			match ip dport "$RXE_PORT" 0xffff action drop; then
		wait "$pid"
		rc=$?
		took=$((SECONDS - t0))
		ktap_print_msg "$(cat "$RDMA_TMP/err")" "exited $took s into the stall"
		check_eq "$desc" "1 yes yes" \
			"$rc $(grep -qx "kvod-fetch: no completion within $to ms" "$RDMA_TMP/err" && echo yes) $([ "$took" -le "$(time_limit 20)" ] && echo yes)"
	else
		kill "$pid"
		wait "$pid"
		ktap_fail "$desc: cannot drop the connection's packets"
	fi
	tc qdisc del dev lo root 2>/dev/null
	wait_test "$(time_limit 60)" = 0 rdma_counter active
fi

# DEL while clients read: they finish, new connects are not found.
"$KVOD_FETCH" -q --rate 40M --cache 100 -o "$RDMA_TMP/slow" "$RDMA_URL/small" &
slow=$!
wait_test 20 = 1 rdma_counter active
"$KVODCTL" del small
nf=$("$KVOD_FETCH" "$RDMA_URL/small" 2>&1 >/dev/null)
wait "$slow"
rc=$?
check_eq "DEL: the reader finishes byte-exact" "0 $want" "$rc $(sha256sum <"$RDMA_TMP/slow")"
check_eq "DEL: new connects are rejected as not found" \
	"kvod-fetch: small: movie not found" "$nf"
# A live channel is not served over RDMA (yet): a reject of its own.
"$KVODCTL" live create tv --chunks 2 || ktap_bail_out "cannot create a channel"
nf=$("$KVOD_FETCH" "$RDMA_URL/tv" 2>&1 >/dev/null)
check_eq "a live channel is rejected as such" \
	"kvod-fetch: tv: a live channel, not served over RDMA (created without --rdma)" "$nf"
"$KVODCTL" del tv
rm -f "$RDMA_TMP/slow" "$RDMA_TMP/small"

# Over 1 GiB: with 2 MiB MR pages still several MRs (rxe: 512 pages each;
# siw registers 4 KiB pages, 1 MiB an MR, so over a thousand). Under TCG
# the soft devices move a few MB/s, so by default READ 8 MiB at both ends
# and 2 MiB around each of at most 8 segment boundaries, spread over the
# movie (rounds: 2 on the debug kernel, where each READ's connection
# registers the whole movie, over siw in a thousand MRs);
# KVOD_RDMA_FULL=1 READs all of it.
big=$((1024 * MiB + 3 * MiB + 777))

# big_ranges SEGS: the "OFFSET:LENGTH" ranges to READ, given the offsets of
# the movie's segments.
big_ranges() {
	local bounds n i o len ranges m

	m=$(rounds 8)
	((m >= 2)) || m=2
	if [ "${KVOD_RDMA_FULL:-0}" = 1 ]; then
		echo "0:$big"
		return
	fi
	ranges="0:$((8 * MiB)) $((big - 8 * MiB)):$((8 * MiB))"
	read -r -a bounds <<<"$(sed 1d <<<"$1" | tr '\n' ' ')"
	n=${#bounds[@]}
	for ((i = 0; i < (n < m ? n : m); i++)); do
		o=${bounds[n <= m ? i : i * (n - 1) / (m - 1)]}
		len=$((big - (o - MiB)))
		[ "$len" -le $((2 * MiB)) ] || len=$((2 * MiB))
		ranges+=" $((o - MiB)):$len"
	done
	echo "$ranges"
}

# The movie is sparse, random only where the check READs and zeros
# elsewhere: writing 1 GiB of page cache took two minutes of a debug
# guest, and half a minute more to free. A READ that lands a page, an MR or a
# segment off gets other random bytes or zeros. Where it READs depends
# on the segments kvod makes of the movie, so the movie is added to learn
# them, the ranges filled, and added again under a new name, until its
# segments are the ones whose ranges were filled.
truncate -s "$big" "$RDMA_TMP/big"
filled='' segs='' bigname='' stable=''
for ((try = 0; try < 3; try++)); do
	[ -z "$bigname" ] || "$KVODCTL" del "$bigname"
	bigname=big$try
	if ! "$KVODCTL" add "$bigname" "$RDMA_TMP/big"; then
		bigname=''
		break
	fi
	segs=$("$RDMA_CLIENT" "$RXE_ADDR" table "$bigname" |
		awk '/^seg:/ { print $2 }')
	if [ -n "$segs" ] && [ "$segs" = "$filled" ]; then
		stable=yes
		break
	fi
	for r in $(big_ranges "$segs"); do
		head -c "${r#*:}" /dev/urandom | dd of="$RDMA_TMP/big" bs=1M \
			seek="${r%:*}" oflag=seek_bytes conv=notrunc status=none
	done
	filled=$segs
done
if [ "$stable" = yes ]; then
	ktap_print_msg "$bigname: segments at $(tr '\n' ' ' <<<"$segs")"
	bad=
	for r in $(big_ranges "$segs"); do
		off=${r%:*} len=${r#*:}
		rm -f "$RDMA_TMP/got"
		"$KVOD_FETCH" -q --chunk 1M --offset "$off" --length "$len" \
			-o "$RDMA_TMP/got" "$RDMA_URL/$bigname" &&
			cmp -s -n "$len" -i "$off:0" "$RDMA_TMP/big" "$RDMA_TMP/got" &&
			[ "$(stat -c %s "$RDMA_TMP/got")" = "$len" ] || bad+=" $r"
	done
	check_eq "1 GiB + 3 MiB movie: several MRs, byte-exact across each boundary" \
		"yes" "$([ "$(wc -w <<<"$segs")" -ge 2 ] && [ -z "$bad" ] && echo yes)$bad"
else
	ktap_print_msg "segments after $try adds: $(tr '\n' ' ' <<<"$segs")"
	ktap_fail "1 GiB + 3 MiB movie: several MRs, byte-exact across each boundary"
fi
[ -z "$bigname" ] || "$KVODCTL" del "$bigname"
rm -f "$RDMA_TMP/big" "$RDMA_TMP/got"

# SIGTERM while the connect waits for the server's answer (a test knob
# makes kvod's setup sleep): kvod-fetch stops at once, 143, where it
# waited for the answer, then exited 0 having fetched nothing. Over
# iWARP its exit still waits in the kernel: closing an rdma_cm id whose
# MPA request is unanswered returns only at siw's MPA request timeout,
# 10 s (MPAREQ_TIMEOUT in drivers/infiniband/sw/siw/siw_cm.h), where it
# used to wait the whole --timeout of 60 s.
quick=10
rdma_iwarp && quick=20
knob=$(kvod_knob rdma_setup_delay_ms)
echo $(($(time_limit 20) * 1000)) >"$knob"
"$KVOD_FETCH" --timeout $(($(time_limit 60) * 1000)) -o "$RDMA_TMP/part" \
	"$RDMA_URL/tiny" 2>"$RDMA_TMP/err" &
pid=$!
wait_for "$(time_limit 10)" catches "$pid" 15
sleep 1
t0=$SECONDS
kill -TERM "$pid"
wait "$pid"
rc=$?
took=$((SECONDS - t0))
echo 0 >"$knob"
ktap_print_msg "$(cat "$RDMA_TMP/err")" "exited $took s after the signal"
check_eq "SIGTERM while connecting: exit 143 within $quick s, says so" "143 yes yes" \
	"$rc $(interrupted "$RDMA_TMP/err") $([ "$took" -lt "$(time_limit "$quick")" ] && echo yes)"
wait_test "$(time_limit 60)" = 0 rdma_counter active

rdma_test_stop
ktap_finish
