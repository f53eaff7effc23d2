"""check_calls.py - the enter/exit events `ringtrace dump --json` shows for
tests/functions/calls.c, against the calls that program makes.

    check_calls.py DUMP_JSON ADDRESSES SCENARIO [--max-depth N]
                   [--exclude NAME,...] [--exclude-lib]

ADDRESSES is the file calls.c wrote: "NAME 0xADDRESS" per function.  Per
thread, the sequence of (enter|exit, function, depth) must be exactly the
expected one, every exit must close the enter on top of its thread's stack
(same function, depth and call site), flags and the unused arguments must
be 0, and every address must be one of the program's functions: anything
else (ringtrace's own code above all) is a failure.  Prints what differs.
"""
import argparse
import json
import sys


def chain(names, depth):
    """Each name calls the next; the last returns at once."""
    events = [("enter", n, depth + i) for i, n in enumerate(names)]
    events += [("exit", n, depth + i) for i, n in reversed(list(enumerate(names)))]
    return events


def alternate(a, b, count):
    return [a if i % 2 == 0 else b for i in range(count)]


def basic(depth):
    return (chain(["fact"] * 5, depth) + chain(alternate("ping", "pong", 6), depth) +
            chain(alternate("tail_a", "tail_b", 7), depth) +
            chain(["lib_outer", "lib_inner"], depth) + chain(["leaf"], depth))


def expected(scenario):
    """Per thread (main first), the calls it makes, unfiltered."""
    main = [("enter", "main", 0)] + basic(1) + [("exit", "main", 0)]
    if scenario != "threads":
        return [main]
    threads = [main]
    for i in range(4):
        threads.append([("enter", "thread_body", 0)] + chain(["leaf"], 1) +
                       chain(["fact"] * (i + 3), 1) + [("exit", "thread_body", 0)])
    return threads


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dump")
    ap.add_argument("addresses")
    ap.add_argument("scenario")
    ap.add_argument("--max-depth", type=int, default=0)
    ap.add_argument("--exclude", default="")
    ap.add_argument("--exclude-lib", action="store_true")
    a = ap.parse_args()

    names = {}
    with open(a.addresses) as f:
        for line in f:
            name, addr = line.split()
            names[int(addr, 16)] = name
    excluded = set(x for x in a.exclude.split(",") if x)
    if a.exclude_lib:
        excluded |= {"lib_outer", "lib_inner"}

    def wanted(ev):
        return ev[1] not in excluded and (a.max_depth == 0 or ev[2] < a.max_depth)

    errors = []
    per_thread = {}
    with open(a.dump) as f:
        for n, line in enumerate(f, 1):
            obj = json.loads(line)
            if obj.get("kind") == "last_event":
                continue  # each thread's last event again, after the events
            kind = obj.get("kind")
            if kind == "trace":
                continue  # the program's own RT_TRACE events
            if kind not in ("enter", "exit"):
                errors.append("line %d: not an event (a loss?): %s" % (n, line.strip()))
                continue
            if obj["flags"] != 0:
                errors.append("line %d: flags %s" % (n, obj["flags"]))
                continue
            name = names.get(obj["addr"])
            if name is None:
                errors.append("line %d: %s of 0x%x, not a function of the program" %
                              (n, kind, obj["addr"]))
                continue
            # named offline from the module map and the program's symbols and lines
            source = "fn_lib.c" if name.startswith("lib_") else "calls.c"
            if (obj["func"] != name or not obj["file"] or
                    not obj["file"].endswith("/" + source) or not obj["line"] or
                    not obj["module"]):
                errors.append("line %d: %s of %s named %s in %s:%s (module %s)" %
                              (n, kind, name, obj["func"], obj["file"], obj["line"],
                               obj["module"]))
                continue
            per_thread.setdefault(obj["tid"], []).append((kind, name, obj["depth"],
                                                          obj["call_site"]))

    # exits close enters: same function, depth and call site
    for tid, events in per_thread.items():
        stack = []
        for tag, name, depth, site in events:
            if tag == "enter":
                stack.append((name, depth, site))
            elif not stack or stack[-1] != (name, depth, site):
                errors.append("thread %d: exit of %s at depth %d (site 0x%x) closes %s" %
                              (tid, name, depth, site, stack[-1] if stack else "nothing"))
                break
            else:
                stack.pop()
        if stack:
            errors.append("thread %d: calls left open: %s" % (tid, stack))

    want = [[e for e in t if wanted(e)] for t in expected(a.scenario)]
    want = [t for t in want if t]
    got = [[(tag, name, depth) for tag, name, depth, _ in t] for t in per_thread.values()]
    # the main thread first, the others in any order
    unmatched = list(got)
    for i, w in enumerate(want):
        if w in unmatched:
            unmatched.remove(w)
        else:
            errors.append("expected thread %d not found:\n  %s" % (i, w))
    for g in unmatched:
        errors.append("unexpected thread sequence:\n  %s" % g)

    for e in errors:
        print("check_calls: %s: %s" % (a.scenario, e), file=sys.stderr)
    if not errors:
        print("check_calls: %s: %d threads, %d events as expected" %
              (a.scenario, len(got), sum(len(t) for t in got)))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
