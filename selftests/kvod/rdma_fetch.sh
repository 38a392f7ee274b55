#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# kvod-fetch against the in-kernel RDMA server on Soft-RoCE: byte-exact
# whole movies and random ranges (chunks straddling segments), 16
# concurrent clients, player mode with seeks, a movie over 1 GiB that
# needs several MRs, and DEL while clients read.
#
# timeout: 900
# transports: rxe siw siwlo

# shellcheck source=selftests/kvod/rdma_lib.bash
. "$(dirname "$0")/rdma_lib.bash"

ktap_header
ktap_plan 13
rdma_test_start

MiB=$((1 << 20))
movie_add small $((10 * MiB + 12345)) || ktap_bail_out "cannot add a movie"
movie_add tiny 1000 || ktap_bail_out "cannot add a movie"
want=$(sha256sum <"$RDMA_TMP/small")

got=$("$KVOD_FETCH" -q "$RDMA_URL/small" | sha256sum)
check_eq "whole movie, byte-exact" "$want" "$got"

got=$("$KVOD_FETCH" -q --chunk 4k --depth 1 "$RDMA_URL/tiny" | sha256sum)
check_eq "movie smaller than a page" "$(sha256sum <"$RDMA_TMP/tiny")" "$got"

# Random ranges with odd chunk sizes, so READs start and end mid-page and
# the planner must split at segment boundaries.
bad=
for i in $(seq 12); do
	off=$((RANDOM * RANDOM % (10 * MiB)))
	len=$((RANDOM * 97 % (10 * MiB + 12345 - off) + 1))
	chunk=$(((RANDOM % 300) + 1))k
	depth=$(((RANDOM % 32) + 1))
	w=$(tail -c +$((off + 1)) "$RDMA_TMP/small" | head -c "$len" | sha256sum)
	g=$("$KVOD_FETCH" -q --offset "$off" --length "$len" --chunk "$chunk" \
		--depth "$depth" "$RDMA_URL/small" | sha256sum)
	[ "$w" = "$g" ] || bad+=" off=$off len=$len chunk=$chunk depth=$depth"
done
check_eq "12 random ranges, byte-exact" "" "$bad"

segs=$("$RDMA_CLIENT" "$RXE_ADDR" table small | grep -c '^seg:')
ktap_print_msg "small: $segs segment(s)"
check_eq "segment table READ by the hostile client agrees" "$want" \
	"$("$RDMA_CLIENT" "$RXE_ADDR" read small 0 $((10 * MiB + 12345)) | sha256sum)"

# 16 clients at once. kvod sets up 4 at a time; on the debug kernel the
# last ones wait longer than kvod-fetch's default 5 s for the answer.
pids=()
for i in $(seq 16); do
	"$KVOD_FETCH" -q --timeout "$(time_limit 5)000" -o "$RDMA_TMP/out$i" \
		"$RDMA_URL/small" &
	pids+=($!)
done
fails=0
for p in "${pids[@]}"; do wait "$p" || fails=$((fails + 1)); done
same=$(for i in $(seq 16); do sha256sum <"$RDMA_TMP/out$i"; done | grep -cxF "$want")
rm -f "$RDMA_TMP"/out*
check_eq "16 concurrent clients all byte-exact" "0 16" "$fails $same"
check_eq "no connection left active" 0 "$(rdma_counter active)"

# Player mode: 8 Mbit/s (rxe under TCG moves 5-10 MB/s), 300 ms cache,
# 64 KiB chunks, a seek every 0.5 s for 3 s.
out=$("$KVOD_FETCH" -o /dev/null --rate 8M --cache 300 --chunk 64k \
	--seek-every 0.5 --duration 3 --seed 7 "$RDMA_URL/small" 2>&1)
rc=$?
ktap_print_msg "$out"
seeks=$(sed -n 's/.* \([0-9]*\) seeks.*/\1/p' <<<"$out")
check_eq "player mode with seeks runs" "0 yes" "$rc $([ "${seeks:-0}" -ge 4 ] && echo yes)"
late=$(sed -n 's/.* \([0-9]*\) late.*/\1/p' <<<"$out")
check_eq "player mode at 8 Mbit/s with seeks: no late chunk" 0 "$late"

# Player mode, no seeks, plays through byte-exact.
got=$("$KVOD_FETCH" -q --rate 200M --cache 100 --chunk 64k "$RDMA_URL/small" | sha256sum)
check_eq "player mode output byte-exact" "$want" "$got"

# DEL while clients read: they finish, new connects are not found.
"$KVOD_FETCH" -q --rate 40M --cache 100 -o "$RDMA_TMP/slow" "$RDMA_URL/small" &
slow=$!
wait_test 20 = 1 rdma_counter active
"$KVOD_HELPER" del small
nf=$("$KVOD_FETCH" "$RDMA_URL/small" 2>&1 >/dev/null)
wait "$slow"
rc=$?
check_eq "DEL: the reader finishes byte-exact" "0 $want" "$rc $(sha256sum <"$RDMA_TMP/slow")"
check_eq "DEL: new connects are rejected as not found" \
	"kvod-fetch: small: movie not found" "$nf"
# A live channel is not served over RDMA (yet): a reject of its own.
"$KVODCTL" live create tv --chunks 2 || ktap_bail_out "cannot create a channel"
nf=$("$KVOD_FETCH" "$RDMA_URL/tv" 2>&1 >/dev/null)
check_eq "a live channel is rejected as such" \
	"kvod-fetch: tv: a live channel, not served over RDMA (created without --rdma)" "$nf"
"$KVODCTL" del tv
rm -f "$RDMA_TMP/slow" "$RDMA_TMP/small"

# Over 1 GiB: with 2 MiB MR pages still several MRs (rxe: 512 pages each;
# siw registers 4 KiB pages, 1 MiB an MR, so over a thousand). Under TCG
# the soft devices move a few MB/s, so by default READ 8 MiB at both ends
# and 2 MiB around each of at most 8 segment boundaries, spread over the
# movie; KVOD_RDMA_FULL=1 READs all of it.
big=$((1024 * MiB + 3 * MiB + 777))
if movie_add big "$big"; then
	segs=$("$RDMA_CLIENT" "$RXE_ADDR" table big | awk '/^seg:/ { print $2 }')
	ktap_print_msg "big: segments at $(tr '\n' ' ' <<<"$segs")"
	if [ "${KVOD_RDMA_FULL:-0}" = 1 ]; then
		ranges="0:$big"
	else
		ranges="0:$((8 * MiB)) $((big - 8 * MiB)):$((8 * MiB))"
		read -r -a bounds <<<"$(sed 1d <<<"$segs" | tr '\n' ' ')"
		n=${#bounds[@]}
		for ((i = 0; i < (n < 8 ? n : 8); i++)); do
			o=${bounds[n <= 8 ? i : i * (n - 1) / 7]}
			len=$((big - (o - MiB)))
			[ "$len" -le $((2 * MiB)) ] || len=$((2 * MiB))
			ranges+=" $((o - MiB)):$len"
		done
	fi
	bad=
	for r in $ranges; do
		off=${r%:*} len=${r#*:}
		w=$(tail -c +$((off + 1)) "$RDMA_TMP/big" | head -c "$len" | sha256sum)
		g=$("$KVOD_FETCH" -q --chunk 1M --offset "$off" --length "$len" \
			"$RDMA_URL/big" | sha256sum)
		[ "$w" = "$g" ] || bad+=" $r"
	done
	rm -f "$RDMA_TMP/big"
	check_eq "1 GiB + 3 MiB movie: several MRs, byte-exact across each boundary" \
		"yes" "$([ "$(wc -w <<<"$segs")" -ge 2 ] && [ -z "$bad" ] && echo yes)$bad"
	"$KVOD_HELPER" del big
else
	rm -f "$RDMA_TMP/big"
	ktap_fail "1 GiB + 3 MiB movie: several MRs, byte-exact across each boundary"
fi

rdma_test_stop
ktap_finish
