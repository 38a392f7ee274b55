# SPDX-License-Identifier: GPL-2.0
#
# Shared by the tsock_*.sh and push_*.sh tests (sourced; not a test), and
# their preamble: it sources ktap.sh, skips outside a selftests/qemu/vm-run guest
# and bails out unless the helpers and modules are built.
#
# Topology: two network namespaces joined by a veth pair,
#   $NS_TX: $DEV_TX 198.18.0.1/24  (the sender; the qdisc under test)
#   $NS_RX: $DEV_RX 198.18.0.2/24  (the receiver, with SO_TIMESTAMPNS)
# tc finds q_tsock.so through TC_LIB_DIR, so nothing is installed (in
# an install tree, KVOD_TC_LIB is where make -C tools/tc install puts it).

# shellcheck source=selftests/lib/ktap.sh
. "$(dirname "${BASH_SOURCE[0]}")/ktap.sh"

TXT_DIR=$KVOD_SELFTESTS/txtime
TXSEND=$TXT_DIR/txsend
TXRECV=$TXT_DIR/txrecv
# shellcheck disable=SC2034 # for the tests that source this
TSOCK_NL=$KVOD_SELFTESTS/kvod/tsock_nl.py
export TC_LIB_DIR=$KVOD_TC_LIB

NS_TX=tsock-tx-$$
NS_RX=tsock-rx-$$
DEV_TX=vtx
DEV_RX=vrx
ADDR_TX=198.18.0.1
ADDR_RX=198.18.0.2
PORT=9000

tsock_require_tools() {
	local f

	for f in "$TXSEND" "$TXRECV" "$TC_LIB_DIR/q_tsock.so" \
		 "$(kmod_path sch_tsock)"; do
		[ -e "$f" ] || ktap_bail_out "$f missing: run make all selftests"
	done
}

netns_up() {
	ip netns add "$NS_TX" && ip netns add "$NS_RX" &&
	ip link add "$DEV_TX" netns "$NS_TX" type veth \
		peer name "$DEV_RX" netns "$NS_RX" &&
	ip -n "$NS_TX" addr add "$ADDR_TX/24" dev "$DEV_TX" &&
	ip -n "$NS_RX" addr add "$ADDR_RX/24" dev "$DEV_RX" &&
	ip -n "$NS_TX" link set lo up && ip -n "$NS_RX" link set lo up &&
	ip -n "$NS_TX" link set "$DEV_TX" up &&
	ip -n "$NS_RX" link set "$DEV_RX" up &&
	netns_neigh
}

# netns_neigh: each side knows the other's address for good. A
# neighbour left to ARP goes stale between streams, and on a slow
# kernel a resolution that misses its probes drops a whole stream
# before the qdisc sees it: these tests are about the qdisc.
netns_neigh() {
	local mac_tx mac_rx

	mac_tx=$(ip -n "$NS_TX" -j link show "$DEV_TX" | jq -r '.[0].address') &&
	mac_rx=$(ip -n "$NS_RX" -j link show "$DEV_RX" | jq -r '.[0].address') &&
	ip -n "$NS_TX" neigh replace "$ADDR_RX" dev "$DEV_TX" \
		lladdr "$mac_rx" nud permanent &&
	ip -n "$NS_RX" neigh replace "$ADDR_TX" dev "$DEV_RX" \
		lladdr "$mac_tx" nud permanent
}

netns_down() {
	ip netns del "$NS_TX" 2>/dev/null
	ip netns del "$NS_RX" 2>/dev/null
	true
}

# tx CMD...: run CMD in the sender's namespace.
tx() {
	ip netns exec "$NS_TX" "$@"
}

rx() {
	ip netns exec "$NS_RX" "$@"
}

# qd ARGS...: tc qdisc ARGS on the sender's device.
qd() {
	local verb=$1

	shift
	tx tc qdisc "$verb" dev "$DEV_TX" "$@"
}

# qstat KEY: a field of the root qdisc's JSON statistics.
qstat() {
	tx tc -s -j qdisc show dev "$DEV_TX" | jq -r ".[0].$1"
}

# qopt KEY...: the root qdisc's options KEY..., space-separated.
qopt() {
	local keys

	keys=$(printf '.%s,' "$@")
	tx tc -j qdisc show dev "$DEV_TX" |
		jq -r ".[0].options | [${keys%,}] | map(tostring) | join(\" \")"
}

# stream "RXARGS" TXARGS...: start txrecv in $NS_RX with RXARGS, run
# txsend in $NS_TX with TXARGS, and set RX_OUT to txrecv's report and
# TX_OUT to txsend's.
stream() {
	local rxargs=$1 out

	shift
	# On a slow kernel (KVOD_TIMEOUT_SCALE) txsend takes seconds just to
	# start: stretch the receiver's idle (-t) and total (-T) limits.
	local -a args lines
	local a prev=

	for a in $rxargs; do
		[[ $prev != -[tT] ]] || a=$((a * ${KVOD_TIMEOUT_SCALE:-1}))
		args+=("$a")
		prev=$a
	done
	out=${TMPDIR:-/tmp}/kvod-stream.$$
	rx "$TXRECV" -p "$PORT" "${args[@]}" >"$out" &
	local pid=$!
	# No packet may beat the bind: wait for txrecv to say it listens.
	wait_for "$(time_limit 30)" file_has "$out" listening ||
		ktap_print_msg "txrecv did not start"
	TX_OUT=$(tx "$TXSEND" -d "$ADDR_RX:$PORT" "$@" 2>&1)
	wait "$pid"
	mapfile -t -s 1 lines <"$out"
	RX_OUT=$(printf '%s\n' "${lines[@]}")
	RX_OUT=${RX_OUT%$'\n'}
	rm -f "$out"
	ktap_print_msg "txsend $*: $TX_OUT" "txrecv $rxargs: $RX_OUT" \
		"qdisc: $(tx tc -s qdisc show dev "$DEV_TX" | grep -E 'backlog|flows')"
	# Nothing arrived: say where the packets went.
	[ "$(val received)" = 0 ] &&
		ktap_print_msg "sender: $(tx ip -s link show "$DEV_TX" | tr -s ' \n' ' ')" \
			"receiver: $(rx ip -s link show "$DEV_RX" | tr -s ' \n' ' ')" \
			"receiver UDP: $(rx grep '^Udp:' /proc/net/snmp | tail -n1)"
	true
}

# val KEY: KEY's value in RX_OUT ("received=3 in_order=1" style).
val() {
	local v

	kv_into v "$1" "$RX_OUT"
	[ -z "$v" ] || echo "$v"
}

# check_cmp DESC A OP B: a numeric comparison (floats allowed: awk does
# those; whole numbers the shell compares itself).
check_cmp() {
	local desc=$1 a=$2 op=$3 b=$4 ok=1

	if [[ $a =~ ^-?(0|[1-9][0-9]*)$ && $b =~ ^-?(0|[1-9][0-9]*)$ ]]; then
		case $op in
		"<") ((a < b)) ;;
		"<=") ((a <= b)) ;;
		">") ((a > b)) ;;
		">=") ((a >= b)) ;;
		"==") ((a == b)) ;;
		*) awk -v a="$a" -v b="$b" "BEGIN { exit !(a $op b) }" ;;
		esac || ok=0
	elif [ -z "$a" ] || ! awk -v a="$a" -v b="$b" "BEGIN { exit !(a $op b) }"; then
		ok=0
	fi
	if ((ok)); then
		ktap_pass "$desc"
	else
		ktap_print_msg "expected $a $op $b"
		ktap_fail "$desc"
	fi
}

kvod_require_guest
tsock_require_tools
