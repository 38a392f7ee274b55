#!/usr/bin/python3 -S
# SPDX-License-Identifier: GPL-2.0
#
# A fixed amount of CPU work, for bench/emulation.sh.
#
# usage: periodic.py PERIOD_MS ITERATIONS SECONDS
#
# Every PERIOD_MS milliseconds for SECONDS seconds, count ITERATIONS
# times in a loop, then sleep until the next period (catching up at once
# on periods it fell behind on). With PERIOD_MS 0, count ITERATIONS
# once and end. Prints to stdout the periods it ran and the CPU seconds
# it used (user + system), so that a caller sees the work was the same.
import os
import sys
import time


def main():
    period = float(sys.argv[1]) / 1000
    n = int(sys.argv[2])
    secs = float(sys.argv[3])
    t0 = os.times()
    periods = 0
    if period == 0:
        for _ in range(n):
            pass
        periods = 1
    else:
        end = time.monotonic() + secs
        due = time.monotonic()
        while time.monotonic() < end:
            for _ in range(n):
                pass
            periods += 1
            due += period
            ahead = due - time.monotonic()
            if ahead > 0:
                time.sleep(ahead)
    t1 = os.times()
    cpu = t1.user + t1.system - t0.user - t0.system
    print("%d %.2f" % (periods, cpu))


if __name__ == "__main__":
    main()
