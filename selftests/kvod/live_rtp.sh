#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Pushes of live channels: each chunk goes out as paced RTP once it is
# complete. Numbered MPEG-TS packets (live_tool.py) are checked at the
# receiver on 127.0.0.1: whole, in order, no RTP packet lost, one SSRC;
# the push is paced at its rate (by default the channel's --bitrate) and
# copies nothing (as push_zerocopy.sh checks for movies); it waits for a
# writer that pauses; one
# that falls a ring behind is moved ahead at chunk boundaries and the
# skip is counted; DEL ends it; and the errors.
# timeout: 300

HERE=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
# shellcheck source=selftests/lib/http.sh
. "$HERE/../lib/http.sh"
# shellcheck source=selftests/lib/trace.sh
. "$HERE/../lib/trace.sh"
# shellcheck source=selftests/lib/live.sh
. "$HERE/../lib/live.sh"

DST=udp://127.0.0.1

# rtp PORT ARGS...: a checking receiver in the background, ready when
# $TMP/ready.PORT exists; its result goes to $TMP/rtp.PORT.
rtp() {
	local port=$1

	shift
	rm -f "$TMP/ready.$port"
	"${LT[@]}" rtp 127.0.0.1 "$port" --ready "$TMP/ready.$port" "$@" \
		>"$TMP/rtp.$port" &
	wait_for "$(time_limit 30)" test -e "$TMP/ready.$port"
}

live_rtp_cleanup() {
	live_watchdog_stop
	zc_probes_off
	http_cleanup
}
trap live_rtp_cleanup EXIT

# On the debug kernel this test once stopped after check 2 until its
# timeout, saying nothing: say where it is, a while before that. Its
# clock starts late on a loaded guest (sourcing the libraries over 9p):
# at 270 s of the 300 it once started too late to say anything before
# the runner's timeout (after check 5, 2026-11-28).
live_watchdog "$(time_limit 220)"

ktap_header
ktap_plan 21
kvod_load || ktap_bail_out "cannot load kvod.ko"
"$KVODCTL" live create tv --chunk "$CHUNK" --chunks 256 ||
	ktap_bail_out "cannot create channel tv"
"$KVODCTL" live create raw --raw --chunk 4096 --chunks 4 ||
	ktap_bail_out "cannot create channel raw"

# --- Errors -----------------------------------------------------------------
check_errno "a channel without a bit rate needs --rate" EINVAL \
	"$KVODCTL" push tv "$DST:5004"
check_errno "a channel cannot loop" EINVAL \
	"$KVODCTL" push tv "$DST:5004" --rate 4M --loop
check_errno "a channel that is not MPEG-TS cannot be pushed" EINVAL \
	"$KVODCTL" push raw "$DST:5004" --rate 4M
check_eq "nothing was started" 0 "$(pushes)"

# --- Paced, whole, in order ---------------------------------------------
# The push starts before any chunk: it waits, then takes chunk 0. The
# ring holds all 3200 packets, so the push never has to skip.
rtp 5004 --after 3199 --ppc $PPC
rx=$!
zc_probes_on udp_sendmsg
"$KVODCTL" push tv "$DST:5004" --rate 4M >/dev/null ||
	ktap_bail_out "cannot push tv"
check_eq "the channel has the push as a client" 1 "$(movie_clients tv)"
# In the background: a feed that hangs is reported and killed too.
live_feed tv 3200 &
wait_bounded "$(time_limit 60)" "$rx" "$!"
zc_udp_control 200
read -r sent spliced csent cspliced < <(zc_sums)
zc_probes_off
r=$(cat "$TMP/rtp.5004")
ktap_print_msg "push: $r" \
	"kworkers: UDP took $sent bytes, $spliced by reference; control $csent, $cspliced"
check_eq "every TS packet from the first, whole, in order, none lost" \
	"rtp 0 3199 0 0 0 0 0" \
	"$(fields "$r" status first last torn gaps backwards lost badhdr)"
# 3200 packets of 188 bytes at 4 Mbit/s: 1.2 s.
check_ok "paced at its rate: $(field secs "$r") s for 1.2 s of payload" \
	awk -v s="$(field secs "$r")" 'BEGIN { exit !(s >= 1.0) }'
# A chunk of 16 TS packets is 3 RTP packets, the last of 376 bytes: a
# schedule of one full packet's time per packet ran at 76% of the rate.
# The RTP clock follows the schedule, so it says exactly, timing aside.
check_ok "the schedule keeps the rate with short packets: $(field rtp_bps "$r") bit/s" \
	awk -v b="$(field rtp_bps "$r")" 'BEGIN { exit !(b > 3960000 && b < 4040000) }'

check_ok "the probes see a copying sender copy (control)" \
	test $((csent - cspliced)) -ge $((200 * 1316))
check_ok "kvod hands every TS packet to UDP by page reference" \
	test "$spliced" -ge $((3200 * 188))
check_eq "kvod has UDP copy nothing, headers included" 0 $((sent - spliced))

# --- The channel's bit rate -------------------------------------------------
# A push that names no rate sends a channel at its --bitrate.
"$KVODCTL" live create br --bitrate 4M --chunk "$CHUNK" --chunks 256 ||
	ktap_bail_out "cannot create channel br"
rtp 5008 --after 1599 --ppc $PPC
rx=$!
"$KVODCTL" push br "$DST:5008" >/dev/null || ktap_bail_out "cannot push br"
live_feed br 1600 &
wait_bounded "$(time_limit 60)" "$rx" "$!"
r=$(cat "$TMP/rtp.5008")
check_eq "a push with no --rate of a channel with --bitrate 4M: every packet" \
	"rtp 0 1599 0 0 0" "$(fields "$r" status first last torn gaps lost)"
check_ok "... paced at the channel's bit rate: $(field rtp_bps "$r") bit/s" \
	awk -v b="$(field rtp_bps "$r")" 'BEGIN { exit !(b > 3960000 && b < 4040000) }'
"$KVODCTL" del br
wait_test "$(time_limit 20)" = 0 pushes

# --- A writer that pauses -------------------------------------------------
# After the pause, 3200 packets at once: 1.2 s of payload at 4 Mbit/s,
# which the push must pace from the moment they come, not send as fast
# as it can to catch up with its schedule.
rtp 5004 --after 6719 --ppc $PPC --mark 3520
rx=$!
{ live_feed tv 320 --start 3200; sleep 3; live_feed tv 3200 --start 3520; } &
wait_bounded "$(time_limit 60)" "$rx" "$!"
r=$(cat "$TMP/rtp.5004")
check_eq "across a pause of the writer: nothing lost" "rtp 3200 6719 0 0 0" \
	"$(fields "$r" status first last torn gaps lost)"
check_ok "... and no burst after it: $(field mark_secs "$r") s for the 1.2 s of payload written after the pause" \
	awk -v s="$(field mark_secs "$r")" 'BEGIN { exit !(s >= 1.0) }'

# --- DEL ends the push ------------------------------------------------------
"$KVODCTL" del tv
wait_test "$(time_limit 20)" = 0 pushes
check_eq "DEL of the channel ends its push" 0 "$(pushes)"

# --- A push slower than its writer falls behind -----------------------------
"$KVODCTL" live create slow --chunk "$CHUNK" --chunks 4 ||
	ktap_bail_out "cannot create channel slow"
# The writer makes 752 kbit/s for 4 s; the push sends 400 kbit/s.
rtp 5006 --after 1999 --ppc $PPC --idle 30
rx=$!
"$KVODCTL" push slow "$DST:5006" --rate 400k >/dev/null ||
	ktap_bail_out "cannot push slow"
live_feed slow 2000 --rate 500 &
wait_bounded "$(time_limit 60)" "$rx" "$!"
overruns=$(movie_field slow overruns)
r=$(cat "$TMP/rtp.5006")
ktap_print_msg "slow push: $r; overruns $overruns"
check_eq "a slow push: nothing torn, out of order or lost" "rtp 0 0 0 0" \
	"$(fields "$r" status torn backwards lost misaligned)"
check_ok "... it was moved ahead ($(field gaps "$r") times)" \
	test "$(field gaps "$r")" -gt 0
# missed before its first packet (a late first take) or between chunks
check_eq "... past exactly the chunks counted as overruns" \
	"$((overruns * PPC))" "$(($(field first "$r") + $(field skipped "$r")))"
check_eq "... and it sent the last chunk" 1999 "$(field last "$r")"
"$KVODCTL" del slow
wait_test "$(time_limit 20)" = 0 pushes
check_eq "no push left" 0 "$(pushes)"

kvod_unload
ktap_finish
