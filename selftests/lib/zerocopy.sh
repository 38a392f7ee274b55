# SPDX-License-Identifier: GPL-2.0
#
# The zero-copy probes of http_zerocopy.sh and push_zerocopy.sh (sourced;
# not a test). Source it after ktap.sh.
#
# Two return probes in the kprobe group $ZC_GROUP: "sent" on the socket's
# sendmsg (what the protocol accepted from each call) and "splice" on
# skb_splice_from_iter() (what it took by page reference, the
# MSG_SPLICE_PAGES path). Per sender, sent minus spliced is what the
# protocol copied in.

ZC_T=/sys/kernel/tracing
ZC_GROUP=kvodzc

# zc_probes_on SENDMSG: add both probes on SENDMSG (tcp_sendmsg,
# udp_sendmsg), empty the trace and start tracing.
zc_probes_on() {
	[ -d "$ZC_T/events" ] || mount -t tracefs nodev "$ZC_T" ||
		ktap_bail_out "no tracefs"
	echo 0 >"$ZC_T/tracing_on"
	echo >"$ZC_T/trace"
	echo 4096 >"$ZC_T/buffer_size_kb"
	# shellcheck disable=SC2016 # $retval is tracefs syntax
	ZC_PROBES=("r:$ZC_GROUP/sent $1 ret=\$retval:s32"
		"r:$ZC_GROUP/splice skb_splice_from_iter ret=\$retval:s64")
	for p in "${ZC_PROBES[@]}"; do
		echo "$p" >>"$ZC_T/kprobe_events" ||
			ktap_bail_out "cannot add probe $p: $(tail -n2 "$ZC_T/error_log")"
	done
	echo 1 >"$ZC_T/events/$ZC_GROUP/enable"
	echo 1 >"$ZC_T/tracing_on"
}

# zc_probes_off: stop tracing and remove the probes (safe to call twice);
# removing them empties the trace. tracing_on is left 1, as at boot.
zc_probes_off() {
	local p

	[ -d "$ZC_T/events/$ZC_GROUP" ] || return 0
	echo 0 >"$ZC_T/tracing_on"
	echo 0 >"$ZC_T/events/$ZC_GROUP/enable"
	for p in "${ZC_PROBES[@]}"; do
		p=${p%% *}
		echo "-:${p#r:}" >>"$ZC_T/kprobe_events"
	done
	echo 1 >"$ZC_T/tracing_on"
}

# zc_sums: stop tracing; print "SENT SPLICED CSENT CSPLICED" from the
# trace: the bytes sent and spliced by kworkers (kvod), then by python
# (the copying control). Before zc_probes_off, which empties the trace.
zc_sums() {
	echo 0 >"$ZC_T/tracing_on"
	awk '
		/ (sent|splice): / {
			comm = $1; sub(/-[0-9]+$/, "", comm)
			who = comm ~ /^kworker/ ? "kworker" : comm ~ /python/ ? "control" : "other"
			ev = $0 ~ / splice: / ? "splice" : "sent"
			v = $NF; sub(/^ret=/, "", v)
			if (v > 0) n[who "_" ev] += v
		}
		END {
			printf "%d %d %d %d\n", n["kworker_sent"], n["kworker_splice"],
				n["control_sent"], n["control_splice"]
		}
	' "$ZC_T/trace"
}

# zc_tcp_control MIB: the control of a TCP test: python (the "control" of
# zc_sums) sends MIB MiB over loopback TCP with a plain, copying send.
zc_tcp_control() {
	/usr/bin/python3 -S - "$1" <<'PY'
import socket, sys, threading
srv = socket.socket()
srv.bind(("127.0.0.1", 0))
srv.listen(1)
def sink():
    c, _ = srv.accept()
    while c.recv(1 << 20):
        pass
t = threading.Thread(target=sink)
t.start()
s = socket.create_connection(srv.getsockname())
s.sendall(b"x" * (int(sys.argv[1]) << 20))
s.close()
t.join()
PY
}

# zc_udp_control N [PREFIX...]: the control of a UDP test: python sends N
# datagrams of 1316 bytes to a port of 127.0.0.1 nobody listens on, with a
# plain, copying sendto(), run under PREFIX (a netns wrapper) if given.
zc_udp_control() {
	"${@:2}" /usr/bin/python3 -S - "$1" <<'PY'
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for _ in range(int(sys.argv[1])):
    s.sendto(b"x" * 1316, ("127.0.0.1", 9))
PY
}
