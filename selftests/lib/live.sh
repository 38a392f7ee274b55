# SPDX-License-Identifier: GPL-2.0
#
# Shared by the live_*.sh tests (sourced; not a test, and after
# ktap.sh): live_tool.py, the ring chunk the tests use, and reading its
# "key=value" result lines; feeds (live_feed, live_encode, live_replay);
# waits that say where they are stuck (live_watchdog, wait_bounded); and
# the readers of live channels over RDMA (play, summary, last), for
# live_rdma.sh and live_rdma_writer.sh, which source rdma.sh too.

# The system interpreter: a pyenv shim costs half a minute per start here.
LT=(/usr/bin/python3 -S "$(dirname "${BASH_SOURCE[0]}")/../kvod/live_tool.py")
# shellcheck disable=SC2034 # used by the tests that source this
PPC=16					# packets per chunk
# shellcheck disable=SC2034 # used by the tests that source this
CHUNK=$((PPC * 188))
# The most delay from writer to reader the delay checks allow: 2 s on
# Debian's kernel.
# shellcheck disable=SC2034 # used by the tests that source this
DELAY_MS=2000

# delay_unbounded: the delay checks are skipped (their figures still
# printed) where every timeout is scaled (the debug kernel): there a
# reader's delay measures the emulator, 20 to 30 s at the p99 alone.
delay_unbounded() {
	[ "${KVOD_TIMEOUT_SCALE:-1}" -gt 1 ]
}

# field KEY LINE: the value of KEY=... in a live_tool.py result line.
field() {
	local v

	kv_into v "$1" "$2"
	[ -z "$v" ] || echo "$v"
}

# fields LINE KEY...: those values, blank-separated, on one line.
fields() {
	local line=$1 k v vals=()

	shift
	for k; do
		kv_into v "$k" "$line"
		[ -z "$v" ] || vals+=("$v")
	done
	echo "${vals[*]}"
}

# live_feed NAME GEN-ARGS...: live_tool.py gen into "kvodctl live feed
# NAME", in the foreground.
live_feed() {
	local name=$1

	shift
	"${LT[@]}" gen "$@" | "$KVODCTL" live feed "$name"
}

# live_encode SECS [INPUT OPTIONS]: SECS of test pattern and tone, as
# MPEG-TS on stdout (about 0.1 s a 3760-byte chunk), one encoder thread.
# make selftests encodes the live tests' clip with it on the host
# (clip.ts): in a debug guest ffmpeg's time is mostly system time, and
# it fell behind real time by about 50 times.
live_encode() {
	local secs=$1

	shift
	ffmpeg -v error "$@" -f lavfi -i testsrc=size=160x120:rate=10 \
		-f lavfi -i sine=frequency=440:sample_rate=22050 -t "$secs" \
		-threads 1 -c:v mpeg2video -b:v 200k -g 10 -c:a mp2 -b:a 64k \
		-f mpegts -
}

# live_where: where the live tools, ffmpeg and kvodctl are (state, wait
# channel, and each one's system call and kernel stack) and what kvodctl
# lists.
live_where() {
	ps -e -o pid,ppid,stat,wchan:32,etime,args |
		awk 'NR == 1 || (/live_tool|kvodctl|ffmpeg|sleep/ && !/awk/)'
	# shellcheck disable=SC2046 # one PID a word
	proc_where $(pgrep -f 'live_tool|kvodctl')
	"$KVODCTL" list 2>&1
}

# live_watchdog SECS: after SECS seconds print live_where, so that a test
# its runner's timeout is about to kill says what it waits for. It runs
# in the background until then; live_watchdog_stop ends it.
live_watchdog() {
	(
		trap 'kill "$nap" 2>/dev/null; exit 0' TERM
		sleep "$1" &
		nap=$!
		wait "$nap"
		ktap_print_msg "watchdog: still running after $1 s" \
			"$(live_where)"
	) &
	LIVE_WATCHDOG=$!
}

live_watchdog_stop() {
	[ -n "${LIVE_WATCHDOG:-}" ] || return 0
	kill "$LIVE_WATCHDOG" 2>/dev/null
	wait "$LIVE_WATCHDOG" 2>/dev/null
	LIVE_WATCHDOG=
}

# wait_bounded SECS PID...: wait for the PIDs (children of this shell),
# at most SECS seconds. Past that, print live_where, kill the PIDs and
# return 1.
wait_bounded() {
	local secs=$1 deadline=$(($1 + SECONDS)) p left

	shift
	while :; do
		left=()
		for p; do
			kill -0 "$p" 2>/dev/null && left+=("$p")
		done
		[ "${#left[@]}" = 0 ] && break
		if [ "$SECONDS" -ge "$deadline" ]; then
			ktap_print_msg "still running after $secs s: ${left[*]}" \
				"$(live_where)"
			kill "${left[@]}" 2>/dev/null
			wait "${left[@]}" 2>/dev/null
			return 1
		fi
		sleep_nofork 0.2
	done
	wait "$@"
	return 0
}

# live_replay FILE [OUTPUT OPTIONS]: FILE (MPEG-TS) on stdout at its own
# rate, looped with continuous timestamps, for ever unless the options
# say "-t SECS": a real-time feed whose ffmpeg copies packets instead of
# encoding, which on the debug kernel did not produce a chunk in 120 s.
live_replay() {
	ffmpeg -v error -re -stream_loop -1 -i "$1" "${@:2}" -c copy -f mpegts -
}

# Readers of live channels over RDMA, for live_rdma.sh and
# live_rdma_writer.sh: kvod-fetch plays a channel into live_tool.py
# check, which checks every numbered MPEG-TS packet. They need rdma.sh
# ($KVOD_FETCH, $RDMA_URL) and rdma_test_init's $RDMA_TMP; play() takes
# $PPC above unless the caller sets its own.

# play NAME TAG [ARGS...]: kvod-fetch NAME into live_tool.py check (with
# $CHECK_ARGS), in the background, killed after $PLAY_TIMEOUT seconds if
# set; returns once kvod-fetch has said which chunk it starts from. In
# $RDMA_TMP: TAG.check its check line, TAG.fetch kvod-fetch's stderr
# (with its summary), TAG.rc kvod-fetch's status (0 for a channel that
# ended), TAG.last the last packet it took ("none" before any).
# $CHECK_ARGS must not carry --progress: live_tool.py takes play()'s.
play() {
	local name=$1 tag=$2 limit=()

	shift 2
	[ -z "${PLAY_TIMEOUT:-}" ] || limit=(timeout "$PLAY_TIMEOUT")
	echo none >"$RDMA_TMP/$tag.last"
	# shellcheck disable=SC2086 # CHECK_ARGS is a list of words
	{
		"${limit[@]}" "$KVOD_FETCH" "$@" "$RDMA_URL/$name" \
			2>"$RDMA_TMP/$tag.fetch" |
			"${LT[@]}" check --ppc "$PPC" \
				--progress "$RDMA_TMP/$tag.last" \
				${CHECK_ARGS:-} >"$RDMA_TMP/$tag.check"
		echo "${PIPESTATUS[0]}" >"$RDMA_TMP/$tag.rc"
	} &
	wait_for "$(time_limit 30)" grep -q "from chunk" "$RDMA_TMP/$tag.fetch"
}

# summary TAG KEY: a number from kvod-fetch's "live:" summary line.
summary() {
	sed -n "s/.* \([0-9]*\) $2\b.*/\1/p" "$RDMA_TMP/$1.fetch"
}

# last TAG: the last packet reader TAG took ("none" before any).
last() {
	cat "$RDMA_TMP/$1.last"
}
