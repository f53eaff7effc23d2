#!/usr/bin/env python3
"""rate_check.py DUMP.jsonl RATE.jsonl [--interval NS] [--top N]

Recompute `ringtrace analyze rate --json` from `ringtrace dump --json` of
the same input, by the rules docs/ANALYZE.md gives, and compare every row
exactly: counts, bins, peaks and their times, rates as printed (3
decimals), the busiest intervals and their top tags.  Exits 1 on the first
difference, saying which.
"""
import json
import sys
from collections import defaultdict

KINDS = ("trace", "log", "enter", "exit", "io")


def fail(message):
    print("rate_check: " + message, file=sys.stderr)
    sys.exit(1)


def readable(span):
    decade = 1
    while True:
        for step in (1, 2, 5):
            if step * decade * 100 >= span:
                return step * decade
        decade *= 10


def tag_of(ev):
    """(tag, kind, site_lost) of an event as the analyzer names it."""
    kind = ev["kind"]
    if kind == "trace":
        if "tag" not in ev:
            return ("(site lost)", "trace", True)
        return (ev["tag"], ev.get("span", "trace"), False)
    if kind == "log":
        if "format" not in ev:
            return ("(site lost)", "log", True)
        return (ev["format"], "log", False)
    if kind in ("enter", "exit"):
        return (kind, kind, False)
    return ("io:" + ev.get("op", "malformed"), "io", False)


def rate(count, interval):
    return float("%.3f" % (count * 1e9 / interval))


def main():
    args = sys.argv[1:]
    interval = None
    top = 10
    while len(args) > 2:
        if args[-2] == "--interval":
            interval = int(args[-1])
        elif args[-2] == "--top":
            top = int(args[-1])
        else:
            fail("unknown option " + args[-2])
        args = args[:-2]
    dump_path, rate_path = args
    events = []
    with open(dump_path) as f:
        for line in f:
            ev = json.loads(line)
            if ev.get("kind") in KINDS and "ts_ns" in ev:
                events.append(ev)
    rows = [json.loads(line) for line in open(rate_path)]
    if not events:
        fail("the dump holds no timed event: nothing to check")
    first = min(e["ts_ns"] for e in events)
    last = max(e["ts_ns"] for e in events)
    # the analyzer's last_ts is the last event's in time order: dump's order
    last = events[-1]["ts_ns"]
    asked = interval if interval else readable(last - first)
    bins_row = [r for r in rows if r.get("row") == "bins"]
    if len(bins_row) != 1:
        fail("%d bins rows, not 1" % len(bins_row))
    b = bins_row[0]
    if b["coarsened"] or b["interval_ns"] != asked or b["asked_interval_ns"] != asked:
        fail("interval %d (asked %d, coarsened %s), expected %d" %
             (b["interval_ns"], b["asked_interval_ns"], b["coarsened"], asked))
    width = asked
    first_bin = first // width
    nbins = max(e["ts_ns"] for e in events) // width - first_bin + 1
    if b["bins"] != nbins or b["first_ns"] != first_bin * width or b["events"] != len(events):
        fail("bins row %s: expected %d bins from %d, %d events" %
             (b, nbins, first_bin * width, len(events)))

    tags = defaultdict(lambda: defaultdict(int))
    threads = defaultdict(lambda: defaultdict(int))
    names = {}
    total = defaultdict(int)
    for e in events:
        k = e["ts_ns"] // width - first_bin
        tags[tag_of(e)][k] += 1
        t = (e.get("pid"), e["tid"])
        threads[t][k] += 1
        if t not in names and e.get("thread"):
            names[t] = e["thread"][:31]
        total[k] += 1

    def expect(name, row, bins):
        count = sum(bins.values())
        peak = max(bins.values())
        peak_bin = min(k for k, v in bins.items() if v == peak)
        want = {
            "count": count,
            "mean_per_s": rate(count, width * nbins),
            "peak_per_s": rate(peak, width),
            "peak_at_ns": (first_bin + peak_bin) * width,
            "interval_ns": width,
        }
        for key, value in want.items():
            if row.get(key) != value:
                fail("%s: %s is %s, expected %s" % (name, key, row.get(key), value))

    tag_rows = [r for r in rows if r.get("row") == "tag"]
    if len(tag_rows) != len(tags):
        fail("%d tag rows, expected %d: %s" % (len(tag_rows), len(tags), sorted(tags)))
    order = sorted(tags, key=lambda t: (-sum(tags[t].values()), t[0].encode(), t[1], t[2]))
    for row, key in zip(tag_rows, order):
        got = (row["tag"], row["kind"], row.get("site_lost", False))
        if got != key:
            fail("tag row %s, expected %s in that place" % (got, key))
        expect("tag %r" % (key,), row, tags[key])

    thread_rows = [r for r in rows if r.get("row") == "thread"]
    if len(thread_rows) != len(threads):
        fail("%d thread rows, expected %d" % (len(thread_rows), len(threads)))
    order = sorted(threads, key=lambda t: (-sum(threads[t].values()), t[0] or 0, t[1]))
    for row, key in zip(thread_rows, order):
        if row["tid"] != key[1] or (key[0] is not None and row["pid"] != key[0]):
            fail("thread row %s, expected %s in that place" % (row, key))
        if row["thread"] != names.get(key, ""):
            fail("thread row %s: name, expected %r" % (row, names.get(key, "")))
        expect("thread %s" % (key,), row, threads[key])

    busy_rows = [r for r in rows if r.get("row") == "busiest"]
    ranked = sorted(total, key=lambda k: (-total[k], k))[:top]
    if len(busy_rows) != len(ranked):
        fail("%d busiest rows, expected %d" % (len(busy_rows), len(ranked)))
    tag_order = sorted(tags, key=lambda t: (-sum(tags[t].values()), t[0].encode(), t[1], t[2]))
    for rank, (row, k) in enumerate(zip(busy_rows, ranked), 1):
        best = max(tags[t].get(k, 0) for t in tag_order)
        top_tag = next(t for t in tag_order if tags[t].get(k, 0) == best)
        want = {
            "rank": rank,
            "start_ns": (first_bin + k) * width,
            "end_ns": (first_bin + k + 1) * width,
            "count": total[k],
            "per_s": rate(total[k], width),
            "tag": top_tag[0],
            "kind": top_tag[1],
            "tag_count": best,
            "interval_ns": width,
        }
        for key, value in want.items():
            if row.get(key) != value:
                fail("busiest %d: %s is %s, expected %s" % (rank, key, row.get(key), value))
    others = [r for r in rows if r.get("row") not in ("bins", "tag", "thread", "busiest")]
    if any("lost" not in r for r in others):
        fail("rows of no known kind: %s" % others[:3])
    print("rate_check: %d events, %d tags, %d threads, %d bins of %d ns: all rows match" %
          (len(events), len(tags), len(threads), nbins, width))


main()
