#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Files change under a server (Documentation/kvod.rst, "Titles in the page
# cache"). A title left in its file on the library guest's ext4 disk,
# mounted through a device-mapper mapping (lib/library.sh), is served over
# HTTP while its file changes:
#  - the disk fails (the dm error target): a response ends after the bytes
#    that were in memory, byte-exact, with a FIN; a push of it ends; once
#    the disk reads again, the whole title is served byte-exact;
#  - the file is truncated during a response: the response ends at the new
#    end, byte-exact, with a FIN; a range past the new end gets its headers
#    and a FIN, no byte; one before it is whole;
#  - the file grows again: nothing past the length at ADD is served;
#  - the file is rewritten in place: what it holds now is served; it is
#    replaced by a rename: the title keeps serving the file it holds;
#  - the filesystem is unmounted lazily (umount -l): the title still
#    serves, and holds the filesystem, and so the disk, until it is
#    deleted.
#
# guest: library

HERE=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
# shellcheck source=selftests/lib/http.sh
. "$HERE/../lib/http.sh"
# shellcheck source=selftests/lib/library.sh
. "$HERE/../lib/library.sh"

MiB=$((1 << 20))
T=files.ts			# the title
ID=9001 ID2=9002 ID3=9003	# mkpattern titles not on the disk
SIZE=$((40 * MiB + 123))	# the file's size at ADD
CUT=$((24 * MiB + 77))		# and after the truncation

cleanup() {
	local -a left

	mapfile -t left < <(jobs -p)
	((${#left[@]} == 0)) || kill "${left[@]}" 2>/dev/null
	http_unlisten "$HTTP_ADDR" "$HTTP_PORT" 2>/dev/null
	kvod_unload
	[ -z "$LIB_MAPPED" ] || library_delay 0
	mountpoint -q "$LIB_DIR" || library_mount
	rm -f "$LIB_DIR/$T" "$LIB_DIR/$T.new"
	library_down
	http_cleanup
}
trap cleanup EXIT
library_up --delayed

ktap_header
ktap_plan 14
http_setup

# get OUT [CURL-ARG...]: GET the title into OUT; print "STATUS EXIT BYTES"
# (curl's exit 18: the connection closed before the body was whole).
get() {
	local out=$1 code rc=0

	shift
	code=$(curl -s -o "$out" -w '%{http_code}' "$@" "$URL/$T") || rc=$?
	echo "$code $rc $(size_of "$out")"
}

# is ID OFFSET FILE: FILE holds mkpattern title ID's bytes from OFFSET.
is() {
	"$LIB_PATTERN" check "$1" "$2" <"$3" 2>&1
}

# dm_open: how many hold the mapping open (the mounted filesystem).
dm_open() {
	dmsetup info -c --noheadings -o open "$LIB_DM" | tr -d ' '
}

"$LIB_PATTERN" gen "$ID" "$SIZE" >"$LIB_DIR/$T" ||
	ktap_bail_out "cannot write $LIB_DIR/$T"
sync
echo 3 >/proc/sys/vm/drop_caches
echo 1 >"$(kvod_knob add_lazy)" || ktap_bail_out "no add_lazy knob"
"$KVODCTL" add "$T" "$LIB_DIR/$T" || ktap_print_msg "kvodctl add $T failed"
check_eq "the title is left in its file: resident 0, chunks 0, $SIZE bytes" \
	"0 0 $SIZE" \
	"$(movie_field "$T" resident) $(movie_field "$T" chunks) $(movie_field "$T" size)"

# The disk fails once the first MiB is in memory (and what readahead took
# with it), and once ext4 wrote back what it holds: a write under the
# error table would abort its journal.
get "$TMP/head" -r 0-$((MiB - 1)) >/dev/null
sync
library_error || ktap_bail_out "cannot load the error table"
read -r code rc got <<<"$(get "$TMP/failed")"
ktap_print_msg "with the disk failing: status $code, curl exit $rc, $got bytes"
check_ok "a read error ends the response after the bytes in memory, with a FIN" \
	test "$code $rc" = "200 18" -a "$got" -ge "$MiB" -a "$got" -lt "$SIZE"
ktap_print_msg "$(is "$ID" 0 "$TMP/failed")"
id=$("$KVODCTL" push "$T" udp://127.0.0.1:5010 --rate 20000000)
check_ok "a push ends where the disk fails" \
	wait_for "$(time_limit 30)" no_pushes
[ -z "$id" ] || "$KVODCTL" stop "$id" 2>/dev/null
library_delay 0 || ktap_bail_out "cannot load the delay table again"
get "$TMP/whole" >/dev/null
check_eq "once the disk reads again, the whole title is served byte-exact" \
	"ok $SIZE bytes" "$(is "$ID" 0 "$TMP/whole")"
rm -f "$TMP/failed" "$TMP/whole"

# Truncated while a slow reader is 1 MiB in: at most the socket buffers
# (a few MiB on loopback) were sent ahead of it, well short of $CUT.
echo 3 >/proc/sys/vm/drop_caches
curl -s --limit-rate 4M -o "$TMP/cut" "$URL/$T" &
reader=$!
wait_test "$(time_limit 30)" -ge "$MiB" size_of "$TMP/cut" ||
	ktap_print_msg "the reader got no MiB"
truncate -s "$CUT" "$LIB_DIR/$T"
rc=0
wait "$reader" || rc=$?
check_eq "truncated during a response: it ends at the new end, byte-exact, with a FIN" \
	"18 ok $CUT bytes" "$rc $(is "$ID" 0 "$TMP/cut")"
rm -f "$TMP/cut"
check_eq "a range past the new end: its headers, then a FIN and no byte" \
	"206 18 0" "$(get "$TMP/past" -r $((CUT + MiB))-$((CUT + 2 * MiB)))"
read -r code rc got <<<"$(get "$TMP/before" -r $((CUT - MiB))-$((CUT - 1)))"
check_eq "a range that ends at the new end is whole and byte-exact" \
	"206 0 ok $MiB bytes" "$code $rc $(is "$ID" $((CUT - MiB)) "$TMP/before")"

# Grown again, with a hole from the old end: the length at ADD still
# bounds what is served.
truncate -s $((64 * MiB)) "$LIB_DIR/$T"
check_eq "grown past its length at ADD: a GET is still the length at ADD" \
	"200 0 $SIZE" "$(get "$TMP/grown")"
rm -f "$TMP/grown"
check_eq "grown: a range past the length at ADD is refused (416)" \
	"416" "$(get "$TMP/past" -r "$SIZE"- | cut -d' ' -f1)"

# Rewritten in place: the page cache holds the new bytes.
"$LIB_PATTERN" gen "$ID2" $((4 * MiB)) |
	dd of="$LIB_DIR/$T" conv=notrunc status=none
get "$TMP/new" -r 0-$((4 * MiB - 1)) >/dev/null
check_eq "rewritten in place: the title serves what the file holds now" \
	"ok $((4 * MiB)) bytes" "$(is "$ID2" 0 "$TMP/new")"

# Replaced by a rename: the title holds the old file, the name another.
"$LIB_PATTERN" gen "$ID3" $((8 * MiB)) >"$LIB_DIR/$T.new"
mv "$LIB_DIR/$T.new" "$LIB_DIR/$T"
get "$TMP/old" -r 0-$((8 * MiB - 1)) >/dev/null
check_eq "replaced by a rename: the title serves the file it holds" \
	"ok $((4 * MiB)) bytes ok $((4 * MiB)) bytes" \
	"$(head -c $((4 * MiB)) "$TMP/old" | is "$ID2" 0 /dev/stdin) $(tail -c +$((4 * MiB + 1)) "$TMP/old" | is "$ID" $((4 * MiB)) /dev/stdin)"
rm -f "$TMP/new" "$TMP/old"

# Unmounted lazily: the name goes, the filesystem stays while the title
# holds its file, and with it the disk.
sync
umount -l "$LIB_DIR" || ktap_print_msg "umount -l failed"
get "$TMP/lazy" -r $((8 * MiB))-$((12 * MiB - 1)) >/dev/null
check_eq "after umount -l the title still serves its file" \
	"ok $((4 * MiB)) bytes" "$(is "$ID" $((8 * MiB)) "$TMP/lazy")"
check_eq "after umount -l the title holds the filesystem, and the disk" \
	"1" "$(dm_open)"
"$KVODCTL" del "$T" || ktap_print_msg "kvodctl del $T failed"
# The last put may come from a kworker, whose fput() is deferred a tick.
check_ok "once the title is deleted the disk is let go" \
	wait_test "$(time_limit 10)" = 0 dm_open
library_mount || ktap_print_msg "cannot mount the disk again"
ktap_finish
