# SPDX-License-Identifier: GPL-2.0
#
# Tracing as at boot, before every program run_guest.sh runs (sourced;
# not a test). A program that traces (lib/ftrace.sh, lib/zerocopy.sh,
# the kprobes of http_load.sh, http_slow.sh, rdma_limits.sh and
# movie_free.sh) puts back what it changed, but one killed by its
# timeout cannot, and a later program reading its own events from a
# buffer left off, or a function tracer left on, would count nothing, or
# too much.

# tf_count FILE: set TF_N to the lines of FILE that are not comments
# (0 if it cannot be read).
tf_count() {
	local l=

	TF_N=0
	[ -r "$1" ] || return 0
	while IFS= read -r l || [ -n "$l" ]; do
		[[ -z $l || $l == \#* ]] || TF_N=$((TF_N + 1))
	done <"$1"
}

# tracefs_reset [DIR]: put the tracefs at DIR (/sys/kernel/tracing) as
# the kernel boots it: no tracer, no function filter or graph function,
# no graph depth limit, no stack traces, no event enabled, no probe, an
# empty buffer, tracing on (the buffer's size is left). Prints what was
# otherwise, "; "-separated (nothing if it was as at boot or is not
# mounted). Returns 1 if a file could not be written. It reads with
# builtins only: it runs before every program, and a process per file
# (a hundred event groups) took minutes on the debug kernel.
tracefs_reset() {
	local t=${1:-/sys/kernel/tracing} v e g probes rc=0
	local -a found=()

	[ -d "$t/events" ] || return 0
	read -r v <"$t/tracing_on"
	[ "$v" = 1 ] || found+=("tracing_on $v")
	read -r v <"$t/current_tracer"
	[ "$v" = nop ] || found+=("tracer $v")
	tf_count "$t/set_ftrace_filter"
	[ "$TF_N" = 0 ] || found+=("$TF_N functions filtered")
	tf_count "$t/set_graph_function"
	[ "$TF_N" = 0 ] || found+=("$TF_N graph functions")
	if [ -r "$t/max_graph_depth" ]; then
		read -r v <"$t/max_graph_depth"
		[ "$v" = 0 ] || found+=("max_graph_depth $v")
	fi
	if [ -r "$t/options/func_stack_trace" ]; then
		read -r v <"$t/options/func_stack_trace"
		[ "$v" = 0 ] || found+=("func_stack_trace $v")
	fi
	v=
	for g in "$t"/events/*/enable; do
		read -r e <"$g"
		g=${g%/enable}
		[ "$e" = 0 ] || v+=" ${g##*/}"
	done
	[ -z "$v" ] || found+=("events of$v enabled")
	# Every kind of probe (kprobe, fprobe, uprobe) is a dynamic event;
	# a kernel without dynamic_events has kprobe_events only.
	probes=$t/dynamic_events
	[ -e "$probes" ] || probes=$t/kprobe_events
	tf_count "$probes"
	[ "$TF_N" = 0 ] || found+=("$TF_N probes")

	# Off first; events off before their kprobes go (an enabled one
	# cannot be removed); the tracer before its filter.
	echo 0 >"$t/tracing_on" || rc=1
	echo 0 >"$t/events/enable" || rc=1
	echo nop >"$t/current_tracer" || rc=1
	if [ -w "$t/options/func_stack_trace" ]; then
		echo 0 >"$t/options/func_stack_trace" || rc=1
	fi
	if [ -w "$t/set_ftrace_filter" ]; then
		: >"$t/set_ftrace_filter" || rc=1
	fi
	if [ -w "$t/set_graph_function" ]; then
		: >"$t/set_graph_function" || rc=1
	fi
	if [ -w "$t/max_graph_depth" ]; then
		echo 0 >"$t/max_graph_depth" || rc=1
	fi
	: >"$probes" || rc=1
	: >"$t/trace" || rc=1
	echo 1 >"$t/tracing_on" || rc=1
	if ((${#found[@]})); then
		v=$(printf '; %s' "${found[@]}")
		echo "${v#; }"
	fi
	return "$rc"
}
