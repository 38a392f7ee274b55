#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Hold N HTTP responses of a live channel open, reading nothing: the
watchers of bench/live-fanout.sh (not a benchmark).

  watchers.py HOST PORT NAME N GO

Opens N connections to HOST:PORT, at most BATCH connecting at a time,
sends each "GET /NAME HTTP/1.1", prints "opened N" once every one is
connected and its request sent, then waits until the file GO exists and
closes them all. It reads nothing: a response's few bytes a chunk stay
in the socket's receive buffer, so a benchmark of a few dozen small
chunks neither fills it nor costs this process anything per chunk.
Exit 1 if a connection fails.
"""
import os
import selectors
import socket
import sys
import time

BATCH = 256


def open_all(host, port, name, n):
    req = f"GET /{name} HTTP/1.1\r\nHost: {host}\r\n\r\n".encode()
    socks = []
    sel = selectors.DefaultSelector()
    pending = 0
    while len(socks) < n or pending:
        while len(socks) < n and pending < BATCH:
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.setblocking(False)
            s.connect_ex((host, port))
            sel.register(s, selectors.EVENT_WRITE)
            socks.append(s)
            pending += 1
        for key, _ in sel.select(timeout=60):
            s = key.fileobj
            sel.unregister(s)
            pending -= 1
            err = s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
            if err:
                sys.exit(f"watchers: connect: {os.strerror(err)}")
            s.setblocking(True)
            s.sendall(req)
    return socks


def main(argv):
    host, port, name, n, go = argv[1], int(argv[2]), argv[3], int(argv[4]), argv[5]
    socks = open_all(host, port, name, n)
    print(f"opened {len(socks)}", flush=True)
    while not os.path.exists(go):
        time.sleep(0.2)
    for s in socks:
        s.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
