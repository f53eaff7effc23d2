#!/usr/bin/env python3
"""check_perfetto.py DECODED DUMP_JSON [--partial] - `export --perfetto` against `dump --json`.

DECODED is the export as `protoc --decode=ringtrace.perfetto.Trace` prints
it; DUMP_JSON is `ringtrace dump --json` of the same input.  Every thread
of the dump must have a described track, and on it, in order, the dump's
function calls as balanced slices, its I/O calls as slices (their start
dur_ns before their end) with the same operation, descriptor, path, size,
result and errno, its trace events as instants named by the tag with the
same arguments, and its log messages as instants named by the message.
Exits whose enter was not recorded may only be "exit without enter" instants.
"""
import codecs
import json
import sys


def parse_text(text):
    """protoc's text format into nested dicts: field -> list of values."""
    root = {}
    stack = [root]
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        if line == "}":
            stack.pop()
            continue
        if line.endswith("{"):
            child = {}
            stack[-1].setdefault(line[:-1].strip(), []).append(child)
            stack.append(child)
            continue
        key, _, value = line.partition(":")
        value = value.strip()
        if value.startswith('"'):
            value = codecs.escape_decode(value[1:-1].encode("latin-1"))[0].decode("utf-8")
        elif value.lstrip("-").isdigit():
            value = int(value)
        stack[-1].setdefault(key.strip(), []).append(value)
    if len(stack) != 1:
        raise ValueError("unbalanced braces")
    return root


def one(msg, key, default=None):
    values = msg.get(key)
    return values[0] if values else default


def annotations(event):
    out = {}
    for a in event.get("debug_annotations", []):
        for k in ("string_value", "int_value", "uint_value", "bool_value", "pointer_value"):
            if k in a:
                out[one(a, "name")] = one(a, k)
    return out


failures = []


def expect(cond, what):
    if not cond:
        failures.append(what)


def main():
    partial = sys.argv[3:] == ["--partial"]
    decoded = parse_text(open(sys.argv[1], encoding="utf-8").read())
    dump = [json.loads(line) for line in open(sys.argv[2], encoding="utf-8")]

    tracks = {}  # uuid -> ("thread", tid, name) or ("process", pid, name)
    events = {}  # uuid -> [(ts, type, name, annotations)]
    for packet in decoded.get("packet", []):
        expect(one(packet, "trusted_packet_sequence_id") == 1, "a packet of another sequence")
        d = one(packet, "track_descriptor")
        if d is not None:
            uuid = one(d, "uuid")
            if "thread" in d:
                t = one(d, "thread")
                tracks[uuid] = ("thread", one(t, "tid"), one(t, "thread_name", ""))
            elif "parent_uuid" in d:
                # a thread's marked spans: a track of their own under the thread's
                parent = tracks.get(one(d, "parent_uuid"))
                expect(parent is not None and parent[0] == "thread",
                       "a child track not under a thread described before it")
                tracks[uuid] = ("spans", parent[1] if parent else 0, one(d, "name", ""))
            else:
                p = one(d, "process")
                tracks[uuid] = ("process", one(p, "pid"), one(p, "process_name", ""))
                expect(one(p, "process_name", "") != "", "a process without its program")
            continue
        e = one(packet, "track_event")
        expect(e is not None, "a packet neither a descriptor nor an event")
        uuid = one(e, "track_uuid")
        expect(uuid in tracks, "an event on a track not described before it")
        events.setdefault(uuid, []).append(
            (one(packet, "timestamp"), one(e, "type"), one(e, "name"), annotations(e)))

    by_tid = {v[1]: k for k, v in tracks.items() if v[0] == "thread"}
    dumped = {}
    for ev in dump:
        if ev.get("kind") in ("enter", "exit", "io", "trace", "log"):
            dumped.setdefault(ev["tid"], []).append(ev)
    expect(len(dumped) >= 2, "the program's two threads in the dump")

    for tid, evs in dumped.items():
        uuid = by_tid.get(tid)
        if uuid is None:
            expect(False, f"thread {tid}: no track")
            continue
        expect(tracks[uuid][2] == evs[0]["thread"], f"thread {tid}: named {tracks[uuid][2]!r}")
        shown = events.get(uuid, [])
        # slices balanced, times in order
        depth, last = 0, 0
        for ts, kind, name, ann in shown:
            expect(ts >= last, f"thread {tid}: time goes back at {ts}")
            last = ts
            if kind == "TYPE_SLICE_BEGIN":
                depth += 1
            elif kind == "TYPE_SLICE_END":
                depth -= 1
                expect(depth >= 0, f"thread {tid}: a slice end without a begin at {ts}")
        expect(depth == 0, f"thread {tid}: {depth} slices left open")

        calls = [e for e in shown if e[1] == "TYPE_SLICE_BEGIN" and "depth" in e[3]]
        enters = [e for e in evs if e["kind"] == "enter"]
        expect([(c[0], c[2], c[3]["depth"]) for c in calls]
               == [(e["ts_ns"], e["func"], e["depth"]) for e in enters],
               f"thread {tid}: calls {len(calls)} vs {len(enters)} enters")
        unmatched = [e for e in shown if e[2] == "exit without enter"]
        # ends an exit made (not closed as lost by a later event, not open at the end)
        ends = [e for e in shown if e[1] == "TYPE_SLICE_END"
                and not {"exit_lost", "end_lost", "unclosed"} & set(e[3])]
        exits = [e for e in evs if e["kind"] == "exit"]
        ios = [e for e in evs if e["kind"] == "io"]
        io_slices = sum(1 for e in ios if e.get("dur_ns", 0) > 0)
        expect(len(ends) + len(unmatched) == len(exits) + io_slices,
               f"thread {tid}: {len(ends)} ends + {len(unmatched)} unmatched vs "
               f"{len(exits)} exits + {io_slices} I/O slices")
        expect(partial or not unmatched, f"thread {tid}: a complete recording has no unmatched exit")

        shown_io = [e for e in shown if "result" in e[3] and e[1] != "TYPE_SLICE_END"]
        expect(len(shown_io) == len(ios), f"thread {tid}: {len(shown_io)} I/O vs {len(ios)}")
        for s, d in zip(shown_io, ios):
            ts, kind, name, ann = s
            what = f"thread {tid}: I/O at {d['ts_ns']}"
            expect(name == d["op"], f"{what}: named {name!r}")
            for key in ("fd", "path", "size", "result", "errno"):
                expect(ann.get(key) == d.get(key), f"{what}: {key} {ann.get(key)!r}")
            if d.get("dur_ns", 0) > 0:
                expect(kind == "TYPE_SLICE_BEGIN" and ts <= d["ts_ns"] and
                       ts >= d["ts_ns"] - d["dur_ns"], f"{what}: begins at {ts}")

        traces = [e for e in shown if e[1] == "TYPE_INSTANT" and "arg0" in e[3]]
        dumped_traces = [e for e in evs if e["kind"] == "trace"]
        expect([(t[0], t[2], [t[3][f"arg{i}"] for i in range(len(d["args"]))])
                for t, d in zip(traces, dumped_traces)]
               == [(d["ts_ns"], d["tag"], d["args"]) for d in dumped_traces]
               and len(traces) == len(dumped_traces), f"thread {tid}: trace events differ")

        logs = [e for e in shown if e[1] == "TYPE_INSTANT" and "level" in e[3]]
        dumped_logs = [e for e in evs if e["kind"] == "log"]
        expect([(l[0], l[2], l[3]["level"], l[3]["msg"]) for l in logs]
               == [(d["ts_ns"], d["msg"], d["level"], d["msg"]) for d in dumped_logs],
               f"thread {tid}: log messages differ")

    # a loss without a time of its own has none in the dump: compared by thread and name
    lost = [(tracks[uuid][1] if tracks[uuid][0] == "thread" else 0, e[2])
            for uuid, evs in events.items() for e in evs
            if e[1] == "TYPE_INSTANT" and (e[2] or "").startswith("lost ")]
    dumped_lost = [(e.get("tid", 0), f"lost {e['count']} events ({e['reason']})")
                   for e in dump if e.get("kind") == "lost"]
    expect(sorted(lost) == sorted(dumped_lost), f"{len(lost)} losses vs {len(dumped_lost)}")
    expect(not partial or dumped_lost, "a partial recording that lost nothing")

    for f in failures:
        print("FAIL:", f, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
