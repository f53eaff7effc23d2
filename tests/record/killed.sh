#!/bin/sh
# killed.sh RINGTRACE RECORD_PROGRAM - `ringtrace record` killed with
# SIGKILL: its program runs on (a tracer's death is not the program's), the
# trace file it wrote so far stays readable, and the private arena it left is
# reclaimed once the program has ended: by the next `record` (one line on
# stderr) or by `ringtrace rm --dead`.  An arena no recording drained (a
# crashed program's flight record) is never reclaimed that way, nor one whose
# program still runs.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../e2e/lib.sh"
ringtrace=$1
program=$2
unset RINGTRACE_ARENA RINGTRACE_BUFFER RINGTRACE_MODE RINGTRACE_RINGS RINGTRACE_SYNC \
	RINGTRACE_INHERIT RINGTRACE_FUNCTIONS LD_PRELOAD
export RINGTRACE_DIR="$work/arenas"
mkdir -m 700 "$RINGTRACE_DIR"

# until(COMMAND...): 10 s at most
until_true() {
	tries=0
	while ! "$@" 2>/dev/null; do
		tries=$((tries + 1))
		[ "$tries" -gt 1000 ] && return 1
		sleep 0.01
	done
}
alive() { kill -0 "$1" 2>/dev/null; }
gone() { ! kill -0 "$1" 2>/dev/null; }
# the pid of the one arena in the directory that is not the crashed program's
arena_of() {
	ls "$RINGTRACE_DIR" | sed -n "s/^ringtrace-record_program\.\([0-9]*\)\.arena$/\1/p" |
		grep -vx "$crashed"
}

# the trace file NAME.rt holds the event the program traces before it sleeps
# (record writes what it drains a poll later, and a file being written reads)
holds_sleeping() {
	"$ringtrace" dump "$work/$1.rt" 2>/dev/null | grep -q sleeping
}
# record_killed NAME SECONDS: record the program sleeping SECONDS, kill record
# once its trace file holds what the program traced; sets $orphan to the
# program's pid
record_killed() {
	"$ringtrace" record -q -o "$work/$1.rt" -- "$program" sleep "$2" >"$work/$1.out" &
	recorder=$!
	until_true grep -q traced "$work/$1.out"
	until_true holds_sleeping "$1"
	orphan=$(arena_of)
	kill -9 "$recorder"
	wait "$recorder" || true
}

# a flight record of a crashed program, no collector: never reclaimed by record
RINGTRACE_MODE=flight "$program" sleep 30 >"$work/crashed.out" &
crashed=$!
until_true grep -q traced "$work/crashed.out"
kill -9 "$crashed"
wait "$crashed" || true
crash_arena="$RINGTRACE_DIR/ringtrace-record_program.$crashed.arena"
check "a killed program's arena is there" test -f "$crash_arena"

record_killed first 2
check "the program of a killed record runs on" alive "$orphan"
arena="$RINGTRACE_DIR/ringtrace-record_program.$orphan.arena"
check "its arena stays while it runs" test -f "$arena"
check "the killed record's trace file reads" "$ringtrace" dump "$work/first.rt"
"$ringtrace" dump "$work/first.rt" >"$work/first.dump" 2>&1 || true
check "and holds the event traced before the kill" grep -q sleeping "$work/first.dump"

# a record while the orphan runs: its arena is in use, kept
"$ringtrace" record -q -o "$work/during.rt" -- "$program" threads 1 10 2>"$work/during.err"
check "a record while the orphan runs keeps its arena" test -f "$arena"
check "and says nothing of it" test ! -s "$work/during.err"

check "the orphan ends by itself" until_true gone "$orphan"
check "its arena is still there once it ended" test -f "$arena"
"$ringtrace" record -q -o "$work/next.rt" -- "$program" threads 1 10 2>"$work/next.err"
check "the next record removes the orphaned arena" test ! -e "$arena"
check "and says so in one line" sh -c "[ \$(wc -l <'$work/next.err') -eq 1 ] &&
	grep -q 'removed 1 arena .* that a recording killed before its end left in' '$work/next.err'"
check "the crashed program's flight record is kept" test -f "$crash_arena"

# the other way: rm --dead, once the program has ended
record_killed second 1
arena="$RINGTRACE_DIR/ringtrace-record_program.$orphan.arena"
check "second orphan ends" until_true gone "$orphan"
check "rm --dead removes the orphaned arena" sh -c \
	"'$ringtrace' rm --dead >'$work/rm.out' && test ! -e '$arena'"

finish
