#!/usr/bin/env python3
"""check_pairing.py --tool RINGTRACE --dir DIR --proto PERFETTO_PROTO

The four views that pair enters with exits and begins with ends, on the
recording pairing_trace wrote into DIR (pairing.rt.000000 and .000001):
`analyze spans`, `ship` (into a real clickhouse-server on loopback),
`export --chrome` and `export --perfetto`.  Each must give the same
answers, the span tracker's (tests/lib/span_rules.py, applied to `dump
--json` of the same input): every span with its begin, its end and how it
ended, every orphan exit or end, every begin past the depth cap.  Read as
one set (the rotation boundary between an enter and its exit) and with the
first file removed (the exits without their enters); ship reads each file
alone.  Then the cases' answers themselves, which the rules must give.
Exits 1 with one line per difference.
"""
import argparse
import collections
import json
import os
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "lib"))
sys.path.insert(0, os.path.join(here, "..", "export"))
import check_perfetto  # noqa: E402  protoc's text format, read
import clickhouse  # noqa: E402
import span_rules  # noqa: E402

MARKS = ("unwound", "thread_ended", "exited", "exit_lost", "end_lost", "unclosed")
# export --chrome draws a thread's marked spans on a pseudo-thread: its tid plus this
MARKED_TID = 1 << 30
failures = []


def fail(message):
    failures.append(message)
    if len(failures) <= 40:
        print("check_pairing: " + message, file=sys.stderr)


def run(tool, *args, ok=(0,)):
    r = subprocess.run([tool] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if r.returncode not in ok:
        fail("%s: status %d: %s" % (" ".join(args), r.returncode, r.stderr.decode()[-500:]))
    return r.stdout


def span_key(tid, kind, ident, begin, end, how):
    return ("span", tid, kind, ident, begin, end, how)


def orphan_key(tid, kind, ident, ts):
    return ("orphan", tid, kind, ident, ts)


def expected(dump):
    """The tracker's answers: span and orphan keys, and the begins past the cap."""
    spans, orphans, too_deep = span_rules.pair(dump, all_times=True)
    keys = []
    for s in spans:
        e = s["begin_event"]
        ident = e["addr"] if s["kind"] == "function" else s["name"]
        keys.append(span_key(s["thread"][1], s["kind"], ident, s["begin"], s["end"], s["how"]))
    for o in orphans:
        e = o["event"]
        ident = e["addr"] if o["kind"] == "function" else o["name"]
        keys.append(orphan_key(o["thread"][1], o["kind"], ident, e["ts_ns"]))
    return sorted(keys), spans, orphans, too_deep


def chrome_answers(text):
    """Each track's B/E stack replayed: calls on their thread, marked spans on its
    pseudo-thread, each track nested on its own."""
    events = json.loads(text)["traceEvents"]
    names = {e["tid"]: e["args"]["name"] for e in events
             if e["ph"] == "M" and e["name"] == "thread_name"}
    stacks, keys = collections.defaultdict(list), []
    for e in events:
        track, ns = e.get("tid"), round(e.get("ts", 0) * 1000)
        marked_track = track is not None and track >= MARKED_TID
        tid = track - MARKED_TID if marked_track else track
        if e["ph"] in ("B", "i") and e.get("cat") in ("function", "span") \
                and (e["cat"] == "span") != marked_track:
            fail("chrome: %r is not on the track of its kind" % e)
        if marked_track and not names.get(track, "").endswith(" spans"):
            fail("chrome: the marked spans' track %d is not named" % track)
        if e["ph"] == "B":
            kind = "function" if e.get("cat") == "function" else "span"
            ident = e["args"]["addr"] if kind == "function" else e["name"]
            stacks[track].append((kind, ident, ns))
        elif e["ph"] == "E":
            if not stacks[track]:
                fail("chrome: an E with nothing open on track %d" % track)
                continue
            kind, ident, begin = stacks[track].pop()
            marks = [m for m in MARKS if e["args"].get(m)]
            keys.append(span_key(tid, kind, ident, begin, ns, marks[0] if marks else "returned"))
        elif e.get("name") == "exit without enter":
            keys.append(orphan_key(tid, "function", e["args"]["addr"], ns))
        elif e.get("name") == "end without begin":
            keys.append(orphan_key(tid, "span", e["args"]["span"], ns))
    return sorted(keys)


def perfetto_answers(decoded):
    """Each track's slices replayed: calls on their thread's track, marked spans on
    its child track, each nested on its own."""
    root = check_perfetto.parse_text(decoded)
    tracks, marked, stacks, keys = {}, set(), collections.defaultdict(list), []
    for packet in root.get("packet", []):
        d = check_perfetto.one(packet, "track_descriptor")
        if d is not None:
            t = check_perfetto.one(d, "thread")
            uuid = check_perfetto.one(d, "uuid")
            if t is not None:
                tracks[uuid] = check_perfetto.one(t, "tid")
            elif check_perfetto.one(d, "parent_uuid") is not None:
                parent = check_perfetto.one(d, "parent_uuid")
                if parent not in tracks or check_perfetto.one(d, "name") != "spans":
                    fail("perfetto: a child track %r not named spans under a thread" % uuid)
                tracks[uuid] = tracks.get(parent)
                marked.add(uuid)
            continue
        e = check_perfetto.one(packet, "track_event")
        track = check_perfetto.one(e, "track_uuid")
        tid = tracks.get(track)
        ns = check_perfetto.one(packet, "timestamp")
        kind_of, name = check_perfetto.one(e, "type"), check_perfetto.one(e, "name")
        ann = check_perfetto.annotations(e)
        if kind_of == "TYPE_SLICE_BEGIN":
            kind = "span" if ann.get("span") else "function"
            if (kind == "span") != (track in marked):
                fail("perfetto: a %s slice on the wrong track at %d" % (kind, ns))
            stacks[track].append((kind, ann["addr"] if kind == "function" else name, ns))
        elif kind_of == "TYPE_SLICE_END":
            if not stacks[track]:
                fail("perfetto: a slice end with nothing open on track %r" % track)
                continue
            kind, ident, begin = stacks[track].pop()
            marks = [m for m in MARKS if ann.get(m)]
            keys.append(span_key(tid, kind, ident, begin, ns, marks[0] if marks else "returned"))
        elif name == "exit without enter":
            keys.append(orphan_key(tid, "function", ann["addr"], ns))
        elif name == "end without begin":
            keys.append(orphan_key(tid, "span", ann["span"], ns))
    return sorted(keys)


def tallies(spans, orphans, too_deep):
    """analyze's figures per (kind, name, tid) from a view's answers."""
    rows = collections.defaultdict(lambda: {"durations": [], "unclosed": 0, "orphan_ends": 0,
                                            "overflow": 0})
    for s in spans:
        row = rows[(s["kind"], s["name"], s["thread"][1])]
        if s["how"] == "returned":
            row["durations"].append(s["end"] - s["begin"])
        else:
            row["unclosed"] += 1
    for o in orphans:
        rows[(o["kind"], o["name"], o["thread"][1])]["orphan_ends"] += 1
    for o in too_deep:
        row = rows[(o["kind"], o["name"], o["thread"][1])]
        row["overflow"] += 1
        row["unclosed"] += 1
    return rows


def analyze_answers(text):
    rows = {}
    for line in text.splitlines():
        row = json.loads(line)
        if "tid" in row and "lost" not in row:
            rows[(row["kind"], row["name"], row["tid"])] = row
    return rows


def compare_analyze(view, want, got):
    if set(want) != set(got):
        fail("%s: analyze rows %s, want %s" % (view, sorted(got), sorted(want)))
    for key, w in want.items():
        g = got.get(key)
        if not g:
            continue
        d = sorted(w["durations"])
        have = (g["count"], g["total_ns"], g["min_ns"], g["max_ns"], g["unclosed"],
                g["orphan_ends"], g["overflow"])
        need = (len(d), sum(d), d[0] if d else 0, d[-1] if d else 0, w["unclosed"],
                w["orphan_ends"], w["overflow"])
        if have != need:
            fail("%s: analyze %s: (count, total, min, max, unclosed, orphan ends, overflow) "
                 "%s, want %s" % (view, key, have, need))


def compare(view, what, want, got):
    if got != want:
        missing = [k for k in want if k not in got]
        extra = [k for k in got if k not in want]
        fail("%s: %s differs from the tracker's rules: missing %s; extra %s" %
             (view, what, missing[:6], extra[:6]))


def dump_of(tool, files):
    return [json.loads(line) for line in run(tool, "dump", "--json", *files).decode().splitlines()]


def check_view(args, view, files):
    dump = dump_of(args.tool, files)
    want, spans, orphans, too_deep = expected(dump)
    chrome = chrome_answers(run(args.tool, "export", "--chrome", *files).decode())
    compare(view, "export --chrome", want, chrome)
    pf = run(args.tool, "export", "--perfetto", *files)
    decoded = subprocess.run(["protoc", "--proto_path=" + os.path.dirname(args.proto),
                              "--decode=ringtrace.perfetto.Trace", args.proto], input=pf,
                             stdout=subprocess.PIPE, check=True).stdout.decode()
    perfetto = perfetto_answers(decoded)
    compare(view, "export --perfetto", want, perfetto)
    if chrome != perfetto:
        fail("%s: the Chrome and Perfetto exports show different spans" % view)
    analyze = analyze_answers(
        run(args.tool, "analyze", "spans", "--json", "--per-thread", *files).decode())
    compare_analyze(view, tallies(spans, orphans, too_deep), analyze)
    # and against the Chrome export itself: analyze times the spans it draws as returned
    drawn_spans, drawn_orphans = from_keys(chrome)
    compare_analyze(view + " (analyze against export --chrome)",
                    tallies(drawn_spans, drawn_orphans, too_deep), analyze)
    return spans, orphans, too_deep, chrome


def name_of(kind, ident):
    """analyze's name of a function without symbols (its address), or a span's tag."""
    return "0x%x" % ident if kind == "function" else ident


def from_keys(keys):
    """A view's answers (span and orphan keys) as the rules' spans and orphans."""
    spans, orphans = [], []
    for k in keys:
        if k[0] == "span":
            _, tid, kind, ident, begin, end, how = k
            spans.append({"thread": (0, tid), "kind": kind, "name": name_of(kind, ident),
                          "begin": begin, "end": end, "how": how})
        else:
            _, tid, kind, ident, ts = k
            orphans.append({"thread": (0, tid), "kind": kind, "name": name_of(kind, ident)})
    return spans, orphans


def ship_answers(args, files):
    """{(file_seq, ordinal): dur_ns} of the files shipped, each alone, into a fresh server."""
    with clickhouse.ClickHouse() as ch:
        journal = os.path.join(args.dir, "ship.journal")
        r = subprocess.run([args.tool, "ship", "--to", ch.url, "--create", "--table",
                            "pairing", "--journal", journal] + files,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if r.returncode != 0:
            fail("ship: status %d: %s" % (r.returncode, r.stderr.decode()[-500:]))
            return {}
        rows = ch.json("SELECT file_seq, ordinal, kind, dur_ns FROM pairing FINAL "
                       "ORDER BY file_seq, ordinal")
    return {(int(r["file_seq"]), int(r["ordinal"])): (r["kind"], int(r["dur_ns"])) for r in rows}


def check_ship(args, files, last_chrome):
    """dur_ns of every exit and end: the rules' on each file alone, and for the last file
    what the Chrome export of that file alone draws."""
    shipped = ship_answers(args, files)
    drawn = {(k[1], k[5]): k[5] - k[4] for k in last_chrome if k[0] == "span"
             and k[6] == "returned"}
    for seq, path in enumerate(files):
        items = [i for i in dump_of(args.tool, [path]) if i["kind"] != "last_event"]
        spans, _, _ = span_rules.pair(items)
        durations = {id(s["end_event"]): s["end"] - s["begin"] for s in spans
                     if s["how"] == "returned"}
        for ordinal, item in enumerate(items):
            if span_rules.what(item) not in ("exit", "end"):
                continue
            want = durations.get(id(item), -1)
            got = shipped.get((seq, ordinal))
            if got is None or got[1] != want:
                fail("ship: file %d, %s at %d ns (ordinal %d): dur_ns %s, want %d" %
                     (seq, item["kind"], item["ts_ns"], ordinal, got and got[1], want))
            if seq == len(files) - 1 and got and got[1] != drawn.get((item["tid"], item["ts_ns"]),
                                                                      -1):
                fail("ship: file %d, %s at %d ns: dur_ns %d, the Chrome export draws %s" %
                     (seq, item["kind"], item["ts_ns"], got[1],
                      drawn.get((item["tid"], item["ts_ns"]))))


def check_cases(spans, orphans, too_deep):
    """What the rules give on each case, said here once more by hand."""
    by = collections.defaultdict(list)
    for s in spans:
        by[s["thread"][1]].append((s["kind"], s["name"], s["end"] - s["begin"], s["how"]))
    names = {}
    for s in spans + orphans:
        e = s.get("begin_event") or s.get("event")
        names[e.get("thread")] = e["tid"]

    def case(name):
        return by.get(names.get(name), [])

    def hows(name):
        return collections.Counter((k, h) for k, _, _, h in case(name))

    rec = case("recursion")
    if ("function", "0x401000", 100, "returned") not in rec or \
            ("function", "0x401000", 90, "exit_lost") not in rec:
        fail("recursion: the outer f is not timed 100 ns with the inner one's exit lost: %s" % rec)
    if ("function", "0x403000", 10, "exit_lost") not in rec:
        fail("recursion: h is not closed by the exit at its depth: %s" % rec)
    if hows("longjmp") != collections.Counter({("function", "unwound"): 2,
                                               ("span", "unclosed"): 1,
                                               ("function", "returned"): 2}):
        fail("longjmp: %s" % case("longjmp"))
    # the library's exits close calls only: the span begun in x is open to the end
    if hows("ended") != collections.Counter({("function", "thread_ended"): 2,
                                             ("span", "unclosed"): 1}):
        fail("ended: %s" % case("ended"))
    if hows("unclosed") != collections.Counter({("function", "unclosed"): 2,
                                                ("span", "unclosed"): 1}) or \
            sorted(d for _, _, d, _ in case("unclosed")) != [70, 80, 90]:
        fail("unclosed: not closed at the thread's last event: %s" % case("unclosed"))
    deep = case("deep")
    deep_skipped = [o for o in too_deep if o["event"].get("thread") == "deep"]
    if len(deep) != 1024 or any(h != "returned" for _, _, _, h in deep) or len(deep_skipped) != 6:
        fail("deep: %d spans, %d too deep" % (len(deep), len(deep_skipped)))
    piled = case("piled")
    piled_skipped = [o for o in too_deep if o["event"].get("thread") == "piled"]
    if len(piled) != 1024 or any((k, h) != ("span", "returned") for k, _, _, h in piled) or \
            len(piled_skipped) != 6:
        fail("piled: %d spans, %d too deep" % (len(piled), len(piled_skipped)))
    # the end inside f reaches outer, begun before f: 10..30, then 60..80
    if sorted((k, n, d, h) for k, n, d, h in case("orphans")) != [
            ("function", "0x401000", 20, "returned"), ("span", "outer", 20, "returned"),
            ("span", "outer", 20, "returned"), ("span", "s", 10, "end_lost")]:
        fail("orphans: %s" % case("orphans"))
    if len([o for o in orphans if o["event"].get("thread") == "orphans"]) != 4:
        fail("orphans: not 4 orphan ends")
    for side in ("left", "right"):
        if any(h != "returned" for _, _, _, h in case(side)) or len(case(side)) != 6:
            fail("%s: %s" % (side, case(side)))
    # a span begun in f and ended in g, called after f returned
    if sorted(case("crossing")) != [("function", "0x401000", 50, "returned"),
                                    ("function", "0x402000", 10, "returned"),
                                    ("function", "0x403000", 10, "returned"),
                                    ("span", "req", 20, "returned")]:
        fail("crossing: %s" % case("crossing"))
    if sorted(case("interleaved")) != [("function", "0x401000", 30, "returned"),
                                       ("span", "outer", 30, "returned"),
                                       ("span", "s", 20, "end_lost")] or \
            len([o for o in orphans if o["event"].get("thread") == "interleaved"]) != 1:
        fail("interleaved: %s" % case("interleaved"))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--tool", required=True)
    p.add_argument("--dir", required=True)
    p.add_argument("--proto", required=True)
    args = p.parse_args()
    files = [os.path.join(args.dir, "pairing.rt.%06d" % i) for i in range(2)]
    spans, orphans, too_deep, _ = check_view(args, "the set", files)
    check_cases(spans, orphans, too_deep)
    if not [s for s in spans if s["begin_event"].get("thread") == "rotation"
            and s["how"] == "returned"]:
        fail("rotation: the calls entered in the first file did not return in the second")
    spans, orphans, _, chrome = check_view(args, "the second file alone", files[1:])
    if len([o for o in orphans if o["event"].get("thread") == "rotation"]) != 2:
        fail("the second file alone: the rotation's exits are not orphans")
    check_ship(args, files, chrome)
    print("check_pairing: %s" % ("%d differences" % len(failures) if failures else "ok"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
