# SPDX-License-Identifier: GPL-2.0
#
# The two-guest testbed's guest side (sourced by a command that
# tools/vm-pair runs in both guests; not a program).
#
#	PAIR_ROLE		server or client (KVOD_PAIR_ROLE)
#	PAIR_SERVER, PAIR_CLIENT	the two addresses on the link
#	pair_net_up		bring the link's NIC up with this side's address
#	pair_signal NAME [TEXT]	tell the other side NAME happened
#	pair_wait NAME SEC	wait up to SEC seconds for the other side's NAME
#
# The NIC is the virtio-net device tools/vm-run --link adds, found by its
# MAC (52:54:00:c6:12:01 on the server, :02 on the client). Addresses come
# from 198.18.0.0/15 only; nothing else is on the link.

PAIR_ROLE=${KVOD_PAIR_ROLE:?run by tools/vm-pair}
PAIR_DIR=${KVOD_PAIR_DIR:?run by tools/vm-pair}
PAIR_SERVER=198.18.1.1
PAIR_CLIENT=198.18.1.2
PAIR_NETDEV=

# pair_net_up: the link's netdev in PAIR_NETDEV, up, with this side's
# address; 1 if there is no such NIC.
pair_net_up() {
	local mac=52:54:00:c6:12:01 addr=$PAIR_SERVER d

	if [ "$PAIR_ROLE" = client ]; then
		mac=52:54:00:c6:12:02
		addr=$PAIR_CLIENT
	fi
	modprobe -q virtio_net 2>/dev/null
	for d in /sys/class/net/*; do
		if [ "$(cat "$d/address")" = "$mac" ]; then
			PAIR_NETDEV=${d##*/}
			break
		fi
	done
	[ -n "$PAIR_NETDEV" ] || return 1
	ip addr add "$addr/24" dev "$PAIR_NETDEV" &&
		ip link set "$PAIR_NETDEV" up
}

# pair_signal NAME [TEXT]: a file the other guest sees in the shared
# directory, holding TEXT; written whole, then renamed into place.
pair_signal() {
	echo "${2:-}" >"$PAIR_DIR/$1.tmp" &&
		mv "$PAIR_DIR/$1.tmp" "$PAIR_DIR/$1"
}

# pair_wait NAME SECONDS: until the other side signalled NAME.
pair_wait() {
	local deadline=$((SECONDS + $2))

	until [ -e "$PAIR_DIR/$1" ]; do
		[ "$SECONDS" -lt "$deadline" ] || return 1
		sleep 0.2
	done
}
