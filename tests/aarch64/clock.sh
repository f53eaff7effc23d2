#!/bin/sh
# clock.sh RINGTRACE PROGRAM - an arena stamped with AArch64's virtual counter,
# read by RINGTRACE (the host's tool in `make test-aarch64`).
#
# PROGRAM (counter.c) checks the counter in its own process, then records
# "before" and "after" around a sleep, and prints cntfrq_el0's frequency and
# the nanoseconds between the two events as CLOCK_MONOTONIC bounds them from
# inside and outside.  The tool must say the arena's clock is cntvct, at about
# that frequency (it measures it from the arena's clock pairs: within 1%),
# and put the two events that far apart (within a few microseconds and 1%:
# the counter's steps under qemu, and two clocks' rates), and find the arena
# clean.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../e2e/lib.sh"
ringtrace=$1
program=$2
unset RINGTRACE_ARENA RINGTRACE_BUFFER RINGTRACE_MODE RINGTRACE_RINGS RINGTRACE_SYNC

status=0
"$program" "$work/clock.arena" >"$work/out" 2>"$work/err" || status=$?
check "the program's own checks pass ($status: $(cat "$work/err"))" [ "$status" -eq 0 ]
hz=$(awk '$1 == "hz" { print $2 }' "$work/out")
inner=$(awk '$1 == "slept" { print $2 }' "$work/out")
outer=$(awk '$1 == "slept" { print $3 }' "$work/out")
if [ -z "$hz" ] || [ -z "$inner" ] || [ -z "$outer" ]; then
	fail "the program printed no frequency or times: $(cat "$work/out")"
	finish
	exit 1
fi

"$ringtrace" info --json "$work/clock.arena" >"$work/info.json" || true
"$ringtrace" dump --json "$work/clock.arena" >"$work/dump.json" || true

# field FILE KEY: a top-level field of one JSON object
field() {
	python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2" ||
		echo none
}
source=$(field "$work/info.json" clock_source)
check "info: the clock is cntvct ($source)" [ "$source" = cntvct ]
tool_hz=$(field "$work/info.json" clock_hz)
check "info: about cntfrq_el0's $hz Hz ($tool_hz)" python3 -c '
import sys
measured, given = map(int, sys.argv[1:])
sys.exit(abs(measured - given) * 100 > given)' \
	"$tool_hz" "$hz"

# apart: ns between the events "before" and "after" in dump --json
apart=$(python3 -c '
import json, sys
ts = {}
for line in open(sys.argv[1]):
    o = json.loads(line)
    if o["kind"] == "trace":
        ts[o["tag"]] = o["ts_ns"]
print(ts["after"] - ts["before"])' "$work/dump.json" || echo none)
check "dump: the events $apart ns apart, within [$inner, $outer] ns" \
	python3 -c '
import sys
apart, inner, outer = map(int, sys.argv[1:])
slack = 2000 + outer // 100
sys.exit(not inner - slack <= apart <= outer + slack)' "$apart" "$inner" "$outer"

check "check: the arena is clean" "$ringtrace" check "$work/clock.arena"
finish
