#!/bin/sh
# crash.sh SCENARIO CRASHER CRASHER_OFF TOOL ARENA_END - the crash handler,
# end to end.  crasher.c traces from several threads and dies of a signal;
# CRASHER_OFF is the same program built with -DRINGTRACE_DISABLE, which
# shows how it dies without ringtrace.  The checks:
#  - the process dies as without ringtrace (the same wait status);
#  - stderr holds the dump: a heading naming the signal, address and thread,
#    the last events in exactly the lines `ringtrace dump --tail N` prints,
#    then every thread's last event and the last timestamp, also as the
#    tool prints them, and each thread's last event is the one the program
#    says it traced last;
#  - the arena's header says how the process ended (arena_end);
#  - `ringtrace dump` afterwards still recovers every event traced.
#
# Scenarios: MODE-THREAD for MODE in segv abort fpe ill overflow and THREAD
# in main worker (and overflow-late: a thread on a kept alternate stack); handler-before, handler-after, handler-chain (the
# program's own SIGSEGV handler), events-0, events-5 (RINGTRACE_CRASH_EVENTS), truncate (the dump
# itself faults), shutdown (handlers gone after ringtrace_shutdown).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../e2e/lib.sh"
scenario=$1
crasher=$2
crasher_off=$3
tool=$4
arena_end=$5

# Under AddressSanitizer the signals must reach the program, as in a plain build.
ASAN_OPTIONS=handle_segv=0:handle_sigbus=0:handle_sigfpe=0:handle_sigill=0:handle_abort=0:detect_leaks=0
export ASAN_OPTIONS
# core files are not part of the contract (and slow): the wait status is
ulimit -c 0 2>/dev/null || true
unset RINGTRACE_CRASH_EVENTS RINGTRACE_BUFFER RINGTRACE_MODE RINGTRACE_RINGS RINGTRACE_SYNC

arena=$work/crash.arena
threads=4 # main and three workers; a late thread makes five

# run_pair MODE THREAD HANDLER: both builds; sets status, status_off, and
# leaves $work/out, $work/err and the arena.  The programs run in a subshell
# so that the shell's own "Segmentation fault" goes to the test's log, not
# into the program's stderr.
run_pair() {
	status=0
	(RINGTRACE_ARENA=$arena exec "$crasher" "$@" >"$work/out" 2>"$work/err") || status=$?
	status_off=0
	(exec "$crasher_off" "$@" >"$work/out.off" 2>"$work/err.off") || status_off=$?
	check "$scenario: exits as without ringtrace ($status vs $status_off)" \
		test "$status" -eq "$status_off"
}

# The value of `NAME VALUE` lines: field FILE NAME (the last such line).
field() {
	awk -v name="$2" '$1 == name { v = $2 } END { print v }' "$1"
}

check_end() {
	"$arena_end" "$arena" >"$work/end"
	check "$scenario: end_reason $1" test "$(field "$work/end" end_reason)" = "$1"
	if [ "$1" = 2 ]; then
		check "$scenario: end_signal $2" test "$(field "$work/end" end_signal)" = "$2"
		check "$scenario: end_tid $3" test "$(field "$work/end" end_tid)" = "$3"
	fi
	if [ "$1" != 0 ]; then
		check "$scenario: end_counter set" test "$(field "$work/end" end_counter)" != 0
	fi
}

stamp='\[ *[0-9]+\.[0-9]{9}\]'
who='\[cpu [^ ]+ tid [0-9]+ [^]]*\]'
delta='\( *[0-9]+\.[0-9]{3} uSec\)'
event_line="^$stamp$who : [0-9a-f ]* : $delta : [^ ]+:[^ ]+:[0-9]+ \\(.*\\)\$"

# check_dump SIGNAME SIGNUM EVENTS THREAD_NAME: the dump on stderr, against the tool.
check_dump() {
	signame=$1
	signum=$2
	wanted=$3
	thread_name=$4
	err=$work/err
	crash_tid=$(field "$work/out" crash_tid)
	traced=$(field "$work/out" events)
	shown=$wanted
	[ "$traced" -lt "$shown" ] && shown=$traced
	plural=events
	[ "$shown" -eq 1 ] && plural=event
	case $mode in
	segv) address=' \(address 0x0\)' ;;
	abort) address='' ;;
	*) address=' \(address 0x[0-9a-f]+\)' ;;
	esac
	heading="^ringtrace: caught $signame$address in thread $crash_tid $thread_name: last $shown $plural\$"
	check "$scenario: the heading ($(head -n 1 "$err"))" sh -c "head -n 1 '$err' | grep -q -E '$heading'"

	# the events: from the heading to the blank line before the section
	awk 'NR > 1 && /^$/ { exit } NR > 1' "$err" >"$work/crash.events"
	check "$scenario: $shown event lines" test "$(line_count "$work/crash.events")" -eq "$shown"
	check "$scenario: every event line has the dump format" \
		test "$(grep -c -v -E "$event_line" "$work/crash.events" || true)" -eq 0
	check "$scenario: the last event is the crashing thread's" \
		sh -c "tail -n 1 '$work/crash.events' | grep -q -E 'tid $crash_tid .*\\(crashing\\)\$'"

	# the same lines as the tool's, byte for byte
	if ! "$tool" dump --tail "$wanted" "$arena" >"$work/tool.txt" 2>"$work/tool.err"; then
		fail "$scenario: ringtrace dump --tail $wanted failed: $(cat "$work/tool.err")"
		return
	fi
	awk '/^Last recorded per-thread events$/ { exit } /^\[/' "$work/tool.txt" >"$work/tool.events"
	check "$scenario: the events are the tool's last $wanted" \
		cmp -s "$work/crash.events" "$work/tool.events"
	sed -n '/^Last recorded per-thread events$/,/^Last timestamp/p' "$err" >"$work/crash.section"
	sed -n '/^Last recorded per-thread events$/,/^Last timestamp/p' "$work/tool.txt" \
		>"$work/tool.section"
	check "$scenario: the per-thread section is the tool's" \
		cmp -s "$work/crash.section" "$work/tool.section"
	check "$scenario: the section ends with the last timestamp" \
		sh -c "tail -n 1 '$work/crash.section' | grep -q -E '^Last timestamp $stamp\$'"
	# each thread's last event is what the program traced last in it
	awk '$1 == "last" { last[$2] = substr($0, length($1 " " $2 " ") + 1) }
		END { for (t in last) print t "\t" last[t] }' "$work/out" >"$work/lasts"
	check "$scenario: $threads threads traced" test "$(line_count "$work/lasts")" -eq "$threads"
	while IFS="	" read -r tid tag; do
		check "$scenario: thread $tid's last event is '$tag'" \
			test "$(grep -c -E "tid $tid .*\\($tag\\)\$" "$work/crash.section")" -eq 1
	done <"$work/lasts"
	check "$scenario: ends by naming the arena" \
		test "$(tail -n 1 "$err")" = "ringtrace: the whole trace: ringtrace dump $arena"

	# nothing committed was lost
	check "$scenario: the tool recovers all $traced events" \
		grep -q -x "ringtrace: recovered $traced/$traced events from $threads threads (0 lost)" \
		"$work/tool.txt"
	check_end 2 "$signum" "$crash_tid"
}

signal_number() {
	case $1 in
	segv) echo 11 ;;
	abort) echo 6 ;;
	fpe) echo 8 ;;
	ill) echo 4 ;;
	overflow) echo 11 ;;
	esac
}

signal_name() {
	case $1 in
	segv | overflow) echo SIGSEGV ;;
	abort) echo SIGABRT ;;
	fpe) echo SIGFPE ;;
	ill) echo SIGILL ;;
	esac
}

case $scenario in
segv-* | abort-* | fpe-* | ill-* | overflow-*)
	mode=${scenario%-*}
	thread=${scenario#*-}
	run_pair "$mode" "$thread" none
	signum=$(signal_number "$mode")
	check "$scenario: killed by signal $signum" test "$status" -eq $((128 + signum))
	name=crasher
	[ "$thread" = worker ] && name=crash-w0
	[ "$thread" = late ] && name=crash-late && threads=5
	check_dump "$(signal_name "$mode")" "$signum" 50 "$name"
	;;
events-*)
	mode=segv
	wanted=${scenario#events-}
	RINGTRACE_CRASH_EVENTS=$wanted
	export RINGTRACE_CRASH_EVENTS
	run_pair segv worker none
	check "$scenario: killed by SIGSEGV" test "$status" -eq 139
	if [ "$wanted" -eq 0 ]; then
		check "$scenario: nothing on stderr" test ! -s "$work/err"
		check_end 2 11 "$(field "$work/out" crash_tid)"
	else
		check_dump SIGSEGV 11 "$wanted" crash-w0
	fi
	;;
handler-before)
	# ours dumps, then theirs runs: it writes its marker and _exit(3)s
	mode=segv
	run_pair segv main before
	check "$scenario: the program's handler decided the exit status" test "$status" -eq 3
	check "$scenario: its marker" grep -q -x 'crasher: own handler' "$work/err"
	check "$scenario: after the dump" \
		test "$(grep -n -x 'crasher: own handler' "$work/err" | cut -d: -f1)" -gt \
		"$(grep -n '^ringtrace: the whole trace' "$work/err" | cut -d: -f1)"
	grep -v -x 'crasher: own handler' "$work/err" >"$work/err.dump"
	mv "$work/err.dump" "$work/err"
	check_dump SIGSEGV 11 50 crasher
	;;
handler-after)
	# theirs replaced ours: it runs alone
	run_pair segv main after
	check "$scenario: the program's handler decided the exit status" test "$status" -eq 3
	check "$scenario: only its marker on stderr" \
		test "$(cat "$work/err")" = "crasher: own handler"
	check_end 0
	;;
handler-chain)
	# theirs replaced ours, and passes the signal on to ours: ours dumps, and
	# passes it on to the default action
	mode=segv
	run_pair segv main chain
	check "$scenario: killed by SIGSEGV" test "$status" -eq 139
	check "$scenario: their marker first" \
		test "$(head -n 1 "$work/err")" = "crasher: own handler, passing on"
	tail -n +2 "$work/err" >"$work/err.dump"
	mv "$work/err.dump" "$work/err"
	check_dump SIGSEGV 11 50 crasher
	;;
truncate)
	# the arena file cut to its header: the dump faults (SIGBUS), stops, and
	# the SIGSEGV goes on as usual
	run_pair truncate main none
	check "$scenario: killed by SIGSEGV" test "$status" -eq 139
	check "$scenario: says the dump was cut short" \
		grep -q -x 'ringtrace: the crash dump was cut short by signal 7' "$work/err"
	check_end 2 11 "$(field "$work/out" crash_tid)"
	;;
shutdown)
	# ringtrace_shutdown() put the default actions back: no dump, same death
	run_pair segv main shutdown
	check "$scenario: killed by SIGSEGV" test "$status" -eq 139
	check "$scenario: nothing on stderr" test ! -s "$work/err"
	check_end 1
	;;
*)
	fail "unknown scenario $scenario"
	;;
esac
finish
