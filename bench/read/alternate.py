#!/usr/bin/env python3
"""Times whole commands in alternating rounds from one process and prints each one's median
wall time: how two builds (or a build and its limit) are compared on a noisy machine, where
only a comparison made in the same minutes holds (bench/read/RESULTS.md).

usage: python3 bench/read/alternate.py ROUNDS "CMD ARGS..." "CMD ARGS..." ...
e.g.:  python3 bench/read/alternate.py 41 "target/release/examples/quickxml_loop s50k.xml" \\
           "target/release/mapwright read s50k.xml --format text"
"""
import shlex
import statistics
import subprocess
import sys
import time


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    rounds = int(sys.argv[1])
    cmds = [shlex.split(c) for c in sys.argv[2:]]
    times = [[] for _ in cmds]
    for _ in range(rounds):
        for i, cmd in enumerate(cmds):
            start = time.perf_counter()
            subprocess.run(cmd, stdout=subprocess.DEVNULL, check=True)
            times[i].append(time.perf_counter() - start)
    for label, t in zip(sys.argv[2:], times):
        t.sort()
        q = len(t) // 4
        print("%-70s median %.2f ms  p25 %.2f  p75 %.2f" % (label[-70:], 1000 * statistics.median(t), 1000 * t[q], 1000 * t[-1 - q]))


if __name__ == "__main__":
    main()
