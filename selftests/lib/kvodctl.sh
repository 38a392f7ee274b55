# SPDX-License-Identifier: GPL-2.0
#
# What the shell tests read back from the module, through kvodctl (ktap.sh
# sources this). Listeners are read from "kvodctl list --json", movies from
# "kvodctl info", the module's counters from "kvodctl stats"; kvodctl.sh
# tests these formats themselves.
#
#	listener_counters PROTO ENDPOINT	its counters, "name=value" a line
#	listener_counter PROTO ENDPOINT NAME	one of them (kvodctl's name:
#						active, rej_busy, 404, ...)
#	listeners PROTO				ENDPOINT of each, a line
#	movie_field NAME FIELD			a field of "kvodctl info NAME"
#						(bytes_served, chunks, ...)
#	movie_clients NAME			its active_clients
#	pushes					pushes listed
#	no_pushes				true if there are none
#	kvod_stats				the module's counters into
#						KVOD_STATS[NAME] (kvodctl's
#						name: movies, zombies,
#						resident, resident_max, ...)
#
# ENDPOINT is as kvodctl prints it: 198.18.0.1:7471, [::1]:8080.

KVODCTL=${KVODCTL:-$KVOD_REPO/tools/kvodctl}
declare -gA KVOD_STATS=()

listener_counters() {
	"$KVODCTL" list --json |
		jq -r --arg p "$1" --arg a "$2" '
			.listeners[] | select(.proto == $p and .address == $a) |
			.counters | to_entries[] | "\(.key)=\(.value)"'
}

listener_counter() {
	listener_counters "$1" "$2" | sed -n "s/^$3=//p"
}

listeners() {
	"$KVODCTL" list --json |
		jq -r --arg p "$1" '.listeners[] | select(.proto == $p) | .address'
}

movie_field() {
	"$KVODCTL" info "$1" | sed -n "s/^$2: //p"
}

movie_clients() {
	movie_field "$1" active_clients
}

pushes() {
	"$KVODCTL" list --json | jq -r '.pushes | length'
}

no_pushes() {
	[ "$(pushes)" = 0 ]
}

# One process (kvodctl) for all the counters, parsed with read: a process
# start costs seconds on the debug kernel. False, and KVOD_STATS empty, if
# kvodctl fails.
kvod_stats() {
	local out key val

	KVOD_STATS=()
	out=$("$KVODCTL" stats) || return 1
	while IFS=': ' read -r key val; do
		# shellcheck disable=SC2034 # the tests read it
		KVOD_STATS[$key]=$val
	done <<<"$out"
}
