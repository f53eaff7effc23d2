"""span_rules.py - the rules of the span tracker (src/event/span_tracker.h),
written again from its header, over the events of `ringtrace dump --json`:
what every view that pairs calls and marked spans (analyze spans, ship, the
Chrome and Perfetto exports) must show of them.

    spans, orphans, too_deep = pair(events)

events: dump --json objects in the dump's order.  A thread is (pid, tid)
(dump names the pid only when it shows several processes: 0 otherwise).
Each thread has two stacks: its calls, whose enters and exits pair by the
depth they carry, and its marked spans (trace events with "span"), whose
ends close the innermost open span of their tag, whatever the calls did in
between; neither closes anything of the other.  Calls above one that ends
are closed with it as exit lost (by the depth of the event that ends it);
marked spans begun after one that ends and still open are closed with it
as end lost.  A thread holds CALLS_MAX open calls and MARKED_MAX open marked
spans; spans open at the end close at their thread's latest time (marked
spans first, then calls, innermost first).  Every event with a time and a
thread counts for that time when all_times is set (the exports), only
enters, exits, begins and ends when not (analyze: the other events are not
fed to it).

Each span: {"thread", "kind" ("function" or "span"), "name", "begin",
"end", "how", "begin_event", "end_event"}; "how" is returned, unwound,
thread_ended, exited, exit_lost (end_lost for a marked span) or unclosed;
end_event is the exit or end that ended it when it was its own.  Orphans
and too_deep: {"thread", "kind", "name", "event"}.  Spans are listed in the
order they end; events without ts_ns (a source without clock metadata) are
left out when skip_untimed is set, as analyze and ship leave them out.
"""

CALLS_MAX = 1024
MARKED_MAX = 1024


def function_name(e):
    """A function as analyze names it: its name, module+offset, or address."""
    if e.get("func") is not None:
        return e["func"]
    if e.get("module") is not None:
        return "%s+0x%x" % (e["module"], e["offset"])
    return "0x%x" % e["addr"]


def end_of_flags(flags):
    if flags & 1:
        return "unwound"
    if flags & 2:
        return "thread_ended"
    if flags & 4:
        return "exited"
    return "returned"


def what(e):
    """enter, exit, begin, end or None."""
    if e.get("kind") in ("enter", "exit"):
        return e["kind"]
    if e.get("kind") == "trace" and e.get("span") in ("begin", "end") and "tag" in e:
        return e["span"]
    return None


class _Thread:
    def __init__(self):
        self.calls = []  # [name, addr, depth, begin ts, begin event]
        self.marked = []  # [name, begin ts, begin event]
        self.skipping = False
        self.skip_depth = 0
        self.skip_marked = 0
        self.last = None


def pair(events, all_times=False, skip_untimed=True):
    spans, orphans, too_deep = [], [], []
    threads = {}
    order = []

    def thread_of(key):
        if key not in threads:
            threads[key] = _Thread()
            order.append(key)
        return threads[key]

    def end(key, kind, name, begin, begin_event, ts, how, own):
        if how == "exit_lost" and kind == "span":
            how = "end_lost"
        spans.append({"thread": key, "kind": kind, "name": name, "begin": begin, "end": ts,
                      "how": how, "begin_event": begin_event, "end_event": own})

    def pop_call(key, t, ts, how, own=None):
        name, _, _, begin, begin_event = t.calls.pop()
        end(key, "function", name, begin, begin_event, ts, how, own)
        t.skipping = False

    def pop_marked(key, t, ts, how, own=None):
        name, begin, begin_event = t.marked.pop()
        end(key, "span", name, begin, begin_event, ts, how, own)

    def close_deeper(key, t, depth, at_depth, ts):
        while t.calls and (t.calls[-1][2] > depth or (at_depth and t.calls[-1][2] == depth)):
            pop_call(key, t, ts, "exit_lost")

    for e in events:
        w = what(e)
        if "ts_ns" not in e:
            if skip_untimed or w is None:
                continue
        ts = e.get("ts_ns", e.get("ts_raw"))
        key = (e.get("pid", 0), e.get("tid", 0))
        if w is None:
            if all_times and e.get("tid") and key in threads:
                t = threads[key]
                t.last = ts if t.last is None else max(t.last, ts)
            continue
        t = thread_of(key)
        t.last = ts if t.last is None else max(t.last, ts)
        if w in ("enter", "exit"):
            kind, name, depth = "function", function_name(e), e["depth"]
        else:
            kind, name, depth = "span", e["tag"], 0
        item = {"thread": key, "kind": kind, "name": name, "event": e}
        if w == "enter":
            if t.skipping:
                if depth >= t.skip_depth:
                    too_deep.append(item)
                    continue
                t.skipping = False
            close_deeper(key, t, depth, True, ts)
            if len(t.calls) == CALLS_MAX:
                t.skipping, t.skip_depth = True, depth
                too_deep.append(item)
                continue
            t.calls.append([name, e["addr"], depth, ts, e])
        elif w == "exit":
            if t.skipping:
                if depth >= t.skip_depth:
                    if depth == t.skip_depth:
                        t.skipping = False
                    continue
                t.skipping = False
            close_deeper(key, t, depth, False, ts)
            if t.calls and t.calls[-1][2] == depth:
                if t.calls[-1][1] == e["addr"]:
                    pop_call(key, t, ts, end_of_flags(e.get("flags", 0)), e)
                    continue
                pop_call(key, t, ts, "exit_lost")
            orphans.append(item)
        elif w == "begin":
            if len(t.marked) == MARKED_MAX:
                t.skip_marked += 1
                too_deep.append(item)
                continue
            t.marked.append([name, ts, e])
        else:
            if t.skip_marked:
                t.skip_marked -= 1
                continue
            found = [i for i, m in enumerate(t.marked) if m[0] == name]
            if not found:
                orphans.append(item)
                continue
            while len(t.marked) > found[-1] + 1:
                pop_marked(key, t, ts, "exit_lost")
            pop_marked(key, t, ts, "returned", e)
    for key in order:
        t = threads[key]
        while t.marked:
            pop_marked(key, t, t.last, "unclosed")
        while t.calls:
            pop_call(key, t, t.last, "unclosed")
    return spans, orphans, too_deep
