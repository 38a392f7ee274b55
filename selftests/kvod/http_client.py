#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Raw HTTP client for kvod's HTTP shell tests and benchmark (not a test).

curl cannot send malformed requests, pipeline on purpose, trickle bytes
or hold a thousand idle connections; this can, with the standard library
only. It speaks no kvod ioctl: the tests use kvodctl for that. Commands
(HOST PORT address the server):

  status HOST PORT DATA...                   send each DATA (Python escapes,
                                             e.g. '\\r\\n', '\\x00') on a new
                                             connection, shut the write side,
                                             print each first status code
                                             ("none" if the server sent nothing)
  status-open HOST PORT DATA                 the same, keeping the write side
                                             open (for deadlines)
  second HOST PORT DATA                      hold one connection open, send
                                             DATA on a second one, print its
                                             status code
  corpus HOST PORT FILE                      for each "CODE DESC<TAB>EXPR" line
                                             of FILE (EXPR: a Python bytes
                                             expression), send, check the
                                             status; print "ok|fail ..." lines
  raw HOST PORT DATA                         send DATA, print all of the reply
  pipeline HOST PORT NAME FILE K             K requests in one write, ranges
                                             checked against FILE, in order
  curl-ranges URL FILE K                     K random ranges of URL in one curl
                                             run (one connection), each checked
                                             against FILE by sha256
  keepalive HOST PORT NAME K                 K requests one after another on
                                             one connection
  stall HOST PORT NAME FILE GO N             N downloads of NAME: each reads
                                             1 MiB and stops reading; once the
                                             file GO exists, they read on;
                                             print "complete" (byte-exact with
                                             FILE) or "cut" for each
  trickle HOST PORT NAME                     one byte a second; print how the
                                             connection ended and after how long
  idle HOST PORT NAME N UNTIL                N keep-alive connections, one
                                             HEAD each, then idle for UNTIL
                                             seconds, or until the file UNTIL
                                             exists; print how many are still
                                             open
  reader HOST PORT NAME FILE [OPTS]          one GET of NAME read at a chosen
                                             pace (reader_main() lists OPTS);
                                             print "complete" (byte-exact,
                                             and a clean EOF if it asked for
                                             Connection: close), "reset"
                                             (the server reset it), "open"
                                             (still open at --give-up), or
                                             "cut"/"corrupt", then the bytes
                                             and seconds
  hold HOST PORT NAME HOW SECONDS            one connection that the server
                                             closes, held open for SECONDS so
                                             that the client's TCP answers;
                                             HOW: "eof" (shut the write side
                                             at once) or "idle" (a HEAD of
                                             NAME, then nothing); prints
                                             "ready" once HOW is done
  flood HOST PORT N SECONDS                  open N connections at once, send
                                             nothing, print "opened N (R reset
                                             at once)", hold them open for
                                             SECONDS
  refused HOST PORT N [CMD]                  open N connections at once, send
                                             nothing, run the shell command CMD
                                             if given; print how many got a 503
                                             and how many were closed unanswered
"""
import fcntl
import os
import random
import select
import socket
import struct
import subprocess
import sys
import termios
import time

def unescape(data):
    return data.encode("latin-1").decode("unicode_escape").encode("latin-1")


def connect(host, port, timeout=20):
    s = socket.create_connection((host, int(port)), timeout=timeout)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


class Reader:
    """Buffered reads of HTTP responses from a socket."""

    def __init__(self, sock):
        self.sock = sock
        self.buf = b""

    def fill(self):
        data = self.sock.recv(1 << 20)
        if not data:
            raise EOFError
        self.buf += data

    def response(self, head_only=False):
        while b"\r\n\r\n" not in self.buf:
            self.fill()
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ")[1])
        hdrs = {}
        for line in lines[1:]:
            k, v = line.split(":", 1)
            hdrs[k.strip().lower()] = v.strip()
        n = 0 if head_only else int(hdrs.get("content-length", "0"))
        while len(self.buf) < n:
            self.fill()
        body, self.buf = self.buf[:n], self.buf[n:]
        return status, hdrs, body


def first_status(host, port, data, shut=True):
    s = connect(host, port, timeout=60)
    try:
        try:
            s.sendall(data)
            if shut:
                s.shutdown(socket.SHUT_WR)
        except OSError:
            pass
        r = Reader(s)
        try:
            while b"\r\n" not in r.buf:
                r.fill()
        except (EOFError, ConnectionResetError):
            pass
        line = r.buf.split(b"\r\n", 1)[0].decode("latin-1")
        return line.split(" ")[1] if line.startswith("HTTP/1.1 ") else "none"
    finally:
        s.close()


def status(host, port, *datas):
    for data in datas:
        print(first_status(host, port, unescape(data)), flush=True)
    return 0


def status_open(host, port, data):
    print(first_status(host, port, unescape(data), shut=False))
    return 0


def second(host, port, data):
    held = connect(host, port)
    try:
        print(first_status(host, port, unescape(data)))
    finally:
        held.close()
    return 0


def corpus_get(fields=b"", target=b"/c.ts"):
    """A GET of TARGET with Host and extra FIELDS, for the corpus."""
    return b"GET " + target + b" HTTP/1.1\r\nHost: t\r\n" + fields + b"\r\n"


def corpus(host, port, path):
    bad = 0
    for n, line in enumerate(open(path, encoding="utf-8"), 1):
        if not line.strip() or line.startswith("#"):
            continue
        label, expr = line.rstrip("\n").split("\t", 1)
        want, desc = label.split(" ", 1)
        data = eval(expr, {"G": corpus_get})  # our corpus, not input
        got = first_status(host, port, data)
        ok = got == want
        bad += not ok
        print(f"{'ok' if ok else 'fail'} {want} {got} {desc}", flush=True)
    return 0


def raw(host, port, data):
    s = connect(host, port)
    s.sendall(unescape(data))
    out = b""
    try:
        while True:
            d = s.recv(1 << 20)
            if not d:
                break
            out += d
    except (socket.timeout, ConnectionResetError):
        pass
    sys.stdout.buffer.write(out)
    return 0


def pipeline(host, port, name, path, k):
    data = open(path, "rb").read()
    rng = random.Random(1)
    reqs, want = b"", []
    for i in range(int(k)):
        a = rng.randrange(len(data))
        b = rng.randrange(a, len(data))
        close = "Connection: close\r\n" if i == int(k) - 1 else ""
        reqs += (f"GET /{name} HTTP/1.1\r\nHost: t\r\nRange: bytes={a}-{b}"
                 f"\r\n{close}\r\n").encode()
        want.append(data[a:b + 1])
    s = connect(host, port)
    s.sendall(reqs)
    r = Reader(s)
    for i, w in enumerate(want):
        st, _, body = r.response()
        if st != 206 or body != w:
            print(f"response {i}: status {st}, {len(body)} bytes, "
                  f"want 206 and {len(w)} bytes")
            return 1
    try:
        r.fill()
        print("connection still open after Connection: close")
        return 1
    except EOFError:
        pass
    print(f"{k} pipelined responses in order")
    return 0


def curl_ranges(url, path, k):
    import hashlib
    import subprocess
    import tempfile
    data = open(path, "rb").read()
    rng = random.Random(2)
    with tempfile.TemporaryDirectory() as d:
        cfg, want = [], []
        for i in range(int(k)):
            a = rng.randrange(len(data))
            b = rng.choice([rng.randrange(a, len(data)), ""])
            want.append(data[a:] if b == "" else data[a:b + 1])
            if i:
                cfg.append("next")
            cfg += [f'url = "{url}"', f'range = "{a}-{b}"',
                    f'output = "{d}/{i}"',
                    'write-out = "%{http_code} %{num_connects}\\n"']
        with open(f"{d}/cfg", "w") as f:
            f.write("\n".join(cfg) + "\n")
        res = subprocess.run(["curl", "-sS", "-K", f"{d}/cfg"],
                             capture_output=True, text=True)
        codes = res.stdout.split("\n")
        good = 0
        for i, w in enumerate(want):
            got = open(f"{d}/{i}", "rb").read()
            if hashlib.sha256(got).digest() == hashlib.sha256(w).digest() \
                    and codes[i].startswith("206"):
                good += 1
        conns = sum(int(c.split()[1]) for c in codes if c)
    print(f"{good}/{k} byte-exact, {conns} connection(s)")
    return 0


def keepalive(host, port, name, k):
    s = connect(host, port)
    r = Reader(s)
    for i in range(int(k)):
        s.sendall(f"GET /{name} HTTP/1.1\r\nHost: t\r\nRange: bytes=0-99"
                  "\r\n\r\n".encode())
        st, _, body = r.response()
        if st != 206 or len(body) != 100:
            print(f"request {i}: status {st}")
            return 1
    print(f"{k} requests on one connection")
    return 0


def stall(host, port, name, path, go, n):
    want = open(path, "rb").read()
    socks = []
    for _ in range(int(n)):
        s = connect(host, port, timeout=60)
        s.sendall(f"GET /{name} HTTP/1.1\r\nHost: t\r\n\r\n".encode())
        socks.append(s)
    readers = [Reader(s) for s in socks]
    for r in readers:
        while len(r.buf) < (1 << 20):
            r.fill()
    print("stalled", flush=True)
    while not os.path.exists(go):
        time.sleep(0.2)
    for r in readers:
        try:
            _, _, body = r.response()
            print("complete" if body == want else "corrupt")
        except (EOFError, OSError, ValueError, IndexError):
            print("cut")
    return 0


def trickle(host, port, name):
    req = f"GET /{name} HTTP/1.1\r\nHost: t\r\n" + "X-Slow: " + "a" * 200
    s = connect(host, port, timeout=120)
    start = time.monotonic()
    how = "open"
    for c in req.encode():
        try:
            s.send(bytes([c]))
        except OSError:
            how = "reset"
            break
        rd, _, _ = select.select([s], [], [], 1.0)
        if rd:
            try:
                d = s.recv(4096)
                how = d.split(b"\r\n")[0].decode() if d else "closed"
            except ConnectionResetError:
                how = "reset"
            break
    print(f"{how} after {time.monotonic() - start:.1f}s")
    return 0


def idle(host, port, name, n, until):
    # Ask on each as it connects, read the answers after: no round trip
    # each, and no connection waits for its head past the deadline.
    socks = []
    for _ in range(int(n)):
        s = connect(host, port, timeout=120)
        s.sendall(f"HEAD /{name} HTTP/1.1\r\nHost: t\r\n\r\n".encode())
        socks.append(s)
    for s in socks:
        Reader(s).response(head_only=True)
    print(f"opened {len(socks)}", flush=True)
    try:
        time.sleep(float(until))
    except ValueError:
        while not os.path.exists(until):
            time.sleep(0.2)
    alive = 0
    for s in socks:
        s.setblocking(False)
        try:
            s.recv(1)  # EOF or stray bytes: not an idle connection
        except BlockingIOError:
            alive += 1
        except OSError:
            pass
    print(f"alive {alive}")
    for s in socks:
        s.close()
    return 0


TCP_CLOSE = 7


def tcp_state(s):
    return s.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 8)[0]


def reset_early(s, head, got, length):
    """The connection is closed although the response cannot be complete
    in the receive queue: the server reset it (queued bytes stay readable,
    so a reader that trickles would not see the reset for hours).
    """
    if tcp_state(s) != TCP_CLOSE:
        return False
    queued = struct.unpack("i", fcntl.ioctl(s, termios.FIONREAD,
                                            bytes(4)))[0]
    return head is None or got + queued < head + length


def reader_main(host, port, name, path, *opts):
    """reader options:
    --close          send Connection: close (else keep-alive)
    --shut           shut the write side after the request
    --range A-B      ask for bytes A-B of FILE
    --rcvbuf N       SO_RCVBUF before connecting (a slow reader's window)
    --first N        read the first N body bytes at once
    --chunk N        then read N bytes per --interval seconds
    --interval S
    --ready FILE     create FILE once the first N bytes are in
    --go FILE        once FILE exists, read --then-chunk bytes per
    --then-chunk N   --then-interval seconds instead
    --then-interval S
    --give-up S      stop after S seconds and print "open"
    --trail DATA     send DATA (Python escapes) right after the request
    """
    o = {"--close": False, "--shut": False, "--range": None,
         "--rcvbuf": 0, "--first": 0, "--chunk": 1 << 20,
         "--interval": 0.0, "--ready": None, "--give-up": 3600.0,
         "--go": None, "--then-chunk": 1, "--then-interval": 1.0,
         "--trail": None}
    it = iter(opts)
    for k in it:
        o[k] = True if isinstance(o[k], bool) else next(it)
    want = open(path, "rb").read()
    hdr = f"GET /{name} HTTP/1.1\r\nHost: t\r\n"
    if o["--range"]:
        a, b = (int(x) for x in o["--range"].split("-"))
        want = want[a:b + 1]
        hdr += f"Range: bytes={a}-{b}\r\n"
    if o["--close"]:
        hdr += "Connection: close\r\n"
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if int(o["--rcvbuf"]):
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, int(o["--rcvbuf"]))
    s.settimeout(1.0)
    s.connect((host, int(port)))
    s.sendall((hdr + "\r\n").encode())
    if o["--trail"]:
        s.sendall(unescape(o["--trail"]))
    if o["--shut"]:
        s.shutdown(socket.SHUT_WR)
    start = time.monotonic()
    give_up = start + float(o["--give-up"])
    first, chunk = int(o["--first"]), int(o["--chunk"])
    interval = float(o["--interval"])
    got = bytearray()
    head = None
    how = "cut"
    ready = False
    while True:
        if head is not None and not ready and len(got) - head >= first:
            ready = True
            if o["--ready"]:
                open(o["--ready"], "w").close()
        if ready and o["--go"] and os.path.exists(o["--go"]):
            o["--go"] = None
            chunk = int(o["--then-chunk"])
            interval = float(o["--then-interval"])
        if ready and interval:
            time.sleep(interval)
            if time.monotonic() > give_up:
                how = "open"
                break
            if reset_early(s, head, len(got), len(want)):
                how = "reset"
                break
        n = chunk if ready else 1 << 20
        if head is not None and not o["--close"]:
            n = min(n, head + len(want) - len(got))
            if n == 0:
                how = "complete"
                break
        try:
            d = s.recv(n)
        except socket.timeout:
            if time.monotonic() > give_up:
                how = "open"
                break
            continue
        except ConnectionResetError:
            how = "reset"
            break
        if not d:
            if head is not None and got[head:] == want:
                how = "complete"
            break
        got += d
        if head is None and b"\r\n\r\n" in got[:65536]:
            head = got.index(b"\r\n\r\n") + 4
    body = got[head:] if head is not None else b""
    if how == "complete" and body != want:
        how = "corrupt"
    print(f"{how} {len(body)} of {len(want)} bytes in "
          f"{time.monotonic() - start:.1f}s", flush=True)
    s.close()
    return 0


def refused(host, port, n, cmd=None):
    socks = [connect(host, port, timeout=60) for _ in range(int(n))]
    if cmd is not None:
        subprocess.run(cmd, shell=True, check=True)
    got = {"503": 0, "none": 0, "other": 0}
    for s in socks:
        buf = b""
        try:
            while b"\r\n" not in buf:
                d = s.recv(4096)
                if not d:
                    break
                buf += d
        except OSError:
            pass
        line = buf.split(b"\r\n", 1)[0]
        key = "503" if line.startswith(b"HTTP/1.1 503 ") else \
            "none" if not buf else "other"
        got[key] += 1
        s.close()
    print(" ".join(f"{k}={v}" for k, v in got.items()))
    return 0


def hold(host, port, name, how, seconds):
    s = connect(host, port, timeout=60)
    if how == "idle":
        s.sendall(f"HEAD /{name} HTTP/1.1\r\nHost: t\r\n\r\n".encode())
        Reader(s).response(head_only=True)
    elif how == "eof":
        s.shutdown(socket.SHUT_WR)
    else:
        raise ValueError(how)
    print("ready", flush=True)
    time.sleep(float(seconds))
    s.close()
    return 0


def flood(host, port, n, seconds):
    # A connection the server resets at once may fail its connect() here
    # already, where a slow client reads the error after the handshake.
    socks, reset = [], 0
    for _ in range(int(n)):
        try:
            socks.append(connect(host, port, timeout=60))
        except ConnectionResetError:
            reset += 1
    print(f"opened {len(socks) + reset} ({reset} reset at once)", flush=True)
    time.sleep(float(seconds))
    for s in socks:
        s.close()
    return 0


def main(argv):
    cmds = {
        "status": lambda a: status(*a),
        "status-open": lambda a: status_open(*a),
        "second": lambda a: second(*a),
        "corpus": lambda a: corpus(*a),
        "raw": lambda a: raw(*a),
        "pipeline": lambda a: pipeline(*a),
        "keepalive": lambda a: keepalive(*a),
        "curl-ranges": lambda a: curl_ranges(*a),
        "trickle": lambda a: trickle(*a),
        "stall": lambda a: stall(*a),
        "idle": lambda a: idle(*a),
        "reader": lambda a: reader_main(*a),
        "refused": lambda a: refused(*a),
        "hold": lambda a: hold(*a),
        "flood": lambda a: flood(*a),
    }
    if len(argv) < 2 or argv[1] not in cmds:
        print(__doc__, file=sys.stderr)
        return 2
    return cmds[argv[1]](argv[2:])


if __name__ == "__main__":
    sys.exit(main(sys.argv))
