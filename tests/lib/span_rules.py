"""span_rules.py - the rules of the span tracker (src/event/span_tracker.h),
written again from its header, over the events of `ringtrace dump --json`:
what every view that pairs calls and marked spans (analyze spans, ship, the
Chrome and Perfetto exports) must show of them.

    spans, orphans, too_deep = pair(events)

events: dump --json objects in the dump's order.  A thread is (pid, tid)
(dump names the pid only when it shows several processes: 0 otherwise).
Enters and exits pair by the depth they carry, marked spans (trace events
with "span") by their tag inside the call they began in, one stack per
thread; whatever is open above a span that ends is closed with it (as it
ended when the library closed it, else as exit lost); a thread holds
DEPTH_MAX open spans; spans open at the end close at their thread's latest
time.  Every event with a time and a thread counts for that time when
all_times is set (the exports), only enters, exits, begins and ends when
not (analyze: the other events are not fed to it).

Each span: {"thread", "kind" ("function" or "span"), "name", "begin",
"end", "how", "begin_event", "end_event"}; "how" is returned, unwound,
thread_ended, exited, exit_lost (end_lost for a marked span) or unclosed;
end_event is the exit or end that ended it when it was its own.  Orphans
and too_deep: {"thread", "kind", "name", "event"}.  Spans are listed in the
order they end; events without ts_ns (a source without clock metadata) are
left out when skip_untimed is set, as analyze and ship leave them out.
"""

DEPTH_MAX = 1024


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
        self.stack = []  # [kind, name, ident, depth, begin ts, begin event]
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

    def pop(key, t, end, how, own=None):
        kind, name, _, _, begin, begin_event = t.stack.pop()
        if how == "exit_lost" and kind == "span":
            how = "end_lost"
        spans.append({"thread": key, "kind": kind, "name": name, "begin": begin, "end": end,
                      "how": how, "begin_event": begin_event, "end_event": own})
        t.skipping = False
        t.skip_marked = 0

    def pop_down_to(key, t, keep, end, how):
        while len(t.stack) > keep:
            pop(key, t, end, how)

    def innermost_call(t):
        i = len(t.stack)
        while i > 0 and t.stack[i - 1][0] != "function":
            i -= 1
        return i

    def close_deeper(key, t, depth, at_depth, ts):
        while True:
            i = innermost_call(t)
            if not i:
                return
            open_depth = t.stack[i - 1][3]
            if open_depth < depth or (open_depth == depth and not at_depth):
                return
            pop_down_to(key, t, i - 1, ts, "exit_lost")

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
            if len(t.stack) == DEPTH_MAX:
                t.skipping, t.skip_depth = True, depth
                too_deep.append(item)
                continue
            t.stack.append(["function", name, e["addr"], depth, ts, e])
        elif w == "exit":
            if t.skipping:
                if depth >= t.skip_depth:
                    if depth == t.skip_depth:
                        t.skipping = False
                    continue
                t.skipping = False
            close_deeper(key, t, depth, False, ts)
            i = innermost_call(t)
            if i and t.stack[i - 1][3] == depth:
                if t.stack[i - 1][2] == e["addr"]:
                    how = end_of_flags(e.get("flags", 0))
                    pop_down_to(key, t, i, ts, "exit_lost" if how == "returned" else how)
                    pop(key, t, ts, how, e)
                    continue
                pop_down_to(key, t, i - 1, ts, "exit_lost")
            orphans.append(item)
        elif w == "begin":
            if len(t.stack) == DEPTH_MAX or t.skipping:
                t.skip_marked += 1
                too_deep.append(item)
                continue
            t.stack.append(["span", name, name, 0, ts, e])
        else:
            if t.skip_marked:
                t.skip_marked -= 1
                continue
            if t.skipping:
                orphans.append(item)
                continue
            found = 0
            for i in range(len(t.stack), 0, -1):
                if t.stack[i - 1][0] == "function":
                    break  # a span begun outside the innermost call: not this end's
                if t.stack[i - 1][1] == name:
                    found = i
                    break
            if not found:
                orphans.append(item)
                continue
            pop_down_to(key, t, found, ts, "exit_lost")
            pop(key, t, ts, "returned", e)
    for key in order:
        t = threads[key]
        pop_down_to(key, t, 0, t.last, "unclosed")
    return spans, orphans, too_deep
