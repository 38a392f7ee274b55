# SPDX-License-Identifier: GPL-2.0
#
# RDMA for kvod's tests, benchmarks and demo (sourced; not a test): the
# Soft-RoCE topology, the RDMA tests' common frame (rdma_test_start,
# rdma_counter, movie_add, ...) and their preamble (rdma_test_init).
# Source it inside a selftests/qemu/vm-run guest, after ktap.sh (tests,
# bench/rdma.sh, selftests/qemu/demo-guest.sh) or, for the topology
# alone, on its own (bench/http.sh, ioctl_fuzz_test's rxe_setup). It
# defines functions and variables and sets nothing up (no skip, no
# temporary directory, no trap), so that race.sh and live_ffprobe.sh,
# whose preambles are their own, source it too; the rdma_*.sh and
# live_rdma*.sh tests call rdma_test_init once they have sourced it.
#
# rxe in 6.12 works only in the initial network namespace, so everything
# lives there: a veth pair kvodr0/kvodr1, 198.18.0.1/24 on kvodr0 and an
# rxe device (kvod_rxe0) on kvodr0. Server and client are the same host:
# the client connects to 198.18.0.1, which rdma_cm resolves to kvodr0's
# own MAC (the route is local, so rdma_cm maps it from lo to the device
# that owns the address), and rxe hands packets whose destination MAC is
# its own straight to its receive path (rxe_loopback) instead of the wire.
# kvodr1 only keeps the veth's carrier up.
#
#	rxe_setup		load the modules, build the topology
#	rxe_teardown		undo it (safe to call twice)
#	rxe_wait_active		until the rxe port is ACTIVE
#
# Addresses come from 198.18.0.0/15 (benchmarking, RFC 2544) only.
#
# KVOD_RDMA_TRANSPORT=siw puts soft-iWARP (siw, iWARP over TCP) on kvodr0
# instead: built in on the debug kernel, build/siw/siw.ko (make siw) on
# Debian's, which does not ship it. KVOD_RDMA_TRANSPORT=siwlo puts siw
# on the loopback device, with 198.18.0.1/32 on lo. rdma_cm needs a GID
# on the device, which siw takes from the netdev's MAC when the link is
# added, and lo's MAC is all zeros: lo_mac_set gives lo a MAC first (for
# the rest of the guest's life; a zero MAC cannot be set back).

# shellcheck source=selftests/lib/guest.sh
. "$(dirname "${BASH_SOURCE[0]}")/guest.sh"	# sleep_nofork

RDMA_TRANSPORT=${KVOD_RDMA_TRANSPORT:-rxe}
RXE_DEV=${RXE_DEV:-kvod_${RDMA_TRANSPORT}0}
RXE_PEER=kvodr1
# rdma_type: the "rdma link add" type of transport $1.
rdma_type() {
	[ "$1" = siwlo ] && echo siw || echo "$1"
}
# rdma_netdev: the netdev transport $1 sits on.
rdma_netdev() {
	[ "$1" = siwlo ] && echo lo || echo kvodr0
}
RDMA_LINK_TYPE=$(rdma_type "$RDMA_TRANSPORT")
RXE_NETDEV=$(rdma_netdev "$RDMA_TRANSPORT")
# Given to lo when it has none (a locally administered unicast address).
LO_MAC=02:00:c6:12:00:01
RXE_ADDR=198.18.0.1
RXE_PORT=${RXE_PORT:-7471}

# Modules userspace verbs and rdma_cm need (and libcrc32c for siw).
RXE_MODULES="ib_core ib_uverbs rdma_cm rdma_ucm libcrc32c"
# siw.ko for Debian's kernel: make siw's, or in an install tree (ktap.sh
# sets KVOD_REPO empty there) the one installed for the running kernel.
SIW_KO=${KVOD_REPO:-}/build/siw/siw.ko
[ -n "${KVOD_REPO:-}" ] || SIW_KO=$(modinfo -n siw 2>/dev/null)

# rxe_wait_active: until the port is ACTIVE, for up to 5 s times
# $KVOD_TIMEOUT_SCALE, read from sysfs ("4: ACTIVE") without a process.
rxe_wait_active() {
	local end=$((SECONDS + 5 * ${KVOD_TIMEOUT_SCALE:-1})) state=

	until [[ $state == *ACTIVE ]]; do
		((SECONDS < end)) || return 1
		sleep_nofork 0.1
		read -r state <"/sys/class/infiniband/$RXE_DEV/ports/1/state" ||
			state=
	done 2>/dev/null
}

rxe_link_add() {
	rdma link add "$RXE_DEV" type "$RDMA_LINK_TYPE" netdev "$RXE_NETDEV" &&
		rxe_wait_active
}

# lo_mac_set: a non-zero MAC on lo, unless it has one.
lo_mac_set() {
	local mac

	read -r mac </sys/class/net/lo/address
	[ "$mac" != 00:00:00:00:00:00 ] ||
		ip link set dev lo address "$LO_MAC"
}

# rdma_driver_load: the transport's driver where it is a module; built
# in (the debug kernel) nothing loads, and "rdma link add" says whether
# the type exists.
rdma_driver_load() {
	kernel_builtin && return 0
	case $RDMA_LINK_TYPE in
	rxe) modprobe -q rdma_rxe 2>/dev/null ;;
	siw)
		local ko=$SIW_KO

		grep -q '^siw ' /proc/modules ||
			[ "$(modinfo -F vermagic "$ko" 2>/dev/null | cut -d' ' -f1)" != "$(uname -r)" ] ||
			insmod "$ko" 2>/dev/null
		;;
	esac
	return 0
}

# rxe_setup: each step one process, as few as there can be: a process
# costs seconds on the debug kernel, and every RDMA test sets this up.
rxe_setup() {
	# shellcheck disable=SC2086 # a list of module names
	kernel_builtin || modprobe -a $RXE_MODULES 2>/dev/null ||
		[ -d /sys/class/infiniband_verbs ] || return 1
	rdma_driver_load
	rxe_teardown	# what a test that died left behind
	if [ "$RXE_NETDEV" = lo ]; then
		lo_mac_set && ip addr add "$RXE_ADDR/32" dev lo || return 1
	else
		ip -batch - <<-EOF || return 1
			link add $RXE_NETDEV type veth peer name $RXE_PEER
			addr add $RXE_ADDR/24 dev $RXE_NETDEV
			link set $RXE_PEER up
			link set $RXE_NETDEV up
		EOF
	fi
	rxe_link_add
}

# addr_local ADDR: ADDR is a local address (on some device) of this
# network namespace, from /proc/net/fib_trie without a process.
addr_local() {
	local line in=

	while read -r line; do
		case $line in
		"|-- $1") in=1 ;;
		"/32 host LOCAL") [ -z "$in" ] || return 0 ;;
		/*) ;;
		*) in= ;;
		esac
	done </proc/net/fib_trie
	return 1
}

# Both topologies' addresses go, whichever this one is: one on lo and one
# on kvodr0 would make the address ambiguous. What is not there is not
# deleted (each failing command would cost seconds on the debug kernel).
rxe_teardown() {
	[ ! -e "/sys/class/infiniband/$RXE_DEV" ] ||
		rdma link del "$RXE_DEV" 2>/dev/null
	[ ! -e /sys/class/net/kvodr0 ] || ip link del kvodr0 2>/dev/null
	! addr_local "$RXE_ADDR" || ip addr del "$RXE_ADDR/32" dev lo 2>/dev/null
	return 0
}

# rdma_use TRANSPORT: rxe, siw or siwlo from now on, with its device name.
rdma_use() {
	RDMA_TRANSPORT=$1
	RDMA_LINK_TYPE=$(rdma_type "$1")
	RXE_NETDEV=$(rdma_netdev "$1")
	RXE_DEV=kvod_${1}0
}

# rdma_require_transport: skip the whole test program (KTAP "1..0 # SKIP",
# before its header) when the transport is siw and there is no siw:
# neither loaded or built in nor built by "make siw".
rdma_require_transport() {
	[ "$RDMA_LINK_TYPE" = siw ] || return 0
	[ -f "$SIW_KO" ] && return 0
	grep -q ' siw_newlink' /proc/kallsyms 2>/dev/null && return 0
	echo "1..0 # SKIP no siw: not built in, and no build/siw/siw.ko (make siw)"
	exit 4
}

# The RDMA tests' common frame: topology, kvod.ko, one listener. Its
# programs are where ktap.sh says, or in $KVOD_REPO when this file is
# sourced alone.
# shellcheck disable=SC2034 # used by the scripts that source this
KVOD_FETCH=${KVOD_BIN:-$KVOD_REPO/tools}/kvod-fetch
RDMA_CLIENT=${KVOD_SELFTESTS:-$KVOD_REPO/selftests}/kvod/rdma_client
# shellcheck disable=SC2034 # for the tests that source this
NOTE_SINK=${KVOD_SELFTESTS:-$KVOD_REPO/selftests}/kvod/note_sink
# shellcheck disable=SC2034 # for the tests that source this
RDMA_URL=rdma://$RXE_ADDR:$RXE_PORT
RXE_EP=$RXE_ADDR:$RXE_PORT

# rdma_test_start [KVOD_PARAMS...]: bail out unless all of it comes up.
rdma_test_start() {
	local f

	for f in "$KVOD_FETCH" "$RDMA_CLIENT" "$KVODCTL"; do
		[ -x "$f" ] || ktap_bail_out "$f not built (make tools selftests)"
	done
	rxe_setup || ktap_bail_out "cannot set up rxe on $RXE_NETDEV"
	ktap_print_msg "$(rdma link show "$RXE_DEV/1")"
	kvod_load "$@" || ktap_bail_out "cannot load kvod.ko"
	"$KVODCTL" listen rdma "$RXE_EP" ||
		ktap_bail_out "cannot listen on $RXE_EP"
}

rdma_test_stop() {
	kvod_unload
	rxe_teardown
}

# rdma_iwarp: the transport is iWARP (siw, on kvodr0 or lo).
rdma_iwarp() {
	[ "$RDMA_LINK_TYPE" = siw ]
}

# rdma_terminates: TERMINATEs of type remote protection (RFC 5040 layer
# 0 type 1: invalid STag, bounds, rights, STag of another stream) that
# siw received so far, from the kernel log.
rdma_terminates() {
	dmesg | grep -c 'siw: got TERMINATE\. layer 0, type 1,'
}

# rdma_refused STATUS TERMINATES_BEFORE: "refused" if STATUS is how this
# transport ends a READ of memory the connection may not read, else
# STATUS. rxe NAKs it: "remote access error". Over iWARP the server's
# siw answers with a TERMINATE and the client's siw flushes the READ
# ("Work Request Flushed Error"), so there the TERMINATE must be in the
# kernel log too (more than TERMINATES_BEFORE).
rdma_refused() {
	if rdma_iwarp; then
		if [ "$1" = "Work Request Flushed Error" ] &&
			(($(rdma_terminates) > $2)); then
			echo refused
			return
		fi
	elif [ "$1" = "remote access error" ]; then
		echo refused
		return
	fi
	echo "$1"
}

# rdma_counter NAME: a counter of the test's listener (listener_counter,
# lib/ktap.sh).
rdma_counter() {
	listener_counter rdma "$RXE_EP" "$1"
}

# movie_add NAME BYTES: a random movie, its file left in $RDMA_TMP/NAME.
movie_add() {
	head -c "$2" /dev/urandom >"$RDMA_TMP/$1" &&
		"$KVODCTL" add "$1" "$RDMA_TMP/$1"
}

# kvod_rdma_objects: PDs, MRs and QPs that kvod.ko holds on any device.
# The restrack names a kernel object after the module that called the
# verb: kvod for its PDs and MRs, but rdma_cm for a QP made through
# rdma_create_qp(); a user space object after its process (kvod-fetch).
# The guest's only other kernel user of the verbs is ib_core (the MAD
# layer's PD and QP 1), so every kernel object not ib_core's is kvod's.
# Not so a PD or MR that outlives rmmod: its name is a string in kvod.ko,
# and the kernel's dump reads it (nldev.c), so listing it faults. Such a
# leak is a kernel report (run_guest.sh's health check) and, when the
# device goes, restrack's warning; this count sees what kvod holds while
# loaded, and QPs (named by rdma_cm) after.
kvod_rdma_objects() {
	local kind

	for kind in pd mr qp; do
		rdma resource show "$kind" 2>/dev/null | grep ' comm \[' |
			grep -vc ' comm \[ib_core\]'
	done
}

# rdma_test_init: the preamble of the tests that run over RDMA: skip the
# whole program outside a guest or without the transport, make
# $RDMA_TMP, which movie_add and the tests keep their files in, and on
# exit run rdma_on_exit, which a test may redefine to undo more
# (tracing, client processes), then remove $RDMA_TMP.
rdma_test_init() {
	kvod_require_guest
	rdma_require_transport
	RDMA_TMP=$(mktemp -d)
	trap rdma_exit EXIT
}

rdma_on_exit() {
	:
}

rdma_exit() {
	rdma_on_exit
	rm -rf "$RDMA_TMP"
}
