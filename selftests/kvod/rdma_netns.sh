#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# RDMA listeners live in the initial network namespace only: an rdma_cm
# id holds a reference on its namespace, so a listener elsewhere would
# pin it and never be stopped by its death. LISTEN rdma in another
# namespace fails with EOPNOTSUPP and leaves nothing behind; the
# namespace is deleted, no RDMA listener of it remains (while one of
# the initial namespace is listed), kvod unloads.
#
# timeout: 300

# shellcheck source=selftests/lib/ktap.sh
. "$(dirname "$0")/../lib/ktap.sh"
kvod_require_guest

NS=kvodrdma$$
trap 'ip netns del "$NS" 2>/dev/null' EXIT

ktap_header
ktap_plan 5
[ -x "$KVODCTL" ] || ktap_bail_out "$KVODCTL not built (make tools)"
modprobe -q -a ib_core rdma_cm || ktap_bail_out "cannot load rdma_cm"
kvod_load || ktap_bail_out "cannot load kvod.ko"
{ ip netns add "$NS" && ip -n "$NS" link set lo up; } ||
	ktap_bail_out "cannot create a namespace"

out=$(ip netns exec "$NS" "$KVODCTL" listen rdma 0.0.0.0:7471 2>&1)
rc=$?
check_eq "LISTEN rdma in another namespace: EOPNOTSUPP" \
	"1 kvodctl: listen 0.0.0.0:7471: Operation not supported" "$rc $out"
check_eq "no RDMA listener anywhere" "" "$(listeners rdma)"
ip netns del "$NS"
check_eq "the namespace is deleted; no RDMA listener is left" "" \
	"$(listeners rdma)"
# The initial namespace's listener is listed, so the empty lists above
# are not an empty list of everything.
"$KVODCTL" listen rdma 0.0.0.0:7471
on=$(listeners rdma)
"$KVODCTL" unlisten rdma 0.0.0.0:7471
rc=$?
check_eq "the initial namespace still listens (listed) and unlistens rdma" \
	"0.0.0.0:7471 0 none" \
	"$on $rc $(listeners rdma | grep -q . && echo some || echo none)"
kvod_unload
check_eq "kvod unloads" no "$([ -d /sys/module/kvod ] && echo yes || echo no)"
ktap_finish
