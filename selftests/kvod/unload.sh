#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# "A && B || fail" is meant (fail if either is false); tests run indirectly.
# shellcheck disable=SC2015,SC2317,SC2119
#
# Leak proof: rmmod with movies still registered gives back every page the
# movies held, and leaves no device node behind; so do three quick
# load/add/unload cycles.
#
# Signals (none of them needs slabinfo): nr_free_pages from /proc/vmstat
# for the movie memory itself, SUnreclaim and VmallocUsed from
# /proc/meminfo for the module's bookkeeping, and the kernel log for the
# module's exit-time WARN on non-zero live-object counters.
#
# The fair baseline. Movie files live in the guest's /tmp (tmpfs), whose
# pages are memory too, so a baseline taken while they exist would hide
# up to their size. The files are therefore sparse (a few written bytes
# each: ADD still reads, and the module still holds, every byte, holes
# reading as zeroes) and are deleted right after ADD; the baseline is
# taken before they are created and before insmod, when neither the files
# nor the module exist, which is exactly the state after rmmod and rm.
# Before each reading the page cache and slab caches are dropped and the
# reading is the best of a few over some seconds, so that pages parked on
# per-CPU free lists (freed 2 MiB chunks go there first) drain back.
#
# Runs in the test guest as root; prints KTAP. Needs tools/kvodctl
# (make -C tools).
#
# timeout: 900

set -u

HERE=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
# shellcheck source=selftests/lib/ktap.sh
. "$HERE/../lib/ktap.sh"
KO=$(kmod_path kvod)

MIB=$((1024 * 1024))
MOVIE_MIB=128			# four of them: 512 MiB
MOVIES=4
# Tolerances, in KiB. The readings agree to ~100 KiB run to run; free
# pages must come back to within less than one 2 MiB chunk, so that even
# one leaked chunk fails. KASAN's quarantine keeps freed slab objects.
TOL_FREE_KIB=1536
TOL_SLAB_KIB=1024
# The debug kernel is booted from its tree: its config is /proc/config.gz.
if { zcat /proc/config.gz || cat "/boot/config-$(uname -r)"; } 2>/dev/null |
	grep -q '^CONFIG_KASAN=y'; then
	TOL_SLAB_KIB=$((64 * 1024))
fi
PAGE=$(getconf PAGESIZE)

TMP=
LOADED=0

cleanup()
{
	[ -n "$TMP" ] && rm -rf "$TMP"
	if [ "$LOADED" = 1 ]; then
		rmmod kvod 2>/dev/null
	fi
}
trap cleanup EXIT

# result DESC FUNC ARGS...: one KTAP line for whether FUNC ARGS succeeds.
result()
{
	local desc=$1

	shift
	if "$@"; then
		ktap_pass "$desc"
	else
		ktap_fail "$desc"
	fi
}

fail()
{
	ktap_print_msg "$*"
	return 1
}

# Free memory in bytes: free pages in the buddy allocator plus those parked
# on per-CPU lists (freed 2 MiB chunks land there first, up to several MiB
# per CPU), after dropping caches and folding the per-CPU counter deltas;
# the best of two readings a second apart.
free_bytes()
{
	local i v best=0

	for i in 1 2; do
		sync
		echo 3 >/proc/sys/vm/drop_caches
		echo 1 >/proc/sys/vm/stat_refresh
		sleep 1
		v=$(awk '$1 == "pages" && $2 == "free" { n += $3 }
			 $1 == "count:" { n += $2 }
			 END { print n }' /proc/zoneinfo)
		[ "$v" -gt "$best" ] && best=$v
	done
	echo $((best * PAGE))
}

meminfo_bytes()
{
	awk -v k="$1:" '$1 == k { print $2 * 1024 }' /proc/meminfo
}

mib()
{
	echo $(($1 / MIB))
}

# make_movie FILE MIB: a sparse file with a few non-zero bytes.
make_movie()
{
	local off

	truncate -s "${2}M" "$1" || return 1
	for off in 0 $((MIB + 3)) $(($2 * MIB / 2)) $(($2 * MIB - 5)); do
		printf 'kvod' | dd of="$1" bs=1 seek="$off" conv=notrunc \
			status=none || return 1
	done
}

load()
{
	kvod_load || fail "loading $KO failed" || return 1
	LOADED=1
}

# add_movies PREFIX N SIZE_MIB: register N sparse movies, delete the files.
add_movies()
{
	local i f

	for i in $(seq 1 "$2"); do
		f=$TMP/$1$i
		make_movie "$f" "$3" || fail "cannot create $f" || return 1
		"$KVODCTL" add "$1$i" "$f" || return 1
		rm -f "$f"
	done
}

unload()
{
	rmmod kvod || fail "rmmod kvod failed" || return 1
	LOADED=0
	[ ! -e /dev/kvod ] || fail "/dev/kvod left behind" || return 1
	[ ! -e /sys/module/kvod ] || fail "/sys/module/kvod left behind"
}

# expect_back NAME BASE NOW TOL_KIB: NOW is at most TOL_KIB below BASE.
expect_back()
{
	local lost=$(($2 - $3))

	ktap_print_msg "$1: baseline $(($2 / 1024)) KiB, now $(($3 / 1024)) KiB, lost $((lost / 1024)) KiB"
	[ "$lost" -le $(($4 * 1024)) ] ||
		fail "$1: $((lost / 1024)) KiB not given back (tolerance $4 KiB)"
}

# Nothing the kernel logged since the start is a warning or worse.
t_log_clean()
{
	local bad

	bad=$(dmesg | tail -n +"$((DMESG0 + 1))" |
		grep -E 'WARNING:|BUG:|Oops|leak|kvod.*(left|still)|Call Trace' )
	[ -z "$bad" ] || fail "kernel log: $bad"
}

t_load_add()
{
	local st

	load || return 1
	add_movies m "$MOVIES" "$MOVIE_MIB" || return 1
	kvod_stats || return 1
	st="movies=${KVOD_STATS[movies]:-} zombies=${KVOD_STATS[zombies]:-}"
	st+=" resident=${KVOD_STATS[resident]:-}"
	st+=" resident_max=${KVOD_STATS[resident_max]:-}"
	ktap_print_msg "stats: $st"
	[ "${KVOD_STATS[movies]:-}" -eq "$MOVIES" ] &&
	[ "${KVOD_STATS[resident]:-}" -ge $((MOVIES * MOVIE_MIB * MIB)) ] ||
		fail "stats after ADD: $st"
}

# The measurement sees the movies: without this the leak check proves
# nothing.
t_memory_held()
{
	FREE_LOADED=$(free_bytes)
	local held=$((FREE0 - FREE_LOADED))
	local want=$((MOVIES * MOVIE_MIB * MIB * 9 / 10))

	ktap_print_msg "held with movies: $(mib "$held") MiB"
	[ "$held" -ge "$want" ] ||
		fail "only $(mib "$held") MiB held, expected >= $(mib "$want") MiB"
}

t_unload_with_movies()
{
	unload
}

# The stack depot keeps every new stack trace for good, in pools of four
# pages; on the debug kernel KASAN and kmemleak save one per allocation,
# and a module loaded at a new address makes new ones. Its growth is not
# kvod's memory.
depot_bytes()
{
	local key val

	if [ -r /sys/kernel/debug/stackdepot/stats ]; then
		while read -r key val; do
			if [ "$key" = pools: ]; then
				echo $((val * 4 * PAGE))
				return
			fi
		done </sys/kernel/debug/stackdepot/stats
	fi
	echo 0
}

t_free_back()
{
	local depot=$(($(depot_bytes) - DEPOT0))

	[ "$depot" = 0 ] ||
		ktap_print_msg "stack depot: $((depot / 1024)) KiB more than at the baseline"
	expect_back nr_free_pages "$FREE0" "$(($(free_bytes) + depot))" \
		"$TOL_FREE_KIB"
}

t_slab_back()
{
	expect_back SUnreclaim "$SLAB0" "$(meminfo_bytes SUnreclaim)" \
		"$TOL_SLAB_KIB"
}

t_vmalloc_back()
{
	expect_back VmallocUsed "$VMALLOC0" "$(meminfo_bytes VmallocUsed)" \
		"$TOL_SLAB_KIB"
}

t_cycle()
{
	load && add_movies "c$1-" 2 64 && kvod_stats && unload
}

# --- run -----------------------------------------------------------------

kvod_require_guest
ktap_header
for f in "$KVODCTL" "$KO"; do
	if [ ! -e "$f" ]; then
		echo "1..0 # SKIP $f missing (make all)"
		exit 4
	fi
done
if [ -d /sys/module/kvod ] && ! rmmod kvod; then
	ktap_bail_out "cannot remove the kvod module already loaded"
fi
TMP=$(mktemp -d /tmp/kvod-unload.XXXXXX)
# kvod.ko needs the RDMA core; load it before the baseline, since it stays.
modprobe -q -a ib_core rdma_cm ||
	ktap_bail_out "cannot load ib_core and rdma_cm"

ktap_plan 14

DMESG0=$(dmesg | wc -l)
FREE0=$(free_bytes)
DEPOT0=$(depot_bytes)
SLAB0=$(meminfo_bytes SUnreclaim)
VMALLOC0=$(meminfo_bytes VmallocUsed)
ktap_print_msg "baseline: free $(mib "$FREE0") MiB, SUnreclaim $((SLAB0 / 1024)) KiB, VmallocUsed $((VMALLOC0 / 1024)) KiB"

result "load_and_add_512mib" t_load_add
result "memory_held_by_movies" t_memory_held
result "rmmod_with_movies_registered" t_unload_with_movies
result "free_pages_back" t_free_back
result "slab_back" t_slab_back
result "vmalloc_back" t_vmalloc_back
result "kernel_log_clean" t_log_clean
for i in 1 2 3; do
	result "load_add_unload_cycle_$i" t_cycle "$i"
done
result "free_pages_back_after_cycles" t_free_back
result "slab_back_after_cycles" t_slab_back
result "vmalloc_back_after_cycles" t_vmalloc_back
result "kernel_log_clean_after_cycles" t_log_clean
ktap_finish
