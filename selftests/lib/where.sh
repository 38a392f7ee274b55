# SPDX-License-Identifier: GPL-2.0
#
# Where a stuck task waits, for a test about to fail on a timeout
# (sourced by ktap.sh).
#
#	proc_where PID...	for each PID: its name, state and system call
#				(number and arguments, /proc/PID/syscall), then
#				its kernel stack; "gone" for a PID that ended

# proc_where PID...: what a test prints of tasks it waited for in vain.
# Reading another task's syscall and stack needs root, as the guest is.
proc_where() {
	local p

	for p; do
		if [ ! -d "/proc/$p" ]; then
			echo "$p: gone"
			continue
		fi
		echo "$(cat "/proc/$p/comm" 2>/dev/null) $p:" \
			"$(awk '/^State:/ { print $2, $3 }' "/proc/$p/status" 2>&1)," \
			"syscall $(cat "/proc/$p/syscall" 2>&1)"
		sed 's/^/  /' "/proc/$p/stack" 2>&1
	done
}
