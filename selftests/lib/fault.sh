# SPDX-License-Identifier: GPL-2.0
#
# Shared by the fault_*.sh tests (sourced; not a test): failslab and
# fail_page_alloc (Documentation/fault-injection/fault-injection.rst)
# limited to kvod's own code with the stack-trace filter, and kmemleak.
#
#	fault_require		one skipped result, and exit, unless the
#				kernel has fault injection (Debian's has not)
#	fault_filter		find kvod's code (call after kvod is loaded);
#				fault_on limits injection to it from then on
#	fault_on ATTR PROB [KEY=VALUE...]
#				ATTR (failslab, fail_page_alloc) fails PROB %
#				of the allocations with kvod on the stack
#	fault_off		nothing fails any more
#	fault_injected ATTR	how many allocations ATTR failed since its
#				last fault_on (a positive control: a run
#				that injected nothing tested nothing)
#	leak_mark, leak_check	kmemleak: note what is reported so far; fail
#				if a report not noted goes through kvod (the
#				reports are never cleared: selftests/qemu/vm-run's
#				scans after the last program see them again)
#
# Every injected failure is silent (verbose 0): a dump would read as a
# warning in the guest's log. Allocation-failure warnings that the kernel
# itself prints (warn_alloc: "page allocation failure", "vmalloc error")
# may still appear; fault_on and fault_off mark the span in the kernel
# log with "kvod-fault: injecting" / "kvod-fault: stopped".

FAULT_DIR=/sys/kernel/debug
LEAKS=$FAULT_DIR/kmemleak

fault_available() {
	[ -d "$FAULT_DIR/failslab" ] ||
		mount -t debugfs none "$FAULT_DIR" 2>/dev/null
	[ -w "$FAULT_DIR/failslab/probability" ] &&
		[ -w "$FAULT_DIR/fail_page_alloc/probability" ] &&
		[ -w "$FAULT_DIR/failslab/require-start" ]
}

# fault_require: unless available, one skipped result and exit 4.
fault_require() {
	fault_available && return 0
	ktap_plan 1
	ktap_skip "$(basename "$0" .sh)" "no fault injection in this kernel"
	ktap_finish
}

# fault_set ATTR KEY VALUE
fault_set() {
	echo "$3" >"$FAULT_DIR/$1/$2"
}

# kvod_text_range: "START END" (hex) of kvod's code once loaded: the
# module's text sections (.text, .exit.text for rmmod; not .init.text:
# module init is over, and it lives elsewhere), from their load addresses
# in sysfs and their sizes in the .ko. Kernel addresses are negative in
# bash's signed arithmetic, which orders them right all the same; awk's
# doubles would round them.
kvod_text_range() {
	local ko=${KVOD_KMOD_DIR:-$KVOD_REPO/kmod}/kvod.ko sec size a lo='' hi=''

	while read -r sec size; do
		[ -r "/sys/module/kvod/sections/$sec" ] || continue
		a=$(($(cat "/sys/module/kvod/sections/$sec")))
		if [ -z "$lo" ] || ((a < lo)); then
			lo=$a
		fi
		if [ -z "$hi" ] || ((a + 16#$size > hi)); then
			hi=$((a + 16#$size))
		fi
	done < <(readelf -SW "$ko" | sed 's/^ *\[ *[0-9]*\]//' |
		awk '$2 == "PROGBITS" && $1 ~ /text/ && $1 != ".init.text" { print $1, $5 }')
	[ -n "$lo" ] && printf '%#x %#x\n' "$lo" "$hi"
}

# fault_filter: find kvod's code (FAULT_LO, FAULT_HI); fault_on limits
# every injection to stacks with a return address in it. Bails out if
# the range looks wrong: unfiltered, failures would hit the whole guest.
FAULT_LO=
FAULT_HI=
# fault_on's budget of failures: more than a run can use up.
FAULT_TIMES=2000000000
fault_filter() {
	read -r FAULT_LO FAULT_HI < <(kvod_text_range)
	if [ -z "$FAULT_LO" ] ||
		((FAULT_HI <= FAULT_LO || FAULT_HI - FAULT_LO > (16 << 20))); then
		ktap_bail_out "cannot find kvod's code: '$FAULT_LO' '$FAULT_HI'"
	fi
	ktap_print_msg "fault filter: kvod code $FAULT_LO-$FAULT_HI"
}

# fault_on ATTR PROB [KEY=VALUE...]: more keys, e.g. min-order=9.
fault_on() {
	local a=$1 p=$2 kv

	shift 2
	# Never inject unfiltered (fault_off resets the filter).
	if [ -z "$FAULT_LO" ] || ! fault_set "$a" require-start "$FAULT_LO" ||
		! fault_set "$a" require-end "$FAULT_HI" ||
		! fault_set "$a" stacktrace-depth 32; then
		ktap_bail_out "cannot set the stack-trace filter of $a"
	fi
	fault_set "$a" verbose 0
	fault_set "$a" ignore-gfp-wait N
	# times counts down once per failure injected: fault_injected.
	fault_set "$a" times "$FAULT_TIMES"
	fault_set "$a" interval 1
	fault_set "$a" space 0
	fault_set "$a" task-filter N
	for kv; do
		fault_set "$a" "${kv%%=*}" "${kv#*=}"
	done
	echo "kvod-fault: injecting $a $p%" >/dev/kmsg
	fault_set "$a" probability "$p"
}

# fault_injected ATTR: failures ATTR injected since its last fault_on
# (fault_off leaves the count alone).
fault_injected() {
	echo $((FAULT_TIMES - $(cat "$FAULT_DIR/$1/times")))
}

# fault_off: back to the defaults that matter: nothing fails, and
# fail-nth (which honours the filter) counts every allocation again.
fault_off() {
	local a

	for a in failslab fail_page_alloc; do
		fault_set "$a" probability 0
		fault_set "$a" interval 1
		fault_set "$a" require-start 0
		fault_set "$a" require-end 18446744073709551615
	done
	[ -w "$FAULT_DIR/fail_page_alloc/min-order" ] &&
		fault_set fail_page_alloc min-order 1
	echo "kvod-fault: stopped" >/dev/kmsg
}

leak_mark() {
	if [ -r "$LEAKS" ]; then
		grep '^unreferenced object' "$LEAKS" >"$RACE_TMP/leaks.before"
	fi
	true
}

# leak_check DESC: one result: no kmemleak report through kvod (skipped
# without kmemleak). Reports need 5 s of age: wait, then scan twice.
leak_check() {
	local desc=$1 ours

	if [ ! -w "$LEAKS" ]; then
		ktap_skip "$desc" "no kmemleak in this kernel"
		return
	fi
	sleep 6
	# A refused scan: kmemleak is off, and would see no leak.
	if ! { echo scan >"$LEAKS" && echo scan >"$LEAKS"; }; then
		ktap_print_msg "kmemleak refused to scan"
		ktap_fail "$desc"
		return
	fi
	touch "$RACE_TMP/leaks.before"
	ours=$(awk 'FILENAME == ARGV[1] { old[$0] = 1; next }
		    /^unreferenced object/ { if (blk ~ /kvod/) print blk
					     blk = ""; skip = ($0 in old) }
		    !skip { blk = blk $0 "\n" }
		    END { if (blk ~ /kvod/) print blk }' \
		"$RACE_TMP/leaks.before" "$LEAKS")
	ktap_print_msg "kmemleak: $(grep -c '^unreferenced object' "$LEAKS") report(s) in all"
	if [ -z "$ours" ]; then
		ktap_pass "$desc"
	else
		ktap_print_msg "$ours"
		ktap_fail "$desc"
	fi
}
