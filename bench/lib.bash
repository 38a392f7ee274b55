# SPDX-License-Identifier: GPL-2.0
#
# Shared by the benchmarks in bench/ (sourced, not run; bench/run-bench
# runs bench/*.sh only). Set OUT, the report file, before calling log.

# log LINE...: print LINE and append it to the report $OUT.
log() { echo "$*" | tee -a "$OUT"; }

# die MSG...: log MSG as the benchmark's failure and exit 1.
die() { log "bench: $*"; exit 1; }

# build_base REF DIR: build kvod.ko of git ref REF in DIR (DIR/kmod), on
# the host, against the newest Debian 6.12 headers installed: the
# baseline module a benchmark compares this tree's with. Needs $REPO.
# Only kmod/ is built (with uapi/ beside it): a ref's top-level Kbuild
# may also name tsock/, which is not taken.
build_base() {
	local kver

	kver=$(find /usr/src -maxdepth 1 -name 'linux-headers-6.12.*-amd64' \
		-printf '%f\n' | sort -V | tail -n1)
	kver=${kver#linux-headers-}
	rm -rf "$2"
	mkdir -p "$2"
	git -C "$REPO" archive "$1" kmod uapi | tar -x -C "$2" &&
		make -s -C "/lib/modules/$kver/build" M="$2/kmod" modules
}

# busy_now: busy jiffies of all CPUs so far (user, nice, system, irq,
# softirq, steal) from /proc/stat.
busy_now() {
	awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9 }' /proc/stat
}

# log_size90 TOOL FILE: log the smallest size in FILE (lines "SIZE BW")
# whose BW reaches 90% of the largest, as TOOL's.
log_size90() {
	log "$(awk -v t="$1" '{ s[NR] = $1; b[NR] = $2; if ($2 > peak) peak = $2 }
	     END { for (i = 1; i <= NR; i++) if (b[i] >= 0.9 * peak) {
			printf "90%% of peak (%.1f MB/s) for %s at %d bytes\n", peak, t, s[i]
			exit } }' "$2")"
}

# stats V...: "median min max" of the values.
stats() {
	printf '%s\n' "$@" | sort -g |
		awk '{ v[NR] = $1 } END { printf "%s %s %s", v[int((NR + 1) / 2)], v[1], v[NR] }'
}

# col K LINE...: the median, min and max of field K of the lines.
col() {
	local k=$1

	shift
	# shellcheck disable=SC2046 # one number a word
	stats $(printf '%s\n' "$@" | awk -v k="$k" '{ print $k }')
}
