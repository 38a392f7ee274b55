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

# The sender's and the receiver's MAC addresses, fixed so that each side
# can be told the other's from the start (netns_up).
MAC_TX=02:00:c6:12:00:01
MAC_RX=02:00:c6:12:00:02

# netns_up: the two namespaces and the veth pair between them, in four
# processes (each namespace's setup in one ip -batch): a process start
# costs a second or more on the debug kernel. Each side knows the other's
# address for good (a permanent neighbour). A neighbour left to ARP goes
# stale between streams, and on a slow kernel a resolution that misses
# its probes drops a whole stream before the qdisc sees it: these tests
# are about the qdisc.
netns_up() {
	ip netns add "$NS_TX" && ip netns add "$NS_RX" || return 1
	ip -n "$NS_TX" -batch - <<-EOF || return 1
		link add $DEV_TX address $MAC_TX type veth \
			peer name $DEV_RX address $MAC_RX netns $NS_RX
		addr add $ADDR_TX/24 dev $DEV_TX
		link set lo up
		link set $DEV_TX up
		neigh replace $ADDR_RX dev $DEV_TX lladdr $MAC_RX nud permanent
	EOF
	ip -n "$NS_RX" -batch - <<-EOF
		addr add $ADDR_RX/24 dev $DEV_RX
		link set lo up
		link set $DEV_RX up
		neigh replace $ADDR_TX dev $DEV_RX lladdr $MAC_TX nud permanent
	EOF
}

netns_down() {
	ip -force -batch - >/dev/null 2>&1 <<-EOF
		netns del $NS_TX
		netns del $NS_RX
	EOF
	true
}

# tx CMD...: run CMD in the sender's namespace.
tx() {
	ip netns exec "$NS_TX" "$@"
}

rx() {
	ip netns exec "$NS_RX" "$@"
}

# tc in the sender's namespace is tc -n, not tx tc: one program start
# less (ip's), which costs a second or more on the debug kernel.

# qd ARGS...: tc qdisc ARGS on the sender's device.
qd() {
	local verb=$1

	shift
	tc -n "$NS_TX" qdisc "$verb" dev "$DEV_TX" "$@"
}

# qstat KEY: a field of the root qdisc's JSON statistics.
qstat() {
	tc -n "$NS_TX" -s -j qdisc show dev "$DEV_TX" | jq -r ".[0].$1"
}

# qstats KEY...: the root qdisc's statistics KEY..., space-separated: one
# look for several counters.
qstats() {
	local keys

	printf -v keys '.%s,' "$@"
	tc -n "$NS_TX" -s -j qdisc show dev "$DEV_TX" |
		jq -r ".[0] | [${keys%,}] | map(tostring) | join(\" \")"
}

# qopt KEY...: the root qdisc's options KEY..., space-separated.
qopt() {
	local keys

	printf -v keys '.%s,' "$@"
	tc -n "$NS_TX" -j qdisc show dev "$DEV_TX" |
		jq -r ".[0].options | [${keys%,}] | map(tostring) | join(\" \")"
}

# tc_batch VAR LINES [OPTION...]: run LINES, tc commands one a line (as
# after "tc"), in one tc -batch with OPTIONs in the sender's namespace;
# set VAR to what it said (both streams), TC_FAILED[N] to what it said of
# line N if that command failed, and return its status. tc ends what it
# says of a failed command with "Command failed -:N" and stops there, or
# with -force goes on to the next. One process for them all: a process
# start costs a second or more on the debug kernel.
declare -gA TC_FAILED=()
tc_batch() {
	local var=$1 lines=$2 said line text='' rc=0

	shift 2
	# The redirections on exec, not on tc: bash then runs tc in the
	# process of the command substitution, not in one more.
	said=$(exec 2>&1 <<<"$lines"; tc -n "$NS_TX" "$@" -batch -) || rc=$?
	printf -v "$var" %s "$said"
	TC_FAILED=()
	while IFS= read -r line; do
		if [[ $line =~ ^Command\ failed\ -:([0-9]+)$ ]]; then
			# shellcheck disable=SC2034 # the tests read it
			TC_FAILED[${BASH_REMATCH[1]}]=$text
			text=
		else
			text+=$line$'\n'
		fi
	done <<<"$said"
	return "$rc"
}

# stream "RXARGS" TXARGS...: start txrecv in $NS_RX with RXARGS, run
# txsend in $NS_TX with TXARGS, and set RX_OUT to txrecv's report and
# TX_OUT to txsend's. Its two halves serve a test that looks at the
# qdisc while the packets wait there: stream_send returns once txsend
# has handed them over, stream_wait once txrecv is done.
stream() {
	stream_send "$@"
	stream_wait
}

stream_send() {
	local rxargs=$1 a line prev=''
	local -a args

	shift
	# On a slow kernel (KVOD_TIMEOUT_SCALE) txsend takes seconds just to
	# start: stretch the receiver's wait for the first packet (-w), its
	# idle (-t) and total (-T) limits.
	for a in $rxargs; do
		[[ $prev != -[tTw] ]] || a=$((a * ${KVOD_TIMEOUT_SCALE:-1}))
		args+=("$a")
		prev=$a
	done
	STREAM_RXARGS=$rxargs
	STREAM_TXARGS=$*
	# txrecv's report comes through a pipe, read by builtins: no file to
	# poll or remove, and ip itself rather than rx, as a function would
	# be one process more. No packet may beat the bind: wait for txrecv
	# to say it listens.
	exec {STREAM_FD}< <(ip netns exec "$NS_RX" "$TXRECV" -p "$PORT" \
		"${args[@]}")
	STREAM_PID=$!
	read -r -t "$(time_limit 30)" -u "$STREAM_FD" line
	[[ $line == listening* ]] || ktap_print_msg "txrecv did not start"
	# (exec 2>&1 rather than a redirection on ip: see tc_batch)
	TX_OUT=$(exec 2>&1; ip netns exec "$NS_TX" "$TXSEND" \
		-d "$ADDR_RX:$PORT" "$@") || true
}

stream_wait() {
	local -a lines words
	local line n q=''

	mapfile -t -u "$STREAM_FD" lines
	exec {STREAM_FD}<&-
	wait "$STREAM_PID"
	printf -v RX_OUT '%s\n' "${lines[@]}"
	RX_OUT=${RX_OUT%$'\n'}
	while IFS= read -r line; do
		[[ $line != *backlog* && $line != *flows* ]] || q+=$line$'\n'
	done < <(tc -n "$NS_TX" -s qdisc show dev "$DEV_TX")
	ktap_print_msg "txsend $STREAM_TXARGS: $TX_OUT" \
		"txrecv $STREAM_RXARGS: $RX_OUT" "qdisc: ${q%$'\n'}"
	# Nothing arrived: say where the packets went.
	kv_into n received "$RX_OUT"
	[ "$n" = 0 ] || return 0
	read -r -d '' -a words < <(ip -n "$NS_TX" -s link show "$DEV_TX")
	line="sender: ${words[*]}"
	read -r -d '' -a words < <(ip -n "$NS_RX" -s link show "$DEV_RX")
	q=$(rx grep '^Udp:' /proc/net/snmp)
	ktap_print_msg "$line" "receiver: ${words[*]}" \
		"receiver UDP: ${q##*$'\n'}"
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
