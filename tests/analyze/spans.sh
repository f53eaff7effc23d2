#!/bin/sh
# spans.sh TOOL PROG - `ringtrace analyze spans` and `latency` on real
# recordings of spans_prog, each checked against `dump --json` of the same
# input by check_analyze.py: calls of a known shape (and marked spans when
# the library has RT_BEGIN), requests answered on other threads, more than
# 4096 spans of one name (the sketch), a trace file damaged in the middle;
# then the table, the page, and the command line.
set -u
tool=$1
prog=$2
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../e2e/lib.sh"
unset RINGTRACE_ARENA RINGTRACE_BUFFER RINGTRACE_MODE LD_PRELOAD
python=/usr/bin/python3
[ -x "$python" ] || python=python3
checker=$here/check_analyze.py

# analyzed NAME INPUT ANALYZER [OPTIONS]: dump --json and analyze --json of INPUT, compared
analyzed() {
	name=$1
	input=$2
	shift 2
	"$tool" dump --json "$input" >"$work/$name.jsonl" 2>"$work/$name.dump.err"
	dump_status=$?
	"$tool" analyze "$@" --json "$input" >"$work/$name.json" 2>"$work/$name.err"
	status=$?
	if [ "$status" -ne "$dump_status" ]; then
		fail "$name: analyze exits $status, dump $dump_status"
		cat "$work/$name.err" >&2
		return
	fi
	pass
}

check "record runs the program" "$tool" record -q -o "$work/shape.rt" -- "$prog" shape
analyzed spans "$work/shape.rt" spans
check "spans: the figures match dump --json" "$python" "$checker" spans "$work/spans.jsonl" \
	"$work/spans.json" --expect function:outer=15 --expect function:middle=45 \
	--expect function:inner=90 --expect function:worker=3
if grep -q '"span":"begin"' "$work/spans.jsonl"; then
	check "spans: marked spans counted" "$python" "$checker" spans "$work/spans.jsonl" \
		"$work/spans.json" --expect span:round=15 --expect span:step=45
fi
analyzed spans_threads "$work/shape.rt" spans --per-thread
check "spans --per-thread: the figures match dump --json" "$python" "$checker" spans \
	"$work/spans_threads.jsonl" "$work/spans_threads.json" --per-thread
analyzed top "$work/shape.rt" spans --top 2
[ "$(grep -c '"name"' "$work/top.json")" -eq 2 ] && pass || fail "spans --top 2: not 2 rows"

for args in "" "--per-thread" "--key arg0" "--key 0 --per-thread"; do
	# shellcheck disable=SC2086 # the options are words
	analyzed latency "$work/shape.rt" latency --from request --to reply $args
	# shellcheck disable=SC2086
	check "latency request -> reply $args: the figures match dump --json" "$python" \
		"$checker" latency "$work/latency.jsonl" "$work/latency.json" --from request \
		--to reply $(echo "$args" | sed 's/arg//')
done
grep -q '"count":200,' "$work/latency.json" && pass || fail "latency --key: not 200 requests answered"
analyzed ticks "$work/shape.rt" latency --from tick --to tock --per-thread
check "latency tick -> tock: the figures match dump --json" "$python" "$checker" latency \
	"$work/ticks.jsonl" "$work/ticks.json" --from tick --to tock --per-thread --min-rows 15
grep -q '"count":15,.*"unmatched_from":12,' "$work/ticks.json" && pass ||
	fail "latency tick -> tock: not 15 matched and 12 replaced or left"

# more spans of one name than quantiles keep exactly: the sketch, within 0.4%
check "record runs the program (many)" "$tool" record -q -o "$work/many.rt" -- "$prog" many
analyzed many "$work/many.rt" spans
check "spans (sketch): the figures match dump --json" "$python" "$checker" spans \
	"$work/many.jsonl" "$work/many.json" --expect function:tiny=10000
grep -q '"name":"tiny".*"exact":false' "$work/many.json" && pass || fail "many: tiny not from the sketch"

# a 4 KiB flight ring wraps: the oldest enters are overwritten, their exits are orphan ends
check "the program runs with a small flight arena" env RINGTRACE_ARENA="$work/small.arena" \
	RINGTRACE_BUFFER=4K "$prog" shape
analyzed small "$work/small.arena" spans --per-thread
check "small arena: the figures match dump --json" "$python" "$checker" spans \
	"$work/small.jsonl" "$work/small.json" --per-thread
grep -q '"orphan_ends":[1-9]' "$work/small.json" && pass || fail "small arena: no orphan end counted"
grep -q '"reason":"overwritten"' "$work/small.json" && pass || fail "small arena: no loss reported"

# damage in the middle of the trace file: what is left analyzed, the damage shown, status 3
size=$(stat -c %s "$work/shape.rt")
cp "$work/shape.rt" "$work/damaged.rt"
check "the copy is damaged" "$python" -c '
import sys
path, size = sys.argv[1], int(sys.argv[2])
with open(path, "r+b") as f:
    f.seek(size // 2)
    f.write(b"\xa5" * 512)
' "$work/damaged.rt" "$size"
analyzed damaged "$work/damaged.rt" spans
[ "$status" -eq 3 ] && pass || fail "damaged: analyze exits $status, not 3"
grep -q '"reason":"damaged"' "$work/damaged.json" && pass || fail "damaged: no damaged loss shown"
check "damaged: the figures match dump --json" "$python" "$checker" spans "$work/damaged.jsonl" \
	"$work/damaged.json"

# the table: a row per name with its histogram under it, the losses after
"$tool" analyze spans "$work/shape.rt" >"$work/table.txt" 2>&1
[ $? -eq 0 ] && pass || fail "the table: not status 0"
grep -q '^outer  *15 ' "$work/table.txt" && pass || fail "the table: no row for outer"
grep -q '^ *[0-9.]* [nmu]*s - [0-9.]* [nmu]*s |#' "$work/table.txt" && pass ||
	fail "the table: no histogram line"
grep -q 'No event was lost' "$work/table.txt" && pass || fail "the table: no losses line"
"$tool" analyze latency --from request --to reply --key arg0 "$work/shape.rt" >"$work/lat.txt"
grep -q '^request -> reply  *200 ' "$work/lat.txt" && pass || fail "latency table: no row"

# the page
check "spans --html writes the page" "$tool" analyze spans --html "$work/spans.html" \
	"$work/shape.rt" >/dev/null
grep -q 'inner' "$work/spans.html" && pass || fail "the page: no row for inner"
check "latency --html writes the page" "$tool" analyze latency --from tick --to tock \
	--html "$work/latency.html" "$work/shape.rt" >/dev/null
grep -q 'tick -&gt; tock\|tick -> tock' "$work/latency.html" && pass || fail "the page: no latency"

# an input without spans
check "record runs a program without spans" "$tool" record -q -o "$work/none.rt" -- /bin/true
"$tool" analyze spans "$work/none.rt" >"$work/none.txt" 2>&1
[ $? -eq 0 ] && grep -q 'No span was found' "$work/none.txt" && pass || fail "no spans: not said"

# the command line
"$tool" analyze latency --from request "$work/shape.rt" >/dev/null 2>"$work/usage.err"
[ $? -eq 2 ] && grep -q -- "--to" "$work/usage.err" && pass || fail "latency without --to: not a usage error"
"$tool" analyze latency --to reply "$work/shape.rt" >/dev/null 2>&1
[ $? -eq 2 ] && pass || fail "latency without --from: not a usage error"
"$tool" analyze latency --from a --to b --key arg9 "$work/shape.rt" >/dev/null 2>&1
[ $? -eq 2 ] && pass || fail "latency --key arg9: not a usage error"
"$tool" analyze spans --top 0 "$work/shape.rt" >/dev/null 2>&1
[ $? -eq 2 ] && pass || fail "spans --top 0: not a usage error"
"$tool" analyze spans "$work/missing.rt" >/dev/null 2>&1
[ $? -eq 2 ] && pass || fail "a missing input: not status 2"
"$tool" analyze --help >"$work/help.txt"
grep -q '^  spans ' "$work/help.txt" && grep -q '^  latency ' "$work/help.txt" && pass ||
	fail "analyze --help lists neither spans nor latency"
finish
