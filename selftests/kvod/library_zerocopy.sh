#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Zero-copy from the page cache: the probes of http_zerocopy.sh on a
# title that stays in its file (the add_lazy test knob; Documentation/
# kvod.rst, "Titles in the page cache"). The title is the library's
# smallest, its page cache dropped first, so the download waits for the
# disk. During it, return probes sum, per process, the bytes TCP accepted
# from each sendmsg (tcp_sendmsg()) and the bytes it took by page
# reference (skb_splice_from_iter(), the MSG_SPLICE_PAGES path). kvod
# sends from kworkers: they must splice at least every body byte and copy
# no more than the response head. A control sender in userspace (python's
# socket.sendall of 8 MiB, a copying send) must show up as copied, so a
# broken probe cannot pass the test by seeing nothing; and the title must
# show no memory of its own, so that a title read at ADD cannot pass it.
#
# guest: library

HERE=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
# shellcheck source=selftests/lib/http.sh
. "$HERE/../lib/http.sh"
# shellcheck source=selftests/lib/trace.sh
. "$HERE/../lib/trace.sh"
# shellcheck source=selftests/lib/library.sh
. "$HERE/../lib/library.sh"
cleanup() {
	zc_probes_off 2>/dev/null
	http_unlisten "$HTTP_ADDR" "$HTTP_PORT" 2>/dev/null
	kvod_unload
	library_down
	http_cleanup
}
trap cleanup EXIT
library_up

CONTROL_MIB=8

ktap_header
ktap_plan 5
http_setup
echo 1 >"$(kvod_knob add_lazy)" || ktap_bail_out "no add_lazy knob"
name=$(for n in "${!LIB_SIZE[@]}"; do
	echo "${LIB_SIZE[$n]} $n"
done | sort -n | head -n 1 | cut -d' ' -f2)
size=${LIB_SIZE[$name]}
"$KVODCTL" add "$name" "$LIB_DIR/titles/$name" ||
	ktap_bail_out "cannot register $name"
sync
echo 3 >/proc/sys/vm/drop_caches

zc_probes_on tcp_sendmsg

curl -sS -o "$TMP/out" "$URL/$name"
zc_tcp_control "$CONTROL_MIB"

read -r sent spliced csent cspliced < <(zc_sums)
zc_probes_off
copied=$((sent - spliced))
ktap_print_msg "$name: $size bytes, resident $(movie_field "$name" resident)" \
	"kworkers: TCP took $sent bytes, $spliced by reference, copied $copied" \
	"control: TCP took $csent bytes, $cspliced by reference"

check_eq "download byte-exact, from a title without memory of its own" \
	"ok $size bytes 0" \
	"$(library_check "$name" 0 "$size" "$TMP/out") $(movie_field "$name" resident)"
check_ok "the probes see a copying sender copy (control)" \
	test $((csent - cspliced)) -ge $((CONTROL_MIB << 20))
check_ok "kvod hands every body byte to TCP by page reference" \
	test "$spliced" -ge "$size"
check_ok "kvod copies no more than the response head (<= 64 KiB)" \
	test "$copied" -le 65536
check_eq "the module served the title once" "$size" \
	"$(movie_field "$name" bytes_served)"
ktap_finish
