#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The runner puts the guest as at boot before every program (the resets
# of selftests/lib/runner.sh, called by run_guest.sh): on the guest's
# real tracefs, a program's leftovers (tracing off, the function tracer
# with a filter, graph settings, stack traces, an enabled kprobe and
# fprobe) are each reported and undone, and an event added afterwards is
# recorded; a plug left on lo, holding every packet, is removed and
# traffic flows again; a named namespace left with a tsock qdisc, which
# holds sch_tsock, is deleted and sch_tsock then unloaded. The guest's
# PATH is the system's (selftests/qemu/vm-run).
#
# timeout: 120

HERE=$(dirname "$0")
# shellcheck source=selftests/lib/ktap.sh
. "$HERE/../lib/ktap.sh"
# shellcheck source=selftests/lib/runner.sh
. "$HERE/../lib/runner.sh"

# What it tests is the guest's, whatever KVOD_TEST_HOST says.
if ! kvod_in_guest; then
	echo "1..0 # SKIP tests the resets of the selftests/qemu/vm-run guest, and this is none"
	exit 4
fi
ktap_header

T=/sys/kernel/tracing
[ -d "$T/events" ] || mount -t tracefs nodev "$T" 2>/dev/null
for f in set_ftrace_filter set_graph_function max_graph_depth \
	options/func_stack_trace kprobe_events dynamic_events; do
	[ -w "$T/$f" ] || ktap_bail_out "no $T/$f in this kernel"
done
[ -e "$KVOD_REPO/tools/tc/q_tsock.so" ] ||
	ktap_bail_out "tools/tc/q_tsock.so missing: run make all"
ktap_plan 15
NS=kvod-left-$$
trap 'tracefs_reset >/dev/null; lo_reset >/dev/null
	ip netns del "$NS" 2>/dev/null; modules_reset "" sch_tsock >/dev/null' EXIT

# state: what tracefs_reset writes, as at boot: "1 nop 0 0 0 0 0 '' none".
state() {
	echo "$(cat "$T/tracing_on") $(cat "$T/current_tracer")" \
		"$(grep -vc '^#' "$T/set_ftrace_filter")" \
		"$(grep -vc '^#' "$T/set_graph_function")" \
		"$(cat "$T/max_graph_depth") $(cat "$T/options/func_stack_trace")" \
		"$(cat "$T/events/enable") '$(cat "$T/dynamic_events")'" \
		"$([ -d "$T/events/kvodtr" ] && echo kvodtr || echo none)"
}

# vm-run gives the guest the system's PATH, not the host user's, whose
# version managers' shims start dozens of processes per command.
check_eq "the guest's PATH is the system's" \
	/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$PATH"
check_eq "the runner left tracing as at boot" "" "$(tracefs_reset)"

# What a program killed while tracing would leave.
echo 0 >"$T/tracing_on"
echo vfs_read >"$T/set_ftrace_filter"
echo function >"$T/current_tracer"
echo 1 >"$T/options/func_stack_trace"
echo vfs_read >"$T/set_graph_function"
echo 2 >"$T/max_graph_depth"
echo 'p:kvodtr/probe vfs_read' >>"$T/kprobe_events"
echo 'f:kvodtr/fprobe vfs_write' >>"$T/dynamic_events"
echo 1 >"$T/events/kvodtr/enable"
out=$(tracefs_reset)
rc=$?
check_eq "each leftover reported" \
	"tracing_on 0; tracer function; 1 functions filtered; 1 graph functions; max_graph_depth 2; func_stack_trace 1; events of kvodtr enabled; 2 probes" \
	"$out"
check_eq "reset with status 0" 0 "$rc"
check_eq "all undone (the enabled probes removed)" "1 nop 0 0 0 0 0 '' none" \
	"$(state)"
check_eq "a second reset finds nothing" "" "$(tracefs_reset)"

# Positive control: after the reset, tracing records.
echo 'p:kvodtr/probe vfs_read' >>"$T/kprobe_events"
echo 1 >"$T/events/kvodtr/enable"
cat /proc/version >/dev/null
# Off before reading: the trace file does not pause tracing, and a
# reader whose own reads hit the probe would never reach its end.
echo 0 >"$T/tracing_on"
n=$(grep -c ' probe: ' "$T/trace")
check_ok "an event enabled after the reset is recorded ($n hits)" \
	test "$n" -gt 0
check_eq "and reset again" "tracing_on 0; events of kvodtr enabled; 1 probes" \
	"$(tracefs_reset)"

# lo: what a program killed while it held lo's packets would leave.
# ping_lo: a TCP connection over lo, to a listener of its own, within 2 s.
ping_lo() {
	/usr/bin/python3 -S -c 'import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(1)
socket.create_connection(s.getsockname(), timeout=2)' 2>/dev/null
}
check_eq "the runner left lo without a qdisc" "" "$(lo_reset)"
# A plug under every band of a prio qdisc: nothing leaves lo.
if ! tc qdisc add dev lo root handle 1: prio; then
	ktap_print_msg "cannot add prio on lo"
fi
for b in 1 2 3; do
	tc qdisc add dev lo parent "1:$b" handle "${b}0:" plug limit 1000000 ||
		ktap_print_msg "cannot add a plug on lo"
done
held=no flows=no
ping_lo || held=yes
out=$(lo_reset)
if ping_lo; then
	flows=yes
fi
check_eq "a plug on lo held traffic, was removed, traffic flows" \
	"yes prio yes" "$held $out $flows"
lo_qdisc
check_eq "lo is as at boot" noqueue "$LO_QDISC"

# What a tsock program killed at its timeout leaves: its namespace, whose
# qdisc holds sch_tsock.
export TC_LIB_DIR=$KVOD_REPO/tools/tc
kmod_load sch_tsock || ktap_bail_out "insmod sch_tsock failed"
if ! { ip netns add "$NS" &&
	ip -n "$NS" link add va type veth peer name vb &&
	tc -n "$NS" qdisc add dev va root tsock; }; then
	ktap_print_msg "cannot leave a tsock qdisc in namespace $NS"
fi
check_fail "the namespace's qdisc holds sch_tsock" rmmod sch_tsock
check_eq "the leftover namespace is deleted and named" "$NS" "$(netns_reset)"
check_eq "sch_tsock is unloaded once the namespace has gone" \
	"# runner: unloaded leftover module sch_tsock before the next" \
	"$(modules_reset "before the next" sch_tsock)"
check_eq "no named namespace, no sch_tsock left" "0 no" \
	"$(ip netns list | wc -l) $([ -d /sys/module/sch_tsock ] && echo yes || echo no)"
ktap_finish
