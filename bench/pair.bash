# SPDX-License-Identifier: GPL-2.0
#
# The two-guest testbed's guest side (sourced by a command that
# selftests/qemu/vm-pair runs in both guests; not a program).
#
#	PAIR_ROLE		server or client (KVOD_PAIR_ROLE)
#	PAIR_SERVER, PAIR_CLIENT	the two addresses on the link
#	pair_net_up		bring the link's NIC up with this side's address
#	pair_rdma_up		and the RDMA device kvod_pair on it (rxe, or
#				siw with KVOD_PAIR_RDMA=siw)
#	pair_kvod_up FILE MIB	server: kvod.ko serving a random movie "film"
#	pair_nginx_start DIR PORT SENDFILE ROOT	server: an nginx on the link
#	pair_servers_up DIR MIB	server: kvod and nginx with and without
#				sendfile serving DIR/www/film
#	pair_servers_down DIR	server: stop them
#	pair_url SERVER		client: the URL of the movie at SERVER
#	pair_signal NAME [TEXT]	tell the other side NAME happened
#	pair_wait NAME SEC	wait up to SEC seconds for the other side's NAME
#	pair_serve HANDLER	server: answer the client's requests until "end"
#	pair_ask WHAT [ARG]	client: one request to the server, its answer
#	pair_stat		the server's "stat" answer: busy jiffies,
#				context switches, interrupts, jiffies/s
#	pair_cpu		its "cpu" answer: pair_stat's, then where the
#				busy jiffies went, the network softirqs run,
#				TCP segments received and the NIC's interrupts
#	pair_idle_rate SEC [cpu]	client: the idle server's rates of those
#	ask WHAT [ARG]		client: pair_ask, or die (bench/lib.bash)
#
# The NIC is the virtio-net device selftests/qemu/vm-run --link adds, found by its
# MAC (52:54:00:c6:12:01 on the server, :02 on the client). Addresses come
# from 198.18.0.0/15 only; nothing else is on the link.

PAIR_ROLE=${KVOD_PAIR_ROLE:?run by selftests/qemu/vm-pair}
PAIR_DIR=${KVOD_PAIR_DIR:?run by selftests/qemu/vm-pair}
PAIR_SERVER=198.18.1.1
PAIR_CLIENT=198.18.1.2
PAIR_NETDEV=
PAIR_RDMA=${KVOD_PAIR_RDMA:-rxe}
# Where pair_cpu reads the kernel's counters (a test gives it others).
PAIR_PROC=${KVOD_PAIR_PROC:-/proc}

# pair_net_up: the link's netdev in PAIR_NETDEV, up, with this side's
# address; 1 if there is no such NIC.
pair_net_up() {
	local mac=52:54:00:c6:12:01 addr=$PAIR_SERVER d

	if [ "$PAIR_ROLE" = client ]; then
		mac=52:54:00:c6:12:02
		addr=$PAIR_CLIENT
	fi
	modprobe -q virtio_net 2>/dev/null
	for d in /sys/class/net/*; do
		if [ "$(cat "$d/address")" = "$mac" ]; then
			PAIR_NETDEV=${d##*/}
			break
		fi
	done
	[ -n "$PAIR_NETDEV" ] || return 1
	ip addr add "$addr/24" dev "$PAIR_NETDEV" &&
		ip link set "$PAIR_NETDEV" up
}

# pair_signal NAME [TEXT]: a file the other guest sees in the shared
# directory, holding TEXT; written whole, then renamed into place.
pair_signal() {
	echo "${2:-}" >"$PAIR_DIR/$1.tmp" &&
		mv "$PAIR_DIR/$1.tmp" "$PAIR_DIR/$1"
}

# pair_wait NAME SECONDS: until the other side signalled NAME.
pair_wait() {
	local deadline=$((SECONDS + $2))

	until [ -e "$PAIR_DIR/$1" ]; do
		[ "$SECONDS" -lt "$deadline" ] || return 1
		pair_nap 0.2
	done
}

# pair_nap SECONDS: sleep without a fork: a read with a timeout on a pipe
# nobody writes to. The server waits for requests this way all the time,
# and sleep(1) five times a second cost a server guest under TCG a share
# of a CPU (exec and all) that moved its baseline.
pair_nap() {
	[ -n "${PAIR_NAP_FD:-}" ] || exec {PAIR_NAP_FD}<> <(:)
	read -rt "$1" -u "$PAIR_NAP_FD" _ || :
}

# pair_stat: "BUSY CTXT INTR HZ" of this guest so far, from /proc/stat:
# busy jiffies of all CPUs (user, nice, system, irq, softirq, steal),
# context switches, interrupts, and jiffies per second; pair_cpu's first
# four fields, so that both count busy time the same way.
pair_stat() {
	local busy ctxt intr hz

	read -r busy ctxt intr hz _ <<<"$(pair_cpu)"
	echo "$busy $ctxt $intr $hz"
}

# pair_cpu: pair_stat's four fields, then "USER SYS IRQ SOFTIRQ NET_RX
# NET_TX INSEGS RXINT TXINT" of this guest so far, all from one read:
# jiffies of all CPUs in user (with nice), system, hard and soft interrupt
# context, from /proc/stat, the NET_RX and NET_TX softirqs run, from
# /proc/softirqs, the TCP segments received (InSegs), from
# /proc/net/snmp, and the interrupts of virtio-net's receive and transmit
# queues (the vectors named virtioN-input.Q and virtioN-output.Q), from
# /proc/interrupts. One
# request, so that a benchmark sampling both adds no
# second round trip to its window. Debian's kernel has no
# CONFIG_IRQ_TIME_ACCOUNTING, so the split is the tick's sample of where
# each CPU was; softirqs that ksoftirqd runs count as softirq too.
pair_cpu() {
	awk -v hz="$(getconf CLK_TCK)" -v intr="$PAIR_PROC/interrupts" '
		/^cpu / { b = $2 + $3 + $4 + $7 + $8 + $9
			  u = $2 + $3; s = $4; i = $7; q = $8 }
		/^ctxt/ { c = $2 } /^intr/ { n = $2 }
		/^ *NET_RX:/ { for (k = 2; k <= NF; k++) rx += $k }
		/^ *NET_TX:/ { for (k = 2; k <= NF; k++) tx += $k }
		/^Tcp:/ { if (!tcp) { for (k = 2; k <= NF; k++)
					if ($k == "InSegs") col = k
				  tcp = 1 }
			  else seg = $col }
		FILENAME == intr {
			if (FNR == 1) { ncpu = NF; next }
			if ($NF ~ /^virtio[0-9]+-input\./)
				for (k = 2; k <= ncpu + 1; k++) rxi += $k
			if ($NF ~ /^virtio[0-9]+-output\./)
				for (k = 2; k <= ncpu + 1; k++) txi += $k }
		END { print b, c, n, hz, u, s, i, q, rx + 0, tx + 0, seg + 0,
			    rxi + 0, txi + 0 }' \
		"$PAIR_PROC/stat" "$PAIR_PROC/softirqs" "$PAIR_PROC/net/snmp" \
		"$PAIR_PROC/interrupts"
}

# pair_serve HANDLER: the server's side of pair_ask, one request after
# another until "end". "stat" is answered with pair_stat, "cpu" with
# pair_cpu; anything else by "HANDLER WHAT ARG", whose output is the
# answer.
pair_serve() {
	local n=0 what arg

	while :; do
		n=$((n + 1))
		pair_wait "req.$n" 3600 || return 1
		read -r what arg <"$PAIR_DIR/req.$n"
		case $what in
		end) pair_signal "ack.$n"; return 0 ;;
		stat) pair_signal "ack.$n" "$(pair_stat)" ;;
		cpu) pair_signal "ack.$n" "$(pair_cpu)" ;;
		*) pair_signal "ack.$n" "$("$1" "$what" "$arg")" ;;
		esac
	done
}

# pair_ask WHAT [ARG]: a request to the server (pair_serve); its answer
# on stdout. The count is kept in a file: callers run in command
# substitutions.
pair_ask() {
	local n

	n=$(($(cat "$PAIR_DIR/asked" 2>/dev/null || echo 0) + 1))
	echo "$n" >"$PAIR_DIR/asked"
	pair_signal "req.$n" "$*"
	pair_wait "ack.$n" 600 || return 1
	cat "$PAIR_DIR/ack.$n"
}

# ask WHAT [ARG]: pair_ask's answer, or the benchmark dies (bench/lib.bash).
ask() {
	pair_ask "$@" || die "the server did not answer $*"
}

# pair_idle_rate SECONDS [cpu]: the server's busy jiffies, context
# switches and interrupts per second while nothing is served (the client
# asks twice, SECONDS apart): "BUSY CTXT INTR"; with "cpu", then the
# user, system and interrupt (hard and soft) jiffies per second of
# pair_cpu's split: "BUSY CTXT INTR USER SYS IRQ".
pair_idle_rate() {
	local a b what=${2:-stat}

	a=$(pair_ask "$what") && sleep "$1" && b=$(pair_ask "$what") ||
		return 1
	awk -v a="$a" -v b="$b" -v t="$1" -v split_="${2:+1}" 'BEGIN {
		split(a, x, " "); split(b, y, " ")
		printf "%.3f %.1f %.1f", (y[1] - x[1]) / t, (y[2] - x[2]) / t,
			(y[3] - x[3]) / t
		if (split_)
			printf " %.3f %.3f %.3f", (y[5] - x[5]) / t,
				(y[6] - x[6]) / t,
				(y[7] + y[8] - x[7] - x[8]) / t }'
}

# pair_rdma_up: the link up (pair_net_up) and the RDMA device kvod_pair
# on it: rxe, or siw with KVOD_PAIR_RDMA=siw (build/siw/siw.ko from
# "make siw" on Debian's kernel, which does not ship it); says what failed.
pair_rdma_up() {
	pair_net_up || { echo "no link NIC" >&2; return 1; }
	modprobe -q -a ib_core ib_uverbs rdma_cm rdma_ucm
	case $PAIR_RDMA in
	rxe) modprobe -q rdma_rxe ;;
	siw)
		modprobe -q libcrc32c
		grep -q '^siw ' /proc/modules ||
			grep -q ' siw_newlink' /proc/kallsyms ||
			insmod "$REPO/build/siw/siw.ko" ||
			{ echo "no siw: make siw" >&2; return 1; } ;;
	*) echo "KVOD_PAIR_RDMA: rxe or siw, not $PAIR_RDMA" >&2; return 1 ;;
	esac
	rdma link add kvod_pair type "$PAIR_RDMA" netdev "$PAIR_NETDEV" ||
		{ echo "cannot add $PAIR_RDMA" >&2; return 1; }
}

# pair_kvod_up FILE MIB: MIB MiB of random bytes in FILE, registered with
# kvod.ko (from $REPO) as "film", served over RDMA on port 7471 and HTTP
# on 8080 of the server's address; says what failed.
pair_kvod_up() {
	head -c $(($2 << 20)) /dev/urandom >"$1" ||
		{ echo "cannot write $1" >&2; return 1; }
	insmod "$REPO/kmod/kvod.ko" ||
		{ echo "cannot load kvod.ko" >&2; return 1; }
	"$REPO/tools/kvodctl" add film "$1" ||
		{ echo "cannot add the movie" >&2; return 1; }
	"$REPO/tools/kvodctl" listen rdma "$PAIR_SERVER:7471" ||
		{ echo "cannot listen on rdma" >&2; return 1; }
	"$REPO/tools/kvodctl" listen http "$PAIR_SERVER:8080" ||
		{ echo "cannot listen on http" >&2; return 1; }
}

# pair_nginx_start DIR PORT SENDFILE ROOT: an nginx (its files in DIR,
# pid in DIR/nginx.pid) serving ROOT on PORT of the server's address,
# sendfile SENDFILE (on or off), one worker per CPU.
pair_nginx_start() {
	local d=$1

	mkdir -p "$d/logs" "$d/tmp"
	cat >"$d/nginx.conf" <<EOF
worker_processes $(nproc);
daemon on;
pid $d/nginx.pid;
error_log $d/logs/error.log warn;
user root;
events { worker_connections 1024; }
http {
	access_log off;
	sendfile $3;
	tcp_nopush on;
	client_body_temp_path $d/tmp/body;
	proxy_temp_path $d/tmp/proxy;
	fastcgi_temp_path $d/tmp/fastcgi;
	uwsgi_temp_path $d/tmp/uwsgi;
	scgi_temp_path $d/tmp/scgi;
	server {
		listen $PAIR_SERVER:$2;
		root $4;
	}
}
EOF
	nginx -c "$d/nginx.conf" -p "$d" -e "$d/logs/error.log"
}

# pair_servers_up DIR MIB: the movie "film" (MIB MiB) in DIR/www, served
# by kvod (pair_kvod_up), by nginx with sendfile on port 8081 and by
# nginx without it on 8082; its sha256 in $PAIR_DIR/film.sha256 for the
# client. Says what failed.
pair_servers_up() {
	mkdir -p "$1/www"
	pair_kvod_up "$1/www/film" "$2" || return 1
	chmod -R a+rX "$1"
	pair_nginx_start "$1/ngx8081" 8081 on "$1/www" ||
		{ echo "nginx (sendfile on) does not start" >&2; return 1; }
	pair_nginx_start "$1/ngx8082" 8082 off "$1/www" ||
		{ echo "nginx (sendfile off) does not start" >&2; return 1; }
	sha256sum <"$1/www/film" >"$PAIR_DIR/film.sha256"
}

# pair_servers_down DIR: stop what pair_servers_up DIR started.
pair_servers_down() {
	local p

	for p in 8081 8082; do
		kill "$(cat "$1/ngx$p/nginx.pid")"
	done
	rmmod kvod
}

# pair_url SERVER: where the client finds "film" on kvod-rdma, kvod-http,
# nginx-sf, nginx-copy (pair_servers_up) or kvod-proxy (a kvod-proxy on
# the client's 127.0.0.1:8554).
pair_url() {
	case $1 in
	kvod-rdma) echo "rdma://$PAIR_SERVER:7471/film" ;;
	kvod-http) echo "http://$PAIR_SERVER:8080/film" ;;
	nginx-sf) echo "http://$PAIR_SERVER:8081/film" ;;
	nginx-copy) echo "http://$PAIR_SERVER:8082/film" ;;
	kvod-proxy) echo "http://127.0.0.1:8554/film" ;;
	esac
}
