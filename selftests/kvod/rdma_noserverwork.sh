#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# "The server posts no work per chunk": with the function tracer on every
# function of kvod.ko, READ 128 MiB of a movie (divided by
# $KVOD_TIMEOUT_SCALE on a slow kernel) and count kvod's calls
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

# The movie is mkpattern's title 1. mkpattern makes its bytes in user
# space, where /dev/urandom makes them in the kernel 64 bytes at a time,
# each time through copy_to_iter() and its checks, slow on the debug
# kernel; and "mkpattern check" checks the READ as it arrives, bytes and
# length, with no second pass over the file for a digest to compare.
PATTERN=$KVOD_SELFTESTS/kvod/mkpattern
[ -x "$PATTERN" ] || ktap_bail_out "$PATTERN not built (make selftests)"
# A slow kernel READs 128 MiB divided by KVOD_TIMEOUT_SCALE: work per
# READ, chunk or MR would show in the first of them, and at scale 4
# there are still 32 READs of 1 MiB over 16 chunks of 2 MiB (32 MRs
# over siw); the transfer still takes longer than 128 MiB take on
# Debian's kernel, for work on a timer.
mib=$((128 / ${KVOD_TIMEOUT_SCALE:-1}))
size=$(((mib + 2) << 20))
"$PATTERN" gen 1 "$size" >"$RDMA_TMP/film" ||
	ktap_bail_out "cannot make a movie"
"$KVODCTL" add film "$RDMA_TMP/film" || ktap_bail_out "cannot add a movie"

kvod_trace_on
got=$(KVOD_TRACE_MARKER=$FTRACE_DIR/trace_marker "$RDMA_CLIENT" "$RXE_ADDR" \
	read film 0 $((mib << 20)) | "$PATTERN" check 1 0 $((mib << 20)) 2>&1)
# The trace is read where it is, stopped, before kvod_trace_off (below)
# empties it.
echo 0 >"$FTRACE_DIR/tracing_on"
trace=$FTRACE_DIR/trace

check_eq "$mib MiB READ byte-exact" "ok $((mib << 20)) bytes" "$got"
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
	}' "$trace")
read -r before during ready_wc ka secs <<<"$counts"
read -r ka_every </sys/module/kvod/parameters/rdma_keepalive
ka_max=$((ka_every ? 3 * (secs / ka_every) + 3 : 0))
ktap_print_msg "kvod calls: $before during setup, $during during the transfer" \
	"(and $ready_wc late completion of the READY send, $ka of the" \
	"keep-alive in the ${secs} s it took, at most $ka_max)"
ktap_print_msg "$(awk '!/^#/ { print $NF, $(NF-1); if (++n == 5) exit }' "$trace")"
check_eq "the tracer saw kvod's connection setup" yes \
	"$([ "${before:-0}" -gt 0 ] && echo yes)"
check_eq "no kvod function ran while $mib MiB were READ, but keep-alives" \
	"0 yes yes" \
	"${during:-missing} $([ "${ready_wc:-2}" -le 1 ] && echo yes) $([ "${ka:-1}" -le "$ka_max" ] && echo yes)"
[ "${during:-0}" = 0 ] ||
	ktap_print_msg "$(awk '/setup done/ { p = 1 } p && n++ == 20 { exit } p' "$trace")"
kvod_trace_off

rdma_test_stop
ktap_finish
