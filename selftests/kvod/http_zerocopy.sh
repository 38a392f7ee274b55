#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Zero-copy proof. During a 64 MiB download, return probes sum, per
# process, the bytes TCP accepted from each sendmsg (tcp_sendmsg()) and the
# bytes it took by page reference (skb_splice_from_iter(), the
# MSG_SPLICE_PAGES path); the difference is what TCP copied in. kvod sends
# from kworkers: they must splice at least every body byte and copy no
# more than the response heads. A control sender in userspace (python's
# socket.sendall of 8 MiB, a copying send) must show up as copied, so a
# broken probe cannot pass the test by seeing nothing.

HERE=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
# shellcheck source=selftests/lib/http.sh
. "$HERE/../lib/http.sh"
# shellcheck source=selftests/lib/trace.sh
. "$HERE/../lib/trace.sh"

MOVIE_MIB=64
CONTROL_MIB=8

ktap_header
ktap_plan 4
http_setup
http_movie z.ts $MOVIE_MIB || ktap_bail_out "cannot register z.ts"
size=$(stat -c %s "$TMP/z.ts")

zc_probes_on tcp_sendmsg

curl -sS -o "$TMP/out" "$URL/z.ts"
zc_tcp_control "$CONTROL_MIB"

read -r sent spliced csent cspliced < <(zc_sums)
zc_probes_off
copied=$((sent - spliced))
ktap_print_msg "kworkers: TCP took $sent bytes, $spliced by reference, copied $copied" \
	"control: TCP took $csent bytes, $cspliced by reference"

check_eq "download byte-exact" "$(sha "$TMP/z.ts")" "$(sha "$TMP/out")"
check_ok "the probes see a copying sender copy (control)" \
	test $((csent - cspliced)) -ge $((CONTROL_MIB << 20))
check_ok "kvod hands every body byte to TCP by page reference" \
	test "$spliced" -ge "$size"
check_ok "kvod copies no more than response heads (<= 64 KiB)" \
	test "$copied" -le 65536

http_unlisten "$HTTP_ADDR" "$HTTP_PORT"
kvod_unload
ktap_finish
