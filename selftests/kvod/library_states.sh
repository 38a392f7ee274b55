#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Titles in the page cache (Documentation/kvod.rst): with the add_lazy
# test knob set, an ADD of a title on the library guest's ext4 disk reads
# nothing: INFO shows resident 0 and chunks 0, and the module holds no
# more memory than before. The page cache is dropped first, so what
# follows reads the disk: HTTP serves the title byte-exact, whole and in
# ranges (one unaligned, the last bytes), and a push sends its first
# packets byte-exact; an RDMA client is refused ("server out of
# resources") while a pinned title is served. --pin reads a title at ADD
# whatever the knob says, and so does an ADD of a file in tmpfs, which
# has no ->read_folio (auto-pin). The title holds its file open: umount
# fails while it is listed and works once it is deleted.
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
ktap_plan 14
rdma_test_start
"$KVODCTL" listen http 127.0.0.1:8080 || ktap_bail_out "cannot listen on HTTP"
URL=http://127.0.0.1:8080
MiB=$((1 << 20))
PKT=1316			# a push's payload
NPKT=1000			# packets of the push checked

# The three smallest titles: one cached, one pinned, one copied to tmpfs.
mapfile -t T < <(for n in "${!LIB_SIZE[@]}"; do
	echo "${LIB_SIZE[$n]} $n"
done | sort -n | head -n 3 | cut -d' ' -f2)
((${#T[@]} == 3)) || ktap_bail_out "fewer than 3 titles"
lazy=${T[0]} pinned=${T[1]} copied=${T[2]}
size=${LIB_SIZE[$lazy]}

# info NAME: "resident chunks size" of a title.
info() {
	echo "$(movie_field "$1" resident) $(movie_field "$1" chunks) $(movie_field "$1" size)"
}

# push_rx PORT N OUT: receive the first N RTP packets on 127.0.0.1:PORT
# (30 s at most) and write their payloads to OUT in sequence order;
# prints "listening" once bound, then the packets received and those
# missing. The receive buffer holds all N (SO_RCVBUFFORCE, past
# rmem_max), so a slow receiver on a loaded guest drops none.
push_rx() {
	/usr/bin/python3 -S - "$@" <<'PY'
import socket, sys
port, n, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, getattr(socket, "SO_RCVBUFFORCE", 33),
             16 << 20)
s.bind(("127.0.0.1", port))
s.settimeout(30)
print("listening", flush=True)
got = {}
first = None
try:
    while len(got) < n:
        d = s.recv(2048)
        seq = int.from_bytes(d[2:4], "big")
        if first is None:
            first = seq
        k = (seq - first) & 0xffff
        if k < n:
            got[k] = d[12:]
except socket.timeout:
    pass
with open(out, "wb") as f:
    for k in sorted(got):
        f.write(got[k])
print("received", len(got), "missing", n - len(got), flush=True)
PY
}

knob=$(kvod_knob add_lazy)
check_ok "the add_lazy knob is set" sh -c "echo 1 >'$knob'"
sync
echo 3 >/proc/sys/vm/drop_caches
resident0=$(kvod_stat resident)
"$KVODCTL" add "$lazy" "$LIB_DIR/titles/$lazy" ||
	ktap_print_msg "kvodctl add $lazy failed"
check_eq "ADD of a title on ext4 reads nothing: resident 0, chunks 0" \
	"0 0 $size" "$(info "$lazy")"
check_eq "the module holds no more memory than before" "$resident0" \
	"$(kvod_stat resident)"

curl -sf -o "$RDMA_TMP/whole" "$URL/$lazy"
check_eq "HTTP: the whole title, byte-exact" "ok $size bytes" \
	"$(library_check "$lazy" 0 "$size" "$RDMA_TMP/whole")"
rm -f "$RDMA_TMP/whole"
echo 3 >/proc/sys/vm/drop_caches
off=$((5 * MiB + 4095)) len=$((3 * MiB + 7))
curl -sf -r "$off-$((off + len - 1))" -o "$RDMA_TMP/range" "$URL/$lazy"
check_eq "HTTP: an unaligned range from the disk, byte-exact" \
	"ok $len bytes" "$(library_check "$lazy" "$off" "$len" "$RDMA_TMP/range")"
curl -sf -r -1000 -o "$RDMA_TMP/tail" "$URL/$lazy"
check_eq "HTTP: the last 1000 bytes, byte-exact" "ok 1000 bytes" \
	"$(library_check "$lazy" $((size - 1000)) 1000 "$RDMA_TMP/tail")"
check_eq "the module served those bytes, still holding no memory" \
	"$((size + len + 1000)) 0" \
	"$(movie_field "$lazy" bytes_served) $(movie_field "$lazy" resident)"

echo 3 >/proc/sys/vm/drop_caches
push_rx 5010 "$NPKT" "$RDMA_TMP/push" >"$RDMA_TMP/rx" &
rxpid=$!
wait_for 30 grep -q listening "$RDMA_TMP/rx" || ktap_print_msg "receiver did not start"
id=$("$KVODCTL" push "$lazy" udp://127.0.0.1:5010 --rate 8000000)
wait "$rxpid"
[ -z "$id" ] || "$KVODCTL" stop "$id" 2>/dev/null
ktap_print_msg "push receiver: $(tr '\n' ' ' <"$RDMA_TMP/rx")"
check_eq "push: the first $NPKT packets, byte-exact" \
	"ok $((NPKT * PKT)) bytes" \
	"$(library_check "$lazy" 0 $((NPKT * PKT)) "$RDMA_TMP/push")"

check_says "RDMA: a title in the page cache is refused" \
	"server out of resources" \
	"$KVOD_FETCH" -q --length 4096 -o "$RDMA_TMP/rdma0" "$RDMA_URL/$lazy"

"$KVODCTL" add "$pinned" "$LIB_DIR/titles/$pinned" --pin ||
	ktap_print_msg "kvodctl add --pin $pinned failed"
read -r res chunks psize <<<"$(info "$pinned")"
check_ok "--pin reads the title at ADD ($res bytes in $chunks chunks)" \
	test "${res:-0}" -ge "${psize:-1}" -a "${chunks:-0}" -ge 1
off=$((6 * MiB + 4321)) len=$((5 * MiB))
"$KVOD_FETCH" -q --offset "$off" --length "$len" -o "$RDMA_TMP/rdma" \
	"$RDMA_URL/$pinned"
check_eq "RDMA: the pinned title, a range byte-exact" "ok $len bytes" \
	"$(library_check "$pinned" "$off" "$len" "$RDMA_TMP/rdma")"

# A tmpfs of its own: the guest's /tmp may be an overlay, which has no
# ->read_folio either.
mkdir -p "$RDMA_TMP/tmpfs"
mount -t tmpfs -o size=$((4 * MiB)) kvod-tmpfs "$RDMA_TMP/tmpfs" ||
	ktap_print_msg "cannot mount a tmpfs"
head -c $((3 * MiB)) "$LIB_DIR/titles/$copied" >"$RDMA_TMP/tmpfs/copy"
"$KVODCTL" add copy "$RDMA_TMP/tmpfs/copy" ||
	ktap_print_msg "kvodctl add copy failed"
read -r res chunks psize <<<"$(info copy)"
check_eq "a file in tmpfs is read at ADD all the same (auto-pin)" \
	"tmpfs $((3 * MiB)) yes" \
	"$(stat -f -c %T "$RDMA_TMP/tmpfs") ${psize:-} $([ "${res:-0}" -ge $((3 * MiB)) ] && echo yes || echo no)"
"$KVODCTL" del copy
umount "$RDMA_TMP/tmpfs"

check_fail "umount fails while the title holds its file" umount "$LIB_DIR"
"$KVODCTL" del "$lazy"
# The last put may come from a kworker, whose fput() is deferred a tick.
check_ok "umount works once the title is deleted" \
	wait_for "$(time_limit 10)" umount "$LIB_DIR"
library_mount || ktap_print_msg "cannot mount the disk again"
ktap_finish
