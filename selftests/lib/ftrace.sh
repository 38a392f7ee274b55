# SPDX-License-Identifier: GPL-2.0
#
# The function tracer on every function of kvod.ko, for the tests that
# count what kvod runs (sourced, after ktap.sh; not a test).
#
#	kvod_trace_on		mount tracefs if needed, trace kvod's
#				functions into a cleared 16 MiB buffer;
#				bails out if the kernel cannot
#	kvod_graph_on FUNC	the same with the function graph tracer,
#				on kvod's functions called under FUNC
#				only, in its task, not in interrupts
#	kvod_trace_off		stop, and leave the tracer as it was found
#				(no tracer, tracing_on 1 as at boot)
#	$T			the tracefs directory (trace, trace_marker)

T=/sys/kernel/tracing

kvod_trace_on() {
	kvod_trace_start function
}

kvod_graph_on() {
	kvod_trace_start function_graph "$1"
}

# kvod_trace_start TRACER [FUNC]
kvod_trace_start() {
	[ -d "$T/events" ] || mount -t tracefs nodev "$T" 2>/dev/null
	[ -w "$T/set_ftrace_filter" ] ||
		ktap_bail_out "no function tracer in $T"
	echo 0 >"$T/tracing_on"
	echo ':mod:kvod' >"$T/set_ftrace_filter" ||
		ktap_bail_out "cannot filter on kvod"
	ktap_print_msg "tracing $(wc -l <"$T/set_ftrace_filter") kvod functions"
	if [ -n "${2:-}" ]; then
		echo "$2" >"$T/set_graph_function" ||
			ktap_bail_out "cannot graph $2"
		echo 0 >"$T/options/funcgraph-irqs"
	fi
	echo 16384 >"$T/buffer_size_kb"
	echo "$1" >"$T/current_tracer"
	echo >"$T/trace"
	echo 1 >"$T/tracing_on"
}

kvod_trace_off() {
	echo 0 >"$T/tracing_on"
	echo nop >"$T/current_tracer"
	echo >"$T/set_ftrace_filter"
	echo >"$T/set_graph_function"
	echo 1 >"$T/options/funcgraph-irqs"
	echo 1 >"$T/tracing_on"
}
