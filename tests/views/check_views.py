"""check_views.py - `ringtrace replay` and `ringtrace report` of
tests/functions/calls.c, against the calls that program makes
(tests/functions/check_calls.py expected()).

    check_views.py replay REPLAY_TEXT ADDRESSES SCENARIO
    check_views.py report MERGED_JSON PER_THREAD_JSON SCENARIO
    check_views.py folded FOLDED_TEXT SCENARIO
    check_views.py cut REPLAY_TEXT ADDRESSES SCENARIO FIRST LAST

replay: per thread, the calls as (function, indentation level) are exactly
the program's calls with their depths; every '}' closes the call opened at
its level; every closed call has a duration; nothing is marked.
report: calls per function (merged, and per thread) are the program's;
total >= self >= 0, nothing incomplete; main's total is at least the sum
of its callees' totals.  folded: the paths are exactly the program's call
paths, weights integers >= 0.  cut: the replay of events FIRST..LAST of a
one-thread scenario (`ringtrace cut --from seq:FIRST --to seq:LAST`) shows
those events' calls, the calls still open marked "not returned" and exits
before FIRST marked "enter not recorded".  Prints what differs.
"""
import json
import os
import re
import sys
from collections import Counter

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "functions"))
from check_calls import expected  # noqa: E402

LINE = re.compile(r"^(.{10}) \[ *(\d+)\] \| ( *)(.*)$")
errors = []


def read_names(path):
    names = {}
    with open(path) as f:
        for line in f:
            name, addr = line.split()
            names["0x%x" % int(addr, 16)] = name
    return names


def name_of(names, text):
    """A function as replay names it: its name, or its address (no symbols)."""
    return names.get(text, text)


def parse_replay(path, names):
    """Per tid: the list of (what, name, level, duration, mark) lines."""
    threads = {}
    with open(path) as f:
        lines = f.read().splitlines()
    if not lines or not lines[0].startswith("# DURATION"):
        errors.append("replay: no heading")
        return threads
    for n, line in enumerate(lines[1:], 2):
        m = LINE.match(line)
        if not m:
            errors.append("replay line %d: not a replay line: %r" % (n, line))
            continue
        duration, tid, indent, body = m.groups()
        if len(indent) % 2:
            errors.append("replay line %d: odd indentation" % n)
        level = len(indent) // 2
        dur = duration.strip() or None
        ev = None
        mm = re.match(r"^(\S+)\(\) \{$", body)
        if mm:
            ev = ("open", mm.group(1), None)
        mm = mm or re.match(r"^(\S+)\(\);$", body)
        if mm and not ev:
            ev = ("call", mm.group(1), None)
        mm2 = re.match(r"^(\S+)\(\)(;)? /\* (.*) \*/$", body)
        if mm2 and not ev:
            ev = ("call", mm2.group(1), mm2.group(3))
        mm3 = re.match(r"^\} /\* (\S+?)(?:: (.*))? \*/$", body)
        if mm3:
            ev = ("close", mm3.group(1), mm3.group(2))
        if not ev and body.startswith("/* ") and body.endswith(" */"):
            ev = ("comment", body, None)
        if not ev:
            errors.append("replay line %d: what is it? %r" % (n, line))
            continue
        what, name, mark = ev
        if what != "comment":
            name = name_of(names, name)
        threads.setdefault(int(tid), []).append((what, name, level, dur, mark))
    return threads


def tree_of(lines, tid):
    """The calls (name, level) and the marks, checking that '}' closes its '{'."""
    calls, marks, stack = [], [], []
    for what, name, level, dur, mark in lines:
        if what in ("open", "call"):
            if level != len(stack):
                errors.append("thread %d: %s at level %d inside %d open calls" %
                              (tid, name, level, len(stack)))
            calls.append((name, level))
            if what == "open":
                stack.append(name)
            elif mark:
                marks.append((mark, name, level))
            elif not dur:
                errors.append("thread %d: call of %s without a duration" % (tid, name))
        elif what == "close":
            if mark == "enter not recorded":
                marks.append((mark, name, level))
                continue
            if not stack or stack[-1] != name or level != len(stack) - 1:
                errors.append("thread %d: } of %s at level %d closes %s" %
                              (tid, name, level, stack))
                break
            stack.pop()
            if mark:
                marks.append((mark, name, level))
            elif not dur:
                errors.append("thread %d: close of %s without a duration" % (tid, name))
    if stack:
        errors.append("thread %d: left open without a mark: %s" % (tid, stack))
    return calls, marks


def want_trees(scenario):
    return [[(name, depth) for tag, name, depth in t if tag == "enter"]
            for t in expected(scenario)]


def check_replay(path, addresses, scenario):
    threads = parse_replay(path, read_names(addresses))
    got = []
    for tid, lines in threads.items():
        calls, marks = tree_of(lines, tid)
        if marks:
            errors.append("thread %d: marked calls in a whole trace: %s" % (tid, marks))
        comments = [l for l in lines if l[0] == "comment"]
        if any("lost" in c[1] for c in comments):
            errors.append("thread %d: losses: %s" % (tid, comments))
        # the program's RT_TRACE("leaf", n) inside every leaf call
        if [c[1][3:7] for c in comments] != ["leaf"] * len(comments) or not comments:
            errors.append("thread %d: trace events %s" % (tid, comments))
        got.append(calls)
    match_threads(want_trees(scenario), got)
    return len(got)


def match_threads(want, got):
    unmatched = list(got)
    for i, w in enumerate(want):
        if w in unmatched:
            unmatched.remove(w)
        else:
            errors.append("expected thread %d not found:\n  %s" % (i, w))
    for g in unmatched:
        errors.append("unexpected thread:\n  %s" % g)


def read_rows(path):
    with open(path) as f:
        return [json.loads(line) for line in f]


def check_rows(rows, what):
    for r in rows:
        if not (r["total_ns"] >= r["self_ns"] >= 0) or r["incomplete"] != 0 or \
           r["max_ns"] < r["avg_ns"] or r["calls"] <= 0:
            errors.append("%s: row %s" % (what, r))


def children_of(thread, parent):
    """The functions parent calls directly (depth + 1), in this thread."""
    kids, stack = set(), []
    for tag, name, depth in thread:
        if tag == "enter":
            if stack and stack[-1] == parent:
                kids.add(name)
            stack.append(name)
        else:
            stack.pop()
    return kids


def check_report(merged, per_thread, scenario):
    threads = expected(scenario)
    want = Counter(name for t in threads for tag, name, _ in t if tag == "enter")
    rows = read_rows(merged)
    check_rows(rows, "merged")
    got = Counter()
    for r in rows:
        got[r["function"]] += r["calls"]
    if got != want:
        errors.append("merged calls %s, expected %s" % (dict(got), dict(want)))
    if [r["total_ns"] for r in rows] != sorted((r["total_ns"] for r in rows), reverse=True):
        errors.append("merged rows not sorted by total")
    rows = read_rows(per_thread)
    check_rows(rows, "per thread")
    by_tid = {}
    for r in rows:
        by_tid.setdefault(r["tid"], {})[r["function"]] = r
    want_threads = [Counter(name for tag, name, _ in t if tag == "enter") for t in threads]
    got_threads = [Counter({f: r["calls"] for f, r in fs.items()}) for fs in by_tid.values()]
    match_threads(want_threads, got_threads)
    main = [fs for fs in by_tid.values() if "main" in fs]
    if len(main) != 1:
        errors.append("main in %d threads" % len(main))
    else:
        fs = main[0]
        kids = children_of(threads[0], "main")
        total = sum(fs[k]["total_ns"] for k in kids)
        if fs["main"]["total_ns"] < total:
            errors.append("main's total %d < its callees' %d" % (fs["main"]["total_ns"], total))


def paths_of(thread):
    paths, stack = set(), []
    for tag, name, depth in thread:
        if tag == "enter":
            stack.append(name)
            paths.add(";".join(stack))
        else:
            stack.pop()
    return paths


def check_folded(path, scenario):
    want = set()
    for t in expected(scenario):
        want |= paths_of(t)
    got = set()
    with open(path) as f:
        for line in f:
            m = re.match(r"^(\S+) (\d+)$", line.rstrip("\n"))
            if not m:
                errors.append("folded: %r" % line)
                continue
            if m.group(1) in got:
                errors.append("folded: %s twice" % m.group(1))
            got.add(m.group(1))
    if got != want:
        errors.append("folded paths: missing %s, unexpected %s" %
                      (sorted(want - got), sorted(got - want)))


def check_cut(path, addresses, scenario, first, last):
    (events,) = expected(scenario)  # one thread
    part = events[first:last + 1]
    # what the part shows: exits before its enters, calls, calls left open
    want_calls, want_marks, stack = [], [], []
    for tag, name, depth in part:
        if tag == "enter":
            want_calls.append((name, len(stack)))
            stack.append(name)
        elif stack:
            stack.pop()
        else:
            want_marks.append(("enter not recorded", name, 0))
    for level in reversed(range(len(stack))):
        want_marks.append(("not returned", stack[level], level))
    threads = parse_replay(path, read_names(addresses))
    if len(threads) != 1:
        errors.append("cut: %d threads" % len(threads))
        return
    (tid, lines), = threads.items()
    calls, marks = tree_of(lines, tid)
    if calls != want_calls:
        errors.append("cut: calls %s, expected %s" % (calls, want_calls))
    if marks != want_marks:
        errors.append("cut: marks %s, expected %s" % (marks, want_marks))


def main():
    mode, args = sys.argv[1], sys.argv[2:]
    if mode == "replay":
        check_replay(*args)
    elif mode == "report":
        check_report(*args)
    elif mode == "folded":
        check_folded(*args)
    elif mode == "cut":
        check_cut(args[0], args[1], args[2], int(args[3]), int(args[4]))
    else:
        errors.append("unknown mode %s" % mode)
    for e in errors:
        print("check_views: %s: %s" % (mode, e), file=sys.stderr)
    if not errors:
        print("check_views: %s %s: as expected" % (mode, " ".join(args[-1:])))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
