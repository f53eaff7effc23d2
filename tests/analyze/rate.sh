#!/bin/sh
# rate.sh TOOL PROG - `ringtrace analyze rate` on real recordings of
# rate_prog, every JSON row recomputed from `dump --json` of the same input
# by rate_check.py: a clean trace file (trace, span, log, enter/exit and
# I/O events), chosen intervals, --top, --tid, a small flight arena that lost
# events, a trace file damaged in the middle (exit 3); the table, the page,
# --help and usage errors.
set -u
tool=$1
prog=$2
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../e2e/lib.sh"
unset RINGTRACE_ARENA RINGTRACE_BUFFER RINGTRACE_MODE LD_PRELOAD
python=/usr/bin/python3
[ -x "$python" ] || python=python3

# analyzed NAME INPUT STATUS [ANALYZE OPTIONS] [-- CHECK OPTIONS]
analyzed() {
	name=$1
	input=$2
	want=$3
	shift 3
	opts=""
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		opts="$opts $1"
		shift
	done
	[ $# -gt 0 ] && shift
	# shellcheck disable=SC2086 # opts are words
	"$tool" dump --json $(echo "$opts" | grep -o -- '--tid [0-9]*') "$input" \
		>"$work/$name.dump" 2>"$work/$name.dump.err"
	# shellcheck disable=SC2086
	"$tool" analyze rate --json $opts "$input" >"$work/$name.json" 2>"$work/$name.err"
	status=$?
	if [ "$status" -ne "$want" ]; then
		fail "$name: analyze rate exits $status, not $want"
		cat "$work/$name.err" >&2
		return
	fi
	pass
	check "$name: every row matches dump --json" "$python" "$here/rate_check.py" \
		"$work/$name.dump" "$work/$name.json" "$@"
}

check "record --io runs the program" "$tool" record -q --io -o "$work/clean.rt" -- "$prog" "$work"
analyzed clean "$work/clean.rt" 0
grep -q '"row":"tag","tag":"io:write","kind":"io"' "$work/clean.json" && pass ||
	fail "clean: no io:write row"
grep -q '"row":"tag","tag":"request %u done, sum %d","kind":"log"' "$work/clean.json" && pass ||
	fail "clean: no row for the log line's format"
grep -q '"tag":"enter","kind":"enter"' "$work/clean.json" && pass || fail "clean: no enter row"
grep -q '"row":"tag","tag":"serve","kind":"begin","count":400,' "$work/clean.json" &&
	grep -q '"row":"tag","tag":"serve","kind":"end","count":400,' "$work/clean.json" && pass ||
	fail "clean: a span's starts and ends are not two rows of 400"
grep -q '"row":"thread",.*"thread":"rate-tick","count":3502' "$work/clean.json" && pass ||
	fail "clean: rate-tick's row does not count its 3502 events (500 + 3000, its enter and exit)"
# the burst of 3000 (in one bin, or two when it straddles their edge) makes the busiest bin
grep '"row":"busiest","rank":1,' "$work/clean.json" | grep -q '"tag":"burst","kind":"trace"' &&
	pass || fail "clean: the busiest bin is not the burst's"

analyzed ms "$work/clean.rt" 0 --interval 1ms -- --interval 1000000
analyzed us "$work/clean.rt" 0 --interval 50us -- --interval 50000
analyzed top3 "$work/clean.rt" 0 --top 3 -- --top 3
tid=$(grep -m1 '"thread":"rate-request"' "$work/clean.dump" | sed 's/.*"tid":\([0-9]*\).*/\1/')
analyzed tid "$work/clean.rt" 0 --tid "$tid"
[ "$(grep -c '"row":"thread"' "$work/tid.json")" -eq 1 ] && pass || fail "--tid: not one thread row"

# a bin too narrow for the span: merged, and said
"$tool" analyze rate --json --interval 1ns "$work/clean.rt" >"$work/narrow.json" 2>&1 &&
	grep -q '"row":"bins".*"asked_interval_ns":1,"coarsened":true' "$work/narrow.json" && pass ||
	fail "--interval 1ns: not said to be coarsened"
"$tool" analyze rate --interval 1ns "$work/clean.rt" >"$work/narrow.txt" 2>&1 &&
	grep -q "note: bins of 1 ns (--interval) would be more than" "$work/narrow.txt" && pass ||
	fail "--interval 1ns: the table does not say the bins were merged"

# a 4 KiB flight ring wraps: overwritten events, reported after the rows
check "the program runs with a small flight arena" env RINGTRACE_ARENA="$work/small.arena" \
	RINGTRACE_BUFFER=4K "$prog" "$work"
analyzed small "$work/small.arena" 0
grep -q '"lost":[0-9]*,"reason":"overwritten"' "$work/small.json" && pass ||
	fail "small: no overwritten loss reported"

# damage in the middle of the trace file: what is left analyzed, status 3
size=$(stat -c %s "$work/clean.rt")
cp "$work/clean.rt" "$work/damaged.rt"
check "the copy is damaged" "$python" -c '
import sys
path, size = sys.argv[1], int(sys.argv[2])
with open(path, "r+b") as f:
    f.seek(size // 2)
    f.write(b"\xa5" * 512)
' "$work/damaged.rt" "$size"
analyzed damaged "$work/damaged.rt" 3

# the table and the page
"$tool" analyze rate --html "$work/rate.html" "$work/clean.rt" >"$work/table.txt" 2>&1
[ $? -eq 0 ] && pass || fail "table: analyze rate failed"
grep -q '^busiest intervals' "$work/table.txt" && pass || fail "table: no busiest intervals"
grep -Eq '^  burst +trace +3000 ' "$work/table.txt" && pass || fail "table: no burst row"
grep -q 'tid [0-9]* (rate-quiet)' "$work/table.txt" && pass || fail "table: no rate-quiet thread"
[ -s "$work/rate.html" ] && grep -q 'Events per second, by tag' "$work/rate.html" && pass ||
	fail "html: no rate plot"
grep -q 'serve (begin)' "$work/rate.html" && grep -q 'serve (end)' "$work/rate.html" && pass ||
	fail "html: a span's two ends not told apart in the legend"

# --help and usage errors
"$tool" analyze --help | grep -Eq '^  rate +events per second' && pass || fail "--help: no rate"
"$tool" analyze rate --interval 10 "$work/clean.rt" >/dev/null 2>&1
[ $? -eq 2 ] && pass || fail "--interval without a unit: not a usage error"
"$tool" analyze rate --interval "$work/clean.rt" >/dev/null 2>&1
[ $? -eq 2 ] && pass || fail "--interval without a value: not a usage error"
"$tool" analyze rate "$work/nothing.rt" >/dev/null 2>&1
[ $? -eq 2 ] && pass || fail "a missing input: not exit 2"
finish
