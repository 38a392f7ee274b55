# SPDX-License-Identifier: GPL-2.0
#
# Shared by the benchmarks in bench/ (sourced, not run; tools/run-bench
# runs bench/*.sh only). Set OUT, the report file, before calling log.

# log LINE...: print LINE and append it to the report $OUT.
log() { echo "$*" | tee -a "$OUT"; }

# die MSG...: log MSG as the benchmark's failure and exit 1.
die() { log "bench: $*"; exit 1; }

# busy_now: busy jiffies of all CPUs so far (user, nice, system, irq,
# softirq, steal) from /proc/stat.
busy_now() {
	awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9 }' /proc/stat
}

# size90 "SIZE BW"...: the smallest size reaching 90% of the largest BW.
size90() {
	awk '{ s[NR] = $1; b[NR] = $2; if ($2 > peak) peak = $2 }
	     END { for (i = 1; i <= NR; i++) if (b[i] >= 0.9 * peak) {
			printf "%d %.1f\n", s[i], peak; exit } }'
}
