#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Host-side test of selftests/qemu/vm-run's kernel health verdict (vm-run
# --check-log) on synthetic kernel logs, of selftests/qemu/kvm-probe's contract,
# and of vm-run's guest side when its output is not a virtio-serial port.
# Boots nothing. A real WARN was also seen failing a run, from a module
# that WARNs on load:
#	selftests/qemu/vm-run -- insmod warn.ko		# exits 125
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
# shellcheck source=selftests/lib/ktap.sh
. "$REPO/selftests/lib/ktap.sh"

VM_RUN=$REPO/selftests/qemu/vm-run
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

CLEAN='[    0.000000] Linux version 6.12.95+deb12-amd64 (debian-kernel@lists.debian.org)
[    1.303543] PCI: Using host bridge windows from ACPI; if necessary, use "pci=nocrs" and report a bug
[    2.664176] RAS: Correctable Errors collector initialized.
[    2.700000] kfence: initialized - using 2097152 bytes for 255 objects
[    3.100000] kvod: loading out-of-tree module taints kernel.
[    3.100001] kvod: module verification failed: signature and/or required key missing - tainting kernel
[    3.200000] Warning: unable to open an initial console.'

# One line of each kind that must fail a run.
BAD=(
	'WARNING: CPU: 0 PID: 285 at kmod/catalog.c:42 kvod_catalog_add+0x9/0xff0 [kvod]'
	'BUG: kernel NULL pointer dereference, address: 0000000000000000'
	'kernel BUG at kmod/movie.c:77!'
	'Oops: general protection fault, probably for non-canonical address 0xdead000000000100: 0000 [#1] PREEMPT SMP NOPTI'
	'general protection fault, maybe for address 0x0: 0000 [#1] SMP'
	'BUG: KASAN: slab-use-after-free in kvod_movie_put+0x1c/0x80 [kvod]'
	'BUG: KFENCE: out-of-bounds read in kvod_http_parse+0x3e/0x100 [kvod]'
	'UBSAN: array-index-out-of-bounds in kmod/http_parse.c:120:9'
	'WARNING: possible circular locking dependency detected'
	'WARNING: possible recursive locking detected'
	'WARNING: inconsistent lock state'
	'WARNING: suspicious RCU usage'
	'INFO: task kvodctl:312 blocked for more than 120 seconds.'
	'Call Trace:'
	'BUG: workqueue lockup - pool cpus=0 node=0 flags=0x0 nice=0 stuck for 33s!'
	'watchdog: BUG: soft lockup - CPU#1 stuck for 26s! [kvod-tx:99]'
	'rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:'
	'unreferenced object 0xffff888003f6c000 (size 64):'
	'kmemleak: Kernel memory leak detector disabled'
	'Kernel panic - not syncing: Fatal exception'
)

# check_log DESC WANT(0|125) LOGTEXT [TAINTED]
check_log() {
	local desc=$1 want=$2 rc=0 out

	printf '%s\n' "$3" >"$TMP/dmesg"
	out=$("$VM_RUN" --check-log "$TMP/dmesg" --tainted "${4:-0}" 2>&1) || rc=$?
	if [ "$rc" = "$want" ]; then
		ktap_pass "$desc"
	else
		ktap_print_msg "vm-run --check-log exited $rc, want $want:" "$out"
		ktap_fail "$desc"
	fi
}

ktap_header
ktap_plan $((${#BAD[@]} + 29))

check_log "clean boot log passes" 0 "$CLEAN"
check_log "taint O|E (12288) passes" 0 "$CLEAN" 12288
for line in "${BAD[@]}"; do
	check_log "fails on: ${line:0:60}" 125 "$CLEAN"$'\n'"[    9.000000] $line"
done
# Inside a fault-injection span a failed allocation's stack dump is
# expected; a report of any other kind is not, and outside it neither is.
SPAN_START="[    9.000000] kvod-fault: injecting failslab 10%"
SPAN_END="[   19.000000] kvod-fault: stopped"
ALLOC_FAIL="[   10.000000] kworker/0:1: page allocation failure: order:9
[   10.000100] Call Trace:"
check_log "a stack dump inside a fault span passes" 0 \
	"$CLEAN"$'\n'"$SPAN_START"$'\n'"$ALLOC_FAIL"$'\n'"$SPAN_END"
check_log "a KASAN report inside a fault span fails" 125 \
	"$CLEAN"$'\n'"$SPAN_START"$'\n'"[   10.000000] BUG: KASAN: slab-use-after-free in conn_work+0x1/0x2"$'\n'"$SPAN_END"
check_log "a stack dump after the span fails" 125 \
	"$CLEAN"$'\n'"$SPAN_START"$'\n'"$SPAN_END"$'\n'"$ALLOC_FAIL"
# A user space program's fault is its own; an oops after it still fails.
USER_TRAP='[   12.000000] traps: ib_read_bw[812] general protection fault ip:7f3c2a1b sp:7ffd1e2c error:0 in librdmacm.so.1.3.48.0[7f3c2a000000+1a000]'
check_log "a user program's trap passes" 0 "$CLEAN"$'\n'"$USER_TRAP"
check_log "an oops after a user program's trap fails" 125 \
	"$CLEAN"$'\n'"$USER_TRAP"$'\n'"[   13.000000] ${BAD[3]}"
check_log "taint W (512) fails" 125 "$CLEAN" 512
check_log "taint D|O (4224) fails" 125 "$CLEAN" 4224
check_log "taint P (1) fails" 125 "$CLEAN" 1

printf '%s\n' "$CLEAN" "[    9.000000] ${BAD[0]}" >"$TMP/dmesg"
out=$("$VM_RUN" --check-log "$TMP/dmesg" --tainted 512 2>&1) || true
check_eq "the offending line and the taint are printed" \
	"[    9.000000] ${BAD[0]}|kernel tainted: 512 (W); only O and E are allowed" \
	"$(printf '%s' "$out" | paste -sd'|')"

# A guest that died leaves its first report whole in the run's output.
# shellcheck source=selftests/lib/runner.sh
. "$REPO/selftests/lib/runner.sh"
OOPS='[  341.809803] Oops: int3: 0000 [#1] PREEMPT SMP NOPTI
[  341.809900] CPU: 1 UID: 0 PID: 0 Comm: swapper/1 Tainted: G           OE      6.12.95+deb12-amd64 #1
[  341.810000] RIP: 0010:conn_wake+0x1/0x40 [kvod]
[  341.811855] Call Trace:
[  341.811900]  <IRQ>
[  341.812000]  tcp_data_queue+0x6b0/0xd40
[  341.813000] ---[ end trace 0000000000000000 ]---'
printf '%s\n' "$CLEAN" "$OOPS" '[  341.814264] Kernel panic - not syncing: Fatal exception in interrupt' \
	>"$TMP/console"
check_eq "the first report is printed whole, up to its end" "$OOPS" \
	"$(health_first_report "$TMP/console")"
head -n 13 "$TMP/console" >"$TMP/console.short"
check_eq "a report cut short is printed to where the log ends" \
	"$(sed -n '1,6p' <<<"$OOPS")" "$(health_first_report "$TMP/console.short")"
printf '%s\n' "$CLEAN" "$USER_TRAP" "$OOPS" >"$TMP/console"
check_eq "a user program's trap before it is not the first report" "$OOPS" \
	"$(health_first_report "$TMP/console")"
printf '%s\n' "$CLEAN" >"$TMP/console"
check_eq "a clean log has no report" "" "$(health_first_report "$TMP/console")"

# A leak found at the end is put to the program that was running when
# its object was allocated, from the jiffies in the programs' start marks.
cat >"$TMP/kmemleak" <<'REPORT'
unreferenced object 0xffff888003f6c000 (size 64):
  comm "kvodctl", pid 312, jiffies 4295012000
  hex dump (first 32 bytes):
    00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00  ................
  backtrace (crc 0):
    __kmalloc_cache_noprof+0x25/0x30
unreferenced object 0xffff888003f6d000 (size 128):
  comm "swapper/0", pid 1, jiffies 4294670000
unreferenced object 0xffff888003f6e000 (size 32):
  comm "kworker/1:2", pid 99, jiffies 4295300001
REPORT
cat >"$TMP/marks" <<'LOG'
[  100.000000] kvod-selftests: catalog_test starts at jiffies 4294967296
[  150.000000] kvod-selftests: 4 readers at jiffies 4295000000
[  200.000000] kvod-selftests: http_slow.sh starts at jiffies 4295010000
[  300.000000] kvod-selftests: rdma_teardown.sh starts
[  400.000000] kvod-selftests: live_http.sh starts at jiffies 4295300001
LOG
check_eq "each leaked object is put to the program it was allocated in" \
	'unreferenced object 0xffff888003f6c000 (size 64), comm "kvodctl": during http_slow.sh|unreferenced object 0xffff888003f6d000 (size 128), comm "swapper/0": before the first program|unreferenced object 0xffff888003f6e000 (size 32), comm "kworker/1:2": during live_http.sh' \
	"$(kmemleak_programs "$TMP/kmemleak" "$TMP/marks" | paste -sd'|')"
printf '%s\n' "$CLEAN" >"$TMP/console"
check_eq "without marks, every object is from before the first program" \
	'before the first program|before the first program|before the first program' \
	"$(kmemleak_programs "$TMP/kmemleak" "$TMP/console" | sed 's/.*: //' | paste -sd'|')"
: >"$TMP/console"
check_eq "with an empty kernel log too" 3 \
	"$(kmemleak_programs "$TMP/kmemleak" "$TMP/console" | grep -c ': before the first program$')"

# The run fails for an object allocated during a program; objects from
# before the first program alone are the boot's, and fail nothing, but
# only where the log has the programs' marks.
check_eq "a leak during a program: the verdict is leaks, with every object" \
	"leaks|$(kmemleak_programs "$TMP/kmemleak" "$TMP/marks" | paste -sd'|')" \
	"$(kmemleak_verdict "$TMP/kmemleak" "$TMP/marks" | paste -sd'|')"
cat >"$TMP/kmemleak.boot" <<'REPORT'
unreferenced object 0xffff888003f6d000 (size 128):
  comm "swapper/0", pid 1, jiffies 4294670000
REPORT
check_eq "only the boot's objects: the verdict is boot" "boot" \
	"$(kmemleak_verdict "$TMP/kmemleak.boot" "$TMP/marks" | head -n 1)"
check_eq "... but without programs' marks they are leaks" "leaks" \
	"$(kmemleak_verdict "$TMP/kmemleak.boot" "$TMP/console" | head -n 1)"

rc=0
"$VM_RUN" --bogus-option >/dev/null 2>&1 || rc=$?
check_eq "bad usage exits 126" 126 "$rc"
rc=0
err=$("$VM_RUN" --disk "$TMP/no-such.img" -- true 2>&1 >/dev/null) || rc=$?
check_eq "--disk of a missing file: exit 126, and says so" \
	"126 yes" "$rc $([[ $err == *"no-such.img: not a readable file"* ]] && echo yes)"
touch "$TMP/a,b.img"
rc=0
"$VM_RUN" --disk "$TMP/a,b.img" -- true >/dev/null 2>&1 || rc=$?
check_eq "--disk with a comma in its name is refused" 126 "$rc"
rc=0
err=$(KVOD_VM_MEM=lots "$VM_RUN" -- true 2>&1 >/dev/null) || rc=$?
check_eq "KVOD_VM_MEM not a size: exit 126, and says so" \
	"126 yes" "$rc $([[ $err == *"KVOD_VM_MEM wants a size"* ]] && echo yes)"

# kvm-probe: a verdict within its timeout, whatever this machine is.
start=$SECONDS
rc=0
out=$(timeout 30 "$REPO/selftests/qemu/kvm-probe" --timeout 5) || rc=$?
ktap_print_msg "kvm-probe: $out (exit $rc)"
if { [ "$rc" = 0 ] && [ "$out" = "KVM works" ]; } ||
	{ [ "$rc" = 1 ] && [[ $out == "no KVM: "* ]]; }; then
	ktap_pass "kvm-probe gives a verdict"
else
	ktap_fail "kvm-probe gives a verdict"
fi
if [ $((SECONDS - start)) -le 15 ]; then
	ktap_pass "kvm-probe returns in time"
else
	ktap_fail "kvm-probe returns in time"
fi
rc=0
KVOD_KVM=maybe "$VM_RUN" -- true >/dev/null 2>&1 || rc=$?
check_eq "KVOD_KVM other than 0 or 1 is refused" 126 "$rc"

# The guest side with its standard output not a virtio-serial port (as
# under virtme-ng-init's console fallback): the command's output, both
# streams, is also kept in the run's directory for the host to print,
# and its status is kept.
mkdir "$TMP/run"
printf '%s\0' bash -c 'echo out-line; echo err-line >&2; exit 4' >"$TMP/run/cmd"
: >"$TMP/run/env"
rc=0
env -u KVOD_KERNEL "$VM_RUN" --guest "$TMP/run" >"$TMP/guest.out" 2>&1 || rc=$?
check_eq "console fallback: the guest keeps the output and the status" \
	"out-line err-line|out-line err-line|4 4 4" \
	"$(paste -sd' ' "$TMP/run/output")|$(paste -sd' ' "$TMP/guest.out")|$rc $(cat "$TMP/run/cmd-status") $(cat "$TMP/run/status")"

ktap_finish
