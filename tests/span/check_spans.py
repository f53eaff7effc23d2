"""check_spans.py c|cxx SOURCE DUMP_JSONL DUMP_TEXT CHROME_JSON - the spans
span_prog.c (c) or span_prog.cc (cxx) marks, as the tool shows them:
dump --json has each begin and end, in order, with its tag, line and
arguments; the text dump shows them as "begin TAG (file:func:line)"; the
Chrome export nests them on their thread's marked-span track (a
pseudo-thread, tid + 2^30, named "THREAD spans"), each begun inside the
call that began it, ends each span where its RT_END or scope end is, and
shows an end without its begin as an instant.
Lines are found in SOURCE by the text of the macro.  Exits 1 with one
line per difference."""
import json
import os
import re
import sys

prog, source, dump_path, text_path, chrome_path = sys.argv[1:6]
lines = open(source).read().split("\n")


def line_of(text):
    found = [i + 1 for i, l in enumerate(lines) if text in l]
    assert len(found) == 1, "%r is on lines %r of %s" % (text, found, source)
    return found[0]


def scope(tag):
    n = line_of('RT_SCOPE("%s")' % tag)
    return [("begin", tag, n, []), ("end", tag, n, [])]


def begin(tag, args):
    return [("begin", tag, line_of('RT_BEGIN("%s"' % tag), args)]


def end(tag, args):
    return [("end", tag, line_of('RT_END("%s"' % tag), args)]


def opened(span):
    return [span[0]]


def closed(span):
    return [span[1]]


if prog == "c":
    two_a, two_b = scope("two-a"), scope("two-b")
    outer, loop, inner = scope("outer"), scope("loop"), scope("inner")
    want = (begin("request", [42, -7]) + begin("parse", [3]) + end("parse", [1])
            + opened(two_a) + opened(two_b) + closed(two_b) + closed(two_a)
            + opened(outer) + opened(loop) + closed(loop) + opened(loop) + opened(inner)
            + closed(inner) + closed(loop) + closed(outer)
            + begin("six", [1, -2, 3, -4, 0x123456789, -5]) + end("six", [])
            + end("request", [200]) + end("never begun", [9]))
    orphans = ["never begun"]
    parents = {"two-a": "two_scopes", "outer": "nested", "request": "main"}
else:
    frame, try_, a, b = scope("frame"), scope("try"), scope("a"), scope("b")
    early, positive = scope("early"), scope("positive")
    # the exception leaves both frames of thrower and the try block
    want = (begin("cxx", [1, -1]) + opened(try_) + opened(frame) + opened(frame)
            + closed(frame) + closed(frame) + closed(try_)
            + opened(a) + opened(b) + closed(b) + closed(a)
            + opened(early) + opened(positive) + closed(positive) + closed(early)
            + end("cxx", [3]))
    orphans = []
    parents = {}

bad = []
dump = [json.loads(l) for l in open(dump_path)]
spans = [d for d in dump if d["kind"] == "trace" and "span" in d]
got = [(d["span"], d["tag"], d["line"], d["args"]) for d in spans]
if got != want:
    bad.append("dump --json spans:\n  got  %r\n  want %r" % (got, want))
base = os.path.basename(source)
for d in spans:
    if os.path.basename(d["file"]) != base:
        bad.append("span event of file %r, not %s" % (d["file"], base))
        break
if prog == "cxx" and not [d for d in dump if d["kind"] == "trace" and d["tag"] == "caught"
                          and "span" not in d]:
    bad.append("the plain trace event 'caught' is missing or marked as a span")

# text: "begin TAG (file:func:line)", one line per event, in the same order
pattern = re.compile(r"\] : (?:.*?\s)?(begin|end) (.*) \(" + re.escape(base) + r":\w+:(\d+)\)$")
shown = []
for l in open(text_path):
    if l.startswith("Last recorded per-thread events"):
        break
    m = pattern.search(l.rstrip("\n"))
    if m:
        shown.append((m.group(1), m.group(2), int(m.group(3))))
if shown != [(s, t, n) for s, t, n, _ in want]:
    bad.append("dump text spans:\n  got  %r\n  want %r" % (shown, [(s, t, n) for s, t, n, _ in want]))

# chrome: replay each track's B/E stack; spans pair as the dump says
MARKED_TID = 1 << 30  # a thread's marked spans: a pseudo-thread, its tid plus this
doc = json.load(open(chrome_path))
events = [e for e in doc["traceEvents"] if e["ph"] != "M"]
track_names = {(e["pid"], e["tid"]): e["args"]["name"] for e in doc["traceEvents"]
               if e["ph"] == "M" and e["name"] == "thread_name"}
stacks = {}
seen = []
for e in events:
    key = (e["pid"], e["tid"])
    s = stacks.setdefault(key, [])
    if "cat" in e and (e["cat"] == "span") != (e["tid"] >= MARKED_TID):
        bad.append("%r is not on the track its kind goes on" % e)
        break
    if e["tid"] >= MARKED_TID and not track_names.get(key, "").endswith(" spans"):
        bad.append("the marked spans' track %r is not named: %r" % (key, track_names.get(key)))
        break
    if e["ph"] == "B":
        if e.get("cat") == "span":
            seen.append(("begin", e["name"], e["args"]["line"]))
            if e["name"] in parents:
                calls = stacks.get((e["pid"], e["tid"] - MARKED_TID), [])
                parent = calls[-1]["name"] if calls else None
                if parent != parents[e["name"]]:
                    bad.append("span %r opens inside %r, not %r" % (e["name"], parent, parents[e["name"]]))
        s.append(e)
    elif e["ph"] == "E":
        if not s:
            bad.append("E without an open span: %r" % e)
            break
        top = s.pop()
        a = e["args"]
        marks = [m for m in ("unwound", "thread_ended", "exited", "exit_lost", "end_lost", "unclosed")
                 if a.get(m)]
        if marks:
            bad.append("a clean program has an %s span: %r" % (marks[0], top))
        if top.get("cat") == "span":
            seen.append(("end", top["name"], top["args"]["line"]))
            d_begin = [w for w in want if w[0] == "begin" and w[1] == top["name"]]
            if d_begin and a.get("args") != d_begin[0][3]:
                bad.append("E of %r has args %r, its begin %r" % (top["name"], a.get("args"), d_begin[0][3]))
    elif e.get("name") == "end without begin":
        seen.append(("orphan", e["args"]["span"], e["args"]["line"]))
        if e["args"]["args"] != [w for w in want if w[1] == e["args"]["span"]][-1][3]:
            bad.append("end without begin %r: args differ" % e)
if any(stacks.values()):
    bad.append("spans left open: %r" % {k: [e["name"] for e in v] for k, v in stacks.items() if v})
# the scope ends carry the RT_SCOPE line on their begin; the E names its begin
want_seen = []
for s, t, n, _ in want:
    if t in orphans and s == "end":
        want_seen.append(("orphan", t, n))
    elif s == "begin":
        want_seen.append((s, t, n))
    else:
        want_seen.append((s, t, [w for w in want if w[0] == "begin" and w[1] == t][0][2]))
if seen != want_seen:
    bad.append("chrome spans:\n  got  %r\n  want %r" % (seen, want_seen))
if [e for e in events if e.get("cat") == "trace" and e["name"] in [w[1] for w in want]]:
    bad.append("a span's begin or end also exported as a trace instant")

for line in bad:
    print(line)
sys.exit(1 if bad else 0)
