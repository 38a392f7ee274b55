#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Movies whose first chunks fell back to single pages, so that their
# 2 MiB chunks sit at movie offsets that are not 2 MiB-aligned (forced
# with kvod's small_chunks test knob in debugfs): the run of 2 MiB chunks
# is still one MR with 2 MiB pages, and every byte READ through it is the
# movie's, whole movies and ranges across each segment boundary. siw
# has no 2 MiB MR pages (its page_size_cap is PAGE_SIZE) and at most 256
# pages to an MR (SIW_MAX_SGE_PBL): there every segment is 1 MiB of
# 4 KiB pages, and there are many ranges. The movies are mkpattern
# titles, so that "mkpattern check" checks a READ's bytes and length by
# making them again: one process beside each kvod-fetch, where a process
# costs seconds on the debug kernel.
#
# timeout: 600
# transports: rxe siw

# shellcheck source=selftests/lib/ktap.sh
. "$(dirname "$0")/../lib/ktap.sh"
# shellcheck source=selftests/lib/rdma.sh
. "$(dirname "$0")/../lib/rdma.sh"
rdma_test_init

ktap_header
ktap_plan 6
rdma_test_start

MiB=$((1 << 20))
PARAM=$(kvod_knob small_chunks)
PATTERN=$KVOD_SELFTESTS/kvod/mkpattern
[ -x "$PATTERN" ] || ktap_bail_out "$PATTERN not built (make selftests)"
# Each movie's mkpattern title.
declare -A ID=([one]=1 [three]=3)

# add_small N NAME BYTES: a movie whose first N chunks are single pages.
add_small() {
	echo "$1" >"$PARAM" &&
		"$PATTERN" gen "${ID[$2]}" "$3" >"$RDMA_TMP/$2" &&
		"$KVODCTL" add "$2" "$RDMA_TMP/$2"
	local rc=$?

	echo 0 >"$PARAM"
	return $rc
}

# One 4 KiB chunk, then three 2 MiB chunks at 4 KiB + k * 2 MiB, then
# the tail in 4 KiB pages.
one=$((6 * MiB + 12345))
add_small 1 one "$one" || ktap_bail_out "cannot add a movie"
# Three single pages, then 2 MiB chunks at 12 KiB + k * 2 MiB.
three=$((9 * MiB + 777))
add_small 3 three "$three" || ktap_bail_out "cannot add a movie"

# table_segs TABLE: SEG_OFF and SEG_LEN, the offsets and lengths of the
# segments of rdma_client's TABLE, read with builtins.
table_segs() {
	local key off len

	SEG_OFF=() SEG_LEN=()
	while read -r key off _ len _; do
		[ "$key" != seg: ] || { SEG_OFF+=("$off"); SEG_LEN+=("$len"); }
	done <<<"$1"
}

table=$("$RDMA_CLIENT" "$RXE_ADDR" table one)
ktap_print_msg "one: ${table//$'\n'/ }"
table_segs "$table"
segs="${SEG_OFF[0]}:${SEG_LEN[0]} ${SEG_OFF[1]}:${SEG_LEN[1]}"
if rdma_iwarp; then
	check_eq "siw: 4 KiB MR pages, 256 to a segment" \
		"0:$MiB $MiB:$MiB" "$segs"
else
	check_eq "the misaligned run of 2 MiB chunks is one segment" \
		"0:4096 4096:6291456" "$segs"
fi

for m in one three; do
	check_eq "$m: whole movie byte-exact" "ok ${!m} bytes" \
		"$("$KVOD_FETCH" -q "$RDMA_URL/$m" |
			"$PATTERN" check "${ID[$m]}" 0 "${!m}" 2>&1)"
done

# READs of 1 MiB around every segment boundary, and odd-sized ones. A
# range that comes up twice would be the same READs again, and is READ
# once: over siw 2 MiB is a boundary, and over rxe one's boundary at
# 4 KiB, less than 5000 bytes from the start, gives the range at 0 that
# its first segment gives.
for m in one three; do
	size=${!m}
	[ "$m" = one ] || table=$("$RDMA_CLIENT" "$RXE_ADDR" table "$m")
	table_segs "$table"
	bad='' seen=' '
	((${#SEG_OFF[@]} > 1)) || bad=' no segment boundary in the table'
	for o in "${SEG_OFF[@]}" $((2 * MiB)) $((4 * MiB + 1)); do
		off=$((o > 5000 ? o - 5000 : 0))
		len=$((size - off < MiB ? size - off : MiB))
		[[ $seen != *" $off:$len "* ]] || continue
		seen+="$off:$len "
		"$KVOD_FETCH" -q --chunk 7k --offset "$off" --length "$len" \
			"$RDMA_URL/$m" |
			"$PATTERN" check "${ID[$m]}" "$off" "$len" >/dev/null 2>&1 ||
			bad+=" $off:$len"
	done
	check_eq "$m: ranges across every segment boundary byte-exact" "" "$bad"
done

check_eq "no connection left active" 0 "$(rdma_counter active)"

rdma_test_stop
ktap_finish
