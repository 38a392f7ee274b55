# SPDX-License-Identifier: GPL-2.0
#
# Shared by the live_*.sh tests (sourced; not a test, and after
# ktap.sh): live_tool.py, the ring chunk the tests use, and reading its
# "key=value" result lines.

# The system interpreter: a pyenv shim costs half a minute per start here.
LT=(/usr/bin/python3 -S "$(dirname "${BASH_SOURCE[0]}")/live_tool.py")
# shellcheck disable=SC2034 # used by the tests that source this
PPC=16					# packets per chunk
# shellcheck disable=SC2034 # used by the tests that source this
CHUNK=$((PPC * 188))
# The most delay from writer to reader the delay checks allow: 2 s on
# Debian's kernel.
# shellcheck disable=SC2034 # used by the tests that source this
DELAY_MS=2000

# delay_unbounded: the delay checks are skipped (their figures still
# printed) where every timeout is scaled (the debug kernel): there a
# reader's delay measures the emulator, 20 to 30 s at the p99 alone.
delay_unbounded() {
	[ "${KVOD_TIMEOUT_SCALE:-1}" -gt 1 ]
}

# field KEY LINE: the value of KEY=... in a live_tool.py result line.
field() {
	sed -n "s/.* $1=\([^ ]*\).*/\1/p; s/^$1=\([^ ]*\).*/\1/p" <<<"$2" | head -n1
}

# fields LINE KEY...: those values, blank-separated, on one line.
fields() {
	local line=$1 k

	shift
	for k; do field "$k" "$line"; done | paste -sd' '
}

# live_feed NAME GEN-ARGS...: live_tool.py gen into "kvodctl live feed
# NAME", in the foreground.
live_feed() {
	local name=$1

	shift
	"${LT[@]}" gen "$@" | "$KVODCTL" live feed "$name"
}
