#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A corpus of malformed and odd requests (http_corpus.txt: bad request
# lines, NUL and control bytes, huge heads, bad and overflowing ranges)
# each gets its documented status, and afterwards the server still serves
# byte-exact, every connection is gone and the per-status counters add up.

HERE=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
# shellcheck source=selftests/lib/http.sh
. "$HERE/../lib/http.sh"

CORPUS=$HERE/http_corpus.txt
n=$(grep -cv '^\(#\|$\)' "$CORPUS")

ktap_header
ktap_plan $((n + 3))
http_setup
http_movie c.ts 1 || ktap_bail_out "cannot register c.ts"

while read -r res want got desc; do
	if [ "$res" = ok ]; then
		ktap_pass "$desc: $want"
	else
		ktap_print_msg "got $got"
		ktap_fail "$desc: $want"
	fi
done < <("${HC[@]}" corpus "$HTTP_ADDR" "$HTTP_PORT" "$CORPUS")

curl -sS -o "$TMP/out" "$URL/c.ts"
check_eq "still serving byte-exact after the corpus" "$(sha "$TMP/c.ts")" \
	"$(sha "$TMP/out")"
wait_test 20 = 0 http_counter active
check_eq "no connection left" 0 "$(http_counter active)"

# Every answer was counted under its status (the corpus, plus our 200).
want=$(grep -v '^\(#\|$\)' "$CORPUS" | cut -d' ' -f1 | sort | uniq -c |
       awk '{ n[$2] = $1 } END { n[200]++; for (s in n) print s "=" n[s] }' |
       sort | tr '\n' ' ')
got=$(http_counters "$HTTP_ADDR" "$HTTP_PORT" | grep -E '^[0-9]{3}=[1-9]' | sort | tr '\n' ' ')
check_eq "per-status counters match the corpus" "$want" "$got"

http_unlisten "$HTTP_ADDR" "$HTTP_PORT"
kvod_unload
ktap_finish
