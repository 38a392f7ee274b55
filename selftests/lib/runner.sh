# SPDX-License-Identifier: GPL-2.0
#
# Run test programs one after the other and report them in KTAP, the way
# the kernel's kselftest runner does:
#
#	TAP version 13
#	1..N
#	# selftests: SUITE: NAME
#	  <the program's own output, indented by two spaces>
#	ok 1 selftests: SUITE: NAME
#	not ok 2 selftests: SUITE: NAME # exit=1
#	not ok 3 selftests: SUITE: NAME # TIMEOUT 300 seconds
#	ok 4 selftests: SUITE: NAME # SKIP
#
# Programs: NAME.sh runs under bash; anything else runs as is. Each runs
# in its own directory with stdin from /dev/null, and gets a timeout:
# the first of $KVOD_TIMEOUT_<NAME> (NAME with every character other than
# a letter, digit or _ turned into _), a "# timeout: N" line in the
# comment block at the top of a shell test, $KVOD_TEST_TIMEOUT, 300 s;
# then multiplied by $KVOD_TIMEOUT_SCALE (default 1; the debug kernel is
# several times slower).
# Exit status 4 means skipped.
#
# Transports: a shell test whose top comment block has a line
# "# transports: rxe siw" runs once as is (over the first, rxe) and once
# more for each other transport T, as the program NAME@T with
# KVOD_RDMA_TRANSPORT=T in its environment (selftests/lib/rxe.sh).
#
# Tiers: with KVOD_TIER=debug (make test-debug) the default list is the
# whole suite. Otherwise (make test, whose CI run has an hour) it leaves
# out a shell test whose top comment block has a line "# tier: debug",
# and the transports written T:debug in its transports line. Programs
# named on the command line or in $KVOD_TESTS run in any tier.
#
# With KVOD_RESULTS set, each program's unindented output is also saved
# as $KVOD_RESULTS/SUITE/NAME.log.

# shellcheck source=selftests/lib/guest.sh
. "$(dirname "${BASH_SOURCE[0]}")/guest.sh"	# proc_forks

# header_line PATH KEY: the rest of the "# KEY:" line in the comment
# block at the top of shell test PATH, if it has one. Builtins only: the
# runner reads two of these per program, and a process start costs
# seconds on the debug kernel.
header_line() {
	local line re="^#[[:space:]]*$2:[[:space:]]*(.*)$"

	[[ $1 == *.sh ]] && [ -r "$1" ] || return 0
	while IFS= read -r line; do
		if [[ $line =~ $re ]]; then
			echo "${BASH_REMATCH[1]}"
			return 0
		fi
		[[ $line == \#* || $line =~ ^[[:space:]]*$ ]] || return 0
	done <"$1"
}

# in_tier PATH: whether shell test PATH belongs to this tier's default
# list (see "Tiers" above).
in_tier() {
	[ "${KVOD_TIER:-}" = debug ] || [ "$(header_line "$1" tier)" != debug ]
}

# test_transports PATH: the transports of shell test PATH after the
# first that this tier runs (see "Transports" and "Tiers" above),
# space-separated, without their ":debug".
test_transports() {
	local t out=

	# shellcheck disable=SC2046 # a list of words
	set -- $(header_line "$1" transports)
	(($#)) && shift
	for t; do
		if [[ $t == *:debug ]]; then
			[ "${KVOD_TIER:-}" = debug ] || continue
			t=${t%:debug}
		fi
		out+=" $t"
	done
	echo "${out# }"
}

# suite_programs DIR [NAME...]: the programs to run, a path a line, in
# order: NAME..., or else the names in $KVOD_TESTS, or else DIR/*_test
# then DIR/*.sh of this tier, each in glob order (run_guest.sh sets
# LC_COLLATE=C), then the other-transport runs (PATH@T) of those shell
# tests. A NAME with a "/" is a path; otherwise a file in DIR, where
# ".sh" may be left out; either may end in @T.
suite_programs() {
	local dir=$1 name f t at
	local -a names extra=()

	shift
	if (($#)); then
		names=("$@")
	elif [ -n "${KVOD_TESTS:-}" ]; then
		read -r -a names <<<"$KVOD_TESTS"
	else
		names=()
		shopt -s nullglob
		for f in "$dir"/*_test "$dir"/*.sh; do
			if [ -f "$f" ] && { [[ $f == *.sh ]] || [ -x "$f" ]; } &&
				in_tier "$f"; then
				names+=("${f##*/}")
				for t in $(test_transports "$f"); do
					extra+=("${f##*/}@$t")
				done
			fi
		done
		shopt -u nullglob
		names+=("${extra[@]}")
	fi
	for name in "${names[@]}"; do
		at=
		if [[ $name == *@* ]]; then
			at=@${name##*@}
			name=${name%@*}
		fi
		if [[ $name == */* ]]; then
			echo "$(readlink -f "$name")$at"
		elif [ ! -e "$dir/$name" ] && [ -e "$dir/$name.sh" ]; then
			echo "$dir/$name.sh$at"
		else
			echo "$dir/$name$at"
		fi
	done
}

# test_timeout PATH: the timeout in seconds for test program PATH.
test_timeout() {
	echo $(($(base_timeout "$1") * ${KVOD_TIMEOUT_SCALE:-1}))
}

base_timeout() {
	local path=${1%@*} name var t

	name=${path##*/}
	var=KVOD_TIMEOUT_${name//[^A-Za-z0-9_]/_}
	if [ -n "${!var:-}" ]; then
		echo "${!var}"
		return
	fi
	# Only the comment block at the top of the file counts.
	t=$(header_line "$path" timeout)
	t=${t%"${t##*[![:space:]]}"}
	if [[ $t =~ ^[0-9]+$ ]]; then
		echo "$t"
		return
	fi
	echo "${KVOD_TEST_TIMEOUT:-300}"
}

# run_suite SUITE HOOK PATH...: run the programs in order; call HOOK NAME
# (a function, or "" for none) before each. If RUN_SUITE_AFTER names a
# function, it is called as RUN_SUITE_AFTER NAME after each program has
# run; a non-zero return fails that program (a passed or skipped one is
# reported "not ok ... # after: ...", with the hook's last line of
# output), so that a kernel report found after a program is charged to
# it. Returns 0 if all passed or skipped, 1 otherwise.
run_suite() {
	local suite=$1 hook=$2 n=0 failed=0 path name t rc start elapsed log
	local after_rc transport file forks forks_end dir
	local logdir='' scratch=${TMPDIR:-/tmp}/kvod-runner.$$
	local -a cmd env after

	shift 2
	echo "TAP version 13"
	echo "1..$#"
	if [ -n "${KVOD_RESULTS:-}" ] && mkdir -p "$KVOD_RESULTS/$suite" 2>/dev/null; then
		logdir=$KVOD_RESULTS/$suite
	fi
	for path; do
		n=$((n + 1))
		name=${path##*/}
		env=()
		if [[ $path == *@* ]]; then
			transport=${path##*@}
			path=${path%@*}
			env=("KVOD_RDMA_TRANSPORT=$transport")
		fi
		file=${path##*/}
		echo "# selftests: $suite: $name"
		if [ -n "$hook" ]; then
			"$hook" "$name"
		fi
		if [ ! -f "$path" ]; then
			echo "not ok $n selftests: $suite: $name # not found: $path"
			failed=1
			continue
		fi
		if [[ $file == *.sh ]]; then
			cmd=(bash "./$file")
		elif [ -x "$path" ]; then
			cmd=("./$file")
		else
			echo "not ok $n selftests: $suite: $name # not executable"
			failed=1
			continue
		fi
		# Builtins and files, not $(...): each process costs seconds
		# on the debug kernel, and this runs for every program.
		test_timeout "$path" >"$scratch"
		read -r t <"$scratch"
		log=/dev/null
		if [ -n "$logdir" ]; then
			log=$logdir/$name.log
		fi
		start=$SECONDS
		proc_forks forks
		# sed keeps the unindented output in the log ("w") as it
		# indents it for the report.
		dir=.
		[[ $path != */* ]] || dir=${path%/*}
		if (cd "$dir" && { ((${#env[@]} == 0)) || export "${env[@]}"; } &&
			exec timeout --kill-after=10 "$t" "${cmd[@]}" \
				</dev/null 2>&1) |
			sed -u -e "w $log" -e 's/^/  /'; then
			rc=0
		else
			rc=${PIPESTATUS[0]}
		fi
		elapsed=$((SECONDS - start))
		proc_forks forks_end
		echo "# $name: exit $rc after $elapsed s"
		echo "# $name: $((forks_end - forks)) processes started"
		if [ "$rc" = 137 ] && [ "$elapsed" -ge "$t" ]; then
			rc=124
		fi
		after_rc=0
		if [ -n "${RUN_SUITE_AFTER:-}" ]; then
			# Not in a $(...) subshell: the hook keeps state (how
			# much of the kernel log it has seen) in this shell.
			"$RUN_SUITE_AFTER" "$name" >"$scratch" || after_rc=1
			mapfile -t after <"$scratch"
			((${#after[@]} == 0)) || printf '%s\n' "${after[@]}"
		fi
		if ((after_rc)) && { [ "$rc" = 0 ] || [ "$rc" = 4 ]; }; then
			echo "not ok $n selftests: $suite: $name # after: ${after[-1]:-}"
			failed=1
			continue
		fi
		case $rc in
		0) echo "ok $n selftests: $suite: $name" ;;
		4) echo "ok $n selftests: $suite: $name # SKIP" ;;
		124)
			echo "not ok $n selftests: $suite: $name # TIMEOUT $t seconds"
			failed=1
			;;
		*)
			echo "not ok $n selftests: $suite: $name # exit=$rc"
			failed=1
			;;
		esac
	done
	rm -f "$scratch"
	return "$failed"
}
