# SPDX-License-Identifier: GPL-2.0
#
# Readers of live channels over RDMA, for live_rdma.sh and
# live_rdma_writer.sh: kvod-fetch plays a channel into live_tool.py
# check, which checks every numbered MPEG-TS packet (sourced; not a
# test). It sources lib/rdma.sh and lib/live.sh; play() takes
# lib/live.sh's $PPC unless the caller sets its own.

# shellcheck source=selftests/lib/rdma.sh
. "$(dirname "${BASH_SOURCE[0]}")/rdma.sh"

# shellcheck source=selftests/lib/live.sh
. "$(dirname "${BASH_SOURCE[0]}")/live.sh"

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
