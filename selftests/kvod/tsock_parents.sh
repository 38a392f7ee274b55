#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# tsock as the leaf of a classful parent (hfsc, qfq, drr, ets, htb, prio)
# while it drops late packets in dequeue. tsock's dequeue runs inside its
# parent's dequeue or peek, and tells the parent of every drop
# (qdisc_tree_reduce_backlog()) or the parent keeps a phantom backlog. A
# drop that empties tsock also calls the parent's qlen_notify there, in
# the middle of the parent's own work: the pattern behind the 2025
# use-after-frees in hfsc, qfq, drr and ets. Debian's 6.12.95 has the
# fixes of then (every qlen_notify made idempotent, "sch_hfsc: Fix qlen
# accounting bug when using peek in hfsc_enqueue", hfsc_dequeue() looking
# at the queue again after its peek, codel reporting drops that empty
# it), and still, with a tsock that emptied itself so:
#  - hfsc calls update_vf() twice for a class whose child dropped and then
#    returned its last packet (qlen_notify, then hfsc_dequeue()): the
#    parent class goes passive under a backlogged sibling, which is never
#    served again (fixed upstream later: 90b662ea25f5 per OpenWrt issue
#    24277, which saw it under fq_codel);
#  - qfq picks its next aggregate in qlen_notify, called from the peek at
#    the top of qfq_dequeue(), and qfq_dequeue() picks again: it loses an
#    aggregate, or finds none and dereferences NULL ("BUG: kernel NULL
#    pointer dereference" in qfq_dequeue, seen here).
# So tsock must never empty itself inside a parent's dequeue; this test
# holds it to that, and every parent to taking its notices.
#
# Each tree has a sibling class flooded beyond what the tree may send
# (hfsc's and htb's own limits; for the others an htb root over them),
# and tsock gets bursts of three timed packets 1 ms apart, handed over 5
# to 10 ms ahead, which turn late behind the sibling (tolerance 1 ms).
# Meanwhile tsock's limit and late policy and the class change, a new
# tsock is grafted in, and later the class is deleted under traffic.
# Checked: tsock dropped packets late, the parent's and the root's qlen
# and backlog return to 0 (neither a stalled sibling nor a phantom
# backlog would), the class deletes afterwards and under traffic, and
# packets still flow through the tree. The runner's kernel-log check sees
# the rest: on the debug kernel (make test-debug builds the parents it
# lacks into build/debug/sched) KASAN, list debugging and lockdep.
#
# timeout: 900

# shellcheck source=selftests/lib/tsock.sh
. "$(dirname "$0")/../lib/tsock.sh"

# qfq last: where it fails, it takes the kernel down.
PARENTS=(hfsc drr ets htb prio qfq)
CHECKS=7
SIB_PORT=9001
RATE=1mbit
HALF=500kbit
# The parents the kernel lacks: make debug-modules builds them here.
SCHED_DIR=${KVOD_KMOD_DIR:+${KVOD_KMOD_DIR%/*}/sched}
INSERTED=()

ktap_header
ktap_plan $((${#PARENTS[@]} * CHECKS))

cleanup() {
	local m

	flood_stop
	bursts_stop
	netns_down
	for m in "${INSERTED[@]}"; do
		rmmod "$m" 2>/dev/null
	done
}
trap cleanup EXIT
kmod_load sch_tsock || ktap_bail_out "insmod sch_tsock failed"
netns_up || ktap_bail_out "netns setup failed"
tx sysctl -qw "net.ipv6.conf.$DEV_TX.disable_ipv6=1"

# tcn ARGS...: tc ARGS in the sender's namespace (tc -n: no ip netns
# exec, which costs the most here); tcx: the same, a failure in the log.
tcn() {
	tc -n "$NS_TX" "$@"
}

tcx() {
	local out rc=0

	out=$(tcn "$@" 2>&1) || rc=$?
	[ "$rc" = 0 ] || ktap_print_msg "tc $* exited $rc: $out"
	return "$rc"
}

# tcq ARGS...: queue tc ARGS for tcb, which runs what is queued in one
# tc (tc_batch): a tree and its tsock are a dozen commands, and a process
# start costs a second or more on the debug kernel. tcb stops at the
# first command that fails, and logs it.
TCQ=
tcq() {
	TCQ+="$*"$'\n'
}

tcb() {
	local cmds=${TCQ%$'\n'} out

	TCQ=
	[ -n "$cmds" ] || return 0
	tc_batch out "$cmds" && return 0
	ktap_print_msg "tc -batch failed:" "$cmds" "$out"
	return 1
}

# add_parent KIND ARGS...: tcx qdisc add ARGS, which adds a KIND qdisc,
# after what is queued (tcb); a kernel without KIND gets it from
# $SCHED_DIR first.
add_parent() {
	local kind=$1 ko

	shift
	tcb || return 1
	tcn qdisc add dev "$DEV_TX" "$@" 2>/dev/null && return 0
	ko=$SCHED_DIR/sch_$kind.ko
	if [ -z "$SCHED_DIR" ] || ! [ -e "$ko" ] || ! insmod "$ko"; then
		return 1
	fi
	INSERTED=("sch_$kind" "${INSERTED[@]}")
	tcx qdisc add dev "$DEV_TX" "$@"
}

# drained: the root's and the parent's backlog is "0b 0p", read from
# tc's text (its JSON of hfsc is not JSON: the default class in hex),
# with builtins: one process a look.
drained() {
	local -a w
	local n=0 cur=''

	while read -r -a w; do
		case ${w[0]-} in
		qdisc)
			cur=${w[2]-} ;;
		backlog)
			[ "$cur" = 1: ] || [ "$cur" = "$P:" ] || continue
			[ "${w[1]-} ${w[2]-}" = "0b 0p" ] || return 1
			n=$((n + 1)) ;;
		esac
	done < <(tcn -s qdisc show dev "$DEV_TX")
	[ "$n" = $((P == 1 ? 1 : 2)) ]
}

# count_drops: add the tsock's count of late drops to DROPS.
count_drops() {
	local -a w
	local cur=''

	while read -r -a w; do
		case ${w[0]-} in
		qdisc)
			cur=${w[2]-} ;;
		dropped:)
			if [ "$cur" = "$TSOCK" ] && [ "${w[1]-}" = late ]; then
				[[ ! ${w[2]-} =~ ^[0-9]+$ ]] ||
					DROPS=$((DROPS + w[2]))
				break
			fi ;;
		esac
	done < <(tcn -s qdisc show dev "$DEV_TX")
}

tree() {
	tcn -s qdisc show dev "$DEV_TX"
	tcn -s class show dev "$DEV_TX"
}

# build_tree KIND: the parent P: (the root 1:, or 2: under an htb root
# that limits it), the sibling's class SCLS with a pfifo, and tsock's.
build_tree() {
	local opts=()

	case $1 in
	hfsc)
		P=1 TCLS=1:10 SCLS=1:20
		add_parent hfsc root handle 1: hfsc default 20 || return 1
		tcq class add dev "$DEV_TX" parent 1: classid 1:1 hfsc \
			ls m2 "$RATE" ul m2 "$RATE"
		tcq class add dev "$DEV_TX" parent 1:1 classid "$SCLS" hfsc \
			ls m2 "$HALF" ;;
	htb)
		P=1 TCLS=1:10 SCLS=1:20
		add_parent htb root handle 1: htb default 20 || return 1
		tcq class add dev "$DEV_TX" parent 1: classid 1:1 htb \
			rate "$RATE"
		tcq class add dev "$DEV_TX" parent 1:1 classid "$SCLS" htb \
			rate "$HALF" ceil "$RATE" ;;
	qfq|drr)
		# qfq: another weight puts the sibling in another aggregate.
		P=2 TCLS=2:10 SCLS=2:20
		[ "$1" = qfq ] && opts=(weight 10)
		shaper && add_parent "$1" parent 1:1 handle 2: "$1" || return 1
		tcq class add dev "$DEV_TX" parent 2: classid "$SCLS" "$1" \
			"${opts[@]}" ;;
	ets)
		P=2 TCLS=2:3 SCLS=2:2
		shaper && add_parent ets parent 1:1 handle 2: ets bands 3 \
			strict 1 quanta 1514 1514 || return 1 ;;
	prio)
		P=2 TCLS=2:3 SCLS=2:2
		shaper && add_parent prio parent 1:1 handle 2: prio bands 3 ||
			return 1 ;;
	esac
	tcq qdisc add dev "$DEV_TX" parent "$SCLS" handle 20: pfifo limit 50
	tcq filter add dev "$DEV_TX" parent "$P:" protocol all prio 2 u32 \
		match u32 0 0 flowid "$SCLS"
	add_tsock_class "$1"
	tcb
}

# shaper: the htb root, and its class (queued for tcb).
shaper() {
	add_parent htb root handle 1: htb default 1 &&
	tcq class add dev "$DEV_TX" parent 1: classid 1:1 htb rate "$RATE"
}

# add_tsock_class KIND: tsock's class (ets, prio: its band), the tsock
# and the filter that sends port $PORT there (queued for tcb).
add_tsock_class() {
	case $1 in
	hfsc)
		tcq class add dev "$DEV_TX" parent 1:1 classid "$TCLS" hfsc \
			sc m2 "$HALF" ;;
	htb)
		tcq class add dev "$DEV_TX" parent 1:1 classid "$TCLS" htb \
			rate "$HALF" ceil "$RATE" ;;
	qfq)
		tcq class add dev "$DEV_TX" parent 2: classid "$TCLS" qfq \
			weight 1 ;;
	drr)
		tcq class add dev "$DEV_TX" parent 2: classid "$TCLS" drr ;;
	ets)
		tcq qdisc change dev "$DEV_TX" parent 1:1 handle 2: ets \
			bands 3 strict 1 quanta 1514 1514 ;;
	prio)
		tcq qdisc change dev "$DEV_TX" parent 1:1 handle 2: prio \
			bands 3 ;;
	esac
	TSOCK=10:
	tcq qdisc replace dev "$DEV_TX" parent "$TCLS" handle "$TSOCK" tsock \
		late drop tolerance 1ms
	tcq filter add dev "$DEV_TX" parent "$P:" protocol ip prio 1 u32 \
		match ip dport "$PORT" 0xffff flowid "$TCLS"
}

# del_tsock_class KIND: its filter and its class (ets, prio: the band),
# in one tc.
del_tsock_class() {
	tcq filter del dev "$DEV_TX" parent "$P:" protocol ip prio 1
	case $1 in
	ets)
		tcq qdisc change dev "$DEV_TX" parent 1:1 handle 2: ets \
			bands 2 strict 1 quanta 1514 ;;
	prio)
		tcq qdisc change dev "$DEV_TX" parent 1:1 handle 2: prio \
			bands 2 priomap 1 1 1 1 1 1 0 0 1 1 1 1 1 1 1 1 ;;
	*)
		tcq class del dev "$DEV_TX" classid "$TCLS" ;;
	esac
	tcb
}

# change_class KIND: new parameters for tsock's class (queued for tcb).
change_class() {
	case $1 in
	hfsc)
		tcq class change dev "$DEV_TX" parent 1:1 classid "$TCLS" hfsc \
			sc m2 300kbit ;;
	htb)
		tcq class change dev "$DEV_TX" parent 1:1 classid "$TCLS" htb \
			rate 300kbit ceil "$RATE" ;;
	qfq)
		tcq class change dev "$DEV_TX" parent 2: classid "$TCLS" qfq \
			weight 3 ;;
	drr)
		tcq class change dev "$DEV_TX" parent 2: classid "$TCLS" drr \
			quantum 3000 ;;
	ets)
		tcq qdisc change dev "$DEV_TX" parent 1:1 handle 2: ets \
			bands 3 strict 1 quanta 1514 3000 ;;
	prio)
		tcq qdisc change dev "$DEV_TX" parent 1:1 handle 2: prio \
			bands 3 priomap 2 2 2 2 2 2 0 0 2 2 2 2 2 2 2 2 ;;
	esac
}

# pause SECONDS: let the traffic run. Its senders pace in real time, so
# a second carries about as many packets on a slow kernel. (No sleep(1):
# a process start costs a second or more there.)
pause() {
	sleep_nofork "$1"
}

# change_under_traffic KIND: tsock's limit (which drops) and late policy,
# the class (together with the policy, in one tc), and a new tsock
# grafted in place of the old one.
change_under_traffic() {
	tsock_change limit 3 flow_limit 3 && pause 1 &&
	tsock_change late send && pause 1 || return 1
	tcq qdisc change dev "$DEV_TX" parent "$TCLS" handle "$TSOCK" tsock \
		late drop limit 10000 flow_limit 1000
	change_class "$1"
	tcb && pause 1 || return 1
	count_drops
	TSOCK=11:
	tcx qdisc replace dev "$DEV_TX" parent "$TCLS" handle "$TSOCK" tsock \
		late drop tolerance 1ms
}

# tsock_change ARGS...: change the tsock, after what is queued (tcb).
tsock_change() {
	tcq qdisc change dev "$DEV_TX" parent "$TCLS" handle "$TSOCK" tsock "$@"
	tcb
}

# flood_start: untimed 1000-byte packets to the sibling, more than the
# tree's 1 Mbit/s, until flood_stop.
flood_start() {
	ip netns exec "$NS_TX" "$TXSEND" -d "$ADDR_RX:$SIB_PORT" -m sleep \
		-r 200 -l 1000 -n 100000000 >/dev/null 2>&1 &
	FLOOD=$!
}

# bursts_start: bursts of 3 timed packets 1 ms apart to tsock, $GAP ms
# between bursts, each packet handed over $WINDOW/2 to $WINDOW ms ahead,
# so that tsock is empty between bursts; until bursts_stop.
GAP=$(time_limit 30)
WINDOW=$(time_limit 10)
bursts_start() {
	ip netns exec "$NS_TX" "$TXSEND" -d "$ADDR_RX:$PORT" -m txtime \
		-r 1000 -b 3 -g "$GAP" -W "$WINDOW" -n 100000000 \
		>/dev/null 2>&1 &
	BURSTS=$!
}

flood_stop() {
	[ -n "${FLOOD:-}" ] && kill "$FLOOD" 2>/dev/null && wait "$FLOOD"
	FLOOD=
}

bursts_stop() {
	[ -n "${BURSTS:-}" ] && kill "$BURSTS" 2>/dev/null && wait "$BURSTS"
	BURSTS=
}

traffic_start() {
	flood_start
	bursts_start
}

traffic_stop() {
	bursts_stop
	flood_stop
}

check_drained() {
	if wait_for "$(time_limit 10)" drained; then
		ktap_pass "$1"
	else
		ktap_print_msg "$(tree)"
		ktap_fail "$1"
	fi
}

for kind in "${PARENTS[@]}"; do
	kmsg_mark "tsock_parents: $kind"
	DROPS=0
	if ! build_tree "$kind"; then
		for ((i = 1; i <= CHECKS; i++)); do
			ktap_skip "$kind: check $i of $CHECKS" \
				"no $kind qdisc in this kernel"
		done
		tcn qdisc del dev "$DEV_TX" root 2>/dev/null
		continue
	fi

	traffic_start
	pause 1
	changed=yes
	change_under_traffic "$kind" || changed=no
	pause 1
	traffic_stop
	count_drops
	ktap_print_msg "$kind: $DROPS late drops"
	check_cmp "$kind: tsock dropped packets that turned late" \
		"$DROPS" ">" 0
	check_eq "$kind: tsock and its class changed, tsock replaced under traffic" \
		yes "$changed"
	check_drained "$kind: parent's and root's qlen and backlog back to 0"
	check_ok "$kind: tsock's class deleted afterwards" \
		del_tsock_class "$kind"

	add_tsock_class "$kind"
	tcb
	traffic_start
	pause 1
	check_ok "$kind: tsock's class deleted under traffic" \
		del_tsock_class "$kind"
	pause 1
	traffic_stop
	check_drained "$kind: qlen and backlog back to 0 after the delete"

	# Port $PORT now goes to the sibling; then to a new tsock again.
	stream "-n 30 -t 6000" -m plain -n 30
	rcvd=$(val received)
	add_tsock_class "$kind" && tsock_change late send &&
		stream "-n 20 -t 6000" -m batch -r 100 -n 20 -D 100
	check_eq "$kind: packets flow through the sibling, then a new tsock" \
		"30 20" "$rcvd $(val received)"
	tcn qdisc del dev "$DEV_TX" root
done

kmod_unload sch_tsock
ktap_finish
