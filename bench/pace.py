#!/usr/bin/python3 -S
# SPDX-License-Identifier: GPL-2.0
"""A live source that costs little: write FILE to stdout over and over at
RATE bytes a second, in 20 ms steps, for bench/pair-live.sh. (live_tool.py
gen builds every packet in Python, which costs a guest under TCG about
half a CPU at 4 Mbit/s and would drown what the benchmark measures.)

usage: pace.py FILE RATE
"""
import os
import sys
import time


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    with open(sys.argv[1], "rb") as f:
        data = f.read()
    rate = float(sys.argv[2])
    out = sys.stdout.buffer
    step = 0.02
    t0 = time.monotonic()
    sent = 0
    pos = 0
    while True:
        due = int((time.monotonic() - t0 + step) * rate) - sent
        while due > 0:
            n = min(due, len(data) - pos)
            out.write(data[pos:pos + n])
            pos = (pos + n) % len(data)
            sent += n
            due -= n
        out.flush()
        # what was written is due by the end of this step: sleep to it
        ahead = t0 + sent / rate - time.monotonic()
        if ahead > 0:
            time.sleep(ahead)


if __name__ == "__main__":
    try:
        main()
    except BrokenPipeError:
        os._exit(0)
