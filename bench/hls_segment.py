#!/usr/bin/python3 -S
# SPDX-License-Identifier: GPL-2.0
"""A minimal HLS live packager, the peer of kvod's live channels in
bench/pair-live.sh: cut the MPEG-TS stream on stdin into segments of
PACKETS 188-byte packets, DIR/segN.ts, and keep DIR/live.m3u8 listing the
newest KEEP of them (each written whole, then renamed into place, as
packagers do; older segments are removed). A segment's duration in the
playlist is SECONDS.

usage: hls_segment.py DIR PACKETS SECONDS KEEP
"""
import os
import sys


def put(path, data):
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.rename(tmp, path)


def playlist(first, last, secs):
    lines = ["#EXTM3U", "#EXT-X-VERSION:3",
             f"#EXT-X-TARGETDURATION:{max(1, round(secs))}",
             f"#EXT-X-MEDIA-SEQUENCE:{first}"]
    for n in range(first, last + 1):
        lines += [f"#EXTINF:{secs:.3f},", f"seg{n}.ts"]
    return ("\n".join(lines) + "\n").encode()


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    out, per, secs, keep = (sys.argv[1], int(sys.argv[2]),
                            float(sys.argv[3]), int(sys.argv[4]))
    need = per * 188
    src = sys.stdin.buffer
    buf = bytearray()
    seq = 0
    while True:
        data = src.read1(1 << 16)
        if not data:
            return
        buf += data
        while len(buf) >= need:
            put(f"{out}/seg{seq}.ts", bytes(buf[:need]))
            del buf[:need]
            first = max(0, seq - keep + 1)
            put(f"{out}/live.m3u8", playlist(first, seq, secs))
            if first >= 2:
                try:
                    os.unlink(f"{out}/seg{first - 2}.ts")
                except FileNotFoundError:
                    pass
            seq += 1


if __name__ == "__main__":
    main()
