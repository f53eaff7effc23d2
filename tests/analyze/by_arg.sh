#!/bin/sh
# by_arg.sh TOOL PROG - `ringtrace analyze by-arg` on real recordings of
# rate_prog, every JSON row recomputed from `dump --json` of the same input
# by by_arg_check.py: each argument of "request" (unsigned, signed, a
# pointer, 64-bit values, a value per event), spans ("serve", and "nest"
# nested, an orphan end, one never ended), --top, --per-thread, a small
# flight arena that lost events, a damaged trace file (exit 3); the table,
# the page, and the options by-arg refuses.
set -u
tool=$1
prog=$2
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../e2e/lib.sh"
unset RINGTRACE_ARENA RINGTRACE_BUFFER RINGTRACE_MODE LD_PRELOAD
python=/usr/bin/python3
[ -x "$python" ] || python=python3

# grouped NAME INPUT STATUS TAG N [OPTIONS]: analyze by-arg of INPUT, checked
grouped() {
	name=$1
	input=$2
	want=$3
	tag=$4
	n=$5
	shift 5
	[ -s "$input.dump" ] || "$tool" dump --json "$input" >"$input.dump" 2>/dev/null
	"$tool" analyze by-arg --json --tag "$tag" --arg "$n" "$@" "$input" >"$work/$name.json" \
		2>"$work/$name.err"
	status=$?
	if [ "$status" -ne "$want" ]; then
		fail "$name: analyze by-arg exits $status, not $want"
		cat "$work/$name.err" >&2
		return
	fi
	pass
	check "$name: every row matches dump --json" "$python" "$here/by_arg_check.py" \
		"$input.dump" "$work/$name.json" "$tag" "$n" "$@"
}

check "record --io runs the program" "$tool" record -q --io -o "$work/clean.rt" -- "$prog" "$work"
for n in 0 1 2 3 4 5; do
	grouped "arg$n" "$work/clean.rt" 0 request "$n"
done
grep -q '"row":"value","value":-2,"type":"signed","count":133' "$work/arg1.json" && pass ||
	fail "arg1: -2 is not a signed value of 133 events"
grep -q '"row":"value","value":[0-9]*,"type":"pointer"' "$work/arg4.json" && pass ||
	fail "arg4: the pointer's values are not said to be pointers"
grep -q '"row":"value","value":3298534883328,"type":"unsigned","count":100' "$work/arg5.json" &&
	pass || fail "arg5: 3 << 40 is not a value of 100 events"
grep -q '"row":"rest","values":380,"count":380' "$work/arg3.json" && pass ||
	fail "arg3: the 380 values past the top 20 are not one rest row"
grouped top2 "$work/clean.rt" 0 request 0 --top 2
grouped threads "$work/clean.rt" 0 request 0 --per-thread
grouped ticks "$work/clean.rt" 0 tick 0 --per-thread --top 5
# the last tick is followed by the burst: every tick is timed
grep -q '"row":"summary","tag":"tick","arg":0,"time":"hold","events":500,' "$work/ticks.json" &&
	pass || fail "ticks: not 500 events held"
# spans: each "serve" timed to its end, the "nest" spans to the innermost end
grouped serve "$work/clean.rt" 0 serve 0 --per-thread
grep -q '"row":"summary","tag":"serve","arg":0,"time":"span","events":400,' "$work/serve.json" &&
	pass || fail "serve: not 400 spans"
grouped nest "$work/clean.rt" 0 nest 0
grep -q '"row":"summary","tag":"nest","arg":0,"time":"span","events":17,.*"orphan_ends":1,' \
	"$work/nest.json" && pass || fail "nest: not 17 spans and an orphan end"
grep -q '"row":"value","value":3,"type":"unsigned","count":1,.*"timed":0,"unclosed":1,' \
	"$work/nest.json" && pass || fail "nest: the span never ended is not unclosed"
grouped none "$work/clean.rt" 0 "no such tag" 0
grep -q '"events":0,"time_ns":0,"values":0' "$work/none.json" && pass ||
	fail "a tag without events: not an empty summary"
grouped no_arg "$work/clean.rt" 0 "request done" 3
grep -q '"no_arg":1,' "$work/no_arg.json" && pass || fail "no_arg: the event without arg3 not said"

check "the program runs with a small flight arena" env RINGTRACE_ARENA="$work/small.arena" \
	RINGTRACE_BUFFER=4K "$prog" "$work"
grouped small "$work/small.arena" 0 request 0
grep -q '"lost":[0-9]*,"reason":"overwritten"' "$work/small.json" && pass ||
	fail "small: no overwritten loss reported"

size=$(stat -c %s "$work/clean.rt")
cp "$work/clean.rt" "$work/damaged.rt"
check "the copy is damaged" "$python" -c '
import sys
path, size = sys.argv[1], int(sys.argv[2])
with open(path, "r+b") as f:
    f.seek(size // 2)
    f.write(b"\xa5" * 512)
' "$work/damaged.rt" "$size"
grouped damaged "$work/damaged.rt" 3 request 0

# the table and the page
"$tool" analyze by-arg --tag request --arg 4 --html "$work/by_arg.html" "$work/clean.rt" \
	>"$work/table.txt" 2>&1
[ $? -eq 0 ] && pass || fail "table: analyze by-arg failed"
grep -q "^by-arg: 'request' by argument 4: 400 events, 3 values" "$work/table.txt" && pass ||
	fail "table: no head line"
[ "$(grep -Ec '^  0x[0-9a-f]+ ' "$work/table.txt")" -eq 3 ] && pass ||
	fail "table: not three pointers shown in hex"
[ -s "$work/by_arg.html" ] && grep -q 'Events by argument' "$work/by_arg.html" && pass ||
	fail "html: no section"

# what by-arg refuses: exit 2 and a message naming the option
"$tool" analyze by-arg --arg 0 "$work/clean.rt" >/dev/null 2>"$work/usage.err"
[ $? -eq 2 ] && grep -q -- "--tag" "$work/usage.err" && pass || fail "no --tag: not refused"
"$tool" analyze by-arg --tag request "$work/clean.rt" >/dev/null 2>"$work/usage.err"
[ $? -eq 2 ] && grep -q -- "--arg" "$work/usage.err" && pass || fail "no --arg: not refused"
"$tool" analyze by-arg --tag request --arg 6 "$work/clean.rt" >/dev/null 2>&1
[ $? -eq 2 ] && pass || fail "--arg 6: not refused"
"$tool" analyze --help | grep -Eq '^  by-arg +' && pass || fail "--help: no by-arg"
finish
