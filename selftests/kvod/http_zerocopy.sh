#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Zero-copy proof. During a 64 MiB download, return probes count the bytes
# TCP takes by page reference (skb_splice_from_iter(), the MSG_SPLICE_PAGES
# path) and the bytes it copies in from a sender (_copy_from_iter(),
# _copy_from_iter_nocache(), and csum_and_copy_from_iter_full() on entry),
# per process.
# kvod sends from kworkers: they must splice at least every body byte and
# copy no more than the response heads. A control sender in userspace
# (python's socket.sendall of 8 MiB, a copying send) must show up in the
# copy count, so a broken probe cannot pass the test by seeing nothing.

HERE=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
# shellcheck source=selftests/kvod/http_lib.bash
. "$HERE/http_lib.bash"

kvod_require_guest
T=/sys/kernel/tracing
MOVIE_MIB=64
CONTROL_MIB=8

ktap_header
ktap_plan 4
[ -d "$T/events" ] || mount -t tracefs nodev "$T" ||
	ktap_bail_out "no tracefs"
http_setup
http_movie z.ts $MOVIE_MIB || ktap_bail_out "cannot register z.ts"
size=$(stat -c %s "$TMP/z.ts")

# shellcheck disable=SC2016 # $retval and $arg2 are tracefs syntax
probes=(
	'r:kvodzc/splice skb_splice_from_iter ret=$retval:s64'
	'r:kvodzc/copy _copy_from_iter ret=$retval:u64'
	'r:kvodzc/copy_nt _copy_from_iter_nocache ret=$retval:u64'
	'p:kvodzc/copy_csum csum_and_copy_from_iter_full bytes=$arg2:u64'
)
echo 0 >"$T/tracing_on"
echo >"$T/trace"
echo 4096 >"$T/buffer_size_kb"
for p in "${probes[@]}"; do
	echo "$p" >>"$T/kprobe_events" || ktap_bail_out "cannot add probe: $p"
done
echo 1 >"$T/events/kvodzc/enable"
echo 1 >"$T/tracing_on"

curl -sS -o "$TMP/out" "$URL/z.ts"
# The control: a copying sender of CONTROL_MIB to a sink.
"$PY" -S - "$CONTROL_MIB" <<'PY'
import socket, sys, threading
srv = socket.socket()
srv.bind(("127.0.0.1", 0))
srv.listen(1)
def sink():
    c, _ = srv.accept()
    while c.recv(1 << 20):
        pass
t = threading.Thread(target=sink)
t.start()
s = socket.create_connection(srv.getsockname())
s.sendall(b"x" * (int(sys.argv[1]) << 20))
s.close()
t.join()
PY

echo 0 >"$T/tracing_on"
sums=$(awk '
	/ (splice|copy|copy_nt|copy_csum): / {
		comm = $1; sub(/-[0-9]+$/, "", comm)
		who = comm ~ /^kworker/ ? "kworker" : comm ~ /python/ ? "control" : "other"
		ev = $0 ~ / splice: / ? "splice" : "copy"
		v = $NF; sub(/^[a-z]+=/, "", v)
		if (v > 0) n[who "_" ev] += v
	}
	END { printf "%d %d %d\n", n["kworker_splice"], n["kworker_copy"], n["control_copy"] }
' "$T/trace")
echo 0 >"$T/events/kvodzc/enable"
for p in "${probes[@]}"; do
	p=${p%% *}
	echo "-:${p#?:}" >>"$T/kprobe_events"
done
read -r spliced copied control <<<"$sums"
ktap_print_msg "kworkers spliced $spliced and copied $copied bytes; control copied $control bytes"

check_eq "download byte-exact" "$(sha "$TMP/z.ts")" "$(sha "$TMP/out")"
check_ok "the probes see a copying sender (control)" \
	test "$control" -ge $((CONTROL_MIB << 20))
check_ok "kvod hands every body byte to TCP by page reference" \
	test "$spliced" -ge "$size"
check_ok "kvod copies no more than response heads (<= 64 KiB)" \
	test "$copied" -le 65536

http_unlisten "$HTTP_ADDR" "$HTTP_PORT"
kvod_unload
ktap_finish
