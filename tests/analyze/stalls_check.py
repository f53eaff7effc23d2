#!/usr/bin/env python3
"""stalls_check.py DUMP.jsonl STALLS.jsonl TOP MIN_NS [--expect-sleeps] [--expect-lost]

Recompute `ringtrace analyze stalls --json` from `ringtrace dump --json` of
the same input and require the same rows, field for field (nanoseconds
exactly): per thread the TOP longest gaps between two of its events (at
least MIN_NS, and at least 1 ns), the events on either side, the losses
between them, the ranks within the thread and among all threads, and the
TOP longest silences from a thread's last event to the end of the inputs.

A loss of a thread counts in its open gap (none before its first event);
a loss of no thread (tid 0) counts in every open gap of the process (of
every process when it names none) unless
a damaged region's count holds it (offset, in_region); a damaged loss marks
the gaps it lies in.

--expect-sleeps: stalls_prog sleeps: the thread "sleeper" ranks its gaps
"before 500 ms", "before 200 ms", "before 50 ms" first, each at least its
sleep; "blocked" is silent from "blocking" to the end; the main thread's
longest gap is its span "wait for sleeper", from begin to end.
--expect-lost: some gap or silence has losses inside.
"""
import json
import sys

EVENT_KINDS = ("trace", "log", "enter", "exit", "io")


def cut(text, limit=63):
    """The analyzer's copy: at most 63 bytes, on a UTF-8 boundary, controls as spaces."""
    raw = text.encode("utf-8", "surrogateescape")
    if len(raw) > limit:
        n = limit
        while n > 0 and (raw[n] & 0xC0) == 0x80:
            n -= 1
        raw = raw[:n]
    raw = bytes(b if b >= 0x20 and b != 0x7F else 0x20 for b in raw)
    return raw.decode("utf-8", "surrogateescape")


def what(d):
    kind = d["kind"]
    if kind == "trace":
        if "tag" not in d:
            return "(site %d lost)" % d.get("site_id", 0)
        # a span's end: "begin request", "end request"
        return cut(d["span"] + " " + d["tag"]) if "span" in d else cut(d["tag"])
    if kind == "log":
        return cut(d["msg"]) if "msg" in d else None
    if kind in ("enter", "exit"):
        return cut(d["func"]) if "func" in d else None
    return None


def load(path):
    rows = []
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        for line in f:
            if line.strip():
                rows.append(json.loads(line))
    return rows


def expected(dump, top, min_ns):
    min_ns = max(min_ns, 1)
    threads = {}  # (pid, tid) -> state, in order of first appearance
    set_end = None
    for d in dump:
        kind = d.get("kind")
        if kind not in EVENT_KINDS and kind != "lost":
            continue
        assert "ts_raw" not in d, "a source without a clock: not checked here"
        ts = d.get("ts_ns")
        if ts is not None:
            set_end = ts if set_end is None else max(set_end, ts)
        pid, tid = d.get("pid"), d["tid"]
        if tid == 0:
            if kind == "lost":
                counted = not d.get("in_region") and "offset" not in d
                for (p, _), t in threads.items():
                    # a loss that names no process may be any process's
                    if (pid is not None and p != pid) or t["last"] is None:
                        continue
                    if counted:
                        t["lost"] += d["count"]
                    t["damaged"] |= d["reason"] == "damaged"
            continue
        t = threads.setdefault((pid, tid), {
            "index": len(threads), "last": None, "lost": 0, "damaged": False,
            "name": "", "gaps": []})
        if kind == "lost":
            if t["last"] is not None:
                t["lost"] += d["count"]
                t["damaged"] |= d["reason"] == "damaged"
            continue
        if d.get("thread"):
            t["name"] = d["thread"]
        if t["last"] is not None:
            gap = ts - t["last"]["ts_ns"]
            if gap >= min_ns:
                t["gaps"].append({"gap_ns": gap, "before": t["last"],
                                  "after": {"kind": kind, "what": what(d), "ts_ns": ts},
                                  "lost_inside": t["lost"], "damaged_inside": t["damaged"]})
        t["last"] = {"kind": kind, "what": what(d), "ts_ns": ts}
        t["lost"], t["damaged"] = 0, False

    rows, kept = [], []
    for (pid, tid), t in threads.items():
        t["gaps"].sort(key=lambda g: (-g["gap_ns"], g["before"]["ts_ns"]))
        for rank, g in enumerate(t["gaps"][:top], 1):
            row = {"pid": pid, "tid": tid, "thread": t["name"], "silent_until_end": False,
                   "gap_ns": g["gap_ns"], "start_ns": g["before"]["ts_ns"],
                   "end_ns": g["after"]["ts_ns"], "before": g["before"], "after": g["after"],
                   "lost_inside": g["lost_inside"], "damaged_inside": g["damaged_inside"],
                   "rank": rank, "overall_rank": None}
            rows.append(row)
            kept.append((row, t["index"]))
    kept.sort(key=lambda x: (-x[0]["gap_ns"], x[0]["start_ns"], x[1]))
    for rank, (row, _) in enumerate(kept[:top], 1):
        row["overall_rank"] = rank
    silences = []
    for (pid, tid), t in threads.items():
        if t["last"] is None or set_end - t["last"]["ts_ns"] < min_ns:
            continue
        silences.append(({"pid": pid, "tid": tid, "thread": t["name"], "silent_until_end": True,
                          "gap_ns": set_end - t["last"]["ts_ns"], "start_ns": t["last"]["ts_ns"],
                          "end_ns": set_end, "before": t["last"], "after": None,
                          "lost_inside": t["lost"], "damaged_inside": t["damaged"],
                          "overall_rank": None}, t["index"]))
    silences.sort(key=lambda x: (-x[0]["gap_ns"], x[1]))
    for rank, (row, _) in enumerate(silences[:top], 1):
        row["rank"] = rank
        rows.append(row)
    return rows


def comparable(row, single_process, known_what):
    row = dict(row)
    if single_process:
        row.pop("pid", None)
    for side in ("before", "after"):
        e = row.get(side)
        if e is not None and e["kind"] not in known_what:
            row[side] = {k: v for k, v in e.items() if k != "what"}
    return json.dumps(row, sort_keys=True)


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    flags = [a for a in sys.argv[1:] if a.startswith("--")]
    dump, stalls = load(args[0]), load(args[1])
    top, min_ns = int(args[2]), int(args[3])
    rows = [r for r in stalls if "lost" not in r]  # the losses' footer rows apart
    want = expected(dump, top, min_ns)
    single = all("pid" not in d for d in dump)
    # io rows are described with their descriptor, which dump names otherwise
    known = ("trace", "log", "enter", "exit")
    got_set = sorted(comparable(r, single, known) for r in rows)
    want_set = sorted(comparable(r, single, known) for r in want)
    if got_set != want_set:
        for line in sorted(set(got_set) - set(want_set))[:10]:
            print("analyze only:", line, file=sys.stderr)
        for line in sorted(set(want_set) - set(got_set))[:10]:
            print("dump only:   ", line, file=sys.stderr)
        sys.exit("stalls rows differ from the gaps recomputed from dump --json "
                 "(%d rows vs %d)" % (len(got_set), len(want_set)))
    if not rows:
        sys.exit("no rows at all")
    if "--expect-sleeps" in flags:
        sleeper = sorted((r for r in rows if r["thread"] == "sleeper" and
                          not r["silent_until_end"]), key=lambda r: r["rank"])
        assert [r["before"]["what"] for r in sleeper[:3]] == \
            ["before 500 ms", "before 200 ms", "before 50 ms"], sleeper[:3]
        for r, ms in zip(sleeper, (500, 200, 50)):
            assert r["after"]["what"] == "after %d ms" % ms, r
            # at least the sleep; "not far over" is left generous: a loaded machine
            assert ms * 1000000 <= r["gap_ns"] < (ms + 1000) * 1000000, r
        main_rows = [r for r in rows if r["tid"] == r.get("pid", r["tid"]) and
                     r["thread"] == "stalls_prog" and r["rank"] == 1 and
                     not r["silent_until_end"]]
        assert len(main_rows) == 1, main_rows
        assert main_rows[0]["before"]["what"] == "begin wait for sleeper", main_rows
        assert main_rows[0]["after"]["what"] == "end wait for sleeper", main_rows
        blocked = [r for r in rows if r["thread"] == "blocked"]
        assert len(blocked) == 1 and blocked[0]["silent_until_end"], blocked
        assert blocked[0]["before"]["what"] == "blocking", blocked
        assert blocked[0]["gap_ns"] >= 750 * 1000000, blocked
        assert blocked[0]["end_ns"] == max(d["ts_ns"] for d in dump if "ts_ns" in d), blocked
    if "--expect-lost" in flags:
        assert any(r["lost_inside"] > 0 for r in rows), "no gap with losses inside"
    print("stalls_check: %d rows match" % len(rows))


if __name__ == "__main__":
    main()
