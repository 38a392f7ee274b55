#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Run the fuzz targets of selftests/fuzz, each for a set time, and report
# in KTAP: one result per target (Documentation/testing.rst, "Fuzzing").
#
# usage: selftests/fuzz/run.sh [-t SECONDS] [-j JOBS] [NAME...]
#
#   -t SECONDS  fuzzing time per target (libFuzzer's -max_total_time),
#               default 180
#   -j JOBS     targets run at once, default 1
#   NAME...     targets to run, default every NAME_fuzz.c here
#
# Targets are run from $FUZZ_OUT (default build/fuzz, where "make -C
# selftests/fuzz" builds them). Each starts from the inputs that earlier
# runs found, $FUZZ_RESULTS/NAME/corpus (default results/fuzz), and its
# seeds, corpus/NAME/ here; libFuzzer writes new inputs only to the first
# of these, so the tree is never written. A crash, a leak, a sanitizer
# report, a timeout (an input taking over 25 s) or running out of memory
# fails the target: its output is $FUZZ_RESULTS/NAME/log, and libFuzzer
# leaves the input that did it there too (crash-*, leak-*, timeout-*,
# oom-*). A passing target's result says how many inputs it ran and the
# coverage it reached. Two runs of one target in the same $FUZZ_RESULTS
# take turns.
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
# shellcheck source=selftests/lib/ktap.sh
. "$REPO/selftests/lib/ktap.sh"

FUZZ_OUT=${FUZZ_OUT:-$REPO/build/fuzz}
FUZZ_RESULTS=${FUZZ_RESULTS:-${KVOD_RESULTS:-$REPO/results}/fuzz}
secs=180
njobs=1

usage() {
	echo "usage: $0 [-t SECONDS] [-j JOBS] [NAME...]" >&2
	exit 2
}

while getopts t:j: opt; do
	case $opt in
	t) secs=$OPTARG ;;
	j) njobs=$OPTARG ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[[ $secs =~ ^[1-9][0-9]*$ && $njobs =~ ^[1-9][0-9]*$ ]] || usage

names=("$@")
if ((${#names[@]} == 0)); then
	for f in "$HERE"/*_fuzz.c; do
		f=${f##*/}
		names+=("${f%_fuzz.c}")
	done
fi

# fuzz NAME: run target NAME, then write its verdict to $VERDICTS/NAME:
# "pass" or "fail", then what to say about it. Under a lock on its
# directory, so that a second run of the target there (make fuzz in two
# shells) waits rather than write the same log.
fuzz() {
	local name=$1 dir=$FUZZ_RESULTS/$1 lock
	local -a more args=(-max_total_time="$secs" -detect_leaks=1 -timeout=25
		-rss_limit_mb=2048 -print_final_stats=1
		-artifact_prefix="$dir/")

	mkdir -p "$dir/corpus"
	exec {lock}>"$dir/lock"
	flock "$lock"
	if [ -r "$HERE/$name.dict" ]; then
		args+=(-dict="$HERE/$name.dict")
	fi
	if [ -r "$HERE/$name.options" ]; then
		# Options of a target's own, such as -max_len.
		read -r -a more <"$HERE/$name.options"
		args+=("${more[@]}")
	fi
	"$FUZZ_OUT/${name}_fuzz" "${args[@]}" "$dir/corpus" \
		"$HERE/corpus/$name" >"$dir/log" 2>&1
	verdict "$name" "$?" >"$VERDICTS/$name"
}

# verdict NAME RC: target NAME's verdict, from its exit status and log.
verdict() {
	local name=$1 rc=$2 dir=$FUZZ_RESULTS/$1 last runs report

	last=$(grep -aE '^#[0-9]+[[:space:]]+DONE' "$dir/log" | tail -n1)
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir/log" | tail -n1)
	if [ "$rc" = 0 ] && [ -n "$runs" ] &&
		! grep -aqE 'ERROR: [A-Za-z]*Sanitizer|runtime error:' "$dir/log"; then
		echo pass
		echo "$name: $runs inputs in $secs s; $last"
		return
	fi
	echo fail
	# The report from its first line on, else the end of the log.
	report=$(sed -n '/ERROR: \|runtime error:\|does not hold\|deadly signal/,$p' \
		"$dir/log" | head -n 60)
	echo "$name: exit $rc; from $dir/log:"
	echo "${report:-$(tail -n 40 "$dir/log")}"
	ls -d "$dir"/crash-* "$dir"/leak-* "$dir"/timeout-* "$dir"/oom-* \
		2>/dev/null
}

ktap_header
ktap_plan "${#names[@]}"
mkdir -p "$FUZZ_RESULTS" || ktap_bail_out "cannot make $FUZZ_RESULTS"
VERDICTS=$(mktemp -d) || ktap_bail_out "mktemp failed"
trap 'rm -rf "$VERDICTS"' EXIT

for name in "${names[@]}"; do
	if [ ! -x "$FUZZ_OUT/${name}_fuzz" ]; then
		continue
	fi
	while (($(jobs -rp | wc -l) >= njobs)); do
		wait -n
	done
	fuzz "$name" &
done
wait

for name in "${names[@]}"; do
	if [ ! -x "$FUZZ_OUT/${name}_fuzz" ]; then
		ktap_fail "fuzz $name: $FUZZ_OUT/${name}_fuzz not built (make -C selftests/fuzz)"
		continue
	fi
	if [ ! -s "$VERDICTS/$name" ]; then
		ktap_fail "fuzz $name: no verdict (the run was killed?)"
		continue
	fi
	ktap_print_msg "$(tail -n +2 "$VERDICTS/$name")"
	if [ "$(head -n1 "$VERDICTS/$name")" = pass ]; then
		ktap_pass "fuzz $name"
	else
		ktap_fail "fuzz $name"
	fi
done
ktap_finish
