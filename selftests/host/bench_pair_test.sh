#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Host-side test of the two-guest benchmarks' counters (bench/pair.bash):
# pair_cpu and pair_stat read a synthetic /proc (KVOD_PAIR_PROC) whose
# every counter is known, so each field must come out as written. Boots
# nothing.
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
# shellcheck source=selftests/lib/ktap.sh
. "$REPO/selftests/lib/ktap.sh"

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
mkdir -p "$TMP/proc/net"

# /proc/stat: user 100, nice 2, system 30, idle 9999, iowait 7, irq 4,
# softirq 5, steal 1: busy 100 + 2 + 30 + 4 + 5 + 1 = 142.
cat >"$TMP/proc/stat" <<'EOF'
cpu  100 2 30 9999 7 4 5 1 0 0
cpu0 50 1 15 5000 3 2 2 1 0 0
cpu1 50 1 15 4999 4 2 3 0 0 0
intr 5555 0 9 0
ctxt 777
btime 1700000000
EOF
cat >"$TMP/proc/softirqs" <<'EOF'
                    CPU0       CPU1
          HI:          0          0
       TIMER:         10         20
      NET_TX:          3          4
      NET_RX:         40         60
       BLOCK:          0          0
EOF
cat >"$TMP/proc/net/snmp" <<'EOF'
Ip: Forwarding DefaultTTL InReceives
Ip: 1 64 12345
Tcp: RtoAlgorithm RtoMin RtoMax MaxConn ActiveOpens PassiveOpens AttemptFails EstabResets CurrEstab InSegs OutSegs
Tcp: 1 200 120000 -1 5 6 0 0 2 4321 9876
Udp: InDatagrams NoPorts
Udp: 11 0
EOF
# Two receive and one transmit vector of the link NIC, and a virtio
# device of another kind, which must not count.
cat >"$TMP/proc/interrupts" <<'EOF'
           CPU0       CPU1
  0:         44          0   IO-APIC   2-edge      timer
 30:          5          7  PCI-MSIX-0000:00:02.0   1-edge      virtio0-input.0
 31:          2          3  PCI-MSIX-0000:00:02.0   2-edge      virtio0-output.0
 32:        100          1  PCI-MSIX-0000:00:02.0   3-edge      virtio0-input.1
 33:       1000       1000  PCI-MSIX-0000:00:03.0   1-edge      virtio1-requests
NMI:          1          1   Non-maskable interrupts
EOF

HZ=$(getconf CLK_TCK)
# One run of bench/pair.bash's functions, as a benchmark's guest has them.
pair() {
	KVOD_PAIR_ROLE=server KVOD_PAIR_DIR=$TMP KVOD_PAIR_PROC=$TMP/proc \
		bash -c '. "$1/bench/pair.bash" && "$2"' _ "$REPO" "$1"
}

ktap_header
ktap_plan 3
check_eq "pair_cpu: busy ctxt intr hz user sys irq softirq NET_RX NET_TX InSegs RXint TXint" \
	"142 777 5555 $HZ 102 30 4 5 100 7 4321 113 5" "$(pair pair_cpu)"
check_eq "pair_stat is pair_cpu's first four fields" \
	"142 777 5555 $HZ" "$(pair pair_stat)"
# Without the NIC's vectors the interrupt fields are 0, not empty.
grep -v virtio0 "$TMP/proc/interrupts" >"$TMP/i" && mv "$TMP/i" "$TMP/proc/interrupts"
check_eq "no link NIC vectors: RXint and TXint are 0" "0 0" \
	"$(pair pair_cpu | awk '{ print $12, $13 }')"
ktap_finish
