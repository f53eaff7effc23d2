#!/usr/bin/env python3
"""compare.py HOW EXPECTED DUMP_JSON SUMMARY_JSON - what v0_program said it
emitted (EXPECTED, its stdout) against what the tool read back (`ringtrace
dump --json` and `ringtrace summary --json` of its arena or trace file).

Every thread's events, as lines of the program's form ("THREAD trace TAG
SPAN ARG..." or "THREAD log LEVEL MESSAGE"), must be, in order:
  exact        its expected lines, all of them, and nothing counted lost
  last         the last of its expected lines (a flight ring overwrote the
               others)
  some         a subsequence of its expected lines (a stream ring dropped
               the others)
and for every thread, and for the whole process, the events shown and the
events the summary counts lost (dropped, overwritten, torn, damaged) add up
to the events emitted.  Prints one line per failure; exit status 1 if any.
"""
import json
import sys


def event_line(event):
    if event["kind"] == "trace":
        words = [event["thread"], "trace", event["tag"], event.get("span", "-")]
        words += [str(a) for a in event["args"]]
        return " ".join(words)
    if event["kind"] == "log":
        return " ".join([event["thread"], "log", event["level"], event["msg"]])
    return None


def by_thread(lines):
    threads = {}
    for line in lines:
        threads.setdefault(line.split(" ", 1)[0], []).append(line)
    return threads


def is_subsequence(shown, expected):
    at = iter(expected)
    return all(any(line == e for e in at) for line in shown)


def lost_of(counts):
    return sum(counts[k] for k in ("dropped", "overwritten", "torn", "damaged"))


def main():
    how, expected_path, dump_path, summary_path = sys.argv[1:5]
    with open(expected_path) as f:
        expected = by_thread(f.read().splitlines())
    shown_lines = []
    with open(dump_path) as f:
        for text in f:
            line = event_line(json.loads(text))
            if line is not None:
                shown_lines.append(line)
    shown = by_thread(shown_lines)
    with open(summary_path) as f:
        summary = json.load(f)
    lost = {t["name"]: lost_of(t) for t in summary["threads"]}

    failures = []
    for name in sorted(set(shown) - set(expected)):
        failures.append(f"{name}: {len(shown[name])} events of a thread that emitted none")
    for name, want in sorted(expected.items()):
        got = shown.get(name, [])
        if how == "exact":
            good = got == want
        elif how == "last":
            good = got == want[len(want) - len(got):]
        else:
            good = is_subsequence(got, want)
        if not good:
            first = next((i for i, (g, w) in enumerate(zip(got, want)) if g != w), None)
            where = f"first difference at event {first}: {got[first]!r}, not {want[first]!r}" \
                if first is not None else f"{len(got)} events shown, {len(want)} emitted"
            what = {"exact": "the events emitted", "last": "the last events emitted",
                    "some": "events emitted, in their order"}[how]
            failures.append(f"{name}: the events shown are not {what} ({where})")
        thread_lost = lost.get(name, 0)
        if how == "exact" and thread_lost:
            failures.append(f"{name}: {thread_lost} events counted lost")
        if len(got) + thread_lost != len(want):
            failures.append(f"{name}: {len(got)} shown + {thread_lost} lost, "
                            f"but {len(want)} emitted")
    emitted = sum(len(w) for w in expected.values())
    total_lost = lost_of(summary["lost"])
    if summary["events"] + total_lost != emitted:
        failures.append(f"process: {summary['events']} shown + {total_lost} lost, "
                        f"but {emitted} emitted")
    for failure in failures:
        print(failure)
    print(f"{how}: {emitted} emitted, {summary['events']} shown, {total_lost} lost")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
