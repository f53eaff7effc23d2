#!/usr/bin/python3
"""check_io.py DUMP EXPECT CASE - the I/O events of `ringtrace dump --json`
against what the program (io_cases.c) says it did.

EXPECT holds one JSON object per call the program made: its pid and tid,
the operation, and the fields the event must carry with exactly those
values (descriptor, path, bytes asked, result, errno, error name...).
Per thread, the io events of the dump (rundowns aside) must be exactly the
expected ones, in order, no more and no fewer.  An expected rundown must be
among the process's rundown events.  An expected "path_unknown" means the
event carries no path.  Every event also satisfies the contract: errno 0 on
success; on failure, result is -errno and the error has its name.

Exit status 0 when everything agrees, 1 with a readable account otherwise.
"""
import json
import os
import sys

failures = []


def fail(message):
    failures.append(message)


def load(path):
    out = []
    if not os.path.exists(path):
        fail(f"{path}: missing (the program did not run?)")
        return out
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                out.append(json.loads(line))
            except ValueError as e:
                fail(f"{path}:{number}: not JSON ({e}): {line[:200]}")
    return out


def show(obj):
    return json.dumps(obj, sort_keys=True) if obj is not None else "(none)"


def mismatches(event, expected):
    """The fields of expected that event does not carry with its value."""
    bad = []
    for key, want in expected.items():
        if key in ("pid", "tid"):
            continue
        if key == "path_unknown":
            if event.get("path_unknown") is not True or "path" in event:
                bad.append("path_unknown")
            continue
        if event.get(key) != want:
            bad.append(key)
    return bad


def check_contract(event):
    """What every io event owes: errno and error consistent with result."""
    if event.get("op") in ("rundown", "named"):
        return
    result = event.get("result")
    if not isinstance(result, int):
        fail(f"an event without an integer result: {show(event)}")
        return
    if result >= 0 and event.get("errno") != 0:
        fail(f"a successful call with errno {event.get('errno')}: {show(event)}")
    if result < 0:
        if event.get("errno") != -result:
            fail(f"result {result} but errno {event.get('errno')}: {show(event)}")
        if not isinstance(event.get("error"), str) or not event.get("error"):
            fail(f"a failed call without the error's name: {show(event)}")
    if "path" not in event and event.get("path_unknown") is not True:
        fail(f"neither a path nor path_unknown: {show(event)}")


def compare_thread(tid, events, expected):
    """The thread's events against its expected calls; a diff around the first difference."""
    n = max(len(events), len(expected))
    for i in range(n):
        e = events[i] if i < len(events) else None
        x = expected[i] if i < len(expected) else None
        bad = ["(missing)"] if e is None else ["(extra)"] if x is None else mismatches(e, x)
        if x is not None and e is not None and e.get("op") != x.get("op"):
            bad = ["op"] + [b for b in bad if b != "op"]
        if not bad:
            continue
        lines = [f"thread {tid}: event {i} of {len(events)} (expected {len(expected)}) "
                 f"differs in {', '.join(bad)}"]
        for j in range(max(0, i - 2), min(n, i + 3)):
            mark = ">>" if j == i else "  "
            lines.append(f"  {mark} expected {show(expected[j] if j < len(expected) else None)}")
            lines.append(f"  {mark} got      {show(events[j] if j < len(events) else None)}")
        fail("\n".join(lines))
        return False
    return True


def stdio_totals(events, expected):
    """Bytes through the stdio calls on the case's file: what it holds, both ways."""
    paths = {x["path"] for x in expected if x["op"] == "fopen" and "path" in x}
    for path in sorted(paths):
        size = os.path.getsize(path)
        wrote = sum(e["result"] for e in events
                    if e.get("op") == "fwrite" and e.get("path") == path)
        read = sum(e["result"] for e in events
                   if e.get("op") == "fread" and e.get("path") == path and e["result"] > 0)
        if wrote != size or read != size:
            fail(f"{path}: {size} bytes on disk, fwrite events total {wrote}, "
                 f"fread events total {read}")
        else:
            print(f"{path}: {size} bytes written and read back through stdio, as recorded")


def main():
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    dump, expect_path, case = sys.argv[1:]
    objects = load(dump)
    expected = load(expect_path)
    io = [o for o in objects if o.get("kind") == "io"]
    if not io:
        kinds = sorted({str(o.get("kind")) for o in objects})
        fail(f"{dump}: no io events at all ({len(objects)} objects of kinds "
             f"{', '.join(kinds) or 'none'}): does this build decode RT_REC_IO records?")
    if not expected:
        fail(f"{expect_path}: the program expected nothing")
    if failures:
        report()
        return 1
    for e in io:
        check_contract(e)

    by_tid = {}
    for e in io:
        if e.get("op") != "rundown":
            by_tid.setdefault(e.get("tid"), []).append(e)
    want_by_tid = {}
    rundowns = []
    for x in expected:
        if x["op"] == "rundown":
            rundowns.append(x)
        else:
            want_by_tid.setdefault(x["tid"], []).append(x)

    compared = 0
    for tid, want in sorted(want_by_tid.items()):
        got = by_tid.get(tid, [])
        if compare_thread(tid, got, want):
            compared += len(want)
    for tid in sorted(set(by_tid) - set(want_by_tid), key=str):
        fail(f"thread {tid}: {len(by_tid[tid])} io events the program did not make, "
             f"the first: {show(by_tid[tid][0])}")
    for x in rundowns:
        found = [e for e in io if e.get("op") == "rundown" and e.get("pid", x["pid"]) == x["pid"]
                 and e.get("fd") == x["fd"]]
        if not any(not mismatches(e, x) for e in found):
            fail(f"process {x['pid']}: no rundown of descriptor {x['fd']} as {x['path']}; "
                 f"its rundowns of it: {', '.join(show(e) for e in found) or 'none'}")
    if case == "stdio":
        stdio_totals(io, expected)
    if failures:
        report()
        return 1
    print(f"{case}: {compared} events in {len(want_by_tid)} threads as the program made them, "
          f"{len(rundowns)} rundowns")
    return 0


def report():
    for f in failures[:20]:
        print("FAIL: " + f, file=sys.stderr)
    if len(failures) > 20:
        print(f"... and {len(failures) - 20} more failures", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
