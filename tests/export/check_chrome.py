"""check_chrome.py DUMP_JSONL CHROME_JSON [--losses] - an `export --chrome`
output against `dump --json` of the same input: the same events, in the
same order per kind, with the same values, function spans nested per
thread, every loss visible.  Exits 1 with one line per difference."""
import json
import sys

dump_path, chrome_path = sys.argv[1], sys.argv[2]
want_losses = "--losses" in sys.argv[3:]
dump = [json.loads(line) for line in open(dump_path)]
dump = [d for d in dump if d["kind"] != "last_event"]
doc = json.load(open(chrome_path))
events = doc["traceEvents"]
bad = []


def by_kind(kind):
    return [d for d in dump if d["kind"] == kind]


def us(ns):
    return round(ns) / 1000.0


def same_time(ev, ns):
    return round(ev["ts"] * 1000) == ns


meta = [e for e in events if e["ph"] == "M"]
rest = [e for e in events if e["ph"] != "M"]
if events[: len(meta)] != meta:
    bad.append("metadata events do not all come first")
names = {(e["pid"], e["tid"]): e["args"]["name"] for e in meta if e["name"] == "thread_name"}
programs = [e["args"]["name"] for e in meta if e["name"] == "process_name"]
if not programs or not all(programs):
    bad.append("process names missing: %r" % programs)
for d in dump:
    if d.get("thread") and d["kind"] in ("trace", "log", "enter", "exit", "io"):
        if d["thread"] not in names.values():
            bad.append("thread %r has no thread_name" % d["thread"])
            break

# trace events: instants in the same order, named by tag, same arguments
traces = [e for e in rest if e.get("cat") == "trace"]
want = by_kind("trace")
if len(traces) != len(want):
    bad.append("%d trace instants, dump has %d" % (len(traces), len(want)))
for e, d in zip(traces, want):
    if e["ph"] != "i" or e["name"] != d["tag"] or e["args"]["args"] != d["args"] \
            or e["tid"] != d["tid"] or not same_time(e, d["ts_ns"]) \
            or e["args"]["line"] != d["line"]:
        bad.append("trace %r differs from %r" % (e, d))
        break

logs = [e for e in rest if e.get("cat") == "log"]
want = by_kind("log")
if len(logs) != len(want):
    bad.append("%d log instants, dump has %d" % (len(logs), len(want)))
for e, d in zip(logs, want):
    if e["name"] != d["msg"] or e["args"]["level"] != d["level"] or e["tid"] != d["tid"] \
            or not same_time(e, d["ts_ns"]):
        bad.append("log %r differs from %r" % (e, d))
        break

# I/O: complete events from the call's start, with path and bytes
ios = [e for e in rest if e.get("cat") == "io"]
want = by_kind("io")
if len(ios) != len(want):
    bad.append("%d I/O events, dump has %d" % (len(ios), len(want)))
for e, d in zip(ios, want):
    a = e["args"]
    if e["name"] != d["op"] or a.get("path") != d.get("path") or a["size"] != d["size"] \
            or a["result"] != d["result"] or e["tid"] != d["tid"]:
        bad.append("io %r differs from %r" % (e, d))
        break
    if "dur_ns" in d:
        if e["ph"] != "X" or round(e["dur"] * 1000) != d["dur_ns"] \
                or round((e["ts"] + e["dur"]) * 1000) != d["ts_ns"]:
            bad.append("io %r: not a complete event ending at %d" % (e, d["ts_ns"]))
            break
if not [e for e in ios if e["ph"] == "X" and e["name"] == "read" and e["args"]["path"].endswith("/data.txt")] \
        and not want_losses:
    bad.append("no complete read event of data.txt")

# functions: every enter a B; every exit an E or an instant when its enter was not seen
enters, exits = by_kind("enter"), by_kind("exit")
begins = [e for e in rest if e["ph"] == "B"]
ends = [e for e in rest if e["ph"] == "E"]
# ends no exit record made: closed as lost by a later event, or still open at the end
marked_ends = [e for e in ends if any(e["args"].get(m) for m in ("exit_lost", "end_lost", "unclosed"))]
plain_ends = [e for e in ends if e not in marked_ends]
# the library's exits for calls that did not return by themselves
closed_ends = [e for e in plain_ends if any(e["args"].get(m) for m in ("unwound", "thread_ended", "exited"))]
orphans = [e for e in rest if e.get("name") == "exit without enter"]
if len(begins) != len(enters):
    bad.append("%d B events, %d enters" % (len(begins), len(enters)))
if len(plain_ends) + len(orphans) != len(exits):
    bad.append("%d E + %d orphan exits, %d exits" % (len(plain_ends), len(orphans), len(exits)))
if len(begins) != len(ends):
    bad.append("%d B events, %d E events" % (len(begins), len(ends)))
for e, d in zip(begins, enters):
    if e["name"] != (d["func"] or "0x%016x" % d["addr"]) or not same_time(e, d["ts_ns"]):
        bad.append("B %r differs from %r" % (e, d))
        break
stacks, last = {}, {}
for e in rest:
    if e["ph"] not in ("B", "E"):
        continue
    key = (e["pid"], e["tid"])
    if e["ts"] < last.get(key, -1e300):
        bad.append("thread %r goes back in time at %r" % (key, e))
        break
    last[key] = e["ts"]
    s = stacks.setdefault(key, [])
    if e["ph"] == "B":
        s.append(e["name"])
    elif not s:
        bad.append("E without an open span on %r" % (key,))
        break
    else:
        s.pop()
if any(stacks.values()):
    bad.append("spans left open: %r" % {k: v for k, v in stacks.items() if v})
# a function's B args are the same for every call (viewers name frames by them)
fixed = {}
for e in begins:
    if fixed.setdefault(e["name"], e["args"]) != e["args"]:
        bad.append("B args of %s differ between calls: %r, %r" % (e["name"], fixed[e["name"]], e["args"]))
        break
# each exit is the E of its span (which carries the exit's seq) or an orphan instant
shown = sorted([(e["tid"], e["args"].get("seq"), round(e["ts"] * 1000)) for e in plain_ends + orphans])
if shown != sorted([(d["tid"], d.get("seq"), d["ts_ns"]) for d in exits]):
    bad.append("the E events and orphan exits are not the exits dump shows")
if not want_losses and (orphans or marked_ends or closed_ends):
    bad.append("a clean recording has unmatched, lost, unwound or unclosed spans")

# losses: one instant each, with the same counts
losses = [e for e in rest if e.get("cat") == "loss"]
want = by_kind("lost")
if len(losses) != len(want) or sum(e["args"]["count"] for e in losses) != sum(d["count"] for d in want):
    bad.append("%d loss instants (%d events), dump has %d (%d events)" % (
        len(losses), sum(e["args"]["count"] for e in losses), len(want), sum(d["count"] for d in want)))
for e, d in zip(losses, want):
    if e["args"]["reason"] != d["reason"] or not e["name"].startswith("lost %d event" % d["count"]):
        bad.append("loss %r differs from %r" % (e, d))
        break
if want_losses and not losses:
    bad.append("no loss shown")

for line in bad:
    print(line)
sys.exit(1 if bad else 0)
