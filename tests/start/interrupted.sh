#!/bin/sh
# interrupted.sh RINGTRACE PROGRAM - the first event, the one that creates
# the arena, interrupted by a cancellation or by signals (interrupted.c):
# tracing ends up on, every event is shown or counted, and the events of
# the threads that come after are all there.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../e2e/lib.sh"
. "$here/counts.sh"
ringtrace=$1
program=$2
unset RINGTRACE_ARENA RINGTRACE_BUFFER RINGTRACE_MODE RINGTRACE_RINGS RINGTRACE_SYNC
workers=4000 # WORKERS x EVENTS in interrupted.c

run() {
	rm -f "$work/$1.arena"
	RINGTRACE_ARENA=$work/$1.arena "$program" "$1" >"$work/$1.out" 2>"$work/$1.err"
}

# exact MODE: shown + lost = emitted, the workers' events all shown, nothing said
exact() {
	set -- $(dump_counts "$ringtrace" "$work/$1.arena") "$(emitted "$work/$1.out")" "$1"
	w=$(tag_count "$ringtrace" worker "$work/$4.arena")
	[ $(($1 + $2)) -eq "$3" ] && [ "$w" -eq "$workers" ] && [ ! -s "$work/$4.err" ] && return 0
	echo "$4: $1 shown + $2 lost, $3 emitted; $w worker events" >&2
	cat "$work/$4.err" >&2
	return 1
}

# the cancelled thread's first event is recorded, and nothing is lost
check "cancel: the program runs, the thread is cancelled" run cancel
check "cancel: every event shown" exact cancel
check "cancel: the first event is there" \
	test "$(tag_count "$ringtrace" first "$work/cancel.arena")" -eq 1
check "cancel: nothing lost" test "$(summary_value "$ringtrace" lost "$work/cancel.arena")" -eq 0

check "signal: the program runs" run signal
check "signal: every event shown or counted" exact signal
check "signal: the handler ran" test "$(awk '$1 == "handler" { print $2 }' "$work/signal.out")" -gt 0

# a handler that longjmps out of the event it interrupted: that event is the
# program's to lose, but tracing is on and the workers' events are all there
check "longjmp: the program runs" run longjmp
check "longjmp: the workers' events are all there" \
	test "$(tag_count "$ringtrace" worker "$work/longjmp.arena")" -eq "$workers"
check "longjmp: nothing said on stderr" test ! -s "$work/longjmp.err"

finish
