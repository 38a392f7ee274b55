#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Endings under load: a client killed mid-READ, clients that vanish
# without a disconnect (found by the keep-alive), over iWARP a client that
# never sends START (found by the same work), the RDMA device deleted
# (rdma link del) while clients read and re-added, and rmmod while
# clients read, whose delete_module(2) must return within 10 s and leave
# no kvod PD, MR or QP on the device.
#
# timeout: 600
# transports: rxe siw siwlo:debug

# shellcheck source=selftests/lib/ktap.sh
. "$(dirname "$0")/../lib/ktap.sh"
# shellcheck source=selftests/lib/rdma.sh
. "$(dirname "$0")/../lib/rdma.sh"
rdma_test_init

ktap_header
ktap_plan 16
rdma_test_start

# readers N: N slow player-mode readers in the background, pids in $pids.
# A reader that reached the end could not see its connection go, and the
# steps before a teardown took a quarter of an hour once on the debug
# kernel: so each seeks to a random offset every 20 s and plays on (at
# the end of the movie it waits for its next seek) for up to 30 minutes.
# A teardown ends them, so the length costs nothing otherwise. At 8 Mbit/s
# the 64 MiB movie lasts about 67 s. A slow kernel divides the rate by
# KVOD_TIMEOUT_SCALE, to be loaded less, and the movie too: its two whole
# downloads below took 62 and 87 s of 64 MiB over rxe on the debug kernel.
READER_RATE=$((8000000 / ${KVOD_TIMEOUT_SCALE:-1}))
movie_add film $((64 / ${KVOD_TIMEOUT_SCALE:-1} << 20)) ||
	ktap_bail_out "cannot add a movie"
want=$(sha256sum <"$RDMA_TMP/film")
readers() {
	local _

	pids=()
	for _ in $(seq "$1"); do
		"$KVOD_FETCH" -q --rate "$READER_RATE" --cache 200 -o /dev/null \
			--seek-every 20 --duration 1800 --timeout 20000 \
			"$RDMA_URL/film" 2>>"$RDMA_TMP/readers.err" &
		pids+=($!)
	done
	wait_test "$(time_limit 10)" -ge "$1" rdma_counter active
}

# readers_gone: wait for every reader (in this shell, not a $(...)
# subshell, which cannot wait for them), killing any still there after
# 60 s; $failed counts those that exited non-zero, $gone_s how long the
# slowest took.
readers_gone() {
	local p t0=$SECONDS deadline=$((SECONDS + $(time_limit 60)))

	failed=0
	for p in "${pids[@]}"; do
		while kill -0 "$p" 2>/dev/null && [ "$SECONDS" -lt "$deadline" ]; do
			sleep_nofork 0.2
		done
		kill "$p" 2>/dev/null
		wait "$p" || failed=$((failed + 1))
	done
	gone_s=$((SECONDS - t0))
}

# rmmod's time in the kernel: delete_module(2) from its entry to its
# return, by the syscall tracepoints' timestamps. Its time from the
# shell would count starting the rmmod process too, which under this
# load took 40 s on the debug kernel, before the syscall.
T=/sys/kernel/tracing
SYSCALLS=$T/events/syscalls
# syscall_trace 0|1: the delete_module tracepoints off or on (on: from
# an empty buffer, on the mono clock, which one CPU's entry and another's
# return share; off: the clock as it was).
TRACE_CLOCK=local
syscall_trace() {
	local e rc=0 w

	[ -d "$T/events" ] || mount -t tracefs nodev "$T" 2>/dev/null
	echo 0 >"$T/tracing_on"
	if [ "$1" = 1 ]; then
		read -r -a w <"$T/trace_clock"
		for e in "${w[@]}"; do
			[[ $e != \[*\] ]] || TRACE_CLOCK=${e:1:-1}
		done
		echo mono >"$T/trace_clock" || rc=1
		: >"$T/trace"
	else
		echo "$TRACE_CLOCK" >"$T/trace_clock"
	fi
	for e in sys_enter_delete_module sys_exit_delete_module; do
		echo "$1" >"$SYSCALLS/$e/enable" || rc=1
	done
	echo 1 >"$T/tracing_on"
	return "$rc"
}
# syscall_ms: milliseconds from the traced entry of delete_module to its
# return; nothing if either is missing.
syscall_ms() {
	awk '{
		for (i = 1; i <= NF; i++)
			if ($i ~ /^[0-9]+\.[0-9]+:$/)
				t = substr($i, 1, length($i) - 1)
	}
	/ sys_delete_module\(/ { t0 = t }
	/ sys_delete_module -> / && t0 != "" { printf "%d\n", (t - t0) * 1000 }
	' "$T/trace"
}

# bounded LIMIT CMD...: run CMD for at most LIMIT seconds; return its
# status, or 124 if it was still running, after printing where in the
# kernel it and the readers in $pids were (and every blocked task to the
# kernel log).
bounded() {
	local limit=$1 pid deadline

	shift
	"$@" &
	pid=$!
	deadline=$((SECONDS + limit))
	while kill -0 "$pid" 2>/dev/null && [ "$SECONDS" -lt "$deadline" ]; do
		sleep_nofork 0.2
	done
	if kill -0 "$pid" 2>/dev/null; then
		ktap_print_msg "$* still running after $limit s, waiting in:" \
			"$(proc_where "$pid")" "the readers:" \
			"$(proc_where "${pids[@]}")"
		echo w >/proc/sysrq-trigger
		kill -9 "$pid"
		wait "$pid"
		return 124
	fi
	wait "$pid"
}

# Killed mid-READ: the connection goes, nothing else does. The victim
# keeps up to 64 small READs in flight, playing at 8 Mbit/s (for about a
# minute on Debian's kernel: it is killed within seconds).
"$KVOD_FETCH" --rate 8M --cache 1000 --chunk 4k --depth 64 -o /dev/null \
	"$RDMA_URL/film" 2>"$RDMA_TMP/victim.err" &
victim=$!
wait_test 10 = 1 rdma_counter active
sleep 1
alive=$(kill -0 "$victim" 2>/dev/null && echo yes || echo no)
kill -9 "$victim" 2>/dev/null
wait "$victim" 2>/dev/null
wait_test 10 = 0 rdma_counter active
check_eq "killed mid-READ: its connection is released" "yes 0 0" \
	"$alive $(rdma_counter active) $(movie_clients film)"
[ "$alive" = yes ] || ktap_print_msg "victim: $(cat "$RDMA_TMP/victim.err")"
check_eq "killed client: the server still serves byte-exact" "$want" \
	"$("$KVOD_FETCH" -q "$RDMA_URL/film" | sha256sum)"

# Vanished clients (kmod/rdma_keepalive.c): QPs moved to the error
# state with the connections left open, so no disconnect reaches the
# server, and beside them an idle client. Over RoCE, with a keep-alive
# every 22 s, the one that asked for 6 transport retries fails its
# keep-alive WRITE (at about 22 + 15 s) and the one that asked for 7,
# which rxe retries for ever, is closed at the next tick (44 s) as
# unanswered. Over iWARP the error state closes the TCP stream at once,
# so there the keep-alive (3 s) only must not harm the idle client,
# whose siw takes the zero-length WRITEs. The idle client connects once
# the others vanished, and READs when told (SIGUSR1): after the others
# are closed and one more interval, so that keep-alives met it all along.
# (Started first, it waited 50 s from before the others vanished; on a
# loaded host it was gone before they were. Waiting a fixed two
# intervals and 16 s, stretched as the timeouts are, cost 240 s over
# RoCE on the debug kernel.) Its own limit, four intervals and 60 s,
# stretched, only bounds a test gone wrong.
P=/sys/module/kvod/parameters
ka_was=$(cat "$P/rdma_keepalive")
if rdma_iwarp; then ka=3; else ka=22; fi
idle_s=$(time_limit $((ka * 4 + 60)))
echo "$ka" >"$P/rdma_keepalive"
# ka_closed: kvod's log lines of connections closed by a keep-alive that
# failed after its retries, and by one that went unanswered.
ka_closed() {
	echo "$(dmesg | grep -c 'keep-alive transport retry counter exceeded: closing')" \
		"$(dmesg | grep -c 'keep-alive unanswered: closing')"
}
lost0=$(rdma_counter peers_lost)
read -r failed0 unanswered0 <<<"$(ka_closed)"
vanished=()
for r in 6 7; do
	"$RDMA_CLIENT" "$RXE_ADDR" vanish film $r 300 >"$RDMA_TMP/vanish$r.log" 2>&1 &
	vanished+=($!)
done
# Both must have connected and vanished: over iWARP nothing else in the
# check below would tell two clients that never connected from two gone.
both=no
wait_for "$(time_limit 20)" grep -q 'vanished: yes' "$RDMA_TMP/vanish6.log" &&
	wait_for "$(time_limit 20)" grep -q 'vanished: yes' "$RDMA_TMP/vanish7.log" &&
	both=yes
"$RDMA_CLIENT" "$RXE_ADDR" idle film "$idle_s" "$RDMA_TMP/idle.out" \
	>"$RDMA_TMP/idle.log" 2>&1 &
idle=$!
wait_for "$(time_limit 20)" grep -q 'connected: yes' "$RDMA_TMP/idle.log" ||
	both="$both, the idle client not connected"
wait_test "$(time_limit $((ka * 2 + 10)))" -le 1 rdma_counter active
if rdma_iwarp; then want_lost="0 0 0"; else want_lost="2 1 1"; fi
check_eq "vanished clients (both connected, then vanished): closed (peers_lost, failed, unanswered), the idle one kept" \
	"yes 1 $want_lost" \
	"$both $(rdma_counter active) $(($(rdma_counter peers_lost) - lost0)) $(ka_closed | { read -r f u; echo $((f - failed0)) $((u - unanswered0)); })"
sleep "$ka"
kill -USR1 "$idle" 2>/dev/null
wait "$idle"
ktap_print_msg "idle client: $(cat "$RDMA_TMP/idle.log")"
check_eq "the idle client reads after the others are closed and an interval more" \
	"idle_read: success $(head -c 4096 "$RDMA_TMP/film" | sha256sum)" \
	"$(grep -v '^connected: yes$' "$RDMA_TMP/idle.log") $(sha256sum <"$RDMA_TMP/idle.out" 2>&1)"
kill "${vanished[@]}" 2>/dev/null
wait "${vanished[@]}" 2>/dev/null
echo "$ka_was" >"$P/rdma_keepalive"
wait_test "$(time_limit 10)" = 0 rdma_counter active

# A client that connects over iWARP and never sends START: MPA keeps the
# server from sending first and TCP has nothing outstanding to time out,
# so only the keep-alive's first tick, armed at the accept (rdma_keepalive
# seconds, 10 at least), finds it. Over RoCE READY needs no START.
desc="over iWARP a client that never STARTs is closed (active, peers_lost, logged)"
if rdma_iwarp; then
	echo 3 >"$P/rdma_keepalive"
	lost0=$(rdma_counter peers_lost)
	nostart0=$(dmesg | grep -c 'keep-alive no START: closing')
	"$RDMA_CLIENT" "$RXE_ADDR" nostart film "$(time_limit 60)" \
		>"$RDMA_TMP/nostart.log" 2>&1 &
	nostart=$!
	wait_for "$(time_limit 20)" grep -q 'connected: yes' "$RDMA_TMP/nostart.log"
	ktap_print_msg "client: $(cat "$RDMA_TMP/nostart.log")"
	wait_test "$(time_limit 30)" = 0 rdma_counter active
	check_eq "$desc" "0 1 1" \
		"$(rdma_counter active) $(($(rdma_counter peers_lost) - lost0)) $(($(dmesg | grep -c 'keep-alive no START: closing') - nostart0))"
	kill "$nostart" 2>/dev/null
	wait "$nostart" 2>/dev/null
	echo "$ka_was" >"$P/rdma_keepalive"
else
	ktap_skip "$desc" "RoCE: READY needs no START"
fi

# rdma link del under load.
readers 4
check_eq "4 readers connected" 4 "$(rdma_counter active)"
t0=$SECONDS
kmsg_mark "rdma link del starts"
bounded "$(time_limit 30)" rdma link del "$RXE_DEV"
rc=$?
kmsg_mark "rdma link del returned $rc"
check_eq "rdma link del under load returns within $(time_limit 30) s" 0 "$rc"
ktap_print_msg "rdma link del took $((SECONDS - t0)) s"
readers_gone
check_eq "every reader saw its connection end (exit 1) within $(time_limit 30) s" "4 yes" \
	"$failed $([ "$gone_s" -le "$(time_limit 30)" ] && echo yes)"
ktap_print_msg "$(sort "$RDMA_TMP/readers.err" | uniq -c)"
: >"$RDMA_TMP/readers.err"
check_eq "connections released, listener waits for a device" "0 0 0" \
	"$(rdma_counter active) $(movie_clients film) $(rdma_counter devices)"
rxe_link_add || ktap_print_msg "cannot re-add $RXE_DEV"
wait_test 10 = 1 rdma_counter devices
check_eq "the listener binds the re-added device" 1 "$(rdma_counter devices)"
check_eq "and serves byte-exact again" "$want" \
	"$("$KVOD_FETCH" -q --timeout 20000 "$RDMA_URL/film" | sha256sum)"

# rmmod under load. The byte-exact reader above must be gone first: a
# connection counts as active until its release ends, after its PD is
# freed, so on a slow kernel it made up the fourth of "4 readers" once.
wait_test "$(time_limit 10)" = 0 rdma_counter active
readers 4
# Each holds a PD, a QP and its MRs, all listed as kvod's: the positive
# control of "no kvod PD, MR or QP left" below.
read -r pds mrs qps < <(kvod_rdma_objects | paste -sd' ')
ktap_print_msg "kvod's objects with 4 readers: $pds PDs, $mrs MRs, $qps QPs"
check_eq "4 readers connected again, each with its PD, QP and MRs" "4 yes" \
	"$(rdma_counter active) $([ "$pds" -ge 4 ] && [ "$mrs" -ge 4 ] &&
		[ "$qps" -ge 4 ] && echo yes)"
syscall_trace 1 || ktap_print_msg "cannot enable the delete_module tracepoints"
t0=$(date +%s%N)
kmsg_mark "rmmod starts"
bounded "$(time_limit 30)" rmmod kvod
rc=$?
kmsg_mark "rmmod returned $rc"
ms=$((($(date +%s%N) - t0) / 1000000))
kms=$(syscall_ms)
syscall_trace 0
ktap_print_msg "rmmod took $ms ms, ${kms:-?} ms of it in delete_module(2)"
check_eq "rmmod under load succeeds, in the kernel within $(time_limit 10) s" "0 yes" \
	"$rc $([ -n "$kms" ] && [ "$kms" -le $(($(time_limit 10) * 1000)) ] && echo yes)"
check_eq "kvod is gone" no "$([ -d /sys/module/kvod ] && echo yes || echo no)"
readers_gone
check_eq "every reader saw its connection end (exit 1) within $(time_limit 30) s" "4 yes" \
	"$failed $([ "$gone_s" -le "$(time_limit 30)" ] && echo yes)"
ktap_print_msg "$(sort "$RDMA_TMP/readers.err" | uniq -c)"
check_eq "no kvod PD, MR or QP left on the device" "0 0 0" \
	"$(kvod_rdma_objects | tr '\n' ' ' | sed 's/ $//')"
ktap_print_msg "$(rdma resource show 2>&1)"

rdma_test_stop
ktap_finish
