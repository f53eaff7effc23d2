#!/bin/sh
# report_io.sh TOOL PROG - `ringtrace report --io` over a recording of
# report_prog: every row holds exactly the calls the program made on it.
set -u
tool=$1
prog=$2
. "$(dirname "$0")/../e2e/lib.sh"

check "record --io runs the program" "$tool" record -q --io -o "$work/io.rt" -- "$prog" "$work"
check "report --io --json" sh -c '"$1" report --io --json "$2" >"$3"' sh "$tool" "$work/io.rt" \
	"$work/rows.json"
check "report --io text" sh -c '"$1" report --io "$2" >"$3"' sh "$tool" "$work/io.rt" \
	"$work/rows.txt"

check "every row as expected" /usr/bin/python3 - "$work" "$work/rows.json" <<'PY'
import json, sys
work, rows_path = sys.argv[1], sys.argv[2]
rows = [json.loads(line) for line in open(rows_path)]
by_file = {}
for r in rows:
    by_file.setdefault(r["file"], []).append(r)
want = {
    work + "/a": dict(opens=2, reads=4, writes=3, read_bytes=300, written_bytes=300, other_calls=2, errors=0),
    work + "/c": dict(opens=1, reads=0, writes=1, read_bytes=0, written_bytes=10, other_calls=3, errors=0),
    work + "/d": dict(opens=1, reads=0, writes=0, read_bytes=0, written_bytes=0, other_calls=0, errors=1),
    work + "/e": dict(opens=1, reads=0, writes=1, read_bytes=0, written_bytes=9, other_calls=1, errors=0),
    work + "/g": dict(opens=1, reads=0, writes=1, read_bytes=0, written_bytes=5, other_calls=2, errors=0),
}
bad = 0
for path, fields in want.items():
    got = by_file.get(path, [])
    if len(got) != 1:
        print("%s: %d rows" % (path, len(got))); bad += 1; continue
    for k, v in fields.items():
        if got[0][k] != v:
            print("%s: %s is %r, expected %r" % (path, k, got[0][k], v)); bad += 1
    if got[0]["time_ns"] <= 0:
        print("%s: no time" % path); bad += 1
pipes = [r for r in rows if r["file"] and r["file"].startswith("pipe:[")]
if len(pipes) < 1 or not any(p["reads"] == 1 and p["writes"] == 1 and p["read_bytes"] == 5 and p["written_bytes"] == 5 for p in pipes):
    print("no pipe row with one 5-byte read and write:", pipes); bad += 1
unknown = [r for r in rows if r["file"] is None]
if unknown:
    print("descriptors not named:", unknown); bad += 1
sys.exit(1 if bad else 0)
PY
check "the text names the files" grep -q " $work/a\$" "$work/rows.txt"
check "sort by bytes puts a first" sh -c '"$1" report --io --sort bytes "$2" | sed -n 2p | grep -q " $3/a\$"' \
	sh "$tool" "$work/io.rt" "$work"
check "bad sort key is a usage error" sh -c '"$1" report --io --sort calls "$2" 2>/dev/null; [ $? -eq 2 ]' \
	sh "$tool" "$work/io.rt"
check "--io with --folded is refused" sh -c '"$1" report --io --folded "$2" 2>/dev/null; [ $? -eq 2 ]' \
	sh "$tool" "$work/io.rt"
finish
