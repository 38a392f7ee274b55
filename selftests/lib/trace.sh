# SPDX-License-Identifier: GPL-2.0
#
# Tracing, for the tests that look at what kvod runs (sourced, after
# ktap.sh; not a test): the function tracer on kvod.ko's functions
# (live_http.sh, live_noserverwork.sh, push_rtp.sh, rdma_noserverwork.sh),
# the zero-copy probes (http_zerocopy.sh, push_zerocopy.sh,
# live_http.sh, live_rtp.sh) and the work runs probe (library_slow.sh).
# Each puts back what it changed; a program
# killed by its timeout cannot, and selftests/run_guest.sh puts tracing as
# at boot before the next (tracefs_reset, lib/runner.sh).
#
#	$FTRACE_DIR		the tracefs directory (trace, trace_marker)

FTRACE_DIR=/sys/kernel/tracing

# The function tracer on every function of kvod.ko, for the tests that
# count what kvod runs.
#
#	kvod_trace_on		mount tracefs if needed, trace kvod's
#				functions into a cleared 16 MiB buffer;
#				bails out if the kernel cannot
#	kvod_graph_on FUNC	the same with the function graph tracer,
#				on kvod's functions called under FUNC
#				only, in its task, not in interrupts
#	kvod_trace_off		stop, and leave the tracer as it was found
#				(no tracer, tracing_on 1 as at boot)

kvod_trace_on() {
	kvod_trace_start function
}

kvod_graph_on() {
	kvod_trace_start function_graph "$1"
}

# kvod_trace_start TRACER [FUNC]
kvod_trace_start() {
	[ -d "$FTRACE_DIR/events" ] ||
		mount -t tracefs nodev "$FTRACE_DIR" 2>/dev/null
	[ -w "$FTRACE_DIR/set_ftrace_filter" ] ||
		ktap_bail_out "no function tracer in $FTRACE_DIR"
	echo 0 >"$FTRACE_DIR/tracing_on"
	echo ':mod:kvod' >"$FTRACE_DIR/set_ftrace_filter" ||
		ktap_bail_out "cannot filter on kvod"
	ktap_print_msg "tracing $(wc -l <"$FTRACE_DIR/set_ftrace_filter") kvod functions"
	if [ -n "${2:-}" ]; then
		echo "$2" >"$FTRACE_DIR/set_graph_function" ||
			ktap_bail_out "cannot graph $2"
		echo 0 >"$FTRACE_DIR/options/funcgraph-irqs"
	fi
	echo 16384 >"$FTRACE_DIR/buffer_size_kb"
	echo "$1" >"$FTRACE_DIR/current_tracer"
	echo >"$FTRACE_DIR/trace"
	echo 1 >"$FTRACE_DIR/tracing_on"
}

kvod_trace_off() {
	echo 0 >"$FTRACE_DIR/tracing_on"
	echo nop >"$FTRACE_DIR/current_tracer"
	echo >"$FTRACE_DIR/set_ftrace_filter"
	echo >"$FTRACE_DIR/set_graph_function"
	echo 1 >"$FTRACE_DIR/options/funcgraph-irqs"
	echo 1 >"$FTRACE_DIR/tracing_on"
}

# The zero-copy probes: two return probes in the kprobe group $ZC_GROUP,
# "sent" on the socket's sendmsg (what the protocol accepted from each
# call) and "splice" on skb_splice_from_iter() (what it took by page
# reference, the MSG_SPLICE_PAGES path). Per sender, sent minus spliced
# is what the protocol copied in.

ZC_GROUP=kvodzc

# zc_probes_on SENDMSG: add both probes on SENDMSG (tcp_sendmsg,
# udp_sendmsg), empty the trace and start tracing.
zc_probes_on() {
	[ -d "$FTRACE_DIR/events" ] || mount -t tracefs nodev "$FTRACE_DIR" ||
		ktap_bail_out "no tracefs"
	echo 0 >"$FTRACE_DIR/tracing_on"
	echo >"$FTRACE_DIR/trace"
	echo 4096 >"$FTRACE_DIR/buffer_size_kb"
	# shellcheck disable=SC2016 # $retval is tracefs syntax
	ZC_PROBES=("r:$ZC_GROUP/sent $1 ret=\$retval:s32"
		"r:$ZC_GROUP/splice skb_splice_from_iter ret=\$retval:s64")
	for p in "${ZC_PROBES[@]}"; do
		echo "$p" >>"$FTRACE_DIR/kprobe_events" ||
			ktap_bail_out "cannot add probe $p: $(tail -n2 "$FTRACE_DIR/error_log")"
	done
	echo 1 >"$FTRACE_DIR/events/$ZC_GROUP/enable"
	echo 1 >"$FTRACE_DIR/tracing_on"
}

# zc_probes_off: stop tracing and remove the probes (safe to call twice);
# removing them empties the trace. tracing_on is left 1, as at boot.
zc_probes_off() {
	local p

	[ -d "$FTRACE_DIR/events/$ZC_GROUP" ] || return 0
	echo 0 >"$FTRACE_DIR/tracing_on"
	echo 0 >"$FTRACE_DIR/events/$ZC_GROUP/enable"
	for p in "${ZC_PROBES[@]}"; do
		p=${p%% *}
		echo "-:${p#r:}" >>"$FTRACE_DIR/kprobe_events"
	done
	echo 1 >"$FTRACE_DIR/tracing_on"
}

# zc_sums: stop tracing; print "SENT SPLICED CSENT CSPLICED" from the
# trace: the bytes sent and spliced by kworkers (kvod), then by python
# (the copying control). Before zc_probes_off, which empties the trace.
zc_sums() {
	echo 0 >"$FTRACE_DIR/tracing_on"
	awk '
		/ (sent|splice): / {
			comm = $1; sub(/-[0-9]+$/, "", comm)
			who = comm ~ /^kworker/ ? "kworker" : comm ~ /python/ ? "control" : "other"
			ev = $0 ~ / splice: / ? "splice" : "sent"
			v = $NF; sub(/^ret=/, "", v)
			if (v > 0) n[who "_" ev] += v
		}
		END {
			printf "%d %d %d %d\n", n["kworker_sent"], n["kworker_splice"],
				n["control_sent"], n["control_splice"]
		}
	' "$FTRACE_DIR/trace"
}

# zc_tcp_control MIB: the control of a TCP test: python (the "control" of
# zc_sums) sends MIB MiB over loopback TCP with a plain, copying send.
zc_tcp_control() {
	/usr/bin/python3 -S - "$1" <<'PY'
import socket, sys, threading
srv = socket.socket()
srv.bind(("127.0.0.1", 0))
srv.listen(1)
def sink():
    c, _ = srv.accept()
    while c.recv(1 << 20):
        pass
t = threading.Thread(target=sink)
t.start()
s = socket.create_connection(srv.getsockname())
s.sendall(b"x" * (int(sys.argv[1]) << 20))
s.close()
t.join()
PY
}

# zc_udp_control N [PREFIX...]: the control of a UDP test: python sends N
# datagrams of 1316 bytes to a port of 127.0.0.1 nobody listens on, with a
# plain, copying sendto(), run under PREFIX (a netns wrapper) if given.
zc_udp_control() {
	"${@:2}" /usr/bin/python3 -S - "$1" <<'PY'
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for _ in range(int(sys.argv[1])):
    s.sendto(b"x" * 1316, ("127.0.0.1", 9))
PY
}

# The work runs probe: how long each run of some work functions took,
# from the workqueue_execute_start and workqueue_execute_end tracepoints,
# which fire in the worker around each run, filtered in the kernel on the
# functions. A run is a worker's start to its next end, on the mono
# clock, as an unbound worker may end a run on another CPU.
#
#	wq_probe_on FUNC...	trace the runs of the work functions FUNC
#				(MODULE:NAME, as kallsyms resolves it) into a
#				cleared 16 MiB buffer; bails out if the
#				kernel cannot
#	wq_runs			stop tracing; print "NAME RUNS MAX_MS" for
#				each function that ran, the longest run in
#				whole milliseconds
#	wq_probe_off		events off, filters cleared, the clock as
#				found, tracing on (safe to call twice)

WQ_EVENTS=(workqueue_execute_start workqueue_execute_end)
WQ_CLOCK=

wq_probe_on() {
	local e f filter='' w

	[ -d "$FTRACE_DIR/events" ] || mount -t tracefs nodev "$FTRACE_DIR" ||
		ktap_bail_out "no tracefs"
	[ -d "$FTRACE_DIR/events/workqueue" ] ||
		ktap_bail_out "no workqueue tracepoints"
	for f; do
		filter+="${filter:+ || }function.function == $f"
	done
	echo 0 >"$FTRACE_DIR/tracing_on"
	read -r -a w <"$FTRACE_DIR/trace_clock"
	for e in "${w[@]}"; do
		[[ $e != \[*\] ]] || WQ_CLOCK=${e:1:-1}
	done
	echo mono >"$FTRACE_DIR/trace_clock" || ktap_bail_out "no mono trace clock"
	echo 16384 >"$FTRACE_DIR/buffer_size_kb"
	for e in "${WQ_EVENTS[@]}"; do
		echo "$filter" >"$FTRACE_DIR/events/workqueue/$e/filter" ||
			ktap_bail_out "cannot filter $e on $*: $(tail -n2 "$FTRACE_DIR/error_log")"
		echo 1 >"$FTRACE_DIR/events/workqueue/$e/enable"
	done
	: >"$FTRACE_DIR/trace"
	echo 1 >"$FTRACE_DIR/tracing_on"
}

wq_runs() {
	echo 0 >"$FTRACE_DIR/tracing_on"
	awk '
		{
			t = ""
			for (i = 2; i <= NF; i++)
				if ($i ~ /^[0-9]+\.[0-9]+:$/) {
					t = substr($i, 1, length($i) - 1)
					break
				}
		}
		t == "" || !match($0, /: function [^ ]+/) { next }
		{ fn = substr($0, RSTART + 11, RLENGTH - 11) }
		/ workqueue_execute_start: / { start[$1] = t }
		/ workqueue_execute_end: / && ($1 in start) {
			ms = (t - start[$1]) * 1000
			runs[fn]++
			if (ms > max[fn])
				max[fn] = ms
			delete start[$1]
		}
		END { for (fn in runs) printf "%s %d %d\n", fn, runs[fn], max[fn] }
	' "$FTRACE_DIR/trace" | sort
}

wq_probe_off() {
	local e

	echo 0 >"$FTRACE_DIR/tracing_on"
	for e in "${WQ_EVENTS[@]}"; do
		echo 0 >"$FTRACE_DIR/events/workqueue/$e/enable"
		echo 0 >"$FTRACE_DIR/events/workqueue/$e/filter"
	done
	[ -z "$WQ_CLOCK" ] || echo "$WQ_CLOCK" >"$FTRACE_DIR/trace_clock"
	WQ_CLOCK=
	: >"$FTRACE_DIR/trace"
	echo 1 >"$FTRACE_DIR/tracing_on"
}
