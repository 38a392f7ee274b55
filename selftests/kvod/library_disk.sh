#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Titles on a disk: the library guest's ext4 disk holds more titles than
# the guest has memory (selftests/qemu/library-image, lib/library.sh),
# each byte of them known (mkpattern). Titles ADDed from it are served
# byte-exact over HTTP (a range across chunks, the last bytes) and over
# RDMA (a range that crosses a chunk, read by kvod-fetch).
#
# guest: library

# shellcheck source=selftests/lib/ktap.sh
. "$(dirname "$0")/../lib/ktap.sh"
# shellcheck source=selftests/lib/rdma.sh
. "$(dirname "$0")/../lib/rdma.sh"
# shellcheck source=selftests/lib/library.sh
. "$(dirname "$0")/../lib/library.sh"
rdma_test_init
rdma_on_exit() {
	"$KVODCTL" unlisten http "127.0.0.1:8080" 2>/dev/null
	rdma_test_stop
	library_down
}
library_up

ktap_header
ktap_plan 6
rdma_test_start
"$KVODCTL" listen http 127.0.0.1:8080 || ktap_bail_out "cannot listen on HTTP"
URL=http://127.0.0.1:8080
MiB=$((1 << 20))

total=0
for name in "${!LIB_SIZE[@]}"; do
	total=$((total + LIB_SIZE[$name]))
done
mem=$(awk '/^MemTotal:/ { print $2 * 1024 }' /proc/meminfo)
ktap_print_msg "library: ${#LIB_SIZE[@]} titles, $((total / MiB)) MiB; memory $((mem / MiB)) MiB"
check_ok "the library is larger than the guest's memory" test "$total" -gt "$mem"

wrong=
for name in "${!LIB_SIZE[@]}"; do
	[ "$(stat -c %s "$LIB_DIR/titles/$name")" = "${LIB_SIZE[$name]}" ] ||
		wrong+=" $name"
done
check_eq "every title listed is on the disk at its size" "" "${wrong# }"

a=t0001.ts b=t0002.ts
add_both() {
	"$KVODCTL" add "$a" "$LIB_DIR/titles/$a" &&
		"$KVODCTL" add "$b" "$LIB_DIR/titles/$b"
}
check_ok "two titles ADDed from the disk" add_both

# A range across the first chunk boundary (kvod's chunks are 2 MiB).
off=$((2 * MiB - 12345)) len=$((3 * MiB))
curl -sf -r "$off-$((off + len - 1))" -o "$RDMA_TMP/range" "$URL/$a"
check_eq "HTTP: a range across a chunk boundary, byte-exact" "ok $len bytes" \
	"$(library_check "$a" "$off" "$len" "$RDMA_TMP/range")"
size=${LIB_SIZE[$a]}
curl -sf -r -1000 -o "$RDMA_TMP/tail" "$URL/$a"
check_eq "HTTP: the last 1000 bytes, byte-exact" "ok 1000 bytes" \
	"$(library_check "$a" $((size - 1000)) 1000 "$RDMA_TMP/tail")"

off=$((6 * MiB + 4321)) len=$((5 * MiB))
"$KVOD_FETCH" -q --offset "$off" --length "$len" -o "$RDMA_TMP/rdma" \
	"$RDMA_URL/$b"
check_eq "RDMA: a range across a chunk boundary, byte-exact" "ok $len bytes" \
	"$(library_check "$b" "$off" "$len" "$RDMA_TMP/rdma")"
ktap_finish
