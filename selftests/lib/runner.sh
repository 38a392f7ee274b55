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
# KVOD_RDMA_TRANSPORT=T in its environment (selftests/lib/rdma.sh).
#
# Tiers: with KVOD_TIER=debug (make test-debug) the default list is the
# whole suite. Otherwise (make test, whose CI run has an hour) it leaves
# out a shell test whose top comment block has a line "# tier: debug",
# and the transports written T:debug in its transports line. Programs
# named on the command line or in $KVOD_TESTS run in any tier.
#
# Guests: a shell test whose top comment block has a line "# guest: KIND"
# needs a guest booted for it (selftests/run-tests boots KIND library
# with the library's disk and less memory); the default list has the
# programs of $KVOD_GUEST's kind only, those with no such line when it
# is unset.
#
# With KVOD_RESULTS set, each program's unindented output is also saved
# as $KVOD_RESULTS/SUITE/NAME.log.
#
# Around the programs, for selftests/run_guest.sh (below the runner):
#
#	tracefs_reset, lo_reset, netns_reset, modules_reset
#			put the guest as at boot before each program
#			(selftests/kvod/runner_reset.sh tests them)
#	HEALTH_PATTERNS, health_scan, health_first_report, kmemleak_programs,
#	kmemleak_verdict
#			what a healthy guest kernel never logs; also
#			selftests/qemu/vm-run's verdict, on the host
#
# Sourced (not a test) by selftests/run-tests and selftests/qemu/vm-run on
# the host and selftests/run_guest.sh in the guest, so it only defines
# functions and variables; it sources guest.sh, nothing else.

# shellcheck source=selftests/lib/guest.sh
. "$(dirname "${BASH_SOURCE[0]}")/guest.sh"	# proc_forks, sleep_nofork

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

# in_guest PATH: whether program PATH is for this kind of guest (see
# "Guests" above).
in_guest() {
	[ "$(header_line "$1" guest)" = "${KVOD_GUEST:-}" ]
}

# suite_programs DIR [NAME...]: the programs to run, a path a line, in
# order: NAME..., or else the names in $KVOD_TESTS, or else DIR/*_test
# then DIR/*.sh of this tier and guest, each in glob order (run_guest.sh
# sets LC_COLLATE=C), then the other-transport runs (PATH@T) of those
# shell tests. A NAME with a "/" is a path; otherwise a file in DIR, where
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
				in_tier "$f" && in_guest "$f"; then
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

# The guest as at boot, before every program run_guest.sh runs: lo
# without a qdisc, no named network namespace, none of kvod's modules
# loaded, tracing as at boot (tracefs_reset, below). Each program undoes
# what it did itself, but one killed by its timeout cannot: http_slow.sh's
# plug on lo holds every packet to its port, so every later HTTP test in
# the guest would stall; a tsock program's namespaces keep their qdiscs,
# which hold sch_tsock, so the next tsock program could not load it.

# lo_qdisc: set LO_QDISC to the kind of lo's root qdisc (noqueue at
# boot), starting one process (tc).
lo_qdisc() {
	LO_QDISC=$(tc qdisc show dev lo root 2>/dev/null)
	read -r _ LO_QDISC _ <<<"$LO_QDISC"
}

# lo_reset: remove lo's root qdisc unless it is noqueue (lo's at boot);
# print the kind removed, nothing if there was none. The runner calls
# this before every program: it starts no process but tc.
lo_reset() {
	lo_qdisc
	[ -n "$LO_QDISC" ] && [ "$LO_QDISC" != noqueue ] || return 0
	tc qdisc del dev lo root 2>/dev/null
	echo "$LO_QDISC"
}

# netns_reset: delete every named network namespace (the rig makes none)
# and print their names, space-separated; nothing if there was none.
# It looks in ip-netns(8)'s directory itself, so that it starts no
# process when there is none. A namespace goes once its last user has:
# its devices and qdiscs go in the kernel's cleanup work a little later
# (modules_reset waits for it).
netns_reset() {
	local f gone=()

	for f in /var/run/netns/*; do
		[ -e "$f" ] || continue
		ip netns delete "${f##*/}" 2>/dev/null && gone+=("${f##*/}")
	done
	echo "${gone[*]}"
}

# modules_reset WHEN MODULE...: rmmod each MODULE still loaded, in two
# passes (in case of dependencies the list's order does not follow), and
# say so in a "# runner:" line ending in WHEN. Before its second try, a
# module still in use gets up to 30 s (times $KVOD_TIMEOUT_SCALE) to be
# let go: a deleted namespace's qdiscs, or the namespace a module's own
# sockets kept until the first pass unloaded it, go in the kernel's
# cleanup work. Fails if a module stays.
modules_reset() {
	local when=$1 m pass refs end stuck=0

	shift
	for pass in 1 2; do
		for m in "$@"; do
			[ -d "/sys/module/$m" ] || continue
			end=$((SECONDS + 30 * ${KVOD_TIMEOUT_SCALE:-1}))
			while [ "$pass" = 2 ] && ((SECONDS < end)); do
				refs=0
				read -r refs 2>/dev/null <"/sys/module/$m/refcnt"
				[ "$refs" != 0 ] || break
				sleep_nofork 0.2
			done
			[ -d "/sys/module/$m" ] || continue
			if rmmod "$m" 2>/dev/null; then
				echo "# runner: unloaded leftover module $m $when"
			elif [ "$pass" = 2 ]; then
				echo "# runner: could not unload leftover module $m $when: $(rmmod "$m" 2>&1)"
				stuck=1
			fi
		done
	done
	return "$stuck"
}

# Tracing as at boot, before every program run_guest.sh runs. A program
# that traces (lib/trace.sh, the kprobes of http_load.sh, http_slow.sh,
# rdma_limits.sh and movie_free.sh) puts back what it changed, but one
# killed by its timeout cannot, and a later program reading its own
# events from a buffer left off, or a function tracer left on, would
# count nothing, or too much.

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

# What a healthy guest kernel never logs. selftests/qemu/vm-run fails a
# run whose kernel log matches any of these (extended regexps,
# case-sensitive), and selftests/run_guest.sh checks the log after every
# test program with the same list, so that a report names the program
# that caused it.

# shellcheck disable=SC2034 # used by the scripts that source this file
HEALTH_PATTERNS=(
	'WARNING:'
	'BUG:'
	'kernel BUG at'
	'Oops'
	'general protection fault'
	'KASAN'
	'KFENCE'
	'UBSAN'
	'possible circular locking'
	'possible recursive locking'
	'inconsistent lock state'
	'suspicious RCU usage'
	'possible irq lock inversion'
	'bad unlock balance'
	'held lock freed'
	'lock held when returning to user space'
	'blocked for more than'
	'Call Trace'
	'Kernel panic'
	'detected stalls? on CPUs'
	'self-detected stall'
	'soft lockup'
	'hard LOCKUP'
	'unreferenced object 0x'
	'Kernel memory leak detector disabled'
)

# The kernel's report of a user space program's fault, such as
# "traps: ib_read_bw[812] general protection fault ip:7f3c sp:7ffd error:0
# in librdmacm.so.1": the program's bug, not the kernel's, and its exit
# status already tells whoever ran it. Such a line fails no run even
# though it says "general protection fault"; the kernel's own reports
# never start with "traps: ".
# shellcheck disable=SC2034 # used by the scripts that source this file
HEALTH_USER_TRAP='traps: .*[[][0-9]+[]] .* ip:[0-9a-f]+ sp:[0-9a-f]+ error:'

# health_regex: the patterns as one extended regexp.
health_regex() {
	local IFS='|'

	echo "${HEALTH_PATTERNS[*]}"
}

# health_scan [FILE]: the lines of a kernel log (FILE or stdin) that fail
# a run. Between the marks "kvod-fault: injecting" and "kvod-fault:
# stopped", which the fault-injection tests write to the kernel log, a
# bare "Call Trace" is expected: the kernel dumps the stack of an
# allocation that fails (warn_alloc). Every other pattern still counts
# there, so a WARN, KASAN, lockdep or BUG report does too. A user space
# program's fault (HEALTH_USER_TRAP) fails nothing.
health_scan() {
	awk -v re="$(health_regex)" -v user="$HEALTH_USER_TRAP" '
	/kvod-fault: injecting/ { inject = 1 }
	/kvod-fault: stopped/ { inject = 0 }
	$0 ~ user { next }
	$0 ~ re {
		if (inject && $0 ~ /Call Trace/)
			next
		print
	}' "$@"
}

# health_first_report [FILE]: the first report in a kernel log in full,
# from its first line that fails a run to its "end trace" line (at most 60
# lines), so that a guest that died leaves its RIP, Code and call trace in
# the run's output. Prints nothing for a clean log.
health_first_report() {
	awk -v re="$(health_regex)" -v user="$HEALTH_USER_TRAP" '
	!start && $0 ~ re && $0 !~ user { start = 1 }
	start {
		print
		if (++n >= 60 || /---\[ end /)
			exit
	}' "$@"
}

# kmemleak_programs REPORT LOG: for each object of a kmemleak REPORT, the
# test program that was running when it was allocated, from the jiffies
# the report gives and the marks "kvod-selftests: NAME starts at jiffies
# N" that selftests/run_guest.sh writes to the kernel LOG: one line per
# object, "unreferenced object 0x... (size N), comm "C": during NAME"
# ("before the first program" for an older one).
kmemleak_programs() {
	awk '
	FILENAME == ARGV[1] {
		if (match($0, /kvod-selftests: .* starts at jiffies [0-9]+$/)) {
			s = substr($0, RSTART + 16)
			n = split(s, w, " ")
			mark[++nmarks] = w[n]
			name[nmarks] = substr(s, 1, index(s, " starts at jiffies") - 1)
		}
		next
	}
	/^unreferenced object 0x/ { obj = $0; sub(/:$/, "", obj); next }
	obj != "" && /^ *comm ".*", pid [0-9]+, jiffies [0-9]+/ {
		j = $NF
		comm = $0
		sub(/^ *comm /, "", comm)
		sub(/, pid.*/, "", comm)
		during = "before the first program"
		for (i = 1; i <= nmarks; i++)
			if (mark[i] + 0 <= j + 0)
				during = "during " name[i]
		print obj ", comm " comm ": " during
		obj = ""
	}' "$2" "$1"
}

# kmemleak_verdict REPORT LOG: "boot" when the LOG has test programs'
# start marks and every object of the REPORT was allocated before the
# first (the boot's leaks and false positives, which a scan before the
# first program would have cleared at the cost of two scans), else
# "leaks"; then kmemleak_programs' lines, at most 20.
kmemleak_verdict() {
	local lines

	lines=$(kmemleak_programs "$1" "$2")
	if grep -q 'kvod-selftests: .* starts at jiffies' "$2" &&
		! grep -qv ': before the first program$' <<<"$lines"; then
		echo boot
	else
		echo leaks
	fi
	sed -n 1,20p <<<"$lines"
}
