#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Writer and checking readers of numbered MPEG-TS packets, for the live
channel tests (not a test).

Every packet the writer makes is 188 bytes: the sync byte 0x47, its index
as 8 bytes big-endian, then 179 bytes that are a function of the index. So
a reader can tell, for every packet it gets, whether it is whole and which
it is; and since a ring chunk is a whole number of packets, where the ring
skipped it ahead. Commands:

  gen COUNT [--start I] [--rate PPS] [--pause-at K --pause S]
      [--stamp FILE]
        write COUNT packets from index I to stdout, as fast as the pipe
        takes them, or PPS packets a second; pause S seconds after the
        first K. --stamp writes the schedule to FILE (CLOCK_MONOTONIC),
        from which a reader given --delay FILE tells each packet's delay
        from the moment it was written to the moment it arrived
  get HOST PORT NAME [--http10] [--packets N] [--end] [--after I]
      [--rcvbuf B] [--slow BPS] [--timeout S] [--ppc P] [--ready FILE]
        GET /NAME and check every packet: with HTTP/1.1 the chunked coding
        (each HTTP chunk must be one ring chunk of whole, consecutive
        packets), with --http10 a close-delimited body. Stop after N
        packets (default: never), or after a packet at or past index I,
        or at the end of the body (--end: it must come, and for HTTP/1.1
        with the last chunk). --rcvbuf shrinks the socket's receive
        buffer, --slow reads at most BPS bytes a second; --ppc P says a
        ring chunk holds P packets, so that skips must start on chunk
        boundaries; --ready FILE is created once the response head is in.
        Prints one line of key=value: status, packets, chunks, torn
        (packets that are not whole or out of order within a chunk), gaps
        (skips between chunks), skipped (packets skipped), first, last,
        ended (the body ended properly), misaligned (skips not on chunk
        boundaries), backwards (a chunk older than the one before).
  rtp ADDR PORT [--after I] [--idle S] [--ppc P] [--ready FILE] [--mark M]
        receive RTP (RFC 2250: MPEG-TS, payload type 33) on ADDR:PORT
        until a packet at or past index I, or S seconds without a
        datagram (default 10); check the TS packets as get does, and the
        RTP header. Prints what get prints (status is "rtp" or
        "rtp/idle"), and rtp (datagrams), lost (RTP sequence numbers
        missing), badhdr (not version 2, payload type 33, one SSRC), secs
        (from the first datagram to the last), drops (datagrams the
        kernel dropped at the socket, SO_RXQ_OVFL: the receiver fell
        behind; its buffer is 16 MiB, past net.core.rmem_max as root),
        rtp_bps (the payload's bit rate by the RTP timestamps: the
        payload bits before the last datagram over the 90 kHz span from
        the first to the last; 0 if it is empty). With --mark M also
        mark_secs: from the first datagram holding a packet at or past
        index M to the last datagram.
  check [--ppc P] [--progress FILE]
        check the packets of a stream on standard input, to its end
        (kvod-fetch's output); prints what get prints, status "eof".
        --progress: keep the number of the last packet taken in FILE.

get and rtp take --delay FILE (see gen --stamp) and then also print
delay_p50, delay_p99 and delay_max: milliseconds from a packet's write to
its arrival, taken for the first packet of each read.

get's --timeout and rtp's --idle (given or default) are multiplied by
$KVOD_TIMEOUT_SCALE, as the tests' own timeouts are (time_limit).
"""
import os
import socket
import struct
import sys
import time

TS = 188
BODY = TS - 9
SCALE = float(os.environ.get("KVOD_TIMEOUT_SCALE") or 1)


def body(i):
    """The 179 bytes after the index of packet @i."""
    b = (i * 2654435761) & 0xffffffff
    return bytes(((b >> (8 * (k & 3))) + k) & 0xff for k in range(BODY))


BODIES = [body(i) for i in range(256)]


def packet(i):
    return b"\x47" + struct.pack(">Q", i) + BODIES[i & 0xff]


def opt(args, name, conv=str, default=None):
    if name in args:
        return conv(args[args.index(name) + 1])
    return default


def gen(args):
    count = int(args[0])
    start = opt(args, "--start", int, 0)
    rate = opt(args, "--rate", float, 0)
    pause_at = opt(args, "--pause-at", int, -1)
    pause = opt(args, "--pause", float, 0)
    stamp = opt(args, "--stamp")
    out = sys.stdout.buffer
    batch = 64 if not rate else max(1, int(rate / 50))
    t0 = time.monotonic()
    if stamp:
        with open(stamp + ".tmp", "w") as f:
            f.write(f"{t0} {start} {rate} {batch}\n")
        os.rename(stamp + ".tmp", stamp)
    i = 0
    while i < count:
        n = min(batch, count - i)
        if pause_at >= 0 and i < pause_at <= i + n:
            n = pause_at - i
        out.write(b"".join(packet(start + i + k) for k in range(n)))
        out.flush()
        i += n
        if i == pause_at:
            time.sleep(pause)
            t0 += pause
        if rate:
            ahead = t0 + i / rate - time.monotonic()
            if ahead > 0:
                time.sleep(ahead)
    return 0


class Checker:
    """Checks packets as they come. With chunk framing (chunked coding)
    a skip inside a chunk makes the packet torn; without it, --ppc still
    catches a skip that is not on a ring chunk boundary."""

    def __init__(self, ppc, framed, delay=None):
        self.ppc, self.framed = ppc, framed
        self.delay_file, self.sched, self.delays = delay, None, []
        self.packets = self.chunks = self.torn = 0
        self.gaps = self.skipped = self.misaligned = self.backwards = 0
        self.first = self.last = None
        self.boundary = True
        self.buf = b""

    def chunk_start(self):
        self.chunks += 1
        self.boundary = True
        if self.buf:
            self.torn += 1      # a packet split across chunks
            self.buf = b""

    def feed(self, data):
        self.buf += data
        n = len(self.buf) // TS
        if n and self.delay_file:
            self.delay(self.buf[:TS])
        for k in range(n):
            self.one(self.buf[k * TS:(k + 1) * TS])
        self.buf = self.buf[n * TS:]

    def delay(self, p):
        """Record how long ago gen wrote packet @p, by its schedule."""
        now = time.monotonic()
        if self.sched is None:
            try:
                with open(self.delay_file) as f:
                    t0, start, rate, batch = map(float, f.read().split())
            except (OSError, ValueError):
                return
            self.sched = (t0, start, rate, batch)
        t0, start, rate, batch = self.sched
        i = struct.unpack(">Q", p[1:9])[0] - start
        if i < 0 or not rate:
            return
        self.delays.append(now - (t0 + (i // batch) * batch / rate))

    def delay_report(self):
        if not self.delay_file:
            return ""
        d = sorted(self.delays)
        if not d:
            return " delay_p50=none delay_p99=none delay_max=none"
        ms = [round(1000 * d[min(len(d) - 1, int(q * len(d)))]) for q in
              (0.5, 0.99)]
        return (f" delay_p50={ms[0]} delay_p99={ms[1]}"
                f" delay_max={round(1000 * d[-1])}")

    def one(self, p):
        i = struct.unpack(">Q", p[1:9])[0]
        if p[0] != 0x47 or p[9:] != BODIES[i & 0xff]:
            self.torn += 1
            return
        self.packets += 1
        if self.last is not None and i != self.last + 1:
            if i <= self.last:
                self.backwards += 1
            else:
                self.gaps += 1
                self.skipped += i - self.last - 1
                if not self.boundary:
                    self.torn += 1
                if self.ppc and i % self.ppc:
                    self.misaligned += 1
        if self.first is None:
            self.first = i
        self.last = i
        self.boundary = not self.framed


def read_head(s, ready):
    data = b""
    while b"\r\n\r\n" not in data:
        got = s.recv(4096)
        if not got:
            raise EOFError("no response head")
        data += got
    head, rest = data.split(b"\r\n\r\n", 1)
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    fields = {}
    for line in lines[1:]:
        k, _, v = line.partition(":")
        fields[k.strip().lower()] = v.strip()
    if ready:
        open(ready, "w").close()
    return status, fields, rest


class Source:
    """Reads a socket, at most @bps bytes a second if set."""

    def __init__(self, s, rest, bps):
        self.s, self.buf, self.bps = s, rest, bps
        self.t0, self.got = time.monotonic(), 0

    def fill(self):
        want = 65536
        if self.bps:
            want = 4096
            ahead = self.t0 + self.got / self.bps - time.monotonic()
            if ahead > 0:
                time.sleep(ahead)
        data = self.s.recv(want)
        self.got += len(data)
        self.buf += data
        return bool(data)

    def take(self, n):
        while len(self.buf) < n:
            if not self.fill():
                raise EOFError
        data, self.buf = self.buf[:n], self.buf[n:]
        return data

    def line(self):
        while b"\r\n" not in self.buf:
            if not self.fill():
                raise EOFError
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line


def done(c, packets, after):
    if packets and c.packets >= packets:
        return True
    return after is not None and c.last is not None and c.last >= after


def get(args):
    host, port, name = args[0], int(args[1]), args[2]
    http10 = "--http10" in args
    want_end = "--end" in args
    packets = opt(args, "--packets", int, 0)
    after = opt(args, "--after", int, None)
    rcvbuf = opt(args, "--rcvbuf", int, 0)
    bps = opt(args, "--slow", int, 0)
    timeout = opt(args, "--timeout", float, 60) * SCALE
    ppc = opt(args, "--ppc", int, 0)
    ready = opt(args, "--ready")

    s = socket.socket()
    if rcvbuf:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.settimeout(timeout)
    s.connect((host, port))
    ver = "1.0" if http10 else "1.1"
    s.sendall(f"GET /{name} HTTP/{ver}\r\nHost: t\r\n\r\n".encode())
    ended = 0
    status = "none"
    c = Checker(ppc, False, opt(args, "--delay"))
    try:
        status, fields, rest = read_head(s, ready)
        src = Source(s, rest, bps)
        chunked = fields.get("transfer-encoding") == "chunked"
        c.framed = chunked
        while not done(c, packets, after):
            if chunked:
                # kvod sends a chunk's closing CRLF with the next size
                # line, so read it only when asking for the next chunk.
                if c.chunks and src.take(2) != b"\r\n":
                    c.torn += 1
                size = int(src.line().split(b";")[0], 16)
                if size == 0:
                    src.line()
                    ended = 1
                    break
                if size % TS:
                    c.torn += 1
                c.chunk_start()
                c.feed(src.take(size))
            else:
                if not src.buf and not src.fill():
                    ended = 1
                    break
                n = len(src.buf)
                if packets:     # no further than the packets asked for
                    n = min(n, (packets - c.packets) * TS - len(c.buf))
                c.feed(src.buf[:n])
                src.buf = src.buf[n:]
    except EOFError:
        pass
    except socket.timeout:
        status = f"{status}/timeout"
    except ConnectionError:
        status = f"{status}/reset"
    s.close()
    if want_end and not ended:
        status = f"{status}/unended"
    print(f"status={status} packets={c.packets} chunks={c.chunks} "
          f"torn={c.torn} gaps={c.gaps} skipped={c.skipped} "
          f"first={c.first} last={c.last} ended={ended} "
          f"misaligned={c.misaligned} backwards={c.backwards}"
          + c.delay_report())
    return 0


# Linux's values; Python's socket module names neither.
SO_RCVBUFFORCE = getattr(socket, "SO_RCVBUFFORCE", 33)
SO_RXQ_OVFL = getattr(socket, "SO_RXQ_OVFL", 40)


def big_rcvbuf(s, size):
    """A receive buffer of size, past net.core.rmem_max if we may (root
    in the guest, as txrecv does); else as much as SO_RCVBUF gets."""
    try:
        s.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, size)
    except PermissionError:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, size)


def rtp(args):
    addr, port = args[0], int(args[1])
    after = opt(args, "--after", int, None)
    idle = opt(args, "--idle", float, 10) * SCALE
    ppc = opt(args, "--ppc", int, 0)
    ready = opt(args, "--ready")
    mark = opt(args, "--mark", int, None)
    tm = None
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    # The stream whole (a slow guest may run the receiver late), and
    # the kernel's count of what it dropped here with every datagram.
    big_rcvbuf(s, 16 << 20)
    s.setsockopt(socket.SOL_SOCKET, SO_RXQ_OVFL, 1)
    s.bind((addr, port))
    s.settimeout(idle)
    if ready:
        open(ready, "w").close()
    c = Checker(ppc, False, opt(args, "--delay"))
    status = "rtp"
    n = lost = badhdr = drops = 0
    seq = ssrc = None
    t0 = t1 = 0
    ts0 = ts1 = None
    bits = last_bits = 0
    while not done(c, 0, after):
        try:
            d, anc, _, _ = s.recvmsg(2048, socket.CMSG_SPACE(4))
        except socket.timeout:
            status = "rtp/idle"
            break
        for level, kind, data in anc:
            if level == socket.SOL_SOCKET and kind == SO_RXQ_OVFL:
                drops = struct.unpack("=I", data[:4])[0]
        t1 = time.monotonic()
        if not n:
            t0 = t1
        n += 1
        hdr = d[:12]
        if len(d) < 12 or hdr[0] != 0x80 or hdr[1] & 0x7f != 33:
            badhdr += 1
            continue
        q, ss = struct.unpack(">H", hdr[2:4])[0], hdr[8:12]
        ts1 = struct.unpack(">I", hdr[4:8])[0]
        if ts0 is None:
            ts0 = ts1
        bits += last_bits
        last_bits = (len(d) - 12) * 8
        if ssrc is None:
            ssrc = ss
        elif ss != ssrc:
            badhdr += 1
        if seq is not None:
            lost += (q - seq - 1) & 0xffff
        seq = q
        if (len(d) - 12) % TS:
            c.torn += 1
        c.feed(d[12:])
        if mark is not None and tm is None and c.last is not None \
                and c.last >= mark:
            tm = t1
    span = (ts1 - ts0) & 0xffffffff if ts0 is not None else 0
    bps = round(bits * 90000 / span) if span else 0
    print(f"status={status} packets={c.packets} torn={c.torn} "
          f"gaps={c.gaps} skipped={c.skipped} first={c.first} "
          f"last={c.last} misaligned={c.misaligned} "
          f"backwards={c.backwards} rtp={n} lost={lost} badhdr={badhdr} "
          f"secs={t1 - t0:.2f} drops={drops} rtp_bps={bps}" +
          (f" mark_secs={t1 - tm:.2f}" if tm is not None else "") +
          c.delay_report())
    return 0


def check(args):
    c = Checker(opt(args, "--ppc", int, 0), False, opt(args, "--delay"))
    progress = opt(args, "--progress")
    while True:
        data = sys.stdin.buffer.read1(65536)
        if not data:
            break
        last = c.last
        c.feed(data)
        if progress and c.last != last:
            with open(progress + ".tmp", "w") as f:
                f.write(f"{c.last}\n")
            os.replace(progress + ".tmp", progress)
    if c.buf:
        c.torn += 1
    print(f"status=eof packets={c.packets} torn={c.torn} gaps={c.gaps} "
          f"skipped={c.skipped} first={c.first} last={c.last} "
          f"misaligned={c.misaligned} backwards={c.backwards}"
          + c.delay_report())
    return 0


def main(argv):
    cmds = {"gen": gen, "get": get, "rtp": rtp, "check": check}
    if len(argv) < 2 or argv[1] not in cmds:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        return cmds[argv[1]](argv[2:])
    except BrokenPipeError:
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
