# SPDX-License-Identifier: GPL-2.0
#
# The guest, and what the tests and the runner both need in it (sourced;
# not a test): by ktap.sh for the tests, by runner.sh for
# selftests/run_guest.sh and selftests/run-tests, by rdma.sh (which
# bench/http.sh and ioctl_fuzz_test source alone) and by bench/http.sh.
# It only defines functions, so that the runner can source it on the
# host, where ktap.sh bails out without the kernel's KTAP helpers.
#
#	kvod_in_guest		true inside a selftests/qemu/vm-run guest
#	kvod_test_host		true where KVOD_TEST_HOST=1
#	kvod_require_guest	skip the whole program (exit 4) outside a
#				guest, unless kvod_test_host
#	sleep_nofork SECONDS	sleep without starting a process
#	kmsg_mark TEXT		mark the kernel log; kmsg_since TEXT: the
#				log after the mark
#	proc_forks VAR		the processes started since boot
#	kernel_builtin		the running kernel builds in what the
#				tests need (no modules directory)
#
# Tests load kernel modules: they must run in the throw-away guest that
# selftests/qemu/vm-run boots, never on the build machine. vm-run exports
# KVOD_IN_GUEST=1 in the guest, and virtme-ng's guest kernel command line
# carries virtme_ parameters; we want both.
#
# KVOD_TEST_HOST=1 is the one other way in: whoever sets it says that
# this machine is a disposable test host, which the tests may change as
# they change a guest: kvod, sch_tsock and the RDMA modules loaded and
# unloaded, veths, rxe and siw devices, addresses and named network
# namespaces made and deleted, a MAC given to lo, tracing and sysctls
# set (the suite installed there and run with the kernel's
# run_kselftest.sh; Documentation/testing.rst).

# kvod_in_guest: true inside a selftests/qemu/vm-run guest.
kvod_in_guest() {
	[ "${KVOD_IN_GUEST:-}" = 1 ] && grep -qs 'virtme_' /proc/cmdline
}

# kvod_test_host: true where KVOD_TEST_HOST=1 declares a disposable host.
kvod_test_host() {
	[ "${KVOD_TEST_HOST:-}" = 1 ]
}

# kvod_require_guest: leave with kselftest's skip status (4) and a KTAP
# line saying why, unless we are inside a selftests/qemu/vm-run guest or
# on a KVOD_TEST_HOST=1 host.
kvod_require_guest() {
	kvod_in_guest || kvod_test_host && return 0
	echo "1..0 # SKIP not inside a selftests/qemu/vm-run guest, and no KVOD_TEST_HOST=1; refusing to load modules here"
	exit 4
}

# sleep_nofork SECONDS: sleep without starting a process. A process
# costs seconds of CPU on the debug kernel, so a loop polling every 0.1 s
# with sleep(1) spent its time starting sleeps, slowed what it waited
# for, and polled every few seconds. read(1)'s timeout on a FIFO that
# nobody writes does the sleeping instead. The FIFO is opened for each
# read, not once: a descriptor kept open would be inherited by every
# program a test starts. mkfifo(1) runs once, where there is no FIFO yet.
sleep_nofork() {
	local fifo=${TMPDIR:-/tmp}/kvod-sleep-$UID.fifo

	if [ -p "$fifo" ] || mkfifo "$fifo" 2>/dev/null || [ -p "$fifo" ]; then
		read -r -t "$1" _ <>"$fifo" || :
	else
		sleep "$1"
	fi
}

# kmsg_mark TEXT: write "kvod-selftests: TEXT" to the kernel log, so that
# the guest's console timestamps a test's steps next to the kernel's own
# lines (how long an rmmod took, and what the kernel did meanwhile).
kmsg_mark() {
	echo "kvod-selftests: $*" >/dev/kmsg 2>/dev/null || true
}

# kmsg_since TEXT: the kernel log after the last kmsg_mark TEXT (the
# whole line, so that "round 1" is not "round 10"); nothing without one.
kmsg_since() {
	dmesg | awk -v m="kvod-selftests: $*" '
		index($0, m) && substr($0, index($0, m) + length(m)) == "" { n = NR }
		{ line[NR] = $0 }
		END { for (i = n + 1; n && i <= NR; i++) print line[i] }'
}

# proc_forks VAR: set VAR to the processes started since boot (the
# "processes" line of /proc/stat), read without starting one.
proc_forks() {
	local key val rest

	printf -v "$1" 0
	while read -r key val rest; do
		if [ "$key" = processes ]; then
			printf -v "$1" %s "$val"
			return
		fi
	done </proc/stat
}

# kernel_builtin: true when the running kernel has no modules directory:
# the debug kernel, which builds in what the tests need. modprobe there
# only fails, at the cost of a process.
kernel_builtin() {
	local rel

	read -r rel </proc/sys/kernel/osrelease
	[ ! -d "/lib/modules/$rel" ]
}
