#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# "A note is the server's only work per chunk per client; a client that
# polls costs it nothing" (live.rst), measured with the function tracer on
# every function of kvod.ko. The same 64 chunks are written into a live
# channel three times, from a file (so kvodctl makes the same writes each
# time), between trace markers: with no RDMA client, with a client that
# polls the head (kvod-fetch --poll), and with one that takes notes. Per
# kvod function, the calls of each round are counted, leaving out the
# keep-alive (work per time, not per chunk: kmod/rdma_keepalive.c) and
# the runs of the channel's fan-out work (kmod/live.c: it runs for the
# chunks with or without clients, and how many runs it takes for a
# round's chunks depends on how the writer and the work interleave):
#
# - the polling client's round must make exactly the calls of the round
#   without a client, while the client was reading;
# - the noted client's round may add only the note functions of
#   kmod/rdma_note.c, with note_notify() once per chunk.
#
# Notes need receives, so over iWARP kvod-fetch polls (live_rdma.sh):
# Soft-RoCE only.
#
# timeout: 600
# transports: rxe

# shellcheck source=selftests/lib/ktap.sh
. "$(dirname "$0")/../lib/ktap.sh"
# shellcheck source=selftests/lib/rdma.sh
. "$(dirname "$0")/../lib/rdma.sh"
# shellcheck source=selftests/lib/live.sh
. "$(dirname "$0")/../lib/live.sh"
# shellcheck source=selftests/lib/trace.sh
. "$(dirname "$0")/../lib/trace.sh"
rdma_test_init

K=64					# chunks a round writes
READER=

rdma_on_exit() {
	kvod_trace_off 2>/dev/null
	[ -n "$READER" ] && kill "$READER" 2>/dev/null
}

# round NAME: write the K chunks of $RDMA_TMP/round.ts between the markers
# "round NAME begins" and "round NAME ends", then give what a chunk set
# off (notes, their completions) a second to run before the end marker.
round() {
	echo "kvodtest: round $1 begins" >"$FTRACE_DIR/trace_marker"
	"$KVODCTL" live feed tv <"$RDMA_TMP/round.ts" ||
		ktap_print_msg "round $1: kvodctl live feed failed"
	sleep "$(time_limit 1)"
	echo "kvodtest: round $1 ends" >"$FTRACE_DIR/trace_marker"
}

# round_with NAME READY ARGS...: round NAME with kvod-fetch ARGS reading the
# channel, once its messages match READY; the bytes it got in $got. It
# is gone, and so is its connection, when this returns.
round_with() {
	local name=$1 ready=$2

	shift 2
	"$KVOD_FETCH" "$@" "$RDMA_URL/tv" 2>"$RDMA_TMP/$name.fetch" \
		>"$RDMA_TMP/$name.ts" &
	READER=$!
	wait_for "$(time_limit 30)" grep -q "$ready" "$RDMA_TMP/$name.fetch"
	sleep "$(time_limit 1)"
	round "$name"
	got=$(stat -c %s "$RDMA_TMP/$name.ts")
	kill "$READER"
	wait "$READER"
	READER=
	wait_test "$(time_limit 30)" = 0 rdma_counter active
}

# calls NAME: "function count" per kvod function in round NAME, sorted,
# the keep-alive's and the fan-out's runs left out.
calls() {
	awk -v b="kvodtest: round $1 begins" -v e="kvodtest: round $1 ends" '
		index($0, b) { on = 1; next }
		index($0, e) { on = 0; next }
		on && match($0, / [A-Za-z0-9_.]+ <-/) {
			f = substr($0, RSTART + 1, RLENGTH - 4)
			if (f !~ /^(keepalive_|live_fanout$|fanout_next$)/)
				n[f]++
		}
		END { for (f in n) print f, n[f] }' "$RDMA_TMP/trace" | LC_ALL=C sort
}

ktap_header
ktap_plan 6
rdma_test_start

"$KVODCTL" live create tv --rdma --chunk "$CHUNK" --chunks 1024 ||
	ktap_bail_out "cannot create channel tv"
"${LT[@]}" gen $((K * PPC)) >"$RDMA_TMP/round.ts"
# A first chunk, for the readers to start from.
live_feed tv "$PPC"

kvod_trace_on
round none
round_with poll "from chunk" --poll 20
polled=$got
round_with notes "from chunk.*with notes"
noted=$got
echo 0 >"$FTRACE_DIR/tracing_on"
cp "$FTRACE_DIR/trace" "$RDMA_TMP/trace"
kvod_trace_off

calls none >"$RDMA_TMP/none"
calls poll >"$RDMA_TMP/poll"
calls notes >"$RDMA_TMP/notes"
ktap_print_msg "kvod calls without a client: $(paste -sd' ' "$RDMA_TMP/none")"
check_eq "the tracer saw the writer: one write of $K chunks" 1 \
	"$(awk '$1 == "feed_write_iter" { print $2 }' "$RDMA_TMP/none")"
check_eq "the polling client read the $K chunks as they came" yes \
	"$([ "$polled" -ge $((K * CHUNK)) ] && echo yes)"
check_eq "... and cost the server no call" "" \
	"$(diff "$RDMA_TMP/none" "$RDMA_TMP/poll")"
ktap_print_msg "kvod calls with a noted client: $(paste -sd' ' "$RDMA_TMP/notes")"
check_eq "the noted client read the $K chunks as they came" yes \
	"$([ "$noted" -ge $((K * CHUNK)) ] && echo yes)"
extra=$(LC_ALL=C join -a 1 -a 2 -e 0 -o 0,1.2,2.2 "$RDMA_TMP/none" "$RDMA_TMP/notes" |
	awk '$2 != $3 { print $1 }' | paste -sd' ')
check_ok "... and cost the server only note functions ($extra)" \
	test -n "$extra" -a -z "$(tr ' ' '\n' <<<"$extra" | grep -Ev '^note_(notify|post|done)$')"
check_eq "... note_notify once per chunk" "$K" \
	"$(awk '$1 == "note_notify" { print $2 }' "$RDMA_TMP/notes")"

rdma_test_stop
ktap_finish
