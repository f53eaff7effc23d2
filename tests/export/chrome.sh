#!/bin/sh
# chrome.sh TOOL PROG - `ringtrace export --chrome` of real recordings of
# export_prog, each checked against `dump --json` of the same input by
# check_chrome.py: a clean trace file (every kind of event, file I/O
# included), a flight arena too small to hold it (overwritten events,
# exits whose enters are gone), and a trace file damaged in the middle.
set -u
tool=$1
prog=$2
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../e2e/lib.sh"
unset RINGTRACE_ARENA RINGTRACE_BUFFER RINGTRACE_MODE LD_PRELOAD
python=/usr/bin/python3
[ -x "$python" ] || python=python3

# exported NAME INPUT [CHECK OPTIONS]: dump --json and export --chrome of INPUT, compared
exported() {
	name=$1
	input=$2
	shift 2
	"$tool" dump --json "$input" >"$work/$name.jsonl" 2>"$work/$name.dump.err"
	dump_status=$?
	"$tool" export --chrome "$input" >"$work/$name.json" 2>"$work/$name.err"
	status=$?
	if [ "$status" -ne "$dump_status" ]; then
		fail "$name: export exits $status, dump $dump_status"
		cat "$work/$name.err" >&2
		return
	fi
	pass
	check "$name: the export matches dump --json" "$python" "$here/check_chrome.py" \
		"$work/$name.jsonl" "$work/$name.json" "$@"
}

check "record --io runs the program" "$tool" record -q --io -o "$work/clean.rt" -- "$prog" "$work"
exported clean "$work/clean.rt"
[ "$status" -eq 0 ] && pass || fail "clean: export exits $status"

# a 4 KiB flight ring wraps: the oldest enters are overwritten, their exits remain
check "the program runs with a small flight arena" env RINGTRACE_ARENA="$work/small.arena" \
	RINGTRACE_BUFFER=4K "$prog" "$work"
exported small "$work/small.arena" --losses
grep -q '"exit without enter"' "$work/small.json" && pass ||
	fail "small: no exit shown without its enter"

# damage in the middle of the trace file: what is left exported, the damage shown, status 3
size=$(stat -c %s "$work/clean.rt")
cp "$work/clean.rt" "$work/damaged.rt"
check "the copy is damaged" "$python" -c '
import sys
path, size = sys.argv[1], int(sys.argv[2])
with open(path, "r+b") as f:
    f.seek(size // 2)
    f.write(b"\xa5" * 512)
' "$work/damaged.rt" "$size"
exported damaged "$work/damaged.rt" --losses
[ "$status" -eq 3 ] && pass || fail "damaged: export exits $status, not 3"
grep -q '"reason":"damaged"' "$work/damaged.json" && pass || fail "damaged: no damaged loss shown"

# --tid: only that thread's events
tid=$("$python" -c '
import json, sys
for line in open(sys.argv[1]):
    d = json.loads(line)
    if d.get("thread") == "worker-1":
        print(d["tid"]); break
' "$work/clean.jsonl")
check "--tid exports one thread" sh -c '"$1" export --chrome --tid "$2" "$3" >"$4"' sh "$tool" \
	"$tid" "$work/clean.rt" "$work/tid.json"
check "--tid: every event of that thread" "$python" -c '
import json, sys
ev = [e for e in json.load(open(sys.argv[1]))["traceEvents"] if e["ph"] != "M"]
tid = int(sys.argv[2])
assert ev and all(e["tid"] == tid for e in ev), "other threads exported"
assert sum(e["ph"] == "B" for e in ev) > 10, "too few spans"
' "$work/tid.json" "$tid"

# the command line
"$tool" export "$work/clean.rt" >/dev/null 2>"$work/usage.err"
[ $? -eq 2 ] && grep -q "which format" "$work/usage.err" && pass || fail "no format: not a usage error"
"$tool" export --chrome --perfetto "$work/clean.rt" >/dev/null 2>&1
[ $? -eq 2 ] && pass || fail "two formats: not a usage error"
"$tool" export --chrome "$work/missing.rt" >/dev/null 2>&1
[ $? -eq 2 ] && pass || fail "a missing input: not status 2"
"$tool" export --help | grep -q -- "--chrome" && pass || fail "export --help"
finish
