#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Host-side test of the library the page-cache tests serve: mkpattern
# (selftests/kvod/mkpattern.c) makes a title's bytes and finds a wrong
# one in any range of them, and selftests/qemu/library-image caches an
# ext4 image of such titles by a key of what made it. A small library is
# built in a temporary cache and read back with debugfs (no mount).
set -uo pipefail

REPO=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=selftests/lib/ktap.sh
. "$REPO/selftests/lib/ktap.sh"

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
PAT=$REPO/selftests/kvod/mkpattern
LIB=$REPO/selftests/qemu/library-image
export KVOD_CACHE_DIR=$TMP/cache

make -s -C "$REPO/selftests" kvod/mkpattern || ktap_bail_out "cannot build mkpattern"

# image_cat IMG PATH: the file PATH of ext4 image IMG.
image_cat() {
	debugfs -R "cat $2" "$1" 2>/dev/null
}

ktap_header
ktap_plan 16

"$PAT" gen 7 100000 >"$TMP/t7"
check_eq "gen: the size asked for" 100000 "$(stat -c %s "$TMP/t7")"
check_eq "each 4 KiB block starts with the title and its offset" \
	"07000000000000000010000000000000" \
	"$(od -An -tx1 -j 4096 -N 16 "$TMP/t7" | tr -d ' \n')"
check_eq "the same title is the same bytes; another title is not" "same other" \
	"$(cmp -s "$TMP/t7" <("$PAT" gen 7 100000) && echo same) $(cmp -s "$TMP/t7" <("$PAT" gen 8 100000) || echo other)"
check_eq "check: a whole title" "ok 100000 bytes" "$("$PAT" check 7 0 <"$TMP/t7")"
check_eq "check: a range that starts and ends inside blocks" "ok 50001 bytes" \
	"$(tail -c +12346 "$TMP/t7" | head -c 50001 | "$PAT" check 7 12345 50001)"
cp "$TMP/t7" "$TMP/bad"
printf '\x00' | dd of="$TMP/bad" bs=1 seek=77777 conv=notrunc 2>/dev/null
"$PAT" check 7 0 <"$TMP/bad" >/dev/null 2>"$TMP/err"
rc=$?
check_eq "a wrong byte: exit 1, where it is, and what its block claims" \
	"1|mkpattern: title 7: byte 77777 is 0x00, not 0x$(od -An -tx1 -j 77777 -N 1 "$TMP/t7" | tr -d ' ')|mkpattern: its block says title 7 offset 73728" \
	"$rc|$(paste -sd'|' "$TMP/err")"
"$PAT" check 7 4096 <"$TMP/t7" >/dev/null 2>"$TMP/err"
check_eq "a range from the wrong offset is wrong" \
	"1 mkpattern: its block says title 7 offset 0" "$? $(tail -n 1 "$TMP/err")"
head -c 999 "$TMP/t7" | "$PAT" check 7 0 1000 >/dev/null 2>"$TMP/err"
check_eq "a short range, when its length is given" \
	"1 mkpattern: title 7: 999 of 1000 bytes from offset 0" "$? $(cat "$TMP/err")"
head -c 1001 "$TMP/t7" | "$PAT" check 7 0 1000 >/dev/null 2>"$TMP/err"
check_eq "a long one" \
	"1 mkpattern: title 7: more than 1000 bytes from offset 0" "$? $(cat "$TMP/err")"
bad=
for n in -1 " 1" 010x 0x10 ""; do
	"$PAT" gen 7 "$n" >/dev/null 2>"$TMP/err"
	rc=$?
	[ "$rc $(cat "$TMP/err")" = "2 mkpattern: bad SIZE: $n" ] ||
		bad+=" '$n': $rc $(cat "$TMP/err");"
done
check_eq "a bad number (-1, ' 1', 010x, 0x10, ''): exit 2, named" "" "$bad"
check_eq "numbers are decimal: 010 is ten" 10 "$("$PAT" gen 7 010 | wc -c)"

"$LIB" --print 3 2 >/dev/null 2>&1
check_eq "--print before the build: exit 1" 1 "$?"
img=$("$LIB" 3 2 2>"$TMP/build.err")
rc=$?
check_eq "a library of 3 titles is built into the cache" \
	"0 $KVOD_CACHE_DIR/library/$("$LIB" --key 3 2).img" "$rc $img"
check_eq "--print names it, and the key changes with the numbers" \
	"$img different" \
	"$("$LIB" --print 3 2) $([ "$("$LIB" --key 3 2)" != "$("$LIB" --key 4 2)" ] && echo different)"
image_cat "$img" /titles.txt >"$TMP/titles.txt"
bad=
while read -r name id size; do
	out=$(image_cat "$img" "/titles/$name" | "$PAT" check "$id" 0 "$size" 2>&1)
	[ "$out" = "ok $size bytes" ] || bad+=" $name: $out"
	[ $((size % 4096)) != 0 ] || bad+=" $name: $size is whole pages"
done <"$TMP/titles.txt"
check_eq "every title listed is in the image, byte-exact, not whole pages" \
	"3 titles;" "$(grep -c . "$TMP/titles.txt") titles;$bad"
"$LIB" 0 2 >/dev/null 2>"$TMP/err"
check_eq "a bad count: exit 2, named" \
	"2 library-image: TITLES must be 1 to 9999: 0" "$? $(cat "$TMP/err")"
ktap_finish
