#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""A blocking SO_TXTIME sender with a tiny socket buffer, for tsock's drop
tests: it can only keep going if the qdisc gives back the memory of the
packets it frees. Each datagram is stamped AHEAD_US after the moment it is
sent (CLOCK_MONOTONIC). SO_SNDTIMEO bounds every send, so a sender whose
buffer is never given back stops instead of hanging.

usage: tsock_sender.py ADDR PORT COUNT [AHEAD_US [SNDBUF [TIMEOUT_S]]]
prints "sent=N", exits 0 if all COUNT went out, 1 if a send timed out
"""
import socket
import struct
import sys
import time

SO_TXTIME = 61
SCM_TXTIME = SO_TXTIME


def main():
    addr, port, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    ahead = int(sys.argv[4]) if len(sys.argv) > 4 else 2000
    sndbuf = int(sys.argv[5]) if len(sys.argv) > 5 else 1
    timeout = float(sys.argv[6]) if len(sys.argv) > 6 else 10

    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    # The kernel raises this to its minimum: a few packets' worth.
    s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, sndbuf)
    s.setsockopt(socket.SOL_SOCKET, SO_TXTIME,
                 struct.pack("iI", time.CLOCK_MONOTONIC, 0))
    s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO,
                 struct.pack("ll", int(timeout), 0))
    payload = b"\x5a" * 200
    sent = 0
    try:
        for _ in range(count):
            t = time.clock_gettime_ns(time.CLOCK_MONOTONIC) + ahead * 1000
            s.sendmsg([payload],
                      [(socket.SOL_SOCKET, SCM_TXTIME, struct.pack("Q", t))],
                      0, (addr, port))
            sent += 1
    except (BlockingIOError, TimeoutError) as e:
        print(f"# send {sent} failed: {e}", file=sys.stderr)
    print(f"sent={sent}")
    return 0 if sent == count else 1


if __name__ == "__main__":
    sys.exit(main())
