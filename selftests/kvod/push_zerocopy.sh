#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The push sends no movie byte by copy. During a push over veth, return
# probes sum, per process, the bytes UDP accepted from each sendmsg
# (udp_sendmsg()) and the bytes it took by page reference
# (skb_splice_from_iter(), the MSG_SPLICE_PAGES path); the difference is
# what UDP copied in. kvod sends from kworkers: they must splice at least
# every payload byte and copy nothing (kvod writes each RTP header into a
# page fragment of its own, which UDP takes by reference too). A
# control sender in userspace (python's sendto, a copying send) must show
# up as copied, so a broken probe cannot pass the test by seeing nothing.
#
# Then the references: a push's packets are held in sch_plug while the
# push is stopped, its movie deleted and the freed memory offered to
# another movie at once. The packets released afterwards must still carry
# the first movie's bytes; meanwhile kvodctl stats counts the pages they
# hold as graveyard, and once they are gone, nothing.
#
# timeout: 300

# shellcheck source=selftests/lib/tsock.sh
. "$(dirname "$0")/../lib/tsock.sh"
# shellcheck source=selftests/lib/trace.sh
. "$(dirname "$0")/../lib/trace.sh"

ktap_header
ktap_plan 9

TMP=$(mktemp -d)
RMEM_MAX=$(sysctl -n net.core.rmem_max)
BACKLOG=$(sysctl -n net.core.netdev_max_backlog)
cleanup() {
	zc_probes_off 2>/dev/null
	sysctl -qw net.core.rmem_max="$RMEM_MAX"
	sysctl -qw net.core.netdev_max_backlog="$BACKLOG"
	netns_down
	rm -rf "$TMP"
}
trap cleanup EXIT

NPKT=3000			# RTP packets, 7 TS packets (1316 bytes) each
RATE=40000000			# 3800 packets/s
CONTROL_PKTS=2000		# the copying control's datagrams, 1316 bytes
# mkts FILE N: a synthetic MPEG-TS movie of N RTP payloads.
mkts() {
	python3 -c '
import os, sys
with open(sys.argv[1], "wb") as f:
    for _ in range(int(sys.argv[2]) * 7):
        f.write(b"\x47" + os.urandom(187))
' "$1" "$2"
}
# udp_counters rx|tx: that namespace's UDP counters, NAME=VALUE.
udp_counters() {
	# shellcheck disable=SC2016 # awk's own variables
	"$1" awk '/^Udp:/ {
		if (!n++) { split($0, k); next }
		for (i = 2; i <= NF; i++) printf "%s=%s ", k[i], $i
	}' /proc/net/snmp
}
mkts "$TMP/m.ts" "$NPKT" || ktap_bail_out "cannot make the movie"

sysctl -qw net.core.rmem_max=$((64 << 20))
kvod_load || ktap_bail_out "insmod kvod failed"
netns_up || ktap_bail_out "netns setup failed"
"$KVODCTL" add m "$TMP/m.ts" >/dev/null || ktap_bail_out "kvodctl add failed"

zc_probes_on udp_sendmsg

rx "$TXRECV" -p 5010 -R $((RATE / (1316 * 8))) -n "$NPKT" -t 10000 \
	-T 60000 -P "$TMP/rx.ts" >"$TMP/rx" &
rxpid=$!
wait_for 30 grep -q listening "$TMP/rx" || ktap_print_msg "txrecv did not start"
tx "$KVODCTL" push m "udp://$ADDR_RX:5010" --rate "$RATE" >/dev/null ||
	ktap_print_msg "kvodctl push failed"
wait "$rxpid"
zc_udp_control "$CONTROL_PKTS" tx

read -r sent spliced csent cspliced < <(zc_sums)
zc_probes_off
copied=$((sent - spliced))
RX_OUT=$(tail -n +2 "$TMP/rx")
ktap_print_msg "txrecv: $RX_OUT" \
	"kworkers: UDP took $sent bytes, $spliced by reference, copied $copied" \
	"control: UDP took $csent bytes, $cspliced by reference"

check_eq "every packet arrived" "$NPKT" "$(val received)"
check_ok "payload byte-exact against the movie" cmp "$TMP/m.ts" "$TMP/rx.ts"
check_ok "the probes see a copying sender copy (control)" \
	test $((csent - cspliced)) -ge $((CONTROL_PKTS * 1316))
check_ok "kvod hands every payload byte to UDP by page reference" \
	test "$spliced" -ge "$(stat -c %s "$TMP/m.ts")"
check_ok "kvod has UDP copy nothing, headers included" \
	test "$copied" -le 0

# --- packets in a qdisc keep their pages after STOP and DEL ---
# sch_plug holds every packet until told: the push's packets wait there
# while the push is stopped, its movie deleted and a movie of zeros added
# (which may get the freed pages, unless the packets hold them).
NPKT2=2000
RATE2=4000000			# 380 packets/s
mkts "$TMP/d.ts" "$NPKT2" || ktap_bail_out "cannot make the movie"
head -c "$(stat -c %s "$TMP/d.ts")" /dev/zero >"$TMP/fill"
"$KVODCTL" add d "$TMP/d.ts" >/dev/null || ktap_bail_out "kvodctl add failed"
# Only the push's packets in the plug: no IPv6 (no ND, MLD or router
# solicitation), and no ARP probe either, since netns_up made the
# neighbour permanent (a stale entry sends three, which the plug held and
# counted on the slow debug kernel). IPv6 goes before the plug exists:
# turning it off may itself send an MLD report, and a new plug holds from
# the start.
tx sysctl -qw "net.ipv6.conf.$DEV_TX.disable_ipv6=1"
# Both kernels have sch_plug (Debian's as a module, the debug kernel's
# built in, where modprobe finds no modules directory): a plug that
# cannot be added fails the four checks, it does not skip them.
modprobe -q sch_plug 2>/dev/null
if ! qd add root plug limit 10000000; then
	for t in "the movie is freed while its packets wait in a qdisc, their pages in the graveyard" \
		 "packets released after DEL arrive" \
		 "each carries a payload of the deleted movie, none other bytes" \
		 "m and fill left, nothing held by the deleted movie, the graveyard empty"; do
		ktap_print_msg "cannot add a plug qdisc (sch_plug)"
		ktap_fail "$t"
	done
else
	# Whatever was sent before that is let go, and the plug blocked again
	# once it is empty.
	qd change root plug release_indefinite
	wait_test "$(time_limit 10)" -eq 0 qstat qlen ||
		ktap_print_msg "the plug did not empty: $(qstat qlen) held"
	qd change root plug block
	# The plug lets every held packet go at once, through the veth into
	# the receiving CPU's backlog: make room for all of them.
	sysctl -qw net.core.netdev_max_backlog=10000
	# A 2 s window: a send buffer for 760 packets, which the plug keeps
	# charged until it lets them go.
	id=$(tx "$KVODCTL" push d "udp://$ADDR_RX:5012" --rate "$RATE2" \
		--window 2000)
	# shellcheck disable=SC2317 # wait_test runs it
	handed() {
		"$KVODCTL" list --json | jq -r '.pushes[0].packets // 0'
	}
	wait_test "$(time_limit 30)" -ge 300 handed
	"$KVODCTL" stop "$id"
	"$KVODCTL" del d
	qlen=$(qstat qlen)
	kvod_stats
	zombies=${KVOD_STATS[zombies]:-}
	grave=${KVOD_STATS[graveyard]:-0}
	"$KVODCTL" add fill "$TMP/fill" >/dev/null
	ktap_print_msg "after STOP and DEL: $qlen packets held, $zombies zombies, $grave bytes in the graveyard"
	# The pages the packets hold are counted as graveyard: the first
	# 300 packets' 394,800 bytes at least.
	check_eq "the movie is freed while its packets wait in a qdisc, their pages in the graveyard" \
		"0 yes yes" \
		"$zombies $([ "${qlen:-0}" -ge 300 ] && echo yes || echo no) $([ "$grave" -ge $((300 * 1316)) ] && echo yes || echo no)"
	# The receiver starts now, to take as many packets as were held: it
	# returns once they are in, or after a minute without one (scaled
	# for a debug kernel).
	rx "$TXRECV" -p 5012 -R $((RATE2 / (1316 * 8))) -n "${qlen:-1}" \
		-t $(($(time_limit 60) * 1000)) -T $(($(time_limit 120) * 1000)) \
		-P "$TMP/rx2.ts" >"$TMP/rx2" &
	rxpid=$!
	wait_for 30 grep -q listening "$TMP/rx2" ||
		ktap_print_msg "txrecv did not start"
	qd change root plug release_indefinite
	wait "$rxpid"
	RX_OUT=$(tail -n +2 "$TMP/rx2")
	ktap_print_msg "txrecv: $RX_OUT" \
		"plug: $(qstat packets) sent, $(qstat drops) dropped" \
		"receiver's UDP: $(udp_counters rx)"
	# Each received payload must be one of the movie's (they are random,
	# so each is unique) and none anything else; order is not checked.
	read -r got foreign < <(python3 -c '
import sys
movie = open(sys.argv[1], "rb").read()
rx = open(sys.argv[2], "rb").read()
want = {movie[i:i + 1316] for i in range(0, len(movie), 1316)}
pkts = [rx[i:i + 1316] for i in range(0, len(rx), 1316)]
print(len(pkts), sum(p not in want for p in pkts))
' "$TMP/d.ts" "$TMP/rx2.ts")
	check_eq "packets released after DEL arrive, all $qlen held" "$qlen" \
		"${got:-0}"
	check_eq "each carries a payload of the deleted movie, none other bytes" \
		0 "${foreign:-none}"
	wait_test "$(time_limit 10)" = 0 kvod_stat graveyard
	kvod_stats
	check_eq "m and fill left, nothing held by the deleted movie, the graveyard empty" \
		"2 0 0" \
		"${KVOD_STATS[movies]:-} ${KVOD_STATS[zombies]:-} ${KVOD_STATS[graveyard]:-}"
fi

netns_down
kvod_unload
ktap_finish
