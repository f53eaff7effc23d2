#!/bin/sh
# ship_e2e.sh TOOL RATE_PROG SPANS_PROG SPAN_PROG RECORD_PROG LOSS_PROG - `ringtrace ship`
# end to end, into a real clickhouse-server on loopback (tests/lib/clickhouse.py): real
# programs recorded here (file I/O and log messages under `record --io`, function calls and
# marked spans, a set rotated by --max-size, a copy damaged in the middle, events lost for
# want of a ring or of room for their sites), shipped as three hosts and more;
# ship_check.py then holds the table to `dump --json` of each file, kills the server while
# a ship runs and kills ship itself, and checks that the counts come out exact.
set -u
tool=$1
rate_prog=$2
spans_prog=$3
span_prog=$4
record_prog=$5
loss_prog=$6
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../e2e/lib.sh"
unset RINGTRACE_ARENA RINGTRACE_BUFFER RINGTRACE_MODE RINGTRACE_RINGS RINGTRACE_SYNC LD_PRELOAD
python=/usr/bin/python3
[ -x "$python" ] || python=python3

mkdir -p "$work/a" "$work/b" "$work/c" "$work/io" "$work/damaged" "$work/follow" "$work/u" \
	"$work/l"
# a file without its end block: record SIGKILLed while its program sleeps (the arena in $work)
mkdir -m 700 "$work/arena"
RINGTRACE_DIR=$work/arena "$tool" record -q -o "$work/u/cut.rt" -- "$record_prog" sleep 30 &
cut_record=$!

# host-a: file I/O, log messages, trace events and calls of rate_prog, under record --io
check "record --io runs rate_prog" "$tool" record -q --io -o "$work/a/rate.rt" -- \
	"$rate_prog" "$work/io"
# host-b: function calls (instrumented) and spans marked in the source
check "record runs spans_prog" "$tool" record -q -o "$work/b/shape.rt" -- "$spans_prog" shape
check "record runs span_prog" "$tool" record -q -o "$work/b/span.rt" -- "$span_prog"
# host-c: a recording rotated into several files
check "record --max-size runs record_program" "$tool" record -q --max-size 32K \
	-o "$work/c/rot.rt" -- "$record_prog" threads 2 8000
set -- "$work"/c/rot.rt.*
[ $# -ge 3 ] && pass || fail "the rotated recording has $# files, not 3 or more"

# host-l: events the library counted lost, which no ring holds: 8 threads for 4 rings
# (main holds one: 5 threads lose their 1,000 events), and sites refused for want of room
check "record runs loss_program with 4 rings" env RINGTRACE_RINGS=4 "$tool" record -q \
	-o "$work/l/rings.rt" -- "$loss_prog" together 8 1000 >"$work/l/rings.out"
check "record runs loss_program's sites" "$tool" record -q -o "$work/l/sites.rt" -- \
	"$loss_prog" sites 3 >"$work/l/sites.out"

cut_program=$(pgrep -P "$cut_record")
kill -KILL "$cut_record"
[ -n "$cut_program" ] && kill -KILL "$cut_program"
wait "$cut_record" 2>/dev/null
[ -n "$cut_program" ] && pass || fail "record of the unfinished file: no program under it"

# a copy of shape.rt with 512 bytes overwritten in its middle
size=$(stat -c %s "$work/b/shape.rt")
cp "$work/b/shape.rt" "$work/damaged/shape.rt"
check "the copy is damaged" "$python" -c '
import sys
path, size = sys.argv[1], int(sys.argv[2])
with open(path, "r+b") as f:
    f.seek(size // 2)
    f.write(b"\xa5" * 512)
' "$work/damaged/shape.rt" "$size"

check "ship: every file in the table, exactly once, through crashes" "$python" \
	"$here/ship_check.py" --tool "$tool" --work "$work" --record-prog "$record_prog"
finish
