#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Freeing a movie yields the CPU between chunks: a multi-GiB movie is
# thousands of chunks (far more when memory was fragmented), and without
# a cond_resched() per chunk its free would hold the CPU for that long on
# a kernel without full preemption (Debian's default is voluntary). The
# function graph tracer records everything kvod_movie_put() calls when
# DEL drops the last reference, which puts the movie's image: the test
# first checks that it sees one __free_pages() per chunk (the probe
# works), then one __cond_resched() per chunk.
#
# timeout: 300

# shellcheck source=selftests/lib/ktap.sh
. "$(dirname "$0")/../lib/ktap.sh"

kvod_require_guest
ktap_header
ktap_plan 5

T=/sys/kernel/tracing
TMP=$(mktemp -d)
# shellcheck disable=SC2317 # the EXIT trap runs it
cleanup() {
	if [ -w "$T/tracing_on" ]; then
		echo 0 >"$T/tracing_on"
		echo nop >"$T/current_tracer"
		echo >"$T/set_graph_function"
		echo 0 >"$T/max_graph_depth"
		[ -z "${BUF_KB:-}" ] || echo "$BUF_KB" >"$T/buffer_size_kb"
		echo 1 >"$T/tracing_on"	# as at boot
	fi
	rm -rf "$TMP"
}
trap cleanup EXIT

# check_num DESC A OP B: test A OP B (integers).
check_num() {
	if [ -n "$2" ] && test "$2" "$3" "$4"; then
		ktap_pass "$1"
	else
		ktap_print_msg "expected $2 $3 $4"
		ktap_fail "$1"
	fi
}

mountpoint -q "$T" || mount -t tracefs nodev "$T" ||
	ktap_bail_out "no tracefs"
grep -qw function_graph "$T/available_tracers" ||
	ktap_bail_out "no function_graph tracer"
[ "$(grep -o '([a-z]*)' /sys/kernel/debug/sched/preempt 2>/dev/null)" != "(full)" ] ||
	ktap_print_msg "full preemption: cond_resched() is a no-op here"

# shellcheck disable=SC2119 # no module parameters
kvod_load || ktap_bail_out "insmod kvod failed"
head -c $((64 << 20)) /dev/urandom >"$TMP/big" ||
	ktap_bail_out "cannot make the movie"
"$KVODCTL" add big "$TMP/big" >/dev/null || ktap_bail_out "kvodctl add failed"
chunks=$("$KVODCTL" info big --json | jq -r .chunks)
check_num "a 64 MiB movie is many chunks ($chunks)" "${chunks:-0}" -ge 32

echo 0 >"$T/tracing_on"
BUF_KB=$(cat "$T/buffer_size_kb")
echo 8192 >"$T/buffer_size_kb"		# no lost events
# kvod_movie_put() -> kvod_image_put() -> __free_pages(), __cond_resched()
# (the releases inlined): depth 3, and one level to spare.
echo 4 >"$T/max_graph_depth"
echo function_graph >"$T/current_tracer"
check_ok "trace kvod_movie_put()" sh -c "echo kvod_movie_put >$T/set_graph_function"
echo >"$T/trace"
echo 1 >"$T/tracing_on"
"$KVODCTL" del big
echo 0 >"$T/tracing_on"
cp "$T/trace" "$TMP/trace"
frees=$(grep -c '__free_pages()' "$TMP/trace")
yields=$(grep -c '__cond_resched()' "$TMP/trace")
ktap_print_msg "kvod_movie_put: $frees __free_pages, $yields __cond_resched for $chunks chunks"
check_num "the probe sees every chunk freed" "$frees" -ge "$chunks"
check_num "a yield per chunk" "$yields" -ge "$chunks"
check_eq "the memory is gone" 0 "$("$KVODCTL" stats --json | jq -r .resident)"

kvod_unload
ktap_finish
