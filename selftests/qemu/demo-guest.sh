#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The demo's steps, run inside the selftests/qemu/vm-run guest by selftests/qemu/demo, which
# passes the sample in KVOD_DEMO_SAMPLE and its bit rate (bits/s) in
# KVOD_DEMO_BITRATE. Each step is one function, run in order by
# run_steps at the bottom; a step says whether it worked with its status
# (each checks its commands itself: bash ignores errexit in a function
# called as a condition), and a failing step stops the demo (exit 1)
# after the module is unloaded.
set -euo pipefail

REPO=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.." && pwd)
# shellcheck source=selftests/lib/ktap.sh
. "$REPO/selftests/lib/ktap.sh"
# shellcheck source=selftests/lib/rdma.sh
. "$REPO/selftests/lib/rdma.sh"
KVODCTL=$REPO/tools/kvodctl
FETCH=$REPO/tools/kvod-fetch
PROXY=$REPO/tools/kvod-proxy
HTTP_PORT=8080
PROXY_EP=127.0.0.1:8554
SAMPLE=${KVOD_DEMO_SAMPLE:?selftests/qemu/demo sets it}
BITRATE=${KVOD_DEMO_BITRATE:?selftests/qemu/demo sets it}

# show CMD...: print CMD as typed, then run it.
show() {
	echo "\$ ${*#"$REPO/"}"
	"$@"
}

step_load() {
	# shellcheck disable=SC2119 # no module parameters
	kvod_load || return 1
	show ls -l /dev/kvod
}

step_add() {
	show "$KVODCTL" add sample "$SAMPLE" --bitrate "$BITRATE" || return 1
	# What the streams below must decode (in a file: the steps run as
	# conditions); MPEG-TS lists the stream twice, in its program and on
	# its own.
	probe "$SAMPLE" | sed -n 's/^nb_read_frames=//p' | head -n1 \
		>/tmp/demo-frames
	[ "$(cat /tmp/demo-frames)" -gt 0 ]
}

step_list() {
	show "$KVODCTL" list
}

step_info() {
	show "$KVODCTL" info sample
}

# ffprobe's verdict on a stream: container, codecs, and frames decoded.
probe() {
	ffprobe -v error -count_frames -select_streams v:0 \
		-show_entries \
		stream=codec_name,width,height,nb_read_frames:format=format_name \
		-of default=nw=1 "$@"
}

# all_frames FILE: probe's output FILE counts every frame of the sample.
all_frames() {
	local want got

	want=$(cat /tmp/demo-frames)
	got=$(sed -n 's/^nb_read_frames=//p' "$1" | head -n1)
	[ "$got" = "$want" ] && return 0
	echo "demo: ${got:-no} frames decoded; the sample has $want" >&2
	return 1
}

step_http() {
	local rc=0

	show "$KVODCTL" listen http "127.0.0.1:$HTTP_PORT" || return 1
	show "$KVODCTL" list || rc=1
	show probe "http://127.0.0.1:$HTTP_PORT/sample" |
		tee /tmp/demo-http.probe || rc=1
	all_frames /tmp/demo-http.probe || rc=1
	show "$KVODCTL" unlisten http "127.0.0.1:$HTTP_PORT" || rc=1
	return "$rc"
}

# rdma_stream TRANSPORT: kvod-fetch over TRANSPORT (rxe or siw) to
# ffprobe.
rdma_stream() {
	local rc=0

	rdma_use "$1"
	rxe_setup || return 1
	show rdma link show "$RXE_DEV/1" || rc=1
	show "$KVODCTL" listen rdma "$RXE_ADDR:$RXE_PORT" || rc=1
	echo "\$ kvod-fetch rdma://$RXE_ADDR:$RXE_PORT/sample | ffprobe -"
	"$FETCH" "rdma://$RXE_ADDR:$RXE_PORT/sample" | probe - |
		tee /tmp/demo-rdma.probe || rc=1
	all_frames /tmp/demo-rdma.probe || rc=1
	show "$KVODCTL" unlisten rdma "$RXE_ADDR:$RXE_PORT" || rc=1
	rxe_teardown
	return "$rc"
}

step_rdma() {
	rdma_stream rxe
}

step_iwarp() {
	rdma_stream siw
}

# VLC, an ordinary HTTP player, plays from the RDMA server through
# kvod-proxy: it remuxes the sample to MPEG-TS (VLC refuses to run as
# root, so as nobody), and ffprobe counts the frames that came through.
step_vlc() {
	local rc=0 proxy

	rdma_use rxe
	rxe_setup || return 1
	"$KVODCTL" listen rdma "$RXE_ADDR:$RXE_PORT" || return 1
	echo "\$ kvod-proxy --listen $PROXY_EP rdma://$RXE_ADDR:$RXE_PORT &"
	"$PROXY" -f --listen "$PROXY_EP" "rdma://$RXE_ADDR:$RXE_PORT" &
	proxy=$!
	wait_for 10 curl -s -o /dev/null "http://$PROXY_EP/" || rc=1
	echo "\$ cvlc --play-and-exit http://$PROXY_EP/sample --sout '#std{access=file,mux=ts,dst=/tmp/demo-vlc.ts}'"
	timeout 300 runuser -u nobody -- cvlc -q -I dummy --play-and-exit \
		--no-audio "http://$PROXY_EP/sample" \
		--sout '#std{access=file,mux=ts,dst=-}' 2>/dev/null \
		>/tmp/demo-vlc.ts || rc=1
	echo "\$ ffprobe /tmp/demo-vlc.ts"
	probe /tmp/demo-vlc.ts | tee /tmp/demo-vlc.probe
	grep -q '^nb_read_frames=[1-9]' /tmp/demo-vlc.probe || rc=1
	kill "$proxy"
	wait "$proxy" || true
	"$KVODCTL" unlisten rdma "$RXE_ADDR:$RXE_PORT" || rc=1
	rxe_teardown
	return "$rc"
}

tx_ns() {
	ip netns exec demo-tx "$@"
}

rx_ns() {
	ip netns exec demo-rx "$@"
}

# Two namespaces joined by a veth: the push goes out of demo-tx through
# the tsock qdisc to ffprobe in demo-rx (198.18.0.0/15 only).
step_push() {
	local rc=0

	export TC_LIB_DIR=$REPO/tools/tc	# q_tsock.so, not installed
	kmod_load sch_tsock || return 1
	{ ip netns add demo-tx && ip netns add demo-rx &&
	  ip link add vdemo0 netns demo-tx type veth peer name vdemo1 \
		netns demo-rx &&
	  ip -n demo-tx addr add 198.18.2.1/24 dev vdemo0 &&
	  ip -n demo-rx addr add 198.18.2.2/24 dev vdemo1 &&
	  ip -n demo-tx link set vdemo0 up && ip -n demo-rx link set vdemo1 up &&
	  show tx_ns tc qdisc add dev vdemo0 root tsock; } || return 1

	# Packets, not decoded frames: an emulated guest cannot decode
	# 1080p H.264 as fast as it arrives, and would drop datagrams.
	rx_ns timeout 60 ffprobe -v error -timeout 3000000 \
		-count_packets -select_streams v:0 -show_entries \
		stream=codec_name,width,height,nb_read_packets -of default=nw=1 \
		rtp://198.18.2.2:5004 >/tmp/demo-probe 2>/dev/null &
	local probe=$!
	sleep 2
	show tx_ns "$KVODCTL" push sample udp://198.18.2.2:5004 || rc=1
	show tx_ns "$KVODCTL" list
	wait "$probe" || true
	echo "\$ ffprobe rtp://198.18.2.2:5004 (in demo-rx)"
	cat /tmp/demo-probe
	grep -q '^nb_read_packets=[1-9]' /tmp/demo-probe || rc=1
	# and the packets went through tsock
	show tx_ns tc -s qdisc show dev vdemo0 | tee /tmp/demo-qdisc || rc=1
	grep -q '^qdisc tsock' /tmp/demo-qdisc &&
		grep -q '^ Sent [1-9]' /tmp/demo-qdisc || rc=1
	ip netns del demo-tx; ip netns del demo-rx
	# the namespace's teardown, and its qdisc's, ends after "netns del"
	wait_test 30 = 0 cat /sys/module/sch_tsock/refcnt
	kmod_unload sch_tsock || rc=1
	return "$rc"
}

step_del() {
	show "$KVODCTL" del sample
}

step_unload() {
	kvod_unload || return 1
	echo "kvod.ko unloaded"
}

STEPS=(
	"load kvod.ko:step_load"
	"register the sample:step_add"
	"list the movies:step_list"
	"show the sample:step_info"
	"stream it over HTTP to ffprobe:step_http"
	"stream it over RDMA (Soft-RoCE) to ffprobe:step_rdma"
	"stream it over iWARP (soft-iWARP) to ffprobe:step_iwarp"
	"play it in VLC through kvod-proxy, RDMA underneath:step_vlc"
	"push it as paced RTP through tsock to ffprobe:step_push"
	"remove the sample:step_del"
	"unload kvod.ko:step_unload"
)

run_steps() {
	local i=0 step title fn

	if ! kvod_in_guest; then
		echo "demo-guest.sh: selftests/qemu/demo runs this inside the guest" >&2
		return 1
	fi
	for step in "${STEPS[@]}"; do
		i=$((i + 1))
		title=${step%%:*}
		fn=${step##*:}
		echo
		echo "== demo step $i/${#STEPS[@]}: $title"
		if ! "$fn"; then
			echo "demo: step $i ($title) failed" >&2
			kvod_unload || true
			return 1
		fi
	done
	echo
	echo "== demo done"
}

run_steps
