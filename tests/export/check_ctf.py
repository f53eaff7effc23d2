"""check_ctf.py DIR JSONL - a CTF trace read by babeltrace2's Python bindings
against the same events as `dump --json` lines: per thread, the same events
in the same order with the same fields, and the losses both as lost events
(count, reason, note) and as discarded events.

Run by /usr/bin/python3 (the bindings load only there).  Times: the trace's
clock may raise a time to its thread's last one (never backwards), so the
expected time is the running maximum per thread.  A trace event's class is
its site's own, named "trace:" and the tag, with its arguments as fields
arg0, arg1... of their own types, compared exactly (a lost site: the class
"trace", its raw words in the sequence args).  A loss without a time of
its own has the time of the item before it in the set.
"""
import json
import sys

import bt2

trace_dir, jsonl = sys.argv[1], sys.argv[2]

HEAD = ("pid", "tid", "cpu", "seq", "thread")
KINDS = ("trace", "log", "enter", "exit", "io", "lost")


def expected_fields(o, single_pid):
    """What the CTF event's context and payload must hold, from a JSON object."""
    k = o["kind"]
    if k == "lost":
        # JSON names no thread of a loss: the trace's name is not compared
        ctx = {"tid": o["tid"], "cpu": -1, "seq": 0}
        if not single_pid:
            ctx["pid"] = o.get("pid", 0)
        return ctx, {"count": o["count"], "reason": o["reason"], "note": o.get("note", ""),
                     "estimated": int(o.get("estimated", False)), "has_time": int("ts_ns" in o)}
    ctx = {"tid": o["tid"], "cpu": o["cpu"], "seq": o.get("seq", 0), "thread": o.get("thread", "")}
    if not single_pid:
        ctx["pid"] = o["pid"]
    if k == "trace":
        pay = {"tag": o.get("tag", ""), "file": o.get("file", ""), "line": o.get("line", 0),
               "func": o.get("func", ""), "args": o["args"]}
        if "span" in o:
            pay["span"] = o["span"]
    elif k == "log":
        pay = {"level": o.get("level", ""), "msg": o.get("msg", ""), "file": o.get("file", ""),
               "line": o.get("line", 0), "func": o.get("func", "")}
    elif k in ("enter", "exit"):
        pay = {"depth": o["depth"], "flags": o["flags"], "addr": o["addr"],
               "call_site": o["call_site"], "func": o["func"] or "", "file": o["file"] or "",
               "line": o["line"] or 0, "module": o["module"] or "", "offset": o["offset"] or 0}
    elif o.get("malformed"):
        pay = {"op": "malformed", "path": o.get("problem", "")}
    else:
        pay = {"op": o["op"], "fd": o.get("fd", -1), "path": o.get("path", ""),
               "offset": o.get("offset", -1), "size": o["size"], "result": o["result"],
               "errno": o["errno"], "dur_ns": o.get("dur_ns", -1)}
    return ctx, pay


def value(field):
    if isinstance(field, bt2._StringFieldConst):
        # the bindings' str() of an empty string field may show the bytes a
        # longer one left; its length (in bytes) is right
        return str(field).encode("utf-8")[:len(field)].decode("utf-8")
    if isinstance(field, (bt2._ArrayFieldConst,)):
        return [int(f) for f in field]
    return int(field)


def class_name(o):
    """The class of an event: a trace event's is its site's, named by its tag."""
    if o["kind"] != "trace":
        return o["kind"]
    if "tag" not in o:
        return "trace"
    # what TSDL cannot hold (a control character, a byte that is not UTF-8) is '?'
    return "trace:" + "".join(c if ord(c) >= 0x20 and ord(c) != 0x7F and
                              not 0xD800 <= ord(c) <= 0xDFFF else "?" for c in o["tag"])


def payload(ev):
    """The payload's fields; a site class's arg0, arg1... as the list args."""
    pay = {k: value(v) for k, v in ev.payload_field.items()}
    args = []
    while "arg%d" % len(args) in pay:
        args.append(pay.pop("arg%d" % len(args)))
    if ev.name.startswith("trace:"):
        pay["args"] = args
    return pay


objects = [json.loads(line) for line in open(jsonl, encoding="utf-8", errors="surrogateescape")]
events = [o for o in objects if o["kind"] in KINDS]
single_pid = not any("pid" in o for o in events if o["kind"] != "lost")
want = {}
last = {}
previous = 0  # the time of the last item with one: an untimed loss's
for o in events:
    key = (o.get("pid", 0), o["tid"])
    if "ts_ns" in o:
        previous = o["ts_ns"]
    # a source without clock metadata: its raw counter (ts_raw) is the time
    ts = max(o["ts_ns"] if "ts_ns" in o else o.get("ts_raw", previous), last.get(key, 0), 0)
    last[key] = ts
    want.setdefault(key, []).append((class_name(o), ts) + expected_fields(o, single_pid))
lost_total = sum(o["count"] for o in objects if o["kind"] == "lost")

got = {}
discarded = 0
count = 0
for msg in bt2.TraceCollectionMessageIterator(trace_dir):
    if type(msg) is bt2._DiscardedEventsMessageConst:
        discarded += msg.count
        continue
    if type(msg) is not bt2._EventMessageConst:
        continue
    count += 1
    ev = msg.event
    ctx = {k: value(ev.common_context_field[k]) for k in HEAD}
    key = (ctx["pid"] if not single_pid else 0, ctx["tid"])
    if single_pid:
        del ctx["pid"]
    got.setdefault(key, []).append((ev.name, msg.default_clock_snapshot.value, ctx, payload(ev)))

bad = 0
if count != len(events):
    print("%d events in the trace, %d in dump --json" % (count, len(events)))
    bad += 1
if discarded != lost_total:
    print("%d events discarded in the trace, %d lost in dump --json" % (discarded, lost_total))
    bad += 1
if set(got) != set(want):
    print("threads: trace %s, dump %s" % (sorted(got), sorted(want)))
    bad += 1
for key in sorted(want):
    g = got.get(key, [])
    for i, (w, h) in enumerate(zip(want[key], g)):
        name, ts, ctx, pay = w
        problems = []
        if h[0] != name:
            problems.append("kind %r, expected %r" % (h[0], name))
        if h[1] != ts:
            problems.append("time %d, expected %d" % (h[1], ts))
        for k, v in ctx.items():
            if h[2].get(k) != v:
                problems.append("%s %r, expected %r" % (k, h[2].get(k), v))
        for k, v in pay.items():
            if h[3].get(k) != v:
                problems.append("%s %r, expected %r" % (k, h[3].get(k), v))
        if problems:
            bad += 1
            if bad < 20:
                print("thread %s event %d: %s" % (key, i, "; ".join(problems)))
    if len(g) != len(want[key]):
        print("thread %s: %d events in the trace, %d in dump --json" % (key, len(g), len(want[key])))
        bad += 1
print("%d events, %d discarded, %d threads: %s" % (count, discarded, len(want),
                                                     "ok" if not bad else "%d problems" % bad))
sys.exit(1 if bad else 0)
