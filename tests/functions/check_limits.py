#!/usr/bin/env python3
"""check_limits.py DUMP_JSON MIN_NS MAX_DEPTH - the calls `ringtrace report
-t MIN_NS -D MAX_DEPTH` must count, worked out from the events of `ringtrace
dump --json` on their own: one line "FUNCTION CALLS" per function, sorted
(MAX_DEPTH 0: no limit).

A reference written apart from the tool's call tree.  Each thread's calls
nest by the depth their events carry: an enter closes the open calls at its
depth or deeper (their exits are missing), an exit closes those deeper than
it, then its own call (an exit with no open call of its function at its
depth has no enter in the trace: not a call counted).  A call is timed up to
its exit, or up to the event that closed it, or, still open at the end, up
to its thread's last event.  It counts when it lasted MIN_NS or more, lies
at a level below MAX_DEPTH among its thread's open calls (0: the outermost),
and the call around it counts too."""
import collections
import json
import sys

EVENTS = ("enter", "exit", "trace", "log", "io")


class Call:
    def __init__(self, func, addr, depth, start, level, parent):
        self.func, self.addr, self.depth = func, addr, depth
        self.start, self.end = start, None
        self.level, self.parent = level, parent


def main():
    path, min_ns, max_depth = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    stacks = collections.defaultdict(list)
    last = {}
    calls = []

    def close(tid, end):
        call = stacks[tid].pop()
        call.end = end

    with open(path) as f:
        for line in f:
            o = json.loads(line)
            if o.get("kind") not in EVENTS or "ts_ns" not in o:
                continue
            tid, ts = o["tid"], o["ts_ns"]
            last[tid] = max(ts, last.get(tid, ts))
            stack = stacks[tid]
            if o["kind"] == "enter":
                while stack and stack[-1].depth >= o["depth"]:
                    close(tid, ts)
                call = Call(o.get("func", ""), o["addr"], o["depth"], ts, len(stack),
                            stack[-1] if stack else None)
                stack.append(call)
                calls.append(call)
            elif o["kind"] == "exit":
                while stack and stack[-1].depth > o["depth"]:
                    close(tid, ts)
                if stack and stack[-1].depth == o["depth"]:
                    close(tid, ts)  # its own call, or another whose exit is missing
    for tid, stack in stacks.items():
        while stack:
            close(tid, last[tid])

    def counted(call):
        while call:
            if call.end - call.start < min_ns or (max_depth and call.level >= max_depth):
                return False
            call = call.parent
        return True

    counts = collections.Counter(c.func for c in calls if counted(c))
    for func in sorted(counts):
        print(func, counts[func])


main()
