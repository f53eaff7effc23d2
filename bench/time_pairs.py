#!/usr/bin/env python3
"""time_pairs.py [-n PAIRS] [--cpu CPU] BEFORE AFTER [ARGS...] - how long AFTER
takes against BEFORE, run in pairs.

Each pair runs the two programs back to back with the same ARGS (output to
/dev/null, pinned to CPU with taskset), their order alternating, and takes
the ratio of their user and system times. Printed: the median ratio
AFTER/BEFORE and the quartiles around it. A machine whose speed drifts moves
both runs of a pair together, so their ratio holds still where the best of
many runs of each does not; the quartiles say how steady it was.

  python3 bench/time_pairs.py -n 60 old/ringtrace BUILD/ringtrace dump --json FILE
"""
import argparse
import resource
import statistics
import subprocess
import sys


def cpu_seconds(argv):
    """argv's user and system time, in microseconds (os.times() counts ticks)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    if subprocess.run(argv, stdout=subprocess.DEVNULL).returncode != 0:
        sys.exit("time_pairs: %s failed" % " ".join(argv))
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main():
    parser = argparse.ArgumentParser(
        description="AFTER's time against BEFORE's, run in alternating pairs."
    )
    parser.add_argument("-n", "--pairs", type=int, default=60, help="pairs to run (default 60)")
    parser.add_argument("--cpu", default="0", help="the CPU both run on (default 0)")
    parser.add_argument("before")
    parser.add_argument("after")
    parser.add_argument("args", nargs=argparse.REMAINDER)
    o = parser.parse_args()
    if o.pairs < 4:
        parser.error("at least 4 pairs")
    pin = ["taskset", "-c", o.cpu]
    ratios = []
    for i in range(o.pairs):
        if i % 2:
            after = cpu_seconds(pin + [o.after] + o.args)
            before = cpu_seconds(pin + [o.before] + o.args)
        else:
            before = cpu_seconds(pin + [o.before] + o.args)
            after = cpu_seconds(pin + [o.after] + o.args)
        if before <= 0:
            sys.exit("time_pairs: BEFORE took no measurable time; give it more work")
        ratios.append(after / before)
    ratios.sort()
    n = len(ratios)
    print(
        "after/before: median %.4f (quartiles %.4f, %.4f; %d pairs)"
        % (statistics.median(ratios), ratios[n // 4], ratios[(3 * n) // 4], n)
    )


if __name__ == "__main__":
    main()
