#!/usr/bin/env python3
"""check_analyze.py - `ringtrace analyze spans|latency --json` of an input
against the same figures computed here from `ringtrace dump --json` of it.

    check_analyze.py spans DUMP ANALYZE [--per-thread] [--expect NAME=COUNT]...
    check_analyze.py latency DUMP ANALYZE --from A --to B [--key N] [--per-thread]

Counts, totals, min and max must be equal; quantiles equal while a row has
at most 4096 values, within 1/256 of the value past that (the sketch).  The
rules are the analyzers' own (docs/ANALYZE.md), computed from the events;
spans are paired by the span tracker's rules (tests/lib/span_rules.py).
"""
import argparse
import json
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import span_rules  # noqa: E402  the tracker's rules, written again

EXACT_MAX = 4096
failures = []


def fail(message):
    failures.append(message)
    if len(failures) <= 30:
        print("check_analyze: " + message, file=sys.stderr)


def nearest_rank(values, p):
    n = len(values)
    rank = int(p * n)
    if rank < p * n:
        rank += 1
    return values[max(rank, 1) - 1]


class Figures:
    def __init__(self):
        self.values = []
        self.counts = {}

    def add(self, key):
        self.counts[key] = self.counts.get(key, 0) + 1


def compare(label, expected, row, count_keys):
    values = sorted(expected.values)
    n = len(values)
    if row["count"] != n:
        fail(f"{label}: count {row['count']}, expected {n}")
        return
    if row["total_ns"] != sum(values):
        fail(f"{label}: total_ns {row['total_ns']}, expected {sum(values)}")
    want = {"min_ns": values[0] if n else 0, "max_ns": values[-1] if n else 0}
    for k, v in want.items():
        if row[k] != v:
            fail(f"{label}: {k} {row[k]}, expected {v}")
    if row["exact"] != (n <= EXACT_MAX):
        fail(f"{label}: exact is {row['exact']} for {n} values")
    for key, p in (("p50_ns", 0.5), ("p90_ns", 0.9), ("p99_ns", 0.99)):
        v = nearest_rank(values, p) if n else 0
        if n <= EXACT_MAX:
            if row[key] != v:
                fail(f"{label}: {key} {row[key]}, expected {v}")
        elif abs(row[key] - v) > v / 256 + 1:
            fail(f"{label}: {key} {row[key]} is more than 0.4% from {v}")
    for key in count_keys:
        if row.get(key) != expected.counts.get(key, 0):
            fail(f"{label}: {key} {row.get(key)}, expected {expected.counts.get(key, 0)}")


def events(path):
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line:
                yield json.loads(line)


def dump_has_pids(path):
    """dump --json names the process only when it shows more than one."""
    return any("pid" in e for e in events(path))


def pid_of(row, pids):
    return row["pid"] if pids else 0


def spans(args):
    """The figures of each name (and thread), from the tracker's rules (tests/lib/span_rules.py)."""
    rows = {}  # (kind, name) -> Figures
    threads = {}  # (kind, name, pid, tid) -> Figures
    names = {}
    dump = [e for e in events(args.dump) if "ts_ns" in e]
    for e in dump:
        if span_rules.what(e):
            names[(e.get("pid", 0), e["tid"])] = e.get("thread", "")
    paired, orphans, too_deep = span_rules.pair(dump)

    def tally(kind, name, thread, what, value=None):
        for key, table in (((kind, name), rows), ((kind, name) + thread, threads)):
            fig = table.setdefault(key, Figures())
            if what == "timed":
                fig.values.append(value)
            else:
                fig.add(what)
                if what == "overflow":
                    fig.add("unclosed")

    for s in paired:
        if s["how"] == "returned":
            tally(s["kind"], s["name"], s["thread"], "timed", max(s["end"] - s["begin"], 0))
        else:
            tally(s["kind"], s["name"], s["thread"], "unclosed")
    for o in orphans:
        tally(o["kind"], o["name"], o["thread"], "orphan_ends")
    for o in too_deep:
        tally(o["kind"], o["name"], o["thread"], "overflow")

    got, got_threads = {}, {}
    order = []
    pids = dump_has_pids(args.dump)
    for row in events(args.analyze):
        if "lost" in row:
            continue
        if "tid" in row:
            got_threads[(row["kind"], row["name"], pid_of(row, pids), row["tid"])] = row
        else:
            got[(row["kind"], row["name"])] = row
            order.append(row["total_ns"])
    if order != sorted(order, reverse=True):
        fail("rows are not sorted by total time")
    keys = ("unclosed", "orphan_ends", "overflow")
    if set(got) != set(rows):
        fail(f"names {sorted(got)} differ from {sorted(rows)}")
    for key, fig in rows.items():
        if key in got:
            compare("%s %s" % key, fig, got[key], keys)
    if args.per_thread:
        if set(got_threads) != set(threads):
            fail(f"thread rows {sorted(got_threads)} differ from {sorted(threads)}")
        for key, fig in threads.items():
            if key in got_threads:
                compare("%s %s pid %d tid %d" % key, fig, got_threads[key], keys)
                if got_threads[key]["thread"] != names.get(key[2:], ""):
                    fail(f"{key}: thread {got_threads[key]['thread']}")
    elif got_threads:
        fail("thread rows without --per-thread")
    for expect in args.expect:
        name, count = expect.rsplit("=", 1)
        kind, name = name.split(":", 1)
        row = got.get((kind, name))
        if not row or row["count"] != int(count):
            fail(f"{kind} {name}: count {row and row['count']}, expected {count}")
    return len(rows)


def latency(args):
    total = Figures()
    per_thread = {}
    waiting = {}  # (pid, tid) or (pid, key) -> (ts, pid, tid)
    for e in events(args.dump):
        if "ts_ns" not in e or e["kind"] not in ("trace", "log") or "tag" not in e:
            continue
        tag = e["tag"] if e["kind"] == "trace" else e.get("format")
        is_from, is_to = tag == args.from_tag, tag == args.to_tag
        if not (is_from or is_to):
            continue
        pid, tid = e.get("pid", 0), e["tid"]
        th = per_thread.setdefault((pid, tid), Figures())
        if args.key is None:
            slot = (pid, tid)
        else:
            a = e.get("args", [])
            slot = (pid, a[args.key]) if args.key < len(a) else None
        if is_to:
            if slot is not None and slot in waiting:
                since = waiting.pop(slot)[0]
                total.values.append(max(e["ts_ns"] - since, 0))
                th.values.append(max(e["ts_ns"] - since, 0))
            else:
                total.add("unmatched_to")
                th.add("unmatched_to")
        if is_from:
            if slot is None:
                total.add("unmatched_from")
                th.add("unmatched_from")
                continue
            if slot in waiting:
                _, p, t = waiting[slot]
                total.add("unmatched_from")
                per_thread[(p, t)].add("unmatched_from")
            waiting[slot] = (e["ts_ns"], pid, tid)
    for _, p, t in waiting.values():
        total.add("unmatched_from")
        per_thread[(p, t)].add("unmatched_from")
    keys = ("unmatched_from", "unmatched_to") + (("evicted",) if args.key is not None else ())
    total.counts.setdefault("evicted", 0)
    rows = [r for r in events(args.analyze) if "lost" not in r]
    name = f"{args.from_tag} -> {args.to_tag}"
    main = [r for r in rows if "tid" not in r]
    if len(main) != 1 or main[0]["name"] != name:
        fail(f"not one row named {name}: {main}")
        return 0
    compare(name, total, main[0], keys)
    if args.per_thread:
        pids = dump_has_pids(args.dump)
        got = {(pid_of(r, pids), r["tid"]): r for r in rows if "tid" in r}
        want = {k: v for k, v in per_thread.items() if v.values or v.counts}
        if set(got) != set(want):
            fail(f"thread rows {sorted(got)} differ from {sorted(want)}")
        for k, fig in want.items():
            if k in got:
                compare(f"{name} pid {k[0]} tid {k[1]}", fig, got[k], keys)
    return len(total.values)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("analyzer", choices=("spans", "latency"))
    parser.add_argument("dump")
    parser.add_argument("analyze")
    parser.add_argument("--per-thread", action="store_true")
    parser.add_argument("--expect", action="append", default=[])
    parser.add_argument("--from", dest="from_tag")
    parser.add_argument("--to", dest="to_tag")
    parser.add_argument("--key", type=int)
    parser.add_argument("--min-rows", type=int, default=1)
    args = parser.parse_args()
    n = spans(args) if args.analyzer == "spans" else latency(args)
    if n < args.min_rows:
        fail(f"only {n} rows or matches: the input is not what the test meant")
    if failures:
        print(f"check_analyze: {len(failures)} failed", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
