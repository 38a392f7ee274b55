# SPDX-License-Identifier: GPL-2.0
#
# Shared by the race_*.sh stress tests and the fault_*.sh tests in kernel
# threads (sourced; not a test). It is their whole preamble: it sources
# ktap.sh and rdma.sh and skips outside a selftests/qemu/vm-run guest; the
# RDMA helpers keep their files in $RACE_TMP. The fault tests' own
# helpers (fault injection, kmemleak) are at the end.
#
# A stress test runs client loops in the background while its main loop
# changes what they use (listeners, movies, devices, namespaces) for
# $KVOD_STRESS_SECONDS (default 30, 60 on a slow kernel). Every
# client run ends in exactly one outcome word, appended to
# $RACE_TMP/NAME.out:
#
#	ok	the data arrived and is byte-exact (cmp against a source file)
#	err	the client was refused, rejected or cut short and said so
#	corrupt	the client said it succeeded but the bytes differ
#	hung	the client did not finish within $RACE_CLIENT_TIMEOUT s
#		(default 300, times $KVOD_TIMEOUT_SCALE: a bound for a hang,
#		far beyond what a download takes on a loaded emulator)
#	lossy	(push only) UDP lost packets, so bytes cannot be compared
#	cut	(push only) a byte-exact strict prefix arrived: the push was
#		stopped (by rmmod, a namespace's death) before its end
#
# "corrupt" and "hung" fail a test; "err" is what a race may cause; a
# test also wants some "ok" to show the clients really ran.

# shellcheck source=selftests/lib/ktap.sh
. "$(dirname "${BASH_SOURCE[0]}")/ktap.sh"
# shellcheck source=selftests/lib/rdma.sh
. "$(dirname "${BASH_SOURCE[0]}")/rdma.sh"
kvod_require_guest

# On the debug kernel (KVOD_TIMEOUT_SCALE above 1) a cycle costs about
# five times as much, so 60 s there runs fewer rounds than 30 s on
# Debian's; its checkers report a bad access or lock order the first
# time a path runs.
RACE_SECONDS=${KVOD_STRESS_SECONDS:-$((${KVOD_TIMEOUT_SCALE:-1} > 1 ? 60 : 30))}
RACE_CLIENT_TIMEOUT=${RACE_CLIENT_TIMEOUT:-$((300 * ${KVOD_TIMEOUT_SCALE:-1}))}
RACE_TMP=$(mktemp -d /tmp/kvod-race.XXXXXX)
# shellcheck disable=SC2034 # rdma.sh's movie_add and rdma_test_* use it
RDMA_TMP=$RACE_TMP
RACE_PIDS=()
# The push receiver (race_push, race_rx_cmd); make selftests builds it.
TXRECV=$KVOD_SELFTESTS/txtime/txrecv
declare -gA RX=()

race_cleanup() {
	touch "$RACE_TMP/stop"
	if ((${#RACE_PIDS[@]})); then
		kill "${RACE_PIDS[@]}" 2>/dev/null
		wait "${RACE_PIDS[@]}" 2>/dev/null
	fi
	rm -rf "$RACE_TMP"
}

[[ $RACE_SECONDS =~ ^[1-9][0-9]*$ ]] ||
	ktap_bail_out "KVOD_STRESS_SECONDS must be a positive number of seconds"
[ -x "$TXRECV" ] || ktap_bail_out "$TXRECV not built (make selftests)"

# race_verdict RC OUT WANT...: the outcome of a client that exited RC
# (124/137: killed by timeout) and left OUT, which must equal one of the
# WANT files. A corrupt OUT is kept as $RACE_TMP/corrupt.* for the log.
race_verdict() {
	local rc=$1 out=$2 w

	shift 2
	case $rc in
	0) ;;
	124 | 137) echo hung; return ;;
	*) echo err; return ;;
	esac
	for w; do
		if cmp -s "$out" "$w"; then
			echo ok
			return
		fi
	done
	cp "$out" "$RACE_TMP/corrupt.$BASHPID.$RANDOM"
	echo corrupt
}

# race_rdma URL WANT...: one RDMA download (tools/kvod-fetch), as fast as
# it goes, or paced as a player at $RACE_RDMA_RATE bit/s if that is set
# (a reader that stays attached for seconds).
race_rdma() {
	local url=$1 out=$RACE_TMP/rdma.$BASHPID rc=0 pace=()

	shift
	[ -z "${RACE_RDMA_RATE:-}" ] ||
		pace=(--rate "$RACE_RDMA_RATE" --cache 500)
	timeout -k 5 "$RACE_CLIENT_TIMEOUT" "$KVOD_FETCH" -q --timeout 30000 \
		"${pace[@]}" -o "$out" "$url" 2>>"$RACE_TMP/rdma.err" || rc=$?
	race_verdict "$rc" "$out" "$@"
}

# race_http URL WANT...: one HTTP download (curl; an HTTP error, a reset
# or a short body is "err").
race_http() {
	local url=$1 out=$RACE_TMP/http.$BASHPID rc=0

	shift
	timeout -k 5 "$RACE_CLIENT_TIMEOUT" curl -sSf --max-time \
		"$RACE_CLIENT_TIMEOUT" -o "$out" "$url" 2>>"$RACE_TMP/http.err" || rc=$?
	[ "$rc" != 28 ] || rc=124	# curl's own timeout: hung too
	race_verdict "$rc" "$out" "$@"
}

# race_rx_cmd PORT FILE RATE: RACE_RX_CMD, a txrecv command that receives
# a push of RATE (kvodctl's bits/s: 8000000, 40M) on UDP PORT of this
# namespace and writes the payloads of its well-formed RTP/MP2T packets to
# FILE. It waits 30 s for the first packet and ends 2 s after the last;
# no total limit (-T of about 24 days): the caller's timeout makes a
# push that never ends "hung". The packet rate only sets the jitter
# figures, which nothing checks. Its 16 MiB socket buffer loses nothing
# to a reader slowed by the debug kernel.
race_rx_cmd() {
	local rate=$3 mult=1

	case $rate in
	*k) mult=1000 ;;
	*M) mult=1000000 ;;
	*G) mult=1000000000 ;;
	esac
	rate=$((${rate%[kMG]} * mult / (8 * 7 * 188)))
	RACE_RX_CMD=("$TXRECV" -p "$1" -P "$2" -R "$((rate > 0 ? rate : 1))"
		-w 30000 -t 2000 -T 2147483647)
}

# race_rx LOG: txrecv's report in LOG as RX[KEY] (received, bad, seq_gap,
# seq_late, seq_dup, bytes, ...), read without a process; nothing for a
# run that printed none. race_rx_lossy: UDP lost or reordered packets
# (numbers skipped, or one behind the newest), so the bytes cannot be
# compared; a repeat of the newest is not loss, and leaves the copy
# corrupt. race_rx_summary: the counts for a log line.
race_rx() {
	local words w

	RX=()
	while read -r -a words; do
		for w in "${words[@]}"; do
			[[ $w != *=* ]] || RX[${w%%=*}]=${w#*=}
		done
	done <"$1"
}

race_rx_lossy() {
	((${RX[seq_gap]:-0} + ${RX[seq_late]:-0} > 0))
}

race_rx_summary() {
	echo "received=${RX[received]:-} bytes=${RX[bytes]:-} bad=${RX[bad]:-}" \
		"seq_gap=${RX[seq_gap]:-} seq_late=${RX[seq_late]:-}" \
		"seq_dup=${RX[seq_dup]:-}"
}

# race_push NAME PORT RATE WANT...: push movie NAME to 127.0.0.1:PORT of
# the current namespace and receive it. A push that could not start
# (the movie was just deleted) is "err"; a started push must deliver a
# WANT file cut to whole 188-byte packets (prepared by race_film). A
# receiver that got nothing well-formed, or failed, is "err"; one that
# saw loss (race_rx_lossy) "lossy".
race_push() {
	local name=$1 port=$2 rate=$3 out=$RACE_TMP/push.$BASHPID rx pid rc=0
	local rxrc

	shift 3
	rx=$out.rx
	race_rx_cmd "$port" "$out" "$rate"
	"${RACE_RX_CMD[@]}" >"$rx" 2>&1 &
	pid=$!
	if ! wait_for 10 grep -qs listening "$rx" ||
		! "$KVODCTL" push "$name" "udp://127.0.0.1:$port" \
			--rate "$rate" >/dev/null 2>>"$RACE_TMP/push.err"; then
		kill "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		echo err
		return
	fi
	# txrecv gives up 30 s before the first or 2 s after the last packet.
	timeout -k 5 "$RACE_CLIENT_TIMEOUT" tail --pid="$pid" -f /dev/null ||
		rc=124
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	rxrc=$?
	race_rx "$rx"
	if [ "$rc" = 0 ] && [ "$rxrc" = 0 ] && race_rx_lossy; then
		echo lossy
		race_rx_summary >>"$RACE_TMP/push.err"
		return
	fi
	[ "$rc" != 0 ] || { [ "$rxrc" = 0 ] && ((${RX[received]:-0} > 0)); } ||
		rc=1
	[ "$rc" != 0 ] || race_rx_summary >>"$RACE_TMP/push.stats"
	if [ "$rc" = 0 ] && race_is_prefix "$out" "$@"; then
		echo cut
		return
	fi
	race_verdict "$rc" "$out" "$@"
}

# race_is_prefix OUT WANT...: OUT is a strict, non-empty prefix of a WANT.
race_is_prefix() {
	local out=$1 n w

	shift
	n=$(stat -c %s "$out")
	for w; do
		if [ "$n" -gt 0 ] && [ "$n" -lt "$(stat -c %s "$w")" ] &&
			cmp -s -n "$n" "$out" "$w"; then
			return 0
		fi
	done
	return 1
}

# race_film FILE BYTES: BYTES random bytes but for MPEG-TS sync bytes
# (0x47) at every 188th, as FILE, and FILE cut to whole 188-byte packets
# as FILE.ts188 (what a push sends of it, and what txrecv takes for
# MPEG-TS). One process for both.
race_film() {
	python3 -c '
import os, sys
path, n = sys.argv[1], int(sys.argv[2])
film = bytearray(os.urandom(n))
film[::188] = b"\x47" * len(range(0, n, 188))
with open(path, "wb") as f:
    f.write(film)
with open(path + ".ts188", "wb") as f:
    f.write(film[:n // 188 * 188])
' "$1" "$2"
}

# race_loop NAME CMD...: run CMD again and again in the background until
# race_stop; its outcomes go to $RACE_TMP/NAME.out.
race_loop() {
	local name=$1

	shift
	(
		while [ ! -e "$RACE_TMP/stop" ]; do
			"$@"
		done >>"$RACE_TMP/$name.out"
	) &
	RACE_PIDS+=($!)
}

# race_stop: let the loops finish their current run and wait for them.
# Every client run is bounded by a timeout, so this is bounded too.
race_stop() {
	touch "$RACE_TMP/stop"
	if ((${#RACE_PIDS[@]})); then
		wait "${RACE_PIDS[@]}" 2>/dev/null
	fi
	RACE_PIDS=()
	rm -f "$RACE_TMP/stop" "$RACE_TMP/settle"
}

# race_tally FILE...: count the outcome words of FILE... into RACE_TALLY
# (word => runs). Builtins only: every loop's check reads six counts,
# and a process costs about half a second on the debug kernel.
declare -gA RACE_TALLY=()
race_tally() {
	local f w

	RACE_TALLY=([ok]=0 [err]=0 [corrupt]=0 [hung]=0 [lossy]=0 [cut]=0)
	for f; do
		[ -r "$f" ] || continue
		while IFS= read -r w; do
			case $w in
			ok | err | corrupt | hung | lossy | cut)
				RACE_TALLY[$w]=$((RACE_TALLY[$w] + 1)) ;;
			esac
		done <"$f"
	done
}

# race_format: "ok=N err=N corrupt=N hung=N lossy=N cut=N" of RACE_TALLY.
race_format() {
	local w out=

	for w in ok err corrupt hung lossy cut; do
		out+="$w=${RACE_TALLY[$w]} "
	done
	echo "${out% }"
}

# race_summary NAME: race_format of loop NAME.
race_summary() {
	race_tally "$RACE_TMP/$1.out"
	race_format
}

# race_check NAME DESC: one KTAP result for loop NAME: no corrupt, hung
# or cut run, and at least one byte-exact one.
race_check() {
	local name=$1 desc=$2 f

	race_tally "$RACE_TMP/$name.out"
	ktap_print_msg "$name: $(race_format)"
	if ((RACE_TALLY[corrupt] == 0 && RACE_TALLY[hung] == 0 &&
		RACE_TALLY[cut] == 0 && RACE_TALLY[ok] > 0)); then
		ktap_pass "$desc"
		return
	fi
	for f in "$RACE_TMP"/corrupt.*; do
		[ -e "$f" ] || break
		ktap_print_msg "corrupt copy: $(stat -c %s "$f") bytes"
	done
	for f in "$RACE_TMP/$name.err" "$RACE_TMP/${name%%[0-9]*}.err"; do
		[ -s "$f" ] && ktap_print_msg "$(sort "$f" | uniq -c | sort -rn | head -n 8)"
	done
	ktap_fail "$desc"
}

# race_settle: the stress over, let every client loop that has run but
# not yet byte-exact run on until it has (race_check wants one), for at
# most time_limit 30 s. On a slow kernel a loop can meet nothing but the
# stress: 9 runs of a loop, each refused, in a minute of relinks on the
# debug kernel. $RACE_TMP/settle exists from then until race_stop, for a
# loop that cycles something itself (a listener) to stop doing so.
race_settle() {
	touch "$RACE_TMP/settle"
	wait_test "$(time_limit 30)" = "" race_unsettled
}

# race_unsettled: the loops with a client verdict but no "ok" yet.
race_unsettled() {
	local f

	for f in "$RACE_TMP"/*.out; do
		[ -e "$f" ] || continue
		race_tally "$f"
		((RACE_TALLY[ok] == 0 && RACE_TALLY[err] + RACE_TALLY[corrupt] +
			RACE_TALLY[hung] + RACE_TALLY[lossy] + RACE_TALLY[cut] > 0)) &&
			printf '%s ' "${f##*/}"
	done
}

# race_until: true while the stress period started by race_begin lasts.
race_begin() {
	RACE_END=$((SECONDS + RACE_SECONDS))
}

race_until() {
	[ "$SECONDS" -lt "$RACE_END" ]
}

# race_cycles ACTION WHAT: run the function ACTION over and over, with a
# random pause of up to a second, for the stress period, while the
# clients run; then let them settle (race_settle), stop them and check
# that every ACTION succeeded ("every WHAT succeeded").
race_cycles() {
	local action=$1 what=$2 cycles=0 failed=0

	race_begin
	while race_until; do
		"$action" || failed=$((failed + 1))
		sleep "0.$((RANDOM % 10))"
		cycles=$((cycles + 1))
	done
	race_settle
	race_stop
	ktap_print_msg "$cycles $what cycles in $RACE_SECONDS s"
	check_eq "every $what succeeded" 0 "$failed"
}

# race_readers: more than 0 while kvod serves a client: the listed
# movies' readers (active_clients), the RDMA listeners' connections
# (each holds a reader from its accept, of a deleted movie too, which is
# not listed) and the pushes, summed; a reader may count twice. HTTP
# connections are left out: one counts from its accept, before it has
# asked for anything.
race_readers() {
	"$KVODCTL" list --json 2>/dev/null |
		jq '([.movies[].active_clients] | add // 0) +
			([.listeners[] | select(.proto == "rdma") |
				.counters.active] | add // 0) +
			(.pushes | length)'
}

# race_serve_pause: the pause in each cycle of race_rmmod_while's
# command (at its end; at its start in race_rdma_link.sh): until kvod
# serves a client (race_readers; at most time_limit 10
# s), then a second or two more (four or five on the debug kernel, by
# time_limit), so that race_rmmod_while sees readers attached before its
# rmmod. A fixed pause was not enough on a loaded host: clients that had
# only just connected when the next relink, re-add or relisten came left
# no reader to be seen in the whole wait (CI, twice).
race_serve_pause() {
	wait_test "$(time_limit 10)" -gt 0 race_readers 2>/dev/null
	sleep "$(time_limit 1).$((RANDOM % 10))"
}

# race_no_readers: what the client loops did while race_rmmod_while waited
# in vain for a reader: each loop's verdicts so far and the clients' most
# frequent error lines, and the listeners' counters, so that a failed
# check tells why.
race_no_readers() {
	local f

	ktap_print_msg "listeners: $("$KVODCTL" list --json 2>&1 |
		jq -c '[.listeners[] | {proto, counters}]' 2>&1)"
	for f in "$RACE_TMP"/*.out; do
		[ -e "$f" ] || continue
		ktap_print_msg "$(basename "$f" .out): $(sort "$f" | uniq -c |
			awk '{ printf "%s%s=%s", (NR > 1 ? " " : ""), $2, $1 }')"
	done
	for f in "$RACE_TMP"/*.err; do
		[ -s "$f" ] || continue
		sort "$f" | uniq -c | sort -rn | head -n 5 |
			while read -r line; do
				ktap_print_msg "$(basename "$f"): $line"
			done
	done
}

# race_rmmod_while CMD...: run CMD again and again in the background
# (until kvod is gone), rmmod kvod 5 s in (race_rmmod 60), then stop every
# loop; race_rmmod's status. The rmmod waits (up to time_limit 60) for a
# client to be attached, and RACE_READERS says whether one was (yes or
# no): without one, "none corrupt, none hung" would hold of clients that
# never reached the server.
race_rmmod_while() {
	local rc t0 f

	(
		while [ ! -e "$RACE_TMP/stop" ] && [ -e /sys/module/kvod ]; do
			"$@"
		done >/dev/null 2>&1
	) &
	RACE_PIDS+=($!)
	sleep 5
	# Readers come and go with the loops: a second look could miss them.
	# shellcheck disable=SC2034 # the tests read it
	RACE_READERS=$(wait_test "$(time_limit 60)" -gt 0 race_readers &&
		echo yes || echo no)
	ktap_print_msg "readers attached before rmmod: $RACE_READERS"
	[ "$RACE_READERS" = yes ] || race_no_readers
	t0=$SECONDS
	race_rmmod 60
	rc=$?
	ktap_print_msg "rmmod: status $rc after $((SECONDS - t0)) s"
	t0=$SECONDS
	race_stop
	ktap_print_msg "client loops stopped $((SECONDS - t0)) s later"
	for f in "$RACE_TMP"/*.out; do
		[ -e "$f" ] || continue
		f=$(basename "$f" .out)
		ktap_print_msg "$f: $(race_summary "$f")"
	done
	return "$rc"
}

# race_after_rmmod: "LOADED CORRUPT HUNG": whether kvod is still loaded
# (yes/no), and how many client runs of any loop ended corrupt and hung.
race_after_rmmod() {
	local loaded=no

	[ ! -d /sys/module/kvod ] || loaded=yes
	race_tally "$RACE_TMP"/*.out
	echo "$loaded ${RACE_TALLY[corrupt]} ${RACE_TALLY[hung]}"
}

# race_rmmod SECONDS: rmmod kvod while the loops run. A loop that runs
# kvodctl holds /dev/kvod open for a moment, and rmmod refuses a module
# in use rather than wait: "Module kvod is in use" when kmod saw the
# reference in sysfs, "Resource temporarily unavailable" (EAGAIN from
# delete_module(), which does not wait) when it was taken after that
# look. Only those are retried, until SECONDS have passed. Any other
# failure, or one rmmod that itself hangs past SECONDS, returns non-zero
# at once.
race_rmmod() {
	local end=$((SECONDS + $1)) err rc

	while :; do
		err=$(timeout "$1" rmmod kvod 2>&1)
		rc=$?
		[ "$rc" != 0 ] || return 0
		if [[ $err != *"in use"* &&
			$err != *"Resource temporarily unavailable"* ]] ||
			((SECONDS >= end)); then
			echo "$err" >&2
			return "$rc"
		fi
		sleep_nofork 0.1
	done
}

# The fault_*.sh tests' own: failslab and fail_page_alloc
# (Documentation/fault-injection/fault-injection.rst) limited to kvod's
# own code with the stack-trace filter, and kmemleak.
#
#	fault_require		one skipped result, and exit, unless the
#				kernel has fault injection (Debian's has not)
#	fault_filter		find kvod's code (call after kvod is loaded);
#				fault_on limits injection to it from then on
#	fault_on ATTR PROB [KEY=VALUE...]
#				ATTR (failslab, fail_page_alloc) fails PROB %
#				of the allocations with kvod on the stack
#	fault_off		nothing fails any more
#	fault_injected VAR ATTR	VAR: how many allocations ATTR failed since
#				its last fault_on (a positive control: a run
#				that injected nothing tested nothing)
#	leak_mark, leak_check	kmemleak: note what is reported so far; fail
#				if a report not noted goes through kvod (the
#				reports are never cleared: selftests/qemu/vm-run's
#				scans after the last program see them again)
#
# Every injected failure is silent (verbose 0): a dump would read as a
# warning in the guest's log. Allocation-failure warnings that the kernel
# itself prints (warn_alloc: "page allocation failure", "vmalloc error")
# may still appear; fault_on and fault_off mark the span in the kernel
# log with "kvod-fault: injecting" / "kvod-fault: stopped".

FAULT_DIR=/sys/kernel/debug
LEAKS=$FAULT_DIR/kmemleak

fault_available() {
	[ -d "$FAULT_DIR/failslab" ] ||
		mount -t debugfs none "$FAULT_DIR" 2>/dev/null
	[ -w "$FAULT_DIR/failslab/probability" ] &&
		[ -w "$FAULT_DIR/fail_page_alloc/probability" ] &&
		[ -w "$FAULT_DIR/failslab/require-start" ]
}

# fault_require: unless available, one skipped result and exit 4.
fault_require() {
	fault_available && return 0
	ktap_plan 1
	ktap_skip "$(basename "$0" .sh)" "no fault injection in this kernel"
	ktap_finish
}

# fault_set ATTR KEY VALUE
fault_set() {
	echo "$3" >"$FAULT_DIR/$1/$2"
}

# kvod_text_range: "START END" (hex) of kvod's code once loaded: the
# module's text sections (.text, .exit.text for rmmod; not .init.text:
# module init is over, and it lives elsewhere), from their load addresses
# in sysfs and their sizes in the .ko. Kernel addresses are negative in
# bash's signed arithmetic, which orders them right all the same; awk's
# doubles would round them.
kvod_text_range() {
	local ko sec size a lo='' hi=''

	ko=$(kmod_path kvod)
	while read -r sec size; do
		[ -r "/sys/module/kvod/sections/$sec" ] || continue
		a=$(($(cat "/sys/module/kvod/sections/$sec")))
		if [ -z "$lo" ] || ((a < lo)); then
			lo=$a
		fi
		if [ -z "$hi" ] || ((a + 16#$size > hi)); then
			hi=$((a + 16#$size))
		fi
	done < <(readelf -SW "$ko" | sed 's/^ *\[ *[0-9]*\]//' |
		awk '$2 == "PROGBITS" && $1 ~ /text/ && $1 != ".init.text" { print $1, $5 }')
	[ -n "$lo" ] && printf '%#x %#x\n' "$lo" "$hi"
}

# fault_filter: find kvod's code (FAULT_LO, FAULT_HI); fault_on limits
# every injection to stacks with a return address in it. Bails out if
# the range looks wrong: unfiltered, failures would hit the whole guest.
FAULT_LO=
FAULT_HI=
# fault_on's budget of failures: more than a run can use up.
FAULT_TIMES=2000000000
fault_filter() {
	read -r FAULT_LO FAULT_HI < <(kvod_text_range)
	if [ -z "$FAULT_LO" ] ||
		((FAULT_HI <= FAULT_LO || FAULT_HI - FAULT_LO > (16 << 20))); then
		ktap_bail_out "cannot find kvod's code: '$FAULT_LO' '$FAULT_HI'"
	fi
	ktap_print_msg "fault filter: kvod code $FAULT_LO-$FAULT_HI"
}

# fault_on ATTR PROB [KEY=VALUE...]: more keys, e.g. min-order=9.
fault_on() {
	local a=$1 p=$2 kv

	shift 2
	# Never inject unfiltered (fault_off resets the filter).
	if [ -z "$FAULT_LO" ] || ! fault_set "$a" require-start "$FAULT_LO" ||
		! fault_set "$a" require-end "$FAULT_HI" ||
		! fault_set "$a" stacktrace-depth 32; then
		ktap_bail_out "cannot set the stack-trace filter of $a"
	fi
	fault_set "$a" verbose 0
	fault_set "$a" ignore-gfp-wait N
	# times counts down once per failure injected: fault_injected.
	fault_set "$a" times "$FAULT_TIMES"
	fault_set "$a" interval 1
	fault_set "$a" space 0
	fault_set "$a" task-filter N
	for kv; do
		fault_set "$a" "${kv%%=*}" "${kv#*=}"
	done
	echo "kvod-fault: injecting $a $p%" >/dev/kmsg
	fault_set "$a" probability "$p"
}

# fault_injected VAR ATTR: set VAR to the failures ATTR injected since
# its last fault_on (fault_off leaves the count alone). Builtins only:
# it is polled while the clients load the guest.
fault_injected() {
	local t=$FAULT_TIMES

	read -r t <"$FAULT_DIR/$2/times"
	printf -v "$1" %d $((FAULT_TIMES - t))
}

# fault_off: back to the defaults that matter: nothing fails, and
# fail-nth (which honours the filter) counts every allocation again.
fault_off() {
	local a

	for a in failslab fail_page_alloc; do
		fault_set "$a" probability 0
		fault_set "$a" interval 1
		fault_set "$a" require-start 0
		fault_set "$a" require-end 18446744073709551615
	done
	[ -w "$FAULT_DIR/fail_page_alloc/min-order" ] &&
		fault_set fail_page_alloc min-order 1
	echo "kvod-fault: stopped" >/dev/kmsg
}

leak_mark() {
	if [ -r "$LEAKS" ]; then
		grep '^unreferenced object' "$LEAKS" >"$RACE_TMP/leaks.before"
	fi
	true
}

# leak_check DESC: one result: no kmemleak report through kvod (skipped
# without kmemleak). Reports need 5 s of age: wait, then scan twice.
leak_check() {
	local desc=$1 ours

	if [ ! -w "$LEAKS" ]; then
		ktap_skip "$desc" "no kmemleak in this kernel"
		return
	fi
	sleep 6
	# A refused scan: kmemleak is off, and would see no leak.
	if ! { echo scan >"$LEAKS" && echo scan >"$LEAKS"; }; then
		ktap_print_msg "kmemleak refused to scan"
		ktap_fail "$desc"
		return
	fi
	touch "$RACE_TMP/leaks.before"
	ours=$(awk 'FILENAME == ARGV[1] { old[$0] = 1; next }
		    /^unreferenced object/ { if (blk ~ /kvod/) print blk
					     blk = ""; skip = ($0 in old) }
		    !skip { blk = blk $0 "\n" }
		    END { if (blk ~ /kvod/) print blk }' \
		"$RACE_TMP/leaks.before" "$LEAKS")
	ktap_print_msg "kmemleak: $(grep -c '^unreferenced object' "$LEAKS") report(s) in all"
	if [ -z "$ours" ]; then
		ktap_pass "$desc"
	else
		ktap_print_msg "$ours"
		ktap_fail "$desc"
	fi
}
