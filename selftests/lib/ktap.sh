# SPDX-License-Identifier: GPL-2.0
#
# What every shell test sources: KTAP output, small checks, waiting,
# module loading, and kvod's tools as the tests drive them. Source it:
#
#	. "$(dirname "$0")/../lib/ktap.sh"
#	kvod_require_guest		# from guest.sh, sourced here
#	ktap_header
#	ktap_plan 2
#	kvod_load
#	check_eq "catalog starts empty" "" "$(tools/kvodctl list)"
#	check_errno "unknown movie" ENOENT tools/kvodctl info nosuch
#	kvod_unload
#	ktap_finish
#
# The family preambles (http.sh, tsock.sh, race.sh) source it for their
# tests; the host tests, selftests/fuzz/run.sh, selftests/qemu/demo-guest.sh
# and a few benchmarks source it too. It bails out at once unless the
# kernel's KTAP helpers are there (below). It sources guest.sh, which
# holds what the runner shares with the tests: the guest guard
# (kvod_require_guest), sleep_nofork, kmsg_mark, proc_forks.
#
# KTAP output is the kernel's own: tools/testing/selftests/kselftest/
# ktap_helpers.sh from linux-source-6.12 (selftests/qemu/setup.sh unpacks it;
# in an install tree, its copy in kselftest/; $KTAP_HELPERS overrides the
# path). This file wraps it in kvod's names and adds what it lacks:
# messages of several lines, skip reasons, the checks below.
#
# Where the tests find kvod: in the git tree, $KVOD_REPO (vm-run sets it
# in the guest; else the tree this file is in). In a kselftest install
# tree (make -C selftests install: the kernel's kselftest/ beside this
# lib/) without $KVOD_REPO, what make install installed: kvod's tools in
# the directory of the kvodctl on PATH, the modules where modinfo finds
# them (kmod_path), and q_tsock.so in tc's own directory (make -C
# tools/tc install) unless $TC_LIB_DIR names another.
#
#	KVOD_SELFTESTS	selftests/ or the install tree: kvod/, lib/, txtime/
#	KVOD_BIN	kvodctl, kvod-fetch, kvod-proxy
#	KVOD_TC_LIB	q_tsock.so
#
# Results: ktap_pass, ktap_fail, ktap_skip print one "ok"/"not ok" line
# each and count it. ktap_finish exits 0 if nothing failed (skips are
# fine), 1 if anything failed or the plan was not met, 4 (kselftest's
# skip) if every test was skipped. Diagnostics go to stdout as "# ..."
# lines, which KTAP parsers ignore.
#
# After the checks and module loading:
#
#	kvodctl's read-backs	$KVODCTL, listener_counters, movie_field,
#				kvod_stats, ... (listed there)
#	kvod-fetch on a signal	size_of, interrupted, sigterm_midway
#	proc_where PID...	where a stuck task waits

KTAP_LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck disable=SC2034 # KVOD_TC_LIB is tsock.sh's
if [ -z "${KVOD_REPO:-}" ] && [ -r "$KTAP_LIB_DIR/../kselftest/ktap_helpers.sh" ]; then
	KVOD_REPO=
	KVOD_SELFTESTS=$(cd "$KTAP_LIB_DIR/.." && pwd)
	KVOD_BIN=$(command -v kvodctl || :)
	KVOD_BIN=${KVOD_BIN%/*}
	KVOD_TC_LIB=${TC_LIB_DIR:-/usr/lib/tc}
	KTAP_HELPERS=${KTAP_HELPERS:-$KVOD_SELFTESTS/kselftest/ktap_helpers.sh}
else
	KVOD_REPO=${KVOD_REPO:-$(cd "$KTAP_LIB_DIR/../.." && pwd)}
	KVOD_SELFTESTS=$KVOD_REPO/selftests
	KVOD_BIN=$KVOD_REPO/tools
	KVOD_TC_LIB=$KVOD_REPO/tools/tc
	KTAP_HELPERS=${KTAP_HELPERS:-/usr/src/linux-source-6.12/tools/testing/selftests/kselftest/ktap_helpers.sh}
fi
if ! [ -r "$KTAP_HELPERS" ]; then
	echo "Bail out! no $KTAP_HELPERS: run selftests/qemu/setup.sh"
	exit 1
fi
# shellcheck source=/dev/null
. "$KTAP_HELPERS"
# shellcheck source=selftests/lib/guest.sh
. "$KTAP_LIB_DIR/guest.sh"

ktap_header() {
	ktap_print_header
}

# With $KVOD_CHECK_COST set, every result is preceded by a line "# cost:
# N s, P processes": the time since the result before (or since this
# file was sourced) and the processes started meanwhile, which is what
# a check costs on the debug kernel, where a process start takes seconds.
ktap_cost() {
	local now

	[ -n "${KVOD_CHECK_COST:-}" ] || return 0
	proc_forks now
	echo "# cost: $((SECONDS - KTAP_COST_AT)) s, $((now - KTAP_COST_FORKS)) processes"
	KTAP_COST_AT=$SECONDS
	KTAP_COST_FORKS=$now
}
KTAP_COST_AT=$SECONDS
proc_forks KTAP_COST_FORKS

ktap_plan() {
	ktap_set_plan "$1"
}

# ktap_print_msg MSG...: each line of each MSG as a "# " diagnostic. (The
# kernel's prints its words unquoted, on one line.)
ktap_print_msg() {
	local msg line

	for msg; do
		while IFS= read -r line; do
			echo "# $line"
		done <<<"$msg"
	done
}

# The kernel's helpers echo descriptions unquoted: no pathname expansion
# while they run ("local -" restores the option).
ktap_pass() {
	local -

	set -f
	ktap_cost
	ktap_test_pass "$*"
}

ktap_fail() {
	local -

	set -f
	ktap_cost
	ktap_test_fail "$*"
}

# ktap_skip DESC REASON: the reason goes on a "#" line before the result.
ktap_skip() {
	local -

	set -f
	ktap_cost
	[ -z "${2:-}" ] || ktap_print_msg "$1: $2"
	ktap_test_skip "$1"
}

# ktap_bail_out REASON: give up on the whole test program.
ktap_bail_out() {
	local -

	set -f
	ktap_exit_fail_msg "$*"
}

ktap_finish() {
	local ran=$((KTAP_TESTNO - 1))

	if [ "$ran" != "$KSFT_NUM_TESTS" ]; then
		ktap_print_totals
		ktap_print_msg "planned $KSFT_NUM_TESTS tests but ran $ran"
		exit "$KSFT_FAIL"
	fi
	if [ "$ran" -gt 0 ] && [ "$KTAP_CNT_SKIP" = "$ran" ]; then
		ktap_print_totals
		exit "$KSFT_SKIP"
	fi
	ktap_finished
}

# check_eq DESC EXPECTED ACTUAL
check_eq() {
	if [ "$2" = "$3" ]; then
		ktap_pass "$1"
	else
		ktap_print_msg "expected: '$2'" "actual:   '$3'"
		ktap_fail "$1"
	fi
}

# check_ok DESC CMD...: CMD must succeed. Its output goes to the log as
# diagnostics.
check_ok() {
	local desc=$1 out rc=0

	shift
	out=$("$@" 2>&1) || rc=$?
	if [ "$rc" = 0 ]; then
		ktap_pass "$desc"
	else
		ktap_print_msg "$* exited $rc:" "$out"
		ktap_fail "$desc"
	fi
}

# check_fail DESC CMD...: CMD must fail (any non-zero status).
check_fail() {
	local desc=$1 rc=0

	shift
	"$@" >/dev/null 2>&1 || rc=$?
	if [ "$rc" != 0 ]; then
		ktap_pass "$desc"
	else
		ktap_print_msg "$* succeeded, expected a failure"
		ktap_fail "$desc"
	fi
}

# errno_text NAME: strerror() of errno NAME (ENOENT -> "No such file or
# directory").
errno_text() {
	python3 -c 'import errno, os, sys; print(os.strerror(getattr(errno, sys.argv[1])))' "$1"
}

# check_errno DESC ERRNO CMD...: CMD must fail and name ERRNO (ENOENT) or
# its strerror() text on stderr or stdout.
check_errno() {
	local desc=$1 name=$2 out rc=0 text

	shift 2
	out=$("$@" 2>&1) || rc=$?
	text=$(errno_text "$name")
	if [ "$rc" != 0 ] && { [[ $out == *"$name"* ]] || [[ $out == *"$text"* ]]; }; then
		ktap_pass "$desc"
	else
		ktap_print_msg "$* exited $rc, expected a failure with $name ($text):" "$out"
		ktap_fail "$desc"
	fi
}

# check_says DESC TEXT CMD...: CMD must fail and say TEXT.
check_says() {
	local desc=$1 text=$2 out rc=0

	shift 2
	out=$("$@" 2>&1) || rc=$?
	if [ "$rc" != 0 ] && [[ $out == *"$text"* ]]; then
		ktap_pass "$desc"
	else
		ktap_print_msg "$* exited $rc, expected a failure saying '$text':" "$out"
		ktap_fail "$desc"
	fi
}

# time_limit SECONDS: a limit for a timed assertion, stretched by
# $KVOD_TIMEOUT_SCALE on slow kernels (make test-debug sets it to 4).
time_limit() {
	echo $(($1 * ${KVOD_TIMEOUT_SCALE:-1}))
}

# rounds N: how many times to repeat a path that a check repeats only
# to meet a rare outcome more often: N, divided by $KVOD_TIMEOUT_SCALE on
# slow kernels, and at least 1. On the debug kernel each round costs ten
# times as much, and its checkers report a bad access or lock order the
# first time the path runs, not only when it happens to corrupt data.
rounds() {
	local n=$(($1 / ${KVOD_TIMEOUT_SCALE:-1}))

	echo $((n > 0 ? n : 1))
}

# kv_into VAR KEY WORDS: set VAR to the value of the first KEY=VALUE
# among WORDS (split on blanks, not globbed), or to "" if there is none.
# Builtins only: the result lines of txrecv and live_tool.py are read
# this way for every check.
kv_into() {
	local - w

	set -f
	printf -v "$1" %s ""
	for w in $3; do
		if [[ $w == "$2="* ]]; then
			printf -v "$1" %s "${w#*=}"
			return
		fi
	done
}

# media_into VAR NAME: set VAR to the path of NAME, one of the media
# that make selftests encodes (MEDIA in selftests/Makefile: sample.mp4,
# sample.ts, clip.ts); bail out if it was not built.
media_into() {
	printf -v "$1" '%s' "$KVOD_SELFTESTS/kvod/$2"
	[ -r "${!1}" ] || ktap_bail_out "${!1} not built (make selftests)"
}

# sha_count SUM FILE...: how many FILEs have the sha256 SUM (the hex
# digest alone), with one sha256sum for them all rather than a process
# or more a file.
sha_count() {
	local want=$1 sum n=0

	shift
	while read -r sum _; do
		[ "$sum" != "$want" ] || n=$((n + 1))
	done < <(sha256sum "$@" 2>/dev/null)
	echo "$n"
}

# file_has FILE TEXT: FILE has a line holding TEXT (grep -qF without the
# process, for polls).
file_has() {
	local line

	[ -r "$1" ] || return 1
	while IFS= read -r line; do
		[[ $line != *"$2"* ]] || return 0
	done <"$1"
	return 1
}

# poll_pause: sleep before the next poll of wait_for or wait_test, and
# lengthen the next pause: 0.1 s at first, doubling up to 0.5 s times
# $KVOD_TIMEOUT_SCALE. A poll is a process or more, which on the debug
# kernel costs as much CPU as the work it waits for: polling every 0.1 s
# there took half the guest's time from that work.
poll_pause() {
	local max=$((5 * ${KVOD_TIMEOUT_SCALE:-1}))

	sleep_nofork "$((POLL_TENTHS / 10)).$((POLL_TENTHS % 10))"
	POLL_TENTHS=$((POLL_TENTHS * 2 < max ? POLL_TENTHS * 2 : max))
}

# wait_for SECONDS CMD...: poll CMD (poll_pause) until it succeeds.
wait_for() {
	local deadline=$((SECONDS + $1)) POLL_TENTHS=1

	shift
	until "$@"; do
		if [ "$SECONDS" -ge "$deadline" ]; then
			return 1
		fi
		poll_pause
	done
}

# wait_test SECONDS OP VALUE CMD...: poll (poll_pause) until
# test "$(CMD...)" OP VALUE holds; CMD runs again on every poll (unlike
# wait_for SECONDS test "$(CMD)" ..., which would compare one output).
wait_test() {
	local deadline=$((SECONDS + $1)) op=$2 value=$3 POLL_TENTHS=1

	shift 3
	until test "$("$@")" "$op" "$value"; do
		if [ "$SECONDS" -ge "$deadline" ]; then
			return 1
		fi
		poll_pause
	done
}

# kmod_path NAME: the path of NAME.ko, the one place that decides it.
# kvod.ko is in $KVOD_KMOD_DIR (make test-debug's build/debug/kmod), else
# in $KVOD_REPO/kmod; sch_tsock.ko is in $KVOD_TSOCK_DIR, else in the
# tsock directory beside that one ($KVOD_REPO/tsock, build/debug/tsock).
# vm-run passes both variables into the guest, as every KVOD_*. In an
# install tree without $KVOD_KMOD_DIR, both are the modules installed
# for the running kernel (modinfo -n: nothing if there is none).
kmod_path() {
	local kmod=${KVOD_KMOD_DIR:-$KVOD_REPO/kmod}

	if [ -z "$KVOD_REPO" ] && [ -z "${KVOD_KMOD_DIR:-}" ]; then
		modinfo -n "$1" 2>/dev/null
		return 0
	fi
	case $1 in
	sch_tsock) echo "${KVOD_TSOCK_DIR:-$kmod/../tsock}/$1.ko" ;;
	*) echo "$kmod/$1.ko" ;;
	esac
}

# kmod_load NAME [PARAMS...]: insmod kmod_path NAME.
kmod_load() {
	local name=$1

	shift
	kvod_in_guest || kvod_test_host ||
		ktap_bail_out "refusing to insmod $name outside a selftests/qemu/vm-run guest without KVOD_TEST_HOST=1"
	[ "$name" != kvod ] || kernel_builtin || modprobe -q -a ib_core rdma_cm
	insmod "$(kmod_path "$name")" "$@" &&
		wait_for 5 test -d "/sys/module/$name"
}

# kmod_unload NAME: remove module NAME if it is loaded.
kmod_unload() {
	[ -d "/sys/module/$1" ] || return 0
	rmmod "$1" && wait_for 5 test ! -d "/sys/module/$1"
}

# kvod_load [PARAMS...]: load kvod.ko and wait for /dev/kvod.
kvod_load() {
	kmod_load kvod "$@" && wait_for 5 test -c /dev/kvod
}

kvod_unload() {
	kmod_unload kvod
}

# kvod_knob NAME: the path of kvod's test knob NAME (kmod/debugfs.c),
# mounting debugfs if it is not; kvod must be loaded.
kvod_knob() {
	local d=/sys/kernel/debug

	[ -d "$d/kvod" ] || mount -t debugfs none "$d" 2>/dev/null
	echo "$d/kvod/$1"
}

# What the shell tests read back from the module, through kvodctl.
# Listeners are read from "kvodctl list --json", movies from "kvodctl
# info", the module's counters from "kvodctl stats"; the test kvodctl.sh
# checks these formats themselves.
#
#	listener_counters PROTO ENDPOINT	its counters, "name=value" a line
#	listener_counter PROTO ENDPOINT NAME	one of them (kvodctl's name:
#						active, rej_busy, 404, ...)
#	listeners PROTO				ENDPOINT of each, a line
#	movie_field NAME FIELD			a field of "kvodctl info NAME"
#						(bytes_served, chunks, ...)
#	movie_clients NAME			its active_clients
#	pushes					pushes listed
#	no_pushes				true if there are none
#	kvod_stats				the module's counters into
#						KVOD_STATS[NAME] (kvodctl's
#						name: movies, zombies,
#						resident, resident_max, ...)
#	kvod_stat NAME				one of them
#
# ENDPOINT is as kvodctl prints it: 198.18.0.1:7471, [::1]:8080.

KVODCTL=${KVODCTL:-$KVOD_BIN/kvodctl}
declare -gA KVOD_STATS=()

# They parse kvodctl's output with builtins: kvodctl list --json is one
# line of compact JSON whose keys come in a fixed order (kvodctl.sh checks
# it), and a poll of one of these ran kvodctl, jq and sed: six process
# starts, seconds each on the debug kernel.

# kvod_listener_counters PROTO ENDPOINT: set KVOD_COUNTERS to the
# listener's counters, "name:value" each; fail if it is not listed.
kvod_listener_counters() {
	local out rest

	KVOD_COUNTERS=()
	out=$("$KVODCTL" list --json) || return 1
	rest=${out#*"{\"proto\":\"$1\",\"address\":\"$2\","}
	[ "$rest" != "$out" ] || return 1
	rest=${rest#*\"counters\":\{}
	rest=${rest%%\}*}
	IFS=, read -r -a KVOD_COUNTERS <<<"${rest//\"/}"
}

listener_counters() {
	local kv

	kvod_listener_counters "$@" || return 0
	for kv in "${KVOD_COUNTERS[@]}"; do
		echo "${kv/:/=}"
	done
}

listener_counter() {
	local kv

	kvod_listener_counters "$1" "$2" || return 0
	for kv in "${KVOD_COUNTERS[@]}"; do
		[ "${kv%%:*}" != "$3" ] || echo "${kv#*:}"
	done
}

listeners() {
	local out key="{\"proto\":\"$1\",\"address\":\""

	out=$("$KVODCTL" list --json) || return 0
	while [[ $out == *"$key"* ]]; do
		out=${out#*"$key"}
		echo "${out%%\"*}"
	done
}

movie_field() {
	local out line

	out=$("$KVODCTL" info "$1") || return 0
	while IFS= read -r line; do
		[[ $line != "$2: "* ]] || echo "${line#"$2: "}"
	done <<<"$out"
}

movie_clients() {
	movie_field "$1" active_clients
}

pushes() {
	local out n=0

	out=$("$KVODCTL" list --json) || return 0
	out=${out#*\"pushes\":\[}
	while [[ $out == *'{"id":'* ]]; do
		out=${out#*'{"id":'}
		n=$((n + 1))
	done
	echo "$n"
}

no_pushes() {
	[ "$(pushes)" = 0 ]
}

# One process (kvodctl) for all the counters, parsed with read: a process
# start costs seconds on the debug kernel. False, and KVOD_STATS empty, if
# kvodctl fails.
kvod_stats() {
	local out key val

	KVOD_STATS=()
	out=$("$KVODCTL" stats) || return 1
	while IFS=': ' read -r key val; do
		# shellcheck disable=SC2034 # the tests read it
		KVOD_STATS[$key]=$val
	done <<<"$out"
}

kvod_stat() {
	kvod_stats || return 0
	echo "${KVOD_STATS[$1]:-}"
}

# kvod-fetch's exit on a signal, as the HTTP and RDMA tests check it.
#
#	size_of FILE			its size, 0 if it is not there (yet)
#	interrupted ERRFILE		"yes" if kvod-fetch said a SIGTERM
#					stopped it
#	sigterm_midway LIMIT SIZE OUT ERR CMD...
#		run CMD (a kvod-fetch writing OUT, its messages to ERR) in
#		the background, SIGTERM it once OUT has bytes (waiting up to
#		LIMIT seconds), and print "STATUS SAID SHORT": its exit
#		status, whether it said so, whether OUT has under SIZE bytes

size_of() {
	stat -c %s "$1" 2>/dev/null || echo 0
}

interrupted() {
	grep -qx 'kvod-fetch: interrupted by SIGTERM' "$1" && echo yes
}

sigterm_midway() {
	local limit=$1 size=$2 out=$3 err=$4 pid rc=0

	shift 4
	"$@" 2>"$err" &
	pid=$!
	wait_test "$limit" -gt 0 size_of "$out"
	kill -TERM "$pid"
	wait "$pid" || rc=$?
	echo "$rc $(interrupted "$err") $([ "$(size_of "$out")" -lt "$size" ] && echo yes)"
}

# Where a stuck task waits, for a test about to fail on a timeout.
#
#	proc_where PID...	for each PID: its name, state and system call
#				(number and arguments, /proc/PID/syscall), then
#				its kernel stack; "gone" for a PID that ended

# proc_where PID...: what a test prints of tasks it waited for in vain.
# Reading another task's syscall and stack needs root, as the guest is.
proc_where() {
	local p

	for p; do
		if [ ! -d "/proc/$p" ]; then
			echo "$p: gone"
			continue
		fi
		echo "$(cat "/proc/$p/comm" 2>/dev/null) $p:" \
			"$(awk '/^State:/ { print $2, $3 }' "/proc/$p/status" 2>&1)," \
			"syscall $(cat "/proc/$p/syscall" 2>&1)"
		sed 's/^/  /' "/proc/$p/stack" 2>&1
	done
}
