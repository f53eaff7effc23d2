#!/bin/sh
# unwind.sh RINGTRACE UNWIND_O0 UNWIND_O2 UNWIND_CXX_O0 UNWIND_CXX_O2 - calls
# that do not return through their exit hook (longjmp, an exception, exit,
# pthread_exit, cancellation) are closed by the library with a flagged exit
# and never shift the nesting of later calls; signal handlers, on the same
# stack or an alternate one, nest and close nothing.  unwind.c and
# unwind_cxx.cc are built with -finstrument-functions at -O0 and -O2;
# check_unwind.py compares `ringtrace dump --json` with what they did.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../e2e/lib.sh"
ringtrace=$1
c_o0=$2
c_o2=$3
cxx_o0=$4
cxx_o2=$5
unset RINGTRACE_ARENA RINGTRACE_BUFFER RINGTRACE_MODE RINGTRACE_RINGS RINGTRACE_SYNC \
	RINGTRACE_FUNCTIONS RINGTRACE_MAX_DEPTH RINGTRACE_EXCLUDE_MODULES LD_PRELOAD
python=/usr/bin/python3
[ -x "$python" ] || python=python3

# run NAME PROGRAM SCENARIO: run it with an arena of its own, dump, check
run() {
	name=$1
	program=$2
	scenario=$3
	rm -f "$work/$name.arena"
	if ! RINGTRACE_ARENA="$work/$name.arena" "$program" "$scenario" >"$work/$name.out"; then
		fail "$name: the program failed"
		return
	fi
	if ! "$ringtrace" dump --json "$work/$name.arena" >"$work/$name.json"; then
		fail "$name: dump --json failed"
		return
	fi
	check "$name" "$python" "$here/check_unwind.py" "$work/$name.json" "$scenario"
}

for build in o0 o2; do
	eval "program=\$c_$build"
	for scenario in longjmp nested-jump exit thread-exit cancel signal altstack; do
		run "$build-$scenario" "$program" "$scenario"
	done
	check "$build: the alternate stack lay above the thread's stack" \
		grep -q "altstack-above 1" "$work/$build-altstack.out"
	eval "program=\$cxx_$build"
	run "$build-throw" "$program" throw
done
# the views show how such calls ended
"$ringtrace" replay "$work/o0-longjmp.arena" >"$work/replay.txt"
check "replay marks calls left by longjmp" grep -q "unwound" "$work/replay.txt"
"$ringtrace" replay "$work/o0-exit.arena" >"$work/replay-exit.txt"
check "replay marks calls open at exit()" grep -q "exit()" "$work/replay-exit.txt"
"$ringtrace" replay "$work/o0-thread-exit.arena" >"$work/replay-te.txt"
check "replay marks calls open when their thread ended" grep -q "thread ended" \
	"$work/replay-te.txt"
"$ringtrace" dump "$work/o0-longjmp.arena" >"$work/dump.txt"
check "dump marks the exits the library wrote" grep -q "exit leaf .*unwound" "$work/dump.txt"
finish
