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
# 4 KiB pages.
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

# add_small N NAME BYTES: a movie whose first N chunks are single pages.
add_small() {
	echo "$1" >"$PARAM" && movie_add "$2" "$3"
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

table=$("$RDMA_CLIENT" "$RXE_ADDR" table one)
ktap_print_msg "one: $(tr '\n' ' ' <<<"$table")"
segs=$(awk '/^seg:/ && n++ < 2 { printf "%s%s:%s", s, $2, $4; s = " " }' <<<"$table")
if rdma_iwarp; then
	check_eq "siw: 4 KiB MR pages, 256 to a segment" \
		"0:$MiB $MiB:$MiB" "$segs"
else
	check_eq "the misaligned run of 2 MiB chunks is one segment" \
		"0:4096 4096:6291456" "$segs"
fi

for m in one three; do
	check_eq "$m: whole movie byte-exact" "$(sha256sum <"$RDMA_TMP/$m")" \
		"$("$KVOD_FETCH" -q "$RDMA_URL/$m" | sha256sum)"
done

# READs of 1 MiB around every segment boundary, and odd-sized ones.
for m in one three; do
	size=$(stat -c %s "$RDMA_TMP/$m")
	bad=
	for o in $("$RDMA_CLIENT" "$RXE_ADDR" table "$m" | awk '/^seg:/ { print $2 }') \
		$((2 * MiB)) $((4 * MiB + 1)); do
		off=$((o > 5000 ? o - 5000 : 0))
		len=$((size - off < MiB ? size - off : MiB))
		w=$(tail -c +$((off + 1)) "$RDMA_TMP/$m" | head -c "$len" | sha256sum)
		g=$("$KVOD_FETCH" -q --chunk 7k --offset "$off" --length "$len" \
			"$RDMA_URL/$m" | sha256sum)
		[ "$w" = "$g" ] || bad+=" $off:$len"
	done
	check_eq "$m: ranges across every segment boundary byte-exact" "" "$bad"
done

check_eq "no connection left active" 0 "$(rdma_counter active)"

rdma_test_stop
ktap_finish
