# SPDX-License-Identifier: GPL-2.0
#
# kvod-fetch's exit on a signal, as the HTTP and RDMA tests check it
# (sourced, after ktap.sh; not a test).
#
#	size_of FILE			its size, 0 if it is not there (yet)
#	interrupted ERRFILE		"yes" if kvod-fetch said a SIGTERM
#					stopped it
#	sigterm_midway LIMIT SIZE OUT ERR CMD...
#		run CMD (a kvod-fetch writing OUT, its messages to ERR) in
#		the background, SIGTERM it once OUT has bytes (waiting up to
#		LIMIT seconds), and print "STATUS SAID SHORT": its exit
#		status, whether it said so, whether OUT has under SIZE bytes

size_of() {
	stat -c %s "$1" 2>/dev/null || echo 0
}

interrupted() {
	grep -qx 'kvod-fetch: interrupted by SIGTERM' "$1" && echo yes
}

sigterm_midway() {
	local limit=$1 size=$2 out=$3 err=$4 pid rc=0

	shift 4
	"$@" 2>"$err" &
	pid=$!
	wait_test "$limit" -gt 0 size_of "$out"
	kill -TERM "$pid"
	wait "$pid" || rc=$?
	echo "$rc $(interrupted "$err") $([ "$(size_of "$out")" -lt "$size" ] && echo yes)"
}
