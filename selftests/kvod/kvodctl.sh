#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# "A && B || fail" is meant (fail if either is false); tests run indirectly.
# shellcheck disable=SC2015,SC2317,SC2119
#
# kvodctl, the command-line tool, against the real module: its output
# (table and JSON, exact integers), its exit codes (0 ok, 1 runtime,
# 2 usage), its one-line errors, that it refuses a bad RATE (the parser
# itself is tested on the host: selftests/host/rate_test.c), and that no
# bad input changes the catalog.
#
# Runs in the test guest as root: loads kmod/kvod.ko itself (after the
# checks that need the module absent) and removes it at the end. Prints
# KTAP. Needs tools/kvodctl (make -C tools) and jq. Under software
# emulation each process costs ~0.2 s (jq ~1 s), hence the builtins below
# and the long timeout.
#
# timeout: 900

set -u

HERE=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
# shellcheck source=selftests/lib/ktap.sh
. "$HERE/../lib/ktap.sh"
KO=$(kmod_path kvod)
# Any regular file, to add as a movie: the tree's Makefile, or installed,
# this script.
ANY_FILE=$KVOD_REPO/Makefile
[ -n "$KVOD_REPO" ] || ANY_FILE=$HERE/kvodctl.sh

# The device must be the real one.
unset KVOD_DEVICE

TMP=
LOADED=0
# The check running (its index in NAMES), and the last refusal that left
# STATE0 as the state it read after its command (save_state).
CHECK=
STATE_AT=

cleanup()
{
	[ -n "$TMP" ] && rm -rf "$TMP"
	if [ "$LOADED" = 1 ]; then
		rmmod kvod 2>/dev/null
	fi
}
trap cleanup EXIT

# --- helpers -----------------------------------------------------------

# Print a diagnostic and fail.
fail()
{
	ktap_print_msg "$*"
	return 1
}

# slurp FILE VAR: VAR = FILE's whole content (no fork: this runs under
# software emulation, where every process costs a fifth of a second).
slurp()
{
	IFS= read -r -d '' "$2" <"$1" || true
}

# run ARGS...: kvodctl ARGS; sets RC, OUT (stdout without the last
# newline) and ERR (stderr, exact). With RUN_LIMIT set, kvodctl is killed
# after that many seconds (RC 124).
run()
{
	local limit=()

	[ -z "${RUN_LIMIT:-}" ] || limit=(timeout "$RUN_LIMIT")
	"${limit[@]}" "$KVODCTL" "$@" >"$TMP/out" 2>"$TMP/err" </dev/null
	RC=$?
	slurp "$TMP/out" OUT
	OUT=${OUT%$'\n'}
	slurp "$TMP/err" ERR
}

expect_rc()
{
	[ "$RC" -eq "$1" ] ||
		fail "exit $RC, expected $1; stderr: $ERR; stdout: $OUT"
}

# Exactly one line, newline-terminated, on stderr, starting "kvodctl: ".
expect_one_err_line()
{
	local nl=${ERR//[!$'\n']/}

	[ "${#nl}" -eq 1 ] && [[ $ERR == *$'\n' ]] ||
		fail "stderr is not exactly one line: '$ERR'" || return 1
	[[ $ERR == "kvodctl: "* ]] ||
		fail "stderr does not start with 'kvodctl: ': '$ERR'"
}

expect_no_err()
{
	[ -z "$ERR" ] || fail "unexpected stderr: '$ERR'"
}

expect_quiet()
{
	expect_no_err && { [ -z "$OUT" ] || fail "unexpected stdout: '$OUT'"; }
}

# Everything list --json shows, in VAR: the catalog, the listeners, the
# pushes and the module's counters (KVOD_IOC_STATS, which t_stats checks
# against the catalog and the module parameter).
state()
{
	"$KVODCTL" list --json >"$TMP/state" 2>&1
	slurp "$TMP/state" "$1"
}

# The state before a refused command: read now, unless the check just
# before was a refusal (STATE_AT, set by t_refused and t_refused_any)
# that read it after its command and found it as before. Nothing has
# run since, and a read is a process, which on the debug kernel costs a
# second: more than half of this program's checks are refusals.
save_state()
{
	[ "$STATE_AT" = $((CHECK - 1)) ] || state STATE0
}

expect_state_intact()
{
	local now

	state now
	[ "$now" = "$STATE0" ] ||
		fail "state changed: before '$STATE0' after '$now'"
}

# A file of SIZE bytes of non-zero data, made by builtins.
mkfile()
{
	local s=k

	while ((${#s} < $2)); do
		s+=$s
	done
	printf %s "${s:0:$2}" >"$TMP/$1"
}

# nlines VAR: VAR = the lines in $TMP/out (wc -l, without the process).
nlines()
{
	local s

	slurp "$TMP/out" s
	s=${s//[!$'\n']/}
	printf -v "$1" %s "${#s}"
}

# squeeze VAR TEXT: VAR = TEXT with each run of spaces made one and the
# space ending a line dropped (tr -s ' ' | sed 's/ $//', by builtins).
squeeze()
{
	local s=$2

	while [[ $s == *'  '* ]]; do
		s=${s//  / }
	done
	s=${s// $'\n'/$'\n'}
	printf -v "$1" %s "${s% }"
}

# has_word TEXT WORD: TEXT holds WORD between non-word characters (grep
# -qw WORD, by builtins).
has_word()
{
	[[ $1 =~ (^|[^[:alnum:]_])"$2"([^[:alnum:]_]|$) ]]
}

# resident_cap CAP TOL: CAP = the module's cap on movie memory in bytes,
# as kmod/catalog.c computes it, read from outside kvod's ioctls, and TOL
# how far off it may be: max_resident_mb MiB exactly or, if that is 0,
# half of RAM (MemTotal) within a MiB, as module_test.c allows. Builtins
# only.
resident_cap()
{
	local mb key val

	read -r mb </sys/module/kvod/parameters/max_resident_mb || return 1
	if [ "$mb" != 0 ]; then
		printf -v "$1" %s $((mb << 20))
		printf -v "$2" %s 0
		return
	fi
	while read -r key val _; do
		if [ "$key" = MemTotal: ]; then
			printf -v "$1" %s $((val * 1024 / 2))
			printf -v "$2" %s $((1 << 20))
			return
		fi
	done </proc/meminfo
	return 1
}

# stats_line: the counters of kvod_stats (lib/ktap.sh) for a message.
stats_line()
{
	echo "movies=${KVOD_STATS[movies]:-} zombies=${KVOD_STATS[zombies]:-}" \
		"resident=${KVOD_STATS[resident]:-}" \
		"resident_max=${KVOD_STATS[resident_max]:-}"
}

# --- without the module ------------------------------------------------

t_help()
{
	run --help
	expect_rc 0 && expect_no_err &&
		{ [[ $OUT == *"add NAME FILE"* ]] || fail "no usage in --help"; }
}

t_version()
{
	run --version
	expect_rc 0 && expect_no_err &&
		{ [ -n "$OUT" ] && [[ $OUT != *$'\n'* ]] ||
			fail "--version printed '$OUT'"; }
}

t_usage_error()
{
	run "$@"
	expect_rc 2 && expect_one_err_line && { [ -z "$OUT" ] || fail "stdout: $OUT"; }
}

t_no_module()
{
	local cmd

	[ ! -e /dev/kvod ] || fail "/dev/kvod exists without the module" ||
		return 1
	for cmd in "list" "stats" "info x" "del x"; do
		# shellcheck disable=SC2086
		run $cmd
		expect_rc 1 && expect_one_err_line || return 1
		case $ERR in
		*/dev/kvod*) ;;
		*) fail "'$cmd' error does not name /dev/kvod: $ERR"; return 1 ;;
		esac
	done
}

# --- with the module ---------------------------------------------------

t_load()
{
	kvod_load || fail "loading $KO failed" || return 1
	LOADED=1
}

t_list_empty()
{
	run list
	expect_rc 0 && expect_no_err || return 1
	[[ $OUT == NAME* ]] && [[ $OUT != *$'\n'* ]] ||
		fail "empty list: '$OUT'" || return 1
	run list --json
	expect_rc 0 && expect_no_err || return 1
	jq -e '.movies == [] and .stats.movies == 0 and .stats.zombies == 0 and
		.stats.resident == 0' "$TMP/out" >/dev/null ||
		fail "empty list --json: $OUT"
}

t_add_quiet()
{
	mkfile m1 1000001
	run add m1 "$TMP/m1" --bitrate 8.7M
	expect_rc 0 && expect_quiet
}

t_add_rate_suffix_k()
{
	mkfile m2 4096
	run add m2 "$TMP/m2" --bitrate 2500k
	expect_rc 0 && expect_quiet || return 1
	run info m2 --json
	expect_rc 0 || return 1
	[ "$(jq -r .bitrate "$TMP/out" 2>&1)" = 2500000 ] || fail "bitrate: $OUT"
}

t_add_no_rate()
{
	mkfile a0 3
	run add a0 "$TMP/a0"
	expect_rc 0 && expect_quiet || return 1
	run info a0 --json
	[ "$(jq -r '"\(.bitrate) \(.size)"' "$TMP/out" 2>&1)" = "0 3" ] ||
		fail "info a0: $OUT"
}

# --pin is accepted and the movie is resident at once (the files here
# are in tmpfs, which is always read at ADD; library_states.sh checks
# --pin on a disk), then deleted again for the checks that follow.
t_add_pin()
{
	mkfile p0 5000
	run add p0 "$TMP/p0" --pin
	expect_rc 0 && expect_quiet || return 1
	run info p0 --json
	[ "$(jq -r '"\(.size) \(.resident >= .size) \(.chunks >= 1)"' \
		"$TMP/out" 2>&1)" = "5000 true true" ] || fail "info p0: $OUT"
	run del p0
	expect_rc 0 && expect_quiet
}

# Sizes, bitrates and accounting in list --json, checked against the files.
# One jq prints the names, then whether the rest holds: it fails on what
# is not JSON.
t_list_json()
{
	local res names

	run list --json
	expect_rc 0 && expect_no_err || return 1
	res=$(jq -r '([.movies[].name] | join(" ")), (
		(.movies | map(select(.name == "m1"))[0]) as $m |
		$m.size == 1000001 and $m.bitrate == 8700000 and
		$m.resident >= $m.size and $m.resident % 4096 == 0 and
		$m.chunks >= 1 and $m.resident <= $m.chunks * 2097152 and
		$m.active_clients == 0 and $m.bytes_served == 0 and
		.stats.movies == 3 and .stats.zombies == 0 and
		.stats.resident == ([.movies[].resident] | add) and
		.stats.resident_max > 0 and
		(.movies[0] | keys) == (["active_clients", "bitrate",
			"bytes_served", "chunks", "name", "resident", "size"]) and
		(.stats | keys) == (["graveyard", "mem", "movies",
			"rdma_conn_bytes", "rdma_map_bytes", "rdma_maps",
			"rdma_mr_pages", "resident", "resident_max",
			"zombies"]))
	' "$TMP/out" 2>&1) || fail "not JSON: $OUT" "$res" || return 1
	names=${res%%$'\n'*}
	[ "$names" = "a0 m1 m2" ] || fail "names '$names', expected 'a0 m1 m2'" ||
		return 1
	[ "${res#*$'\n'}" = true ] || fail "list --json: $OUT"
}

# The table says exactly what the JSON says.
t_list_table()
{
	local head want row name json n

	run list
	expect_rc 0 && expect_no_err || return 1
	squeeze head "${OUT%%$'\n'*}"
	want="NAME SIZE BITRATE RESIDENT CHUNKS CLIENTS SERVED"
	[ "$head" = "$want" ] || fail "heading '$head'" || return 1
	nlines n
	[ "$n" -eq 4 ] || fail "rows: $OUT" || return 1
	json=$("$KVODCTL" list --json | jq -r '.movies[] |
		[.name, .size, .bitrate, .resident, .chunks, .active_clients,
		 .bytes_served] | join(" ")')
	squeeze row "${OUT#*$'\n'}"
	while [[ $row == *$'\n' ]]; do
		row=${row%$'\n'}
	done
	[ "$row" = "$json" ] || fail "table rows '$row' != JSON '$json'"
}

# A listener and a push: list prints their tables after the movies',
# each after an empty line, and stops printing them once they are gone.
t_list_services()
{
	local ns id para want n

	ns=$(stat -L -c %i /proc/self/ns/net)
	run listen http 127.0.0.1:8089
	expect_rc 0 && expect_quiet || return 1
	run push m1 udp://127.0.0.1:5999 --rate 100k
	id=$OUT
	if ! expect_rc 0 || ! expect_no_err; then
		"$KVODCTL" unlisten http 127.0.0.1:8089
		return 1
	fi
	run list
	"$KVODCTL" unlisten http 127.0.0.1:8089
	"$KVODCTL" stop "$id"
	expect_rc 0 && expect_no_err || return 1
	# The paragraphs, blanks squeezed, lines joined by '|': movies,
	# listeners, pushes.
	squeeze para "$OUT"
	para=${para//$'\n'/|}
	want="http 127.0.0.1:8089 $ns 0 0 0 0 -"
	[[ $para =~ ^NAME\ [^|]*(\|[^|]+){3}\|\|PROTO\ ADDRESS\ NETNS\ ACCEPTED\ ACTIVE\ REFUSED\ BYTES\ OTHER\|"$want"\|\|PUSH\ MOVIE\ DESTINATION\ NETNS\ RATE\ PACKETS\ LOOPS\ LATE\ OPTS\|"$id m1 udp://127.0.0.1:5999 $ns 100000 "[0-9]+\ 0\ [0-9]+\ -$ ]] ||
		fail "list with a listener and a push: $OUT" || return 1
	run list
	expect_rc 0 && expect_no_err || return 1
	nlines n
	[ "$n" -eq 4 ] || fail "list once both are gone: $OUT"
}

t_info()
{
	local res size

	run info m1 --json
	expect_rc 0 && expect_no_err || return 1
	# Whether list says the same, then the size, from one jq.
	res=$("$KVODCTL" list --json | jq -r --slurpfile i "$TMP/out" \
		'((.movies | map(select(.name == "m1"))[0]) == $i[0]), $i[0].size')
	[ "${res%%$'\n'*}" = true ] ||
		fail "info m1 --json differs from list: $OUT" || return 1
	size=${res#*$'\n'}
	run info m1
	expect_rc 0 && expect_no_err || return 1
	has_word "$OUT" m1 && has_word "$OUT" "$size" &&
		has_word "$OUT" 8700000 || fail "info m1: $OUT"
}

# stats --json against what the module says outside kvodctl's stats code
# (get_stats(), stats_fields[]): movies, the entries of the catalog
# (KVOD_IOC_MOVIE_LIST, as list --json prints them); zombies, 0 (no movie
# has been deleted yet); resident, the sum of the entries' own resident
# bytes (KVOD_IOC_MOVIE_LIST; no zombie holds any); mem, that sum too
# (no RDMA connection here); resident_max, the module parameter or
# /proc/meminfo (resident_cap). One jq reads both files: stats --json and
# list's stats compact, what stats says, what the catalog says, then
# list's resident_max and resident, a line each.
t_stats()
{
	local out json got want cap tol max
	local -a res

	run stats --json
	expect_rc 0 && expect_no_err || return 1
	"$KVODCTL" list --json >"$TMP/list"
	out=$(jq -r --slurpfile l "$TMP/list" '($l[0].stats | tojson),
		tojson,
		"\(.movies) \(.zombies) \(.resident) \(.mem) \(.resident_max)",
		($l[0] | ([.movies[].resident, .live[].resident] | add // 0)
			as $r | "\(.movies + .live | length) 0 \($r) \($r)"),
		$l[0].stats.resident_max, $l[0].stats.resident' "$TMP/out")
	mapfile -t res <<<"$out"
	json=${res[0]:-}
	[ -n "$json" ] && [ "${res[1]:-}" = "$json" ] ||
		fail "stats --json '$OUT' != list stats '$json'" || return 1
	resident_cap cap tol || fail "no max_resident_mb or MemTotal" ||
		return 1
	got=${res[2]:-}
	want=${res[3]:-}
	max=${got##* }
	[ "${got% *}" = "$want" ] && [[ $max =~ ^[0-9]+$ ]] &&
		((max >= cap - tol && max <= cap + tol)) ||
		fail "stats --json != the catalog and the cap:" \
			"'$got' vs '$want $cap' (cap within $tol)" || return 1
	run stats
	expect_rc 0 && expect_no_err || return 1
	has_word "$OUT" "${res[4]:-}" && has_word "$OUT" "${res[5]:-}" ||
		fail "stats: $OUT"
}

# A refused command: exit RC, one line MSG (if given), state unchanged.
t_refused()
{
	local rc=$1 msg=$2

	shift 2
	save_state
	run "$@"
	expect_rc "$rc" && expect_one_err_line && expect_state_intact || return 1
	STATE_AT=$CHECK
	# MSG ending in ": " is a prefix: the reason's wording is free.
	if [ -n "$msg" ] && [ "$ERR" != "$msg"$'\n' ] &&
	   { [[ $msg != *": " ]] || [[ $ERR != "$msg"* ]]; }; then
		fail "stderr '$ERR', expected '$msg'"
		return 1
	fi
	[ -z "$OUT" ] || fail "stdout: $OUT"
}

# A refused command that may be judged by kvodctl (2) or the kernel (1).
t_refused_any()
{
	save_state
	run "$@"
	{ [ "$RC" -eq 1 ] || [ "$RC" -eq 2 ]; } ||
		fail "exit $RC, expected 1 or 2; stderr: $ERR" || return 1
	expect_one_err_line && expect_state_intact || return 1
	STATE_AT=$CHECK
}

t_add_empty()
{
	: >"$TMP/empty"
	t_refused 1 "kvodctl: add new: $TMP/empty: empty file" \
		add new "$TMP/empty"
}

# A FIFO without a writer: refused at once, not waited on in open().
t_add_fifo()
{
	mkfifo "$TMP/fifo_add" || fail "mkfifo failed" || return 1
	RUN_LIMIT=$(time_limit 10) t_refused 1 \
		"kvodctl: add new: $TMP/fifo_add: not a regular file" \
		add new "$TMP/fifo_add"
}

t_del()
{
	local before

	kvod_stats || fail "kvodctl stats failed" || return 1
	before=${KVOD_STATS[movies]:-}
	run del m2
	expect_rc 0 && expect_quiet || return 1
	run info m2
	expect_rc 1 && expect_one_err_line || return 1
	kvod_stats
	[ "${KVOD_STATS[movies]:-}" = $((before - 1)) ] ||
		fail "movies not decremented: $before, then $(stats_line)" ||
		return 1
	# The name can be used again.
	run add m2 "$TMP/m2"
	expect_rc 0 && expect_quiet
}

# Live channels: create with the defaults, how info and list show one,
# a feed from standard input.
t_live()
{
	run live create tv
	expect_rc 0 && expect_quiet || return 1
	run info tv --json
	expect_rc 0 && expect_no_err || return 1
	jq -e '.name == "tv" and .written == 0 and .chunks_done == 0 and
		.chunk_size == 65424 and .chunks == 64 and
		.resident == 64 * 65536 and .writer == 0 and .overruns == 0 and
		.swaps == 0 and
		keys == (["active_clients", "bitrate", "bytes_served",
			"chunk_size", "chunks", "chunks_done", "name", "overruns",
			"resident", "swaps", "writer", "written"])' "$TMP/out" >/dev/null ||
		fail "info tv --json: $OUT" || return 1
	run info tv
	[[ $OUT == "name: tv"$'\n'"kind: live"$'\n'"written: 0"* ]] ||
		fail "info tv: $OUT" || return 1
	run list --json
	jq -e '[.live[].name] == ["tv"] and
		([.movies[].name] | index("tv")) == null' "$TMP/out" >/dev/null ||
		fail "list --json: $OUT" || return 1
	run list
	[[ $OUT == *$'\n\n'"NAME  WRITTEN"*$'\n'"tv  "* ]] ||
		fail "list: $OUT" || return 1
	# Two packets and a half: the close completes a chunk of two.
	head -c 470 /dev/zero | "$KVODCTL" live feed tv 2>"$TMP/err"
	RC=$?
	slurp "$TMP/err" ERR
	expect_rc 0 && expect_no_err || return 1
	run info tv --json
	jq -e '.written == 470 and .chunks_done == 1 and .writer == 0' \
		"$TMP/out" >/dev/null || fail "after a feed: $OUT" || return 1
	# One writer at a time: the first one reads a FIFO we hold open.
	mkfifo "$TMP/fifo"
	"$KVODCTL" live feed tv <"$TMP/fifo" &
	exec 7>"$TMP/fifo"
	wait_for 30 has_writer
	state STATE0
	run live feed tv
	local rc=$RC intact=0

	expect_state_intact || intact=1
	exec 7>&-
	wait
	RC=$rc
	expect_rc 1 && [ "$intact" = 0 ] || return 1
	[ "$ERR" = "kvodctl: live feed tv: the channel has a writer already"$'\n' ] ||
		fail "a second writer: '$ERR'"
}

# has_writer: info tv says "writer: 1" (a line), one process a poll.
has_writer()
{
	local out

	out=$("$KVODCTL" info tv)
	[[ $'\n'$out$'\n' == *$'\n''writer: 1'$'\n'* ]]
}

t_live_del()
{
	run del tv
	expect_rc 0 && expect_quiet || return 1
	run info tv
	expect_rc 1
}

t_del_all()
{
	local n

	for n in a0 m1 m2; do
		run del "$n"
		expect_rc 0 && expect_quiet || return 1
	done
	kvod_stats
	[ "${KVOD_STATS[movies]:-} ${KVOD_STATS[zombies]:-} ${KVOD_STATS[resident]:-}" = "0 0 0" ] ||
		fail "not empty: $(stats_line)"
}

t_unload()
{
	rmmod kvod || fail "rmmod failed" || return 1
	LOADED=0
	[ ! -e /dev/kvod ] || fail "/dev/kvod left behind"
}

# --- the plan ----------------------------------------------------------

NAMES=()
CMDS=()

add_test()
{
	local name=$1 cmd

	shift
	# KTAP descriptions: one word, no '#'. Builtins: this runs for each
	# of the program's checks.
	NAMES+=("${name//[!A-Za-z0-9._-]/_}")
	printf -v cmd '%q ' "$@"
	CMDS+=("$cmd")
}

add_test help t_help
add_test version t_version
add_test usage_no_args t_usage_error
add_test usage_unknown_command t_usage_error frobnicate
add_test usage_unknown_option t_usage_error list --frob
add_test no_module_names_device t_no_module
add_test load_module t_load
add_test list_empty t_list_empty
add_test add_quiet t_add_quiet
add_test add_rate_suffix_k t_add_rate_suffix_k
add_test add_without_rate t_add_no_rate
add_test add_pin t_add_pin
add_test list_json t_list_json
add_test list_table t_list_table
add_test list_listener_and_push t_list_services
add_test info t_info
add_test stats t_stats
add_test add_duplicate t_refused 1 "kvodctl: add m1: File exists" \
	add m1 "$ANY_FILE"
add_test del_unknown t_refused 1 "kvodctl: del nope: " del nope
add_test info_unknown t_refused 1 "kvodctl: info nope: " info nope
add_test info_json_unknown t_refused 1 "kvodctl: info nope: " info nope --json
for r in "" "-1" "0" "8.7Mb" "1e6" "12x" "1.2.3" "1.0005k" \
	 "18446744073709551616"; do
	add_test "add_bad_rate_${r:-EMPTY}" t_refused 2 "" add new "$ANY_FILE" \
		--bitrate "$r"
done
add_test add_rate_missing t_refused 2 "" add new "$ANY_FILE" --bitrate
add_test add_missing_file t_refused 1 "" add new /nonexistent/file
add_test add_directory t_refused 1 "kvodctl: add new: /tmp: not a regular file" \
	add new /tmp
add_test add_empty_file t_add_empty
add_test add_char_device t_refused 1 \
	"kvodctl: add new: /dev/zero: not a regular file" add new /dev/zero
add_test add_fifo t_add_fifo
add_test add_too_few_args t_refused 2 "" add new
add_test add_too_many_args t_refused 2 "" add new "$ANY_FILE" extra
add_test add_json_option t_refused 2 "" add new "$ANY_FILE" --json
add_test del_no_name t_refused 2 "" del
add_test del_two_names t_refused 2 "" del m1 m2
add_test del_bitrate_option t_refused 2 "" del m1 --bitrate 5
add_test del_pin_option t_refused 2 "" del m1 --pin
add_test info_no_name t_refused 2 "" info
add_test list_extra_arg t_refused 2 "" list m1
add_test stats_extra_arg t_refused 2 "" stats x
for n in "slash:a/b" "dot:." "dotdot:.." "space:a b" "star:x*" \
	 "64_chars:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"; do
	add_test "add_bad_name_${n%%:*}" t_refused_any add "${n#*:}" \
		"$ANY_FILE"
	add_test "del_bad_name_${n%%:*}" t_refused_any del "${n#*:}"
done
# Endpoints (tools/lib/endpoint.c, unit-tested on the host): a bad one is
# kvodctl's to refuse; a scope where the address needs none, the kernel's.
for e in "0" "65536" "80x" "localhost:80" "::1:80" "[::1]" "[::1]:" \
	 "[fe80::1%kvodnoif0]:80"; do
	add_test "listen_bad_endpoint_$e" t_refused 2 \
		"kvodctl: listen $e: not [ADDR:]PORT" listen http "$e"
done
add_test listen_scope_not_needed t_refused 1 "kvodctl: listen [::1%lo]:8080: " \
	listen http "[::1%lo]:8080"
add_test unlisten_unknown t_refused 1 \
	"kvodctl: unlisten 127.0.0.1:8089: no such listener" \
	unlisten http 127.0.0.1:8089
for u in "udp://5004" "rtp://127.0.0.1:5004" "udp://[::1]" "127.0.0.1:5004"; do
	add_test "push_bad_url_$u" t_refused 2 "kvodctl: push $u: not udp://HOST:PORT" \
		push m1 "$u"
done
add_test del t_del
add_test live t_live
add_test live_no_subcommand t_refused 2 \
	"kvodctl: live: missing sub-command (create, feed)" live
add_test live_unknown_subcommand t_refused 2 \
	"kvodctl: unknown command 'live bogus'" live bogus x
add_test live_chunk_not_ts t_refused 2 \
	"kvodctl: live create x: chunk size 1000 is not a multiple of 188 bytes (MPEG-TS packets; --raw for other streams)" \
	live create x --chunk 1000
add_test live_one_chunk t_refused 2 \
	"kvodctl: invalid chunk count '1' (2..65536)" live create x --chunks 1
add_test live_chunk_too_big t_refused 2 \
	"kvodctl: invalid chunk size '2097153' (188..2097152 bytes)" \
	live create x --chunk 2097153
add_test live_name_taken t_refused 1 "kvodctl: live create m1: File exists" \
	live create m1
add_test live_feed_unknown t_refused 1 "kvodctl: live feed nope: no such channel" \
	live feed nope
add_test live_feed_movie t_refused 1 "kvodctl: live feed m1: not a live channel" \
	live feed m1
# A bad name is not "not a live channel", although the kernel's EINVAL
# would mean either.
add_test live_feed_bad_name t_refused 2 \
	"kvodctl: live feed: invalid name 'a b': 1..63 bytes of [A-Za-z0-9._-], not . or .." \
	live feed "a b"
add_test live_feed_dotdot t_refused 2 \
	"kvodctl: live feed: invalid name '..': 1..63 bytes of [A-Za-z0-9._-], not . or .." \
	live feed ..
add_test live_feed_json_option t_refused 2 "" live feed tv --json
add_test live_del t_live_del
add_test del_all t_del_all
add_test unload t_unload

# --- run -----------------------------------------------------------------

kvod_require_guest
ktap_header
for f in "$KVODCTL" "$KO"; do
	if [ ! -e "$f" ]; then
		echo "1..0 # SKIP $f missing (make all selftests)"
		exit 4
	fi
done
if ! command -v jq >/dev/null; then
	echo "1..0 # SKIP jq missing"
	exit 4
fi
TMP=$(mktemp -d /tmp/kvodctl-test.XXXXXX)
# Start without the module: a leftover one would be in an unknown state.
if [ -d /sys/module/kvod ] && ! rmmod kvod; then
	ktap_bail_out "cannot remove the kvod module already loaded"
fi

ktap_plan "${#NAMES[@]}"
for i in "${!NAMES[@]}"; do
	CHECK=$i
	if eval "${CMDS[$i]}"; then
		ktap_pass "${NAMES[$i]}"
	else
		ktap_fail "${NAMES[$i]}"
	fi
done
ktap_finish
