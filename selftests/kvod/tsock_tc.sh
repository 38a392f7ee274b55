#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# tsock's control path: tc add/change/show/delete through q_tsock.so, the
# option errors of tc's parser and of the kernel (its policy and its
# checks, on creation and on change, the latter through raw netlink with
# their errnos), the offload fallback, and module unload while attached.
#
# timeout: 600

# shellcheck source=selftests/lib/tsock.sh
. "$(dirname "$0")/../lib/tsock.sh"

ktap_header
ktap_plan 65

trap netns_down EXIT
kmod_load sch_tsock || ktap_bail_out "insmod sch_tsock failed"
netns_up || ktap_bail_out "netns setup failed"

# shown: the first line of tc qdisc show, without its trailing blanks, in
# SHOWN; shown_tsock: its lines that name tsock. By builtins: head, sed
# or grep would be a process more each.
shown() {
	local out

	out=$(qd show)
	SHOWN=${out%%$'\n'*}
	SHOWN=${SHOWN%"${SHOWN##*[! ]}"}
}

shown_tsock() {
	local out line

	SHOWN=
	out=$(qd show)
	while IFS= read -r line; do
		[[ $line != *tsock* ]] || SHOWN+=${SHOWN:+$'\n'}$line
	done <<<"$out"
}

# --- add, show, change ---
check_ok "add with defaults" qd add root handle 1: tsock
shown
[[ $SHOWN =~ refcnt\ [0-9]* ]] && SHOWN=${SHOWN/"${BASH_REMATCH[0]}"/refcnt 2}
check_eq "defaults shown" \
	"qdisc tsock 1: root refcnt 2 clockid CLOCK_MONOTONIC horizon 2s late send tolerance 1ms slack 10us flow_limit 1000p limit 10000p" \
	"$SHOWN"
read -r horizon_us offload <<<"$(qopt horizon_us offload)"
check_eq "JSON horizon in us" 2000000 "$horizon_us"
check_eq "JSON offload off" false "$offload"
check_ok "change every option" qd change root tsock horizon 500ms late drop \
	tolerance 2500us slack 50us flow_limit 50 limit 500
shown
[[ $SHOWN =~ ^.*refcnt\ [0-9]*\  ]] && SHOWN=${SHOWN#"${BASH_REMATCH[0]}"}
check_eq "changes shown" \
	"clockid CLOCK_MONOTONIC horizon 500ms late drop tolerance 2500us slack 50us flow_limit 50p limit 500p" \
	"$SHOWN"
check_ok "change one option keeps the others" qd change root tsock slack 1ms
check_eq "only slack changed" "drop 2500000 1000000 50" \
	"$(qopt late tolerance_ns slack_ns flow_limit)"
check_ok "same clockid is no change" qd change root tsock clockid CLOCK_MONOTONIC

# --- kernel refusals through tc, with their extack messages ---
# check_tc_err DESC MSG VERB ARGS...: tc qdisc VERB dev $DEV_TX ARGS
# must fail and say MSG. The commands wait for check_tc_errs, which runs
# them in one tc that goes on past a failure (-force -batch: a process
# start costs a second or more on the debug kernel), and checks each in
# turn by what tc said of it (TC_FAILED). ARGS are words of tc's batch
# mode (a blank in quotes).
TC_ERRS=()
check_tc_err() {
	TC_ERRS+=("$1" "$2" "qdisc $3 dev $DEV_TX ${*:4}")
}

check_tc_errs() {
	local cmds='' out i n

	for ((i = 2; i < ${#TC_ERRS[@]}; i += 3)); do
		cmds+=${TC_ERRS[i]}$'\n'
	done
	tc_batch out "${cmds%$'\n'}" -force
	for ((i = 0; i < ${#TC_ERRS[@]}; i += 3)); do
		n=$((i / 3 + 1))
		if [ -n "${TC_FAILED[$n]+set}" ] &&
			[[ ${TC_FAILED[$n]} == *"${TC_ERRS[i + 1]}"* ]]; then
			ktap_pass "${TC_ERRS[i]}"
		else
			out=${TC_FAILED[$n]-did not fail, or tc stopped before it}
			ktap_print_msg "tc ${TC_ERRS[i + 2]}: ${out%$'\n'}"
			ktap_fail "${TC_ERRS[i]}"
		fi
	done
	TC_ERRS=()
}

check_tc_err "clockid is fixed" "clockid is fixed at creation" \
	change root tsock clockid CLOCK_TAI
check_tc_err "offload is fixed" "offload is fixed at creation" \
	change root tsock offload
check_tc_err "lead needs offload" "lead applies only with offload" \
	change root tsock lead 100us
check_tc_err "flow_limit above limit" "flow_limit exceeds limit" \
	change root tsock flow_limit 501
check_tc_err "limit below flow_limit" "flow_limit exceeds limit" \
	change root tsock limit 10
check_tc_err "slack above 1s" "out of range" change root tsock slack 2s
check_tc_err "zero limit" "out of range" change root tsock limit 0
check_tc_err "zero flow_limit" "out of range" change root tsock flow_limit 0
check_tc_err "zero horizon" "out of range" change root tsock horizon 0
check_tc_errs
check_eq "refused changes left the qdisc alone" "500000 500 50" \
	"$(qopt horizon_us limit flow_limit)"

# --- tc's own parser ---
check_tc_err "unknown clock name" 'illegal value for "clockid"' \
	change root tsock clockid CLOCK_REALTIME
check_tc_err "unknown late policy" 'illegal value for "late"' \
	change root tsock late maybe
check_tc_err "garbage time" 'illegal value for "horizon"' \
	change root tsock horizon 5parsecs
check_tc_err "negative time" 'illegal value for "tolerance"' \
	change root tsock tolerance -1ms
# What strtod() took before (tools/tc/tsock_time.c; the host test
# tsock_time_test has every case): a blank that hid the minus (this one
# became 0), nan, hex, an exponent; and a part of a nanosecond (rounded).
check_tc_err "a blank before a minus" 'illegal value for "tolerance"' \
	change root tsock tolerance '" -0.4ns"'
check_tc_err "nan time" 'illegal value for "tolerance"' \
	change root tsock tolerance nan
check_tc_err "hex time" 'illegal value for "tolerance"' \
	change root tsock tolerance 0x10ns
check_tc_err "exponent in a time" 'illegal value for "tolerance"' \
	change root tsock tolerance 1e3ns
check_tc_err "part of a nanosecond" 'illegal value for "tolerance"' \
	change root tsock tolerance 1.5ns
check_tc_errs
check_eq "tc's refusals left the tolerance alone" 2500000 \
	"$(qopt tolerance_ns)"
check_tc_err "sub-microsecond horizon" 'illegal value for "horizon"' \
	change root tsock horizon 1500ns
check_tc_err "count too large" 'illegal value for "limit"' \
	change root tsock limit 4294967296
check_tc_err "missing value" 'illegal value for "limit"' \
	change root tsock limit
check_tc_err "unknown option" 'unknown parameter "speed"' \
	change root tsock speed 9
check_tc_errs

# --- the kernel's policy, reached with raw netlink ---
qd del root >/dev/null 2>&1
# One python run for all of them: each line answers one request.
mapfile -t nl < <(tx /usr/bin/python3 "$TSOCK_NL" "$DEV_TX" \
	1=u32:0 -- 1=u32:7 -- 3=u32:2 -- 8=u8:2 -- 10=u8:1 -- 11=u32:1 -- \
	2=u8:1 -- --flat 2=u32:1000 -- 8=u8:1 9=u32:1000000001 -- \
	9=u32:1000 -- 6=u32:10 7=u32:5 2>&1)
check_nl_err() {
	local desc=$1 i=$2 want=$3

	if [[ ${nl[$i]:-} == "error "*"$want"* ]]; then
		ktap_pass "$desc"
	else
		ktap_print_msg "request $i: got '${nl[$i]:-}', want '$want'"
		ktap_fail "$desc"
	fi
}
check_nl_err "CLOCK_REALTIME refused" 0 "EINVAL: clockid must be"
check_nl_err "CLOCK_BOOTTIME refused" 1 "EINVAL: clockid must be"
check_nl_err "late policy out of range" 2 "ERANGE: integer out of range"
check_nl_err "offload flag out of range" 3 "ERANGE: integer out of range"
check_nl_err "read-only attribute refused" 4 "EINVAL: "
check_nl_err "unknown attribute refused" 5 "EINVAL: Unknown attribute type"
check_nl_err "short attribute refused" 6 "EINVAL: invalid attribute length"
check_nl_err "options must be nested" 7 "EINVAL: NLA_F_NESTED is missing"
check_nl_err "lead above 1 s refused" 8 "ERANGE: integer out of range"
check_nl_err "lead without offload refused at creation" 9 \
	"EINVAL: lead applies only with offload"
check_nl_err "flow_limit above limit refused at creation" 10 \
	"EINVAL: flow_limit exceeds limit"
shown_tsock
check_eq "no qdisc left behind by refusals" "" "$SHOWN"
check_eq "raw add with options" ok \
	"$(tx /usr/bin/python3 "$TSOCK_NL" "$DEV_TX" 1=u32:11 2=u32:1000 2>&1)"
check_eq "raw options shown" "CLOCK_TAI 1000" \
	"$(qopt clockid horizon_us)"
# Changes the kernel refuses, with their errnos (through tc above, only
# their messages were seen).
mapfile -t nl < <(tx /usr/bin/python3 "$TSOCK_NL" "$DEV_TX" \
	--change 1=u32:1 -- --change 8=u8:1 -- --change 2=u32:0 -- \
	--change 6=u32:20000 -- --change 8=u8:0 9=u32:1000 -- \
	--change 5=u32:1000000001 -- --change 6=u32:0 -- --change 7=u32:0 2>&1)
check_nl_err "change of clockid: EOPNOTSUPP" 0 \
	"EOPNOTSUPP: clockid is fixed at creation"
check_nl_err "change of offload: EOPNOTSUPP" 1 \
	"EOPNOTSUPP: offload is fixed at creation"
check_nl_err "change to a zero horizon: ERANGE" 2 \
	"ERANGE: integer out of range"
check_nl_err "change of flow_limit above limit: EINVAL" 3 \
	"EINVAL: flow_limit exceeds limit"
check_nl_err "change of lead without offload: EINVAL" 4 \
	"EINVAL: lead applies only with offload"
check_nl_err "change to a slack above 1 s: ERANGE" 5 \
	"ERANGE: integer out of range"
check_nl_err "change to a zero flow_limit: ERANGE" 6 \
	"ERANGE: integer out of range"
check_nl_err "change to a zero limit: ERANGE" 7 \
	"ERANGE: integer out of range"
check_eq "refused raw changes left every option alone" \
	"CLOCK_TAI 1000 false 1000 10000" \
	"$(qopt clockid horizon_us offload flow_limit limit)"

# --- offload: veth has none, so the timer takes over ---
qd del root >/dev/null 2>&1
# What tsock says when it falls back to the timer: the device refused,
# or it feeds more than one queue and does not ask the device.
NO_OFFLOAD="Warning: sch_tsock: device has no launch-time offload, using the timer."
MQ_WARNING="Warning: sch_tsock: launch-time offload needs a tsock per tx queue (under mq), using the timer."
out=$(qd add root tsock offload lead 300us 2>&1)
check_eq "offload falls back with a warning" "$NO_OFFLOAD" "$out"
check_eq "offload requested, not in effect" "true false 300000" \
	"$(qopt offload offloaded lead_ns)"
# A multi-queue device's root would feed every tx queue but enable launch
# time on the first only: tsock does not try, and says what to do.
# (tc -n and ip -n rather than tx: see qd. A new root is one tc.)
ip -n "$NS_TX" link add mq0 numtxqueues 4 numrxqueues 4 type veth \
	peer name mq1 || ktap_print_msg "cannot make a 4-queue veth"
out=$(tc -n "$NS_TX" qdisc add dev mq0 root tsock offload 2>&1)
check_eq "offload on a multi-queue root: refused, with the remedy" \
	"$MQ_WARNING" "$out"
tc_batch out "qdisc del dev mq0 root
qdisc add dev mq0 root handle 1: mq" || ktap_print_msg "$out"
out=$(tc -n "$NS_TX" qdisc add dev mq0 parent 1:2 tsock offload 2>&1)
check_eq "offload under mq: tried on the queue (veth has none)" \
	"$NO_OFFLOAD" "$out"
# Under a root that is not mq (prio here), a tsock may feed every queue.
tc_batch out "qdisc del dev mq0 root
qdisc add dev mq0 root handle 1: prio" || ktap_print_msg "$out"
out=$(tc -n "$NS_TX" qdisc add dev mq0 parent 1:1 tsock offload 2>&1)
check_eq "offload under a root other than mq: refused, with the remedy" \
	"$MQ_WARNING" "$out"
ip -n "$NS_TX" link del mq0

# --- unload while attached, delete ---
check_fail "unload refused while attached" rmmod sch_tsock
check_ok "delete" qd del root
shown_tsock
check_eq "gone after delete" "" "$SHOWN"
netns_down
check_ok "unload after delete" kmod_unload sch_tsock

ktap_finish
