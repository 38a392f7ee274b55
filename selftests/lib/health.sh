# SPDX-License-Identifier: GPL-2.0
#
# What a healthy guest kernel never logs. tools/vm-run fails a run whose
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
)

# health_regex: the patterns as one extended regexp.
health_regex() {
	local IFS='|'

	echo "${HEALTH_PATTERNS[*]}"
}
