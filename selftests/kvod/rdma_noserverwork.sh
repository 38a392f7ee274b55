#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# "The server posts no work per chunk": with the function tracer on every
# function of kvod.ko, READ 128 MiB of a movie and count kvod's calls
# between the client's "setup done" and "transfer done" trace markers.
# There must be none; the setup before must show some, or the tracer
# was not looking. One exception: the completion of the server's READY
# SEND (conn_wc_done) may be reaped just after the client has the message;
# it is counted apart and may appear once. The keep-alive (one zero-length
# WRITE every rdma_keepalive seconds, kmod/rdma_keepalive.c) is work per
# time, not per chunk: its calls are counted apart too, and there may be
# at most 3 per rdma_keepalive seconds the transfer took, plus 3.
#
# timeout: 600
# transports: rxe siw:debug

# shellcheck source=selftests/lib/ktap.sh
. "$(dirname "$0")/../lib/ktap.sh"
# shellcheck source=selftests/lib/rdma.sh
. "$(dirname "$0")/../lib/rdma.sh"
# shellcheck source=selftests/lib/trace.sh
. "$(dirname "$0")/../lib/trace.sh"
rdma_test_init
rdma_on_exit() {
	kvod_trace_off 2>/dev/null
}

ktap_header
ktap_plan 3
rdma_test_start

size=$((130 << 20))
movie_add film "$size" || ktap_bail_out "cannot add a movie"

kvod_trace_on
got=$(KVOD_TRACE_MARKER=$FTRACE_DIR/trace_marker "$RDMA_CLIENT" "$RXE_ADDR" \
	read film 0 $((128 << 20)) | sha256sum)
echo 0 >"$FTRACE_DIR/tracing_on"
cp "$FTRACE_DIR/trace" "$RDMA_TMP/trace"
kvod_trace_off

check_eq "128 MiB READ byte-exact" \
	"$(head -c $((128 << 20)) "$RDMA_TMP/film" | sha256sum)" "$got"
counts=$(awk '
	function stamp() {
		return match($0, /[0-9]+\.[0-9]+: /) ? \
			substr($0, RSTART, RLENGTH - 2) : 0
	}
	BEGIN { phase = 0 }
	/^#/ { next }
	/rdma_client: setup done/ { phase = 1; t0 = stamp(); next }
	/rdma_client: transfer done/ { phase = 2; t1 = stamp(); next }
	phase == 1 && / conn_wc_done <-/ { wc++; next }
	phase == 1 && / keepalive_[a-z]* <-/ { ka++; next }
	{ n[phase]++ }
	END {
		if (phase != 2)
			print "0 markers-missing 0 0 0"
		else
			printf "%d %d %d %d %d\n", n[0], n[1], wc, ka, \
				int(t1 - t0) + 1
	}' "$RDMA_TMP/trace")
read -r before during ready_wc ka secs <<<"$counts"
ka_every=$(cat /sys/module/kvod/parameters/rdma_keepalive)
ka_max=$((ka_every ? 3 * (secs / ka_every) + 3 : 0))
ktap_print_msg "kvod calls: $before during setup, $during during the transfer" \
	"(and $ready_wc late completion of the READY send, $ka of the" \
	"keep-alive in the ${secs} s it took, at most $ka_max)"
ktap_print_msg "$(awk '!/^#/ { print $NF, $(NF-1) }' "$RDMA_TMP/trace" | head -n 5)"
check_eq "the tracer saw kvod's connection setup" yes \
	"$([ "${before:-0}" -gt 0 ] && echo yes)"
check_eq "no kvod function ran while 128 MiB were READ, but keep-alives" \
	"0 yes yes" \
	"${during:-missing} $([ "${ready_wc:-2}" -le 1 ] && echo yes) $([ "${ka:-1}" -le "$ka_max" ] && echo yes)"
[ "${during:-0}" = 0 ] || ktap_print_msg "$(awk '/setup done/ { p = 1 } p' "$RDMA_TMP/trace" | head -n 20)"

rdma_test_stop
ktap_finish
