#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Host-side test of tracefs_reset (selftests/lib/runner.sh), which
# run_guest.sh calls before every program, on made-up tracefs
# directories: what it reports left, and what it writes. The real
# tracefs's side (enabled probes removed, events recorded after) is
# tested in a guest by selftests/kvod/runner_reset.sh. Loads nothing.
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
# shellcheck source=selftests/lib/ktap.sh
. "$REPO/selftests/lib/ktap.sh"
# shellcheck source=selftests/lib/runner.sh
. "$REPO/selftests/lib/runner.sh"

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# fake_tracefs DIR: DIR as tracefs is at boot (the files tracefs_reset
# reads and writes, with the values a booted kernel shows).
fake_tracefs() {
	mkdir -p "$1/events/sched" "$1/events/kvodzc" "$1/options"
	echo 1 >"$1/tracing_on"
	echo nop >"$1/current_tracer"
	echo '#### all functions enabled ####' >"$1/set_ftrace_filter"
	echo '#### all functions enabled ####' >"$1/set_graph_function"
	echo 0 >"$1/max_graph_depth"
	echo 0 >"$1/options/func_stack_trace"
	echo 0 >"$1/events/enable"
	echo 0 >"$1/events/sched/enable"
	echo 0 >"$1/events/kvodzc/enable"
	: >"$1/kprobe_events"
	: >"$1/dynamic_events"
	echo '# tracer: nop' >"$1/trace"
}

# state DIR: the files tracefs_reset writes, one line.
state() {
	printf '%s|' "$(cat "$1/tracing_on")" "$(cat "$1/current_tracer")" \
		"$(cat "$1/set_ftrace_filter")" "$(cat "$1/set_graph_function")" \
		"$(cat "$1/max_graph_depth")" \
		"$(cat "$1/options/func_stack_trace")" \
		"$(cat "$1/events/enable")" "$(cat "$1/dynamic_events")" \
		"$(cat "$1/trace")"
}

ktap_header
ktap_plan 9

B=$TMP/boot
fake_tracefs "$B"
out=$(tracefs_reset "$B")
check_eq "as at boot: nothing reported, status 0" "0 ''" "$? '$out'"
check_eq "as at boot: reset as at boot" "1|nop|||0|0|0|||" "$(state "$B")"

L=$TMP/left
fake_tracefs "$L"
echo 0 >"$L/tracing_on"
echo function >"$L/current_tracer"
printf 'kvod_open [kvod]\nkvod_release [kvod]\n' >"$L/set_ftrace_filter"
echo kvod_movie_put >"$L/set_graph_function"
echo 3 >"$L/max_graph_depth"
echo 1 >"$L/options/func_stack_trace"
echo 1 >"$L/events/kvodzc/enable"
echo X >"$L/events/sched/enable"
echo X >"$L/events/enable"
echo 'r:kvodzc/sent tcp_sendmsg' >"$L/kprobe_events"
printf 'r:kvodzc/sent tcp_sendmsg\nf:kvodrel/close tcp_close\n' \
	>"$L/dynamic_events"
echo 'kworker/0:1-42 [000] sent: ret=4096' >>"$L/trace"
out=$(tracefs_reset "$L")
check_eq "left by a program: each change reported, status 0" \
	"0 tracing_on 0; tracer function; 2 functions filtered; 1 graph functions; max_graph_depth 3; func_stack_trace 1; events of kvodzc sched enabled; 2 probes" \
	"$? $out"
check_eq "left by a program: reset as at boot" "1|nop|||0|0|0|||" "$(state "$L")"

U=$TMP/unmounted
mkdir "$U"
out=$(tracefs_reset "$U")
check_eq "not mounted: nothing reported or written, status 0" "0 '' ''" \
	"$? '$out' '$(ls -A "$U")'"

# A file that cannot be written (a directory in its place: root writes
# any file) fails the reset; the rest is still reset.
W=$TMP/unwritable
fake_tracefs "$W"
echo 0 >"$W/tracing_on"
rm "$W/dynamic_events"
mkdir "$W/dynamic_events"
tracefs_reset "$W" >"$TMP/w.out" 2>/dev/null
check_eq "a file not written: status 1, still reported" "1 tracing_on 0" \
	"$? $(cat "$TMP/w.out")"
check_eq "a file not written: the others reset, tracing on" "1 nop 0" \
	"$(cat "$W/tracing_on") $(cat "$W/current_tracer") $(cat "$W/events/enable")"

# A kernel without dynamic_events: its kprobes are read and cleared
# from kprobe_events.
K=$TMP/kprobes
fake_tracefs "$K"
rm "$K/dynamic_events"
echo 'p:kvodtr/probe vfs_read' >"$K/kprobe_events"
out=$(tracefs_reset "$K")
check_eq "no dynamic_events: kprobe_events read" "0 1 probes" "$? $out"
check_eq "no dynamic_events: kprobe_events cleared" "" "$(cat "$K/kprobe_events")"
ktap_finish
