#!/bin/sh
# stalls_e2e.sh TOOL PROG - `ringtrace analyze stalls` on real recordings of
# stalls_prog, each compared by stalls_check.py with the gaps recomputed
# from `dump --json` of the same input: threads quiet for known sleeps and
# one blocked until the end (a trace file), bursts that a small ring drops
# (losses inside gaps) or overwrites (a small flight arena: the loss comes
# before the oldest event kept, in no gap), a rotated set, a trace file
# damaged in the middle (status 3), the table, the page, the command line.
set -u
tool=$1
prog=$2
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../e2e/lib.sh"
unset RINGTRACE_ARENA RINGTRACE_BUFFER RINGTRACE_MODE LD_PRELOAD
python=/usr/bin/python3
[ -x "$python" ] || python=python3

# compared NAME INPUT TOP MIN_NS [ANALYZE OPTIONS...] [-- CHECK OPTIONS...]
compared() {
	name=$1 input=$2 top=$3 min=$4
	shift 4
	opts=""
	while [ $# -gt 0 ] && [ "$1" != "--" ]; do
		opts="$opts $1"
		shift
	done
	[ $# -gt 0 ] && shift
	"$tool" dump --json "$input" >"$work/$name.jsonl" 2>"$work/$name.dump.err"
	dump_status=$?
	# shellcheck disable=SC2086
	"$tool" analyze stalls --json $opts "$input" >"$work/$name.out" 2>"$work/$name.err"
	status=$?
	if [ "$status" -ne "$dump_status" ]; then
		fail "$name: analyze exits $status, dump $dump_status"
		cat "$work/$name.err" >&2
		return
	fi
	pass
	check "$name: the stalls match dump --json" "$python" "$here/stalls_check.py" \
		"$work/$name.jsonl" "$work/$name.out" "$top" "$min" "$@"
}

check "record runs the sleeping threads" "$tool" record -q -o "$work/sleeps.rt" -- "$prog" sleeps
compared sleeps "$work/sleeps.rt" 5 0 -- --expect-sleeps
[ "$status" -eq 0 ] && pass || fail "sleeps: analyze exits $status"
compared sleeps_top1 "$work/sleeps.rt" 1 0 --top 1
compared sleeps_min "$work/sleeps.rt" 3 100000000 --top 3 --min 100ms
check "--min 100ms leaves the 50 ms sleep out" sh -c '! grep -q "before 50 ms" "$1"' sh \
	"$work/sleeps_min.out"

# the table: the sleeper's rows, the blocked thread's silence
"$tool" analyze stalls "$work/sleeps.rt" >"$work/table.txt" 2>"$work/table.err"
[ $? -eq 0 ] && pass || fail "the table: analyze exits non-zero"
grep -q "(sleeper): " "$work/table.txt" && pass || fail "the table has no sleeper"
grep "trace before 500 ms" "$work/table.txt" | grep -q "trace after 500 ms" && pass ||
	fail "the table has no 500 ms gap"
grep -A1 "^Silent until the end" "$work/table.txt" >/dev/null &&
	grep -q "blocked .*trace blocking" "$work/table.txt" && pass ||
	fail "the table shows no silence of the blocked thread"
grep -q "No event was lost" "$work/table.txt" && pass || fail "the table: no loss line"

# the page: one lane per thread, the stalls as intervals
check "--html writes the page" sh -c '"$1" analyze stalls --html "$2" "$3" >/dev/null' sh \
	"$tool" "$work/stalls.html" "$work/sleeps.rt"
for word in sleeper blocked "before 500 ms" "blocking"; do
	grep -q "$word" "$work/stalls.html" && pass || fail "the page does not name '$word'"
done

# a 4 KiB stream ring is full in each burst and --drop does not wait: dropped events,
# noted inside their gaps
check "record runs the bursts with small rings" "$tool" record -q --drop --buffer 4K \
	-o "$work/burst.rt" -- "$prog" burst
compared burst "$work/burst.rt" 1000 0 --top 1000 -- --expect-lost
grep -q '"reason":"dropped"' "$work/burst.out" && pass || fail "burst: no dropped loss row"

# a rotated set: one thread's gaps across the files, as in one file
mkdir "$work/rotated"
check "record rotates the bursts into files of 16K" "$tool" record -q --max-size 16K \
	--max-files 1000 -o "$work/rotated/burst.rt" -- "$prog" burst
[ -e "$work/rotated/burst.rt.000002" ] && pass || fail "rotated: fewer than three files"
compared rotated "$work/rotated" 1000 0 --top 1000

# a 4 KiB flight arena overwrites the oldest: a loss before the events left
check "the bursts run with a small flight arena" env RINGTRACE_ARENA="$work/small.arena" \
	RINGTRACE_BUFFER=4K "$prog" burst
compared small "$work/small.arena" 1000 0 --top 1000
grep -q '"reason":"overwritten"' "$work/small.out" && pass || fail "small: no overwritten loss"

# damage in the middle of the trace file: what is left analyzed, the damage marked, status 3
size=$(stat -c %s "$work/burst.rt")
cp "$work/burst.rt" "$work/damaged.rt"
check "the copy is damaged" "$python" -c '
import sys
path, size = sys.argv[1], int(sys.argv[2])
with open(path, "r+b") as f:
    f.seek(size // 2)
    f.write(b"\xa5" * 512)
' "$work/damaged.rt" "$size"
compared damaged "$work/damaged.rt" 1000 0 --top 1000
[ "$status" -eq 3 ] && pass || fail "damaged: analyze exits $status, not 3"
grep -q '"damaged_inside":true' "$work/damaged.out" && pass || fail "damaged: no gap marked"

# the command line
"$tool" analyze stalls --min 5 "$work/sleeps.rt" >/dev/null 2>&1
[ $? -eq 2 ] && pass || fail "--min without a unit: not a usage error"
"$tool" analyze stalls --top 0 "$work/sleeps.rt" >/dev/null 2>&1
[ $? -eq 2 ] && pass || fail "--top 0: not a usage error"
"$tool" analyze stalls >/dev/null 2>&1
[ $? -eq 2 ] && pass || fail "no input: not a usage error"
"$tool" analyze stalls "$work/missing.rt" >/dev/null 2>&1
[ $? -eq 2 ] && pass || fail "a missing input: not status 2"
"$tool" analyze --help | grep -q "^  stalls " && pass || fail "analyze --help lists no stalls"
finish
