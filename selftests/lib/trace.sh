# SPDX-License-Identifier: GPL-2.0
#
# Tracing, for the tests that look at what kvod runs (sourced, after
# ktap.sh; not a test): the function tracer on kvod.ko's functions
# (live_http.sh, live_noserverwork.sh, push_rtp.sh, rdma_noserverwork.sh)
# and the zero-copy probes (http_zerocopy.sh, push_zerocopy.sh,
# live_http.sh, live_rtp.sh). Each puts back what it changed; a program
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
