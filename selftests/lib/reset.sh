# SPDX-License-Identifier: GPL-2.0
#
# The guest as at boot, before every program run_guest.sh runs (sourced;
# not a test): lo without a qdisc, no named network namespace, none of
# kvod's modules loaded. Each program undoes what it did itself, but one
# killed by its timeout cannot: http_slow.sh's plug on lo holds every
# packet to its port, so every later HTTP test in the guest would stall;
# a tsock program's namespaces keep their qdiscs, which hold sch_tsock,
# so the next tsock program could not load it.

# shellcheck source=selftests/lib/guest.sh
. "$(dirname "${BASH_SOURCE[0]}")/guest.sh"	# sleep_nofork

# lo_qdisc: set LO_QDISC to the kind of lo's root qdisc (noqueue at
# boot), starting one process (tc).
lo_qdisc() {
	LO_QDISC=$(tc qdisc show dev lo root 2>/dev/null)
	read -r _ LO_QDISC _ <<<"$LO_QDISC"
}

# lo_reset: remove lo's root qdisc unless it is noqueue (lo's at boot);
# print the kind removed, nothing if there was none. The runner calls
# this before every program: it starts no process but tc.
lo_reset() {
	lo_qdisc
	[ -n "$LO_QDISC" ] && [ "$LO_QDISC" != noqueue ] || return 0
	tc qdisc del dev lo root 2>/dev/null
	echo "$LO_QDISC"
}

# netns_reset: delete every named network namespace (the rig makes none)
# and print their names, space-separated; nothing if there was none.
# It looks in ip-netns(8)'s directory itself, so that it starts no
# process when there is none. A namespace goes once its last user has:
# its devices and qdiscs go in the kernel's cleanup work a little later
# (modules_reset waits for it).
netns_reset() {
	local f gone=()

	for f in /var/run/netns/*; do
		[ -e "$f" ] || continue
		ip netns delete "${f##*/}" 2>/dev/null && gone+=("${f##*/}")
	done
	echo "${gone[*]}"
}

# modules_reset WHEN MODULE...: rmmod each MODULE still loaded, in two
# passes (in case of dependencies the list's order does not follow), and
# say so in a "# runner:" line ending in WHEN. Before its second try, a
# module still in use gets up to 30 s (times $KVOD_TIMEOUT_SCALE) to be
# let go: a deleted namespace's qdiscs, or the namespace a module's own
# sockets kept until the first pass unloaded it, go in the kernel's
# cleanup work. Fails if a module stays.
modules_reset() {
	local when=$1 m pass refs end stuck=0

	shift
	for pass in 1 2; do
		for m in "$@"; do
			[ -d "/sys/module/$m" ] || continue
			end=$((SECONDS + 30 * ${KVOD_TIMEOUT_SCALE:-1}))
			while [ "$pass" = 2 ] && ((SECONDS < end)); do
				refs=0
				read -r refs 2>/dev/null <"/sys/module/$m/refcnt"
				[ "$refs" != 0 ] || break
				sleep_nofork 0.2
			done
			[ -d "/sys/module/$m" ] || continue
			if rmmod "$m" 2>/dev/null; then
				echo "# runner: unloaded leftover module $m $when"
			elif [ "$pass" = 2 ]; then
				echo "# runner: could not unload leftover module $m $when: $(rmmod "$m" 2>&1)"
				stuck=1
			fi
		done
	done
	return "$stuck"
}
