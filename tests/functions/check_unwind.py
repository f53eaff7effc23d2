#!/usr/bin/env python3
"""check_unwind.py DUMP_JSON SCENARIO [ALT_ABOVE] - the calls unwind.c or
unwind_cxx.cc made, as `ringtrace dump --json` shows them.

For every thread: each enter comes at the depth of the calls open before it
(nothing deeper is left open by a longjmp, an exception, exit or a thread's
end), each exit closes the innermost open call (same function, same depth),
and nothing is open at the end.  Then, per scenario, which functions were
called how often and how each of their calls ended: 0 returned, 1 unwound
(a later call showed it gone), 2 its thread ended, 4 the program exited.
Exits the library writes for calls that did not return have call site 0.
Prints every mismatch; exit status 1 if there is one.
"""
import json
import sys

RETURNED, UNWOUND, THREAD_ENDED, EXITED = 0, 1, 2, 4

# scenario -> {function: (calls, set of allowed flags of its exits)}; a
# function not named may appear (compiler-made helpers) but must nest too
EXPECTED = {
    "longjmp": {
        "main": (1, {RETURNED}),
        "jumper": (1, {RETURNED}),
        "top": (3, {UNWOUND}),
        "middle": (3, {UNWOUND}),
        "leaf": (3, {UNWOUND}),
        "after": (1, {RETURNED}),
    },
    "nested-jump": {
        "main": (1, {RETURNED}),
        "nested_jumper": (1, {RETURNED}),
        "catcher": (2, {RETURNED}),
        "big_leaf": (2, {UNWOUND}),
        "after": (3, {RETURNED}),
    },
    "exit": {
        "main": (1, {EXITED}),
        "ex_outer": (1, {EXITED}),
        "ex_inner": (1, {EXITED}),
    },
    "thread-exit": {
        "main": (1, {RETURNED}),
        "te_thread": (1, {THREAD_ENDED}),
        "te_outer": (1, {THREAD_ENDED}),
        "te_inner": (1, {THREAD_ENDED}),
    },
    "cancel": {
        "main": (1, {RETURNED}),
        "ca_thread": (1, {THREAD_ENDED}),
        "ca_outer": (1, {THREAD_ENDED}),
        "ca_inner": (1, {THREAD_ENDED}),
    },
    "signal": {
        "main": (1, {RETURNED}),
        "sig_spin": (1, {RETURNED}),
        "after": (1, {RETURNED}),
        "on_signal": (None, {RETURNED}),
        "handler_work": (None, {RETURNED}),
        "spin_work": (None, {RETURNED}),
    },
    "altstack": {
        "main": (1, {RETURNED}),
        "alt_thread": (1, {RETURNED}),
        "alt_outer": (1, {RETURNED}),
        "alt_inner": (1, {RETURNED}),
        "after": (1, {RETURNED}),
        "on_signal": (None, {RETURNED}),
        "handler_work": (None, {RETURNED}),
        "spin_work": (None, {RETURNED}),
    },
    # g++ runs the exit hooks as the exception passes; clang++ does not
    "throw": {
        "main": (1, {RETURNED}),
        "catcher": (1, {RETURNED}),
        "c_top": (3, {RETURNED, UNWOUND}),
        "c_mid": (3, {RETURNED, UNWOUND}),
        "c_thrower": (3, {RETURNED, UNWOUND}),
        "c_after": (3, {RETURNED}),
    },
}

# calls that must nest inside another: (callee, caller)
NESTED = {
    "longjmp": [("after", "jumper"), ("top", "jumper")],
    "nested-jump": [("after", "catcher"), ("big_leaf", "catcher")],
    "signal": [("handler_work", "on_signal")],
    "altstack": [("handler_work", "on_signal"), ("after", "alt_outer")],
    "throw": [("c_after", "catcher"), ("c_top", "catcher")],
}


def name(obj):
    return obj.get("func") or "0x%x" % obj["addr"]


def main():
    if len(sys.argv) not in (3, 4):
        sys.stderr.write("usage: check_unwind.py DUMP_JSON SCENARIO [ALT_ABOVE]\n")
        return 2
    path, scenario = sys.argv[1], sys.argv[2]
    expected = EXPECTED[scenario]
    errors = []
    stacks = {}  # tid -> [name]
    calls = {}  # name -> count of enters
    ends = {}  # name -> set of exit flags seen
    nested_ok = {pair: 0 for pair in NESTED.get(scenario, [])}
    events = 0
    with open(path) as f:
        for n, line in enumerate(f, 1):
            obj = json.loads(line)
            kind = obj.get("kind")
            if kind not in ("enter", "exit"):
                continue
            events += 1
            stack = stacks.setdefault(obj["tid"], [])
            fn = name(obj)
            if kind == "enter":
                if obj["depth"] != len(stack):
                    errors.append("line %d: enter %s at depth %d with %d calls open (%s)"
                                  % (n, fn, obj["depth"], len(stack), " > ".join(stack)))
                for pair in nested_ok:
                    if pair[0] == fn and stack and stack[-1] == pair[1]:
                        nested_ok[pair] += 1
                stack.append(fn)
                calls[fn] = calls.get(fn, 0) + 1
                continue
            if not stack or stack[-1] != fn or obj["depth"] != len(stack) - 1:
                errors.append("line %d: exit %s at depth %d, open: %s"
                              % (n, fn, obj["depth"], " > ".join(stack) or "nothing"))
                continue
            stack.pop()
            ends.setdefault(fn, set()).add(obj["flags"])
            if obj["flags"] and obj["call_site"] != 0:
                errors.append("line %d: closed exit of %s has a call site" % (n, fn))
    for tid, stack in stacks.items():
        if stack:
            errors.append("thread %d: open at the end: %s" % (tid, " > ".join(stack)))
    for fn, (count, allowed) in expected.items():
        if count is not None and calls.get(fn, 0) != count:
            errors.append("%s: %d calls, expected %d" % (fn, calls.get(fn, 0), count))
        if count is None and calls.get(fn, 0) == 0:
            errors.append("%s: never called" % fn)
        bad = ends.get(fn, set()) - allowed
        if bad:
            errors.append("%s: exits with flags %s, expected only %s"
                          % (fn, sorted(bad), sorted(allowed)))
    for (callee, caller), seen in nested_ok.items():
        if not seen:
            errors.append("%s never entered directly inside %s" % (callee, caller))
    if events == 0:
        errors.append("no function event at all")
    for e in errors[:40]:
        print("check_unwind %s: %s" % (scenario, e))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
