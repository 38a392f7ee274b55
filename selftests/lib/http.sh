# SPDX-License-Identifier: GPL-2.0
#
# Shared by the http_*.sh tests (sourced; not a test), and their preamble:
# it sources ktap.sh and skips outside a selftests/qemu/vm-run guest. Each test loads
# kvod, registers movies from the guest's /tmp, listens on 127.0.0.1 (or a
# 198.18.0.0/15 address in a netns), and unloads at the end.
#
# Processes are expensive under software emulation (a Python start costs
# seconds), so http_client.py does whole batches per call.

# shellcheck source=selftests/lib/ktap.sh
. "$(dirname "${BASH_SOURCE[0]}")/ktap.sh"
kvod_require_guest

HTTP_DIR=$KVOD_SELFTESTS/kvod
# The system interpreter: a pyenv shim costs half a minute per start here.
PY=/usr/bin/python3
# shellcheck disable=SC2034 # used by the tests that source this
HC=("$PY" -S "$HTTP_DIR/http_client.py")
HTTP_ADDR=127.0.0.1
HTTP_PORT=8080
# shellcheck disable=SC2034 # used by the tests that source this
URL=http://$HTTP_ADDR:$HTTP_PORT
TMP=$(mktemp -d /tmp/kvod-http.XXXXXX)

http_cleanup() {
	rm -rf "$TMP"
}
trap http_cleanup EXIT

# http_setup: load kvod and listen on $HTTP_ADDR:$HTTP_PORT.
http_setup() {
	# shellcheck disable=SC2119 # no module parameters
	kvod_load || ktap_bail_out "cannot load kvod.ko"
	http_listen "$HTTP_ADDR" "$HTTP_PORT" ||
		ktap_bail_out "cannot listen on $HTTP_ADDR:$HTTP_PORT"
}

# http_listen ADDR PORT / http_unlisten ADDR PORT
http_listen() {
	"$KVODCTL" listen http "$1:$2"
}

http_unlisten() {
	"$KVODCTL" unlisten http "$1:$2"
}

# http_movie NAME MIB: a random movie file $TMP/NAME, registered as NAME.
http_movie() {
	head -c "$(($2 * 1024 * 1024 + 12345))" /dev/urandom >"$TMP/$1" &&
		"$KVODCTL" add "$1" "$TMP/$1"
}

# http_counters ADDR PORT: a listener's counters, "name=value" a line.
http_counters() {
	listener_counters http "$1:$2"
}

# http_counter NAME: one counter of the listener ("active", "200", ...).
http_counter() {
	listener_counter http "$HTTP_ADDR:$HTTP_PORT" "$1"
}

# sha FILE
sha() {
	sha256sum "$1" | cut -d' ' -f1
}
