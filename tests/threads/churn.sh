#!/bin/sh
# churn.sh RINGTRACE THREAD_CHURN - a process starts and ends 5,500 threads
# (5,000 one after another, then bursts of 50 at once), more than its thread
# table's 1,024 entries: entries of ended threads are taken over, and every
# thread keeps its own events, tid and name.  Under `ringtrace record`
# (stream: nothing lost; flight) and read from the arena after the fact
# (flight mode, few small rings: rings and entries reused, old events
# overwritten).  thread_churn checks the output of the real tool.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../e2e/lib.sh"
ringtrace=$1
churn=$2
unset RINGTRACE_ARENA RINGTRACE_BUFFER RINGTRACE_MODE RINGTRACE_RINGS RINGTRACE_SYNC
sequential=5000
bursts=10
burst=50
events=20
threads=$((sequential + bursts * burst))

# threads_shown FILE: distinct "tid name" pairs of churn threads in a summary --json
threads_shown() {
	tr '{' '\n' <"$1" | grep -o '"tid":[0-9]*,"name":"c[0-9]*"' | sort -u | wc -l
}

# ---- stream mode under record: every thread, every event ----
status=0
"$ringtrace" record -q -o "$work/s.rt" -- "$churn" run $sequential $bursts $burst $events \
	"$work/s.manifest" 2>"$work/s.err" || status=$?
check "stream: record exit 0" [ "$status" -eq 0 ]
"$ringtrace" dump --json "$work/s.rt" >"$work/s.json" 2>"$work/s.dump.err" || true
check "stream: every event its own thread's, none lost" \
	"$churn" check "$work/s.manifest" $events stream <"$work/s.json"
"$ringtrace" summary --json "$work/s.rt" >"$work/s.summary" 2>/dev/null || true
check "stream: summary names all $threads threads" [ "$(threads_shown "$work/s.summary")" -eq $threads ]

# ---- flight mode under record: what the rings kept at the end, each its own thread's ----
status=0
"$ringtrace" record -q --mode flight --buffer 8K -o "$work/f.rt" -- "$churn" run $sequential \
	$bursts $burst $events "$work/f.manifest" 2>"$work/f.err" || status=$?
check "flight record: exit 0" [ "$status" -eq 0 ]
"$ringtrace" dump --json "$work/f.rt" >"$work/f.json" 2>"$work/f.dump.err" || true
check "flight record: every event shown its own thread's, the rest counted lost" \
	"$churn" check "$work/f.manifest" $events flight <"$work/f.json"
# the last threads started had entries of ended ones: they are in the trace, by name
"$ringtrace" summary --json "$work/f.rt" >"$work/f.summary" 2>/dev/null || true
check "flight record: the last thread is a thread of the trace" \
	grep -q "\"tid\":$(tail -n 1 "$work/f.manifest" | cut -d' ' -f2),\"name\":\"c0$((threads - 1))\"" \
	"$work/f.summary"

# ---- flight mode, the arena read after the fact: rings and entries reused ----
status=0
RINGTRACE_ARENA="$work/a.arena" RINGTRACE_MODE=flight RINGTRACE_BUFFER=8K RINGTRACE_RINGS=4 \
	"$churn" run $sequential $bursts $burst $events "$work/a.manifest" || status=$?
check "arena: exit 0" [ "$status" -eq 0 ]
status=0
"$ringtrace" dump --json "$work/a.arena" >"$work/a.json" 2>"$work/a.dump.err" || status=$?
check "arena: dump exit 0 (nothing damaged)" [ "$status" -eq 0 ]
check "arena: every event shown its own thread's, the rest counted lost" \
	"$churn" check "$work/a.manifest" $events flight <"$work/a.json"
"$ringtrace" summary --json "$work/a.arena" >"$work/a.summary" 2>/dev/null || true
check "arena: the last thread is a thread of the arena" \
	grep -q "\"tid\":$(tail -n 1 "$work/a.manifest" | cut -d' ' -f2),\"name\":\"c0$((threads - 1))\"" \
	"$work/a.summary"
status=0
"$ringtrace" check "$work/a.arena" >"$work/a.check" 2>&1 || status=$?
check "arena: check finds no damage" [ "$status" -eq 0 ]

finish
