# SPDX-License-Identifier: GPL-2.0
#
# What a healthy guest kernel never logs. selftests/qemu/vm-run fails a run whose
# kernel log matches any of these (extended regexps, case-sensitive), and
# selftests/run_guest.sh checks the log after every test program with the
# same list, so that a report names the program that caused it.

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
