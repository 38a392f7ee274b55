# SPDX-License-Identifier: GPL-2.0
#
# lo as at boot, before every program run_guest.sh runs (sourced; not a
# test). Tests that shape loopback traffic (http_serve.sh, http_slow.sh,
# rdma_fetch.sh) remove their qdisc themselves, but one killed by its
# timeout cannot: http_slow.sh's plug holds every packet to its port, and
# every later HTTP test in the guest would stall.

# lo_qdisc: the kind of lo's root qdisc (noqueue at boot).
lo_qdisc() {
	tc qdisc show dev lo root 2>/dev/null | awk 'NR == 1 { print $2 }'
}

# lo_reset: remove lo's root qdisc unless it is noqueue (lo's at boot);
# print the kind removed, nothing if there was none.
lo_reset() {
	local q

	q=$(lo_qdisc)
	[ -n "$q" ] && [ "$q" != noqueue ] || return 0
	tc qdisc del dev lo root 2>/dev/null
	echo "$q"
}
