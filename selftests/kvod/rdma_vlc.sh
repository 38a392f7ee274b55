#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# VLC plays rdma://HOST:PORT/NAME itself, through kvod's VLC access module
# (tools/vlc, loaded from the tree with VLC_PLUGIN_PATH): it remuxes as
# many frames as it does from the file; an MP4 whose index is at the end
# makes it seek, and a --start-time seeks again, each on the one
# connection it opened (the server's accepted counter proves it); an
# unknown movie fails with kvod-fetch's wording in VLC's log, and a
# --kvod-timeout out of 1..600000 ms fails the open, saying so, before any
# connect.
#
# timeout: 600
# transports: rxe siw:debug

# shellcheck source=selftests/lib/ktap.sh
. "$(dirname "$0")/../lib/ktap.sh"
# shellcheck source=selftests/lib/rdma.sh
. "$(dirname "$0")/../lib/rdma.sh"
# shellcheck source=selftests/lib/media.sh
. "$(dirname "$0")/../lib/media.sh"
rdma_test_init

# The tree's plugin, through VLC_PLUGIN_PATH; in an install tree none:
# VLC finds the one make install put in its own directory.
PLUGIN_DIR=${KVOD_REPO:+$KVOD_REPO/tools/vlc}

# vlc SOURCE [OPTION...]: VLC, with the tree's plugin, remuxes SOURCE's
# video into an MPEG-TS in $RDMA_TMP/vlc.ts (lib/media.sh); its log
# (errors only) goes to $RDMA_TMP/vlc.log.
vlc() {
	VLC_PLUGIN_PATH=$PLUGIN_DIR vlc_remux "$@" 2>"$RDMA_TMP/vlc.log" \
		>"$RDMA_TMP/vlc.ts"
}

ktap_header
ktap_plan 7
[ -z "$PLUGIN_DIR" ] || [ -f "$PLUGIN_DIR/libkvod_plugin.so" ] ||
	ktap_bail_out "$PLUGIN_DIR/libkvod_plugin.so not built (make tools)"
rdma_test_start
# VLC runs as nobody: it opens the RDMA devices itself.
chmod a+rw /dev/infiniband/* 2>/dev/null

chmod 755 "$RDMA_TMP"
media_into SAMPLE sample.mp4
{ cp "$SAMPLE" "$RDMA_TMP/sample.mp4" && chmod 644 "$RDMA_TMP/sample.mp4" &&
	"$KVODCTL" add sample.mp4 "$RDMA_TMP/sample.mp4"; } ||
	ktap_bail_out "cannot add sample.mp4"

check_eq "VLC lists the kvod access module" 1 \
	"$(VLC_PLUGIN_PATH=$PLUGIN_DIR runuser -u nobody -- cvlc --list 2>/dev/null |
		grep -c '^ *kvod ')"

# What VLC remuxes from the file (lib/media.sh: as make selftests counted
# it, with the same VLC).
want=$(vlc_reference)
before=$(rdma_counter accepted)
vlc "$RDMA_URL/sample.mp4"
got=$(frames "$RDMA_TMP/vlc.ts")
check_eq "rdma://: as many frames as VLC gets from the file ($want)" \
	"decodes $want" "$([ "${want:-0}" -gt 0 ] && echo decodes) $got"
check_eq "one connection for the whole play, seeks to the index included" \
	1 $(($(rdma_counter accepted) - before))

before=$(rdma_counter accepted)
vlc "$RDMA_URL/sample.mp4" --start-time 2
got=$(frames "$RDMA_TMP/vlc.ts")
check_eq "--start-time 2: fewer frames, on one connection" "yes 1" \
	"$([ "${got:-0}" -gt 0 ] && [ "$got" -lt "$want" ] && echo yes) $(($(rdma_counter accepted) - before))"

vlc "$RDMA_URL/nosuchmovie"
check_eq "unknown movie: kvod-fetch's words in VLC's log" 1 \
	"$(grep -c 'kvod stream error: nosuchmovie: movie not found' "$RDMA_TMP/vlc.log")"
ktap_print_msg "$(grep kvod "$RDMA_TMP/vlc.log")"

before=$(rdma_counter accepted)
bad=
# Both ends of the range; each VLC run costs seconds in the guest.
for t in 0 2147483648; do
	vlc "$RDMA_URL/sample.mp4" "--kvod-timeout=$t"
	grep -q "kvod stream error: --kvod-timeout $t: not in 1\.\.600000 ms" \
		"$RDMA_TMP/vlc.log" || bad+=" $t"
done
ktap_print_msg "$(grep kvod "$RDMA_TMP/vlc.log")"
check_eq "--kvod-timeout 0 and 2^31: refused with the range, no connect" \
	"|0" "$bad|$(($(rdma_counter accepted) - before))"

wait_test "$(time_limit 10)" = 0 rdma_counter active
check_eq "every connection VLC opened is released" 0 "$(rdma_counter active)"

rdma_test_stop
ktap_finish
