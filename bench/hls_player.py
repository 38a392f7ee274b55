#!/usr/bin/python3 -S
# SPDX-License-Identifier: GPL-2.0
"""An HLS live player without the decoding, the client of nginx in
bench/pair-live.sh: for SECONDS it reloads the playlist at URL every
RELOAD seconds and fetches each segment newer than the last it fetched,
starting at the newest listed, over one kept-alive HTTP/1.1 connection
(as players do; a closed connection is opened again). Prints the
segment bytes it got; on stderr, if any was missed or it got nothing,
how many playlists it loaded, segments it got and segments gone before
it asked for them (HTTP 404: the packager had removed them), which a
player that falls behind meets.

usage: hls_player.py URL SECONDS [RELOAD]
"""
import http.client
import re
import sys
import time
import urllib.parse


class Conn:
    """One kept-alive connection to the server; get() reopens it once
    if the server closed it, and gives status 0 if that fails too."""

    def __init__(self, host, port):
        self.host, self.port, self.c = host, port, None

    def get(self, path):
        for _ in range(2):
            if self.c is None:
                self.c = http.client.HTTPConnection(self.host, self.port,
                                                    timeout=30)
            try:
                self.c.request("GET", path)
                r = self.c.getresponse()
                return r.status, r.read()
            except (http.client.HTTPException, OSError):
                self.c.close()
                self.c = None
        return 0, b""


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    url = urllib.parse.urlsplit(sys.argv[1])
    secs = float(sys.argv[2])
    reload_s = float(sys.argv[3]) if len(sys.argv) == 4 else 0.5
    base = url.path.rsplit("/", 1)[0]
    conn = Conn(url.hostname, url.port or 80)
    end = time.monotonic() + secs
    last = None
    got = loads = segs = missed = 0
    while time.monotonic() < end:
        status, body = conn.get(url.path)
        loads += 1
        listed = [int(n) for n in
                  re.findall(rb"^seg(\d+)\.ts$", body, re.M)] \
            if status == 200 else []
        if listed and last is None:
            last = listed[-1] - 1      # the first look: the newest only
        for n in listed:
            if n <= last or time.monotonic() >= end:
                continue
            status, body = conn.get(f"{base}/seg{n}.ts")
            if status == 200:
                got += len(body)
                segs += 1
            else:
                missed += 1
            last = n
        time.sleep(reload_s)
    if missed or not got:
        print(f"hls_player: {loads} playlist loads, {segs} segments got, "
              f"{missed} missed", file=sys.stderr)
    print(got)


if __name__ == "__main__":
    main()
