#!/usr/bin/env python3
"""by_arg_check.py DUMP.jsonl BY_ARG.jsonl TAG N [--top N] [--per-thread]

Recompute `ringtrace analyze by-arg --json --tag TAG --arg N` from
`ringtrace dump --json` of the same input, by the rules docs/ANALYZE.md
gives: a span's start (dump's "span":"begin") lasts until the innermost
open end of the same name on its thread; any other TAG event holds its
thread until the thread's next event of any kind.  Every row is compared
exactly: counts, shares as printed (6 decimals), times, nearest-rank p50
and p99 (when the row says they are exact).  Exits 1 on a difference.
"""
import json
import math
import sys
from collections import defaultdict


def fail(message):
    print("by_arg_check: " + message, file=sys.stderr)
    sys.exit(1)


def quantile(values, p):
    if not values:
        return 0
    values = sorted(values)
    return values[max(1, math.ceil(p * len(values) - 1e-9)) - 1]


def main():
    args = sys.argv[1:]
    top = 20
    per_thread = False
    if "--per-thread" in args:
        per_thread = True
        args.remove("--per-thread")
    if "--top" in args:
        i = args.index("--top")
        top = int(args[i + 1])
        del args[i:i + 2]
    dump_path, out_path, tag, n = args[0], args[1], args[2], int(args[3])
    events = [json.loads(line) for line in open(dump_path)]
    rows = [json.loads(line) for line in open(out_path)]

    counts = defaultdict(int)
    durations = defaultdict(list)
    unclosed = defaultdict(int)
    no_arg = orphans = 0
    spans = False
    held = {}  # thread -> (key, ts)
    stacks = defaultdict(list)
    names = {}
    for ev in events:
        # a loss ends nothing; a thread's kept last event (dump's "last_event",
        # shown when its record is not in the stream) is not an event of it
        if ev["kind"] in ("lost", "last_event") or "ts_ns" not in ev:
            continue
        thread = (ev.get("pid"), ev["tid"])
        if ev.get("thread") and thread not in names:
            names[thread] = ev["thread"][:31]
        ts = ev["ts_ns"]
        if thread in held:
            key, start = held.pop(thread)
            for k in key:
                durations[k].append(ts - start)
        mine = ev["kind"] == "trace" and ev.get("tag") == tag
        span = ev.get("span") if mine else None
        if span == "end":
            if stacks[thread]:
                key, start = stacks[thread].pop()
                for k in key:
                    durations[k].append(ts - start)
            else:
                orphans += 1
            continue
        if not mine:
            continue
        if span == "begin":
            spans = True
        if len(ev["args"]) <= n:
            # not grouped; a begin is a span all the same, that its end closes
            no_arg += 1
            if span == "begin":
                stacks[thread].append(([], ts))
            continue
        value = ev["args"][n]
        key = [("value", value)]
        if per_thread:
            key.append(("thread_value", value, thread))
        for k in key:
            counts[k] += 1
        if span == "begin":
            stacks[thread].append((key, ts))
        else:
            held[thread] = (key, ts)
    for key, _ in held.values():
        for k in key:
            unclosed[k] += 1
    for stack in stacks.values():
        for key, _ in stack:
            for k in key:
                unclosed[k] += 1

    summary = [r for r in rows if r.get("row") == "summary"]
    if len(summary) != 1:
        fail("%d summary rows" % len(summary))
    s = summary[0]
    values = [k for k in counts if k[0] == "value"]
    want = {
        "tag": tag, "arg": n, "time": "span" if spans else "hold",
        "events": sum(counts[k] for k in values),
        "time_ns": sum(sum(durations[k]) for k in values),
        "values": len(values), "other_events": 0, "no_arg": no_arg, "orphan_ends": orphans,
    }
    for key, value in want.items():
        if s.get(key) != value:
            fail("summary: %s is %s, expected %s" % (key, s.get(key), value))

    for kind in ("value", "thread_value") if per_thread else ("value",):
        keys = [k for k in counts if k[0] == kind]
        total = sum(counts[k] for k in keys)
        total_time = sum(sum(durations[k]) for k in keys)
        def order(k):
            pid, tid = k[2] if len(k) > 2 else (0, 0)
            return (-counts[k], k[1], pid or 0, tid)

        keys.sort(key=order)
        got = [r for r in rows if r.get("row") == kind]
        if len(got) != min(top, len(keys)):
            fail("%d %s rows, expected %d" % (len(got), kind, min(top, len(keys))))

        def compare(name, row, count, d, open_count, values_field=None):
            want = {
                "count": count, "count_share": float("%.6f" % (count / total if total else 0)),
                "time_ns": sum(d),
                "time_share": float("%.6f" % (sum(d) / total_time if total_time else 0)),
                "timed": len(d), "unclosed": open_count,
            }
            if values_field is not None:
                want["values"] = values_field
            if row.get("exact"):
                want["p50_ns"] = quantile(d, 0.5)
                want["p99_ns"] = quantile(d, 0.99)
            elif len(d) <= 4096:
                fail("%s: %d durations, not said exact" % (name, len(d)))
            for key, value in want.items():
                if row.get(key) != value:
                    fail("%s: %s is %s, expected %s" % (name, key, row.get(key), value))

        for row, k in zip(got, keys):
            if row["value"] != k[1]:
                fail("%s row for %s, expected %s in that place" % (kind, row["value"], k[1]))
            if kind == "thread_value":
                if row["tid"] != k[2][1] or row["thread"] != names.get(k[2], ""):
                    fail("%s row %s: thread, expected %s" % (kind, row, k[2]))
            compare("%s %s" % (kind, k[1:]), row, counts[k], durations[k], unclosed[k])
        rest = keys[top:]
        rest_rows = [r for r in rows if r.get("row") == ("rest" if kind == "value" else "thread_rest")]
        if len(rest_rows) != (1 if rest else 0):
            fail("%d rest rows for %d more %s rows" % (len(rest_rows), len(rest), kind))
        if rest:
            row = rest_rows[0]
            compare("rest of %s" % kind, row, sum(counts[k] for k in rest),
                    [x for k in rest for x in durations[k]], sum(unclosed[k] for k in rest),
                    len(rest))
    print("by_arg_check: %s arg %d: %d events, %d values: all rows match" %
          (tag, n, want["events"], want["values"]))


main()
