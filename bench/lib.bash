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
