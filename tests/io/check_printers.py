#!/usr/bin/env python3
"""check_printers.py FULL_JSON TAIL_JSON TAIL_TEXT - the two printers of
`ringtrace dump` show an I/O call's file and derived position alike, also
after calls a cut leaves out.

FULL_JSON is `dump --json` of a trace, TAIL_JSON `dump --json --tail N` and
TAIL_TEXT `dump --tail N` of the same trace.  The calls before the tail are
not shown, yet they still open, duplicate and close descriptors and move
their positions: every I/O call of TAIL_JSON names the file and the derived
position that FULL_JSON gives the same call, and the text lines give, in
the same order, the same files ('?' where JSON says path_unknown) and
positions (pos=, but for a rundown's, which is recorded).
"""
import json
import re
import sys


def io_calls(path):
    calls = []
    with open(path) as f:
        for line in f:
            ev = json.loads(line)
            if ev.get("kind") == "io" and not ev.get("malformed"):
                calls.append(ev)
    return calls


def shown_name(ev):
    return "?" if ev.get("path_unknown") else ev.get("path")


def derived(ev):
    return ev.get("offset") if ev.get("offset_derived") else None


def key(ev):
    return (ev.get("pid"), ev["tid"], ev.get("seq"), ev["ts_ns"])


def main():
    full, tail, text = sys.argv[1:4]
    errors = []
    by_key = {key(ev): ev for ev in io_calls(full)}
    tail_calls = io_calls(tail)
    for ev in tail_calls:
        whole = by_key.get(key(ev))
        if whole is None:
            errors.append("call %s of the tail is not in the whole dump" % (key(ev),))
        elif (shown_name(whole), derived(whole)) != (shown_name(ev), derived(ev)):
            errors.append("call %s: %r at %r in the whole dump, %r at %r in the tail" %
                          (key(ev), shown_name(whole), derived(whole), shown_name(ev),
                           derived(ev)))
    shown = []
    with open(text) as f:
        for line in f:
            m = re.search(r" : FileIO/(\w+) (?:fd -?\d+ )?'([^']*)'(.*)", line)
            if m:
                pos = re.search(r" pos=0x([0-9a-f]+)", m.group(3))
                at = int(pos.group(1), 16) if pos and m.group(1) != "Rundown" else None
                shown.append((m.group(2), at))
    want = [(shown_name(ev), derived(ev)) for ev in tail_calls]
    if shown != want:
        first = next((i for i, (a, b) in enumerate(zip(shown, want)) if a != b),
                     min(len(shown), len(want)))
        errors.append("text shows %d calls, JSON %d; the first that differs, %d: %s, %s" %
                      (len(shown), len(want), first, shown[first:first + 1],
                       want[first:first + 1]))
    if not tail_calls:
        errors.append("the tail holds no I/O call")
    for e in errors[:10]:
        print(e)
    print("%d calls in the tail (%d positions derived), shown alike by text and JSON and "
          "as in the whole dump: %s" %
          (len(tail_calls), sum(derived(ev) is not None for ev in tail_calls),
           "no" if errors else "yes"))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
