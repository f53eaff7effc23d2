#!/bin/sh
# together.sh RINGTRACE PROGRAM - threads that start tracing together lose
# nothing while one of them creates the arena.
#
# PROGRAM is together.c: THREADS threads meet at a barrier and record
# EVENTS events each, with no event before them.  For 2 to 64 threads, in
# flight and stream mode, the arena read by `ringtrace dump` must hold
# exactly: events shown + events counted lost = events emitted, with
# nothing lost when the rings are large enough; with fewer rings than
# threads the threads left without one are counted, still exactly.  The
# no-loss cases again under `ringtrace record`: the trace file holds every
# event.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../e2e/lib.sh"
. "$here/counts.sh"
ringtrace=$1
program=$2
unset RINGTRACE_ARENA RINGTRACE_BUFFER RINGTRACE_MODE RINGTRACE_RINGS RINGTRACE_SYNC
# 1 MiB rings hold 32768 one-slot events: 10000 a thread never fill them
events=10000

# run NAME THREADS [VAR=VALUE...]: the program recording into $work/NAME.arena
run() {
	name=$1
	threads=$2
	shift 2
	rm -f "$work/$name.arena"
	env RINGTRACE_ARENA="$work/$name.arena" RINGTRACE_BUFFER=1M "$@" \
		"$program" "$threads" "$events" >"$work/$name.out" 2>"$work/$name.err"
}

# exact NAME: shown + lost = emitted, and stderr says nothing
exact() {
	set -- $(dump_counts "$ringtrace" "$work/$1.arena") "$(emitted "$work/$1.out")" "$1"
	[ "$1" -gt 0 ] && [ $(($1 + $2)) -eq "$3" ] && [ ! -s "$work/$4.err" ] && return 0
	echo "$4: $1 shown + $2 lost, $3 emitted" >&2
	cat "$work/$4.err" >&2
	return 1
}

# none_lost NAME: every event shown, by dump and by summary
none_lost() {
	set -- $(dump_counts "$ringtrace" "$work/$1.arena") "$(emitted "$work/$1.out")" "$1"
	s_events=$(summary_value "$ringtrace" events "$work/$4.arena")
	s_lost=$(summary_value "$ringtrace" lost "$work/$4.arena")
	[ "$1" -eq "$3" ] && [ "$2" -eq 0 ] && [ "$s_events" -eq "$3" ] && [ "$s_lost" -eq 0 ] &&
		[ ! -s "$work/$4.err" ] && return 0
	echo "$4: dump $1 shown + $2 lost, summary $s_events + $s_lost, $3 emitted" >&2
	cat "$work/$4.err" >&2
	return 1
}

for mode in flight stream; do
	for threads in 2 4 8 16 32 64; do
		name=$mode-$threads
		check "$name: the program runs" run "$name" "$threads" RINGTRACE_MODE=$mode
		check "$name: every event of every thread" none_lost "$name"
	done
	# more threads than rings: the threads without one are counted, exactly
	for threads in 8 64; do
		name=$mode-$threads-4rings
		check "$name: the program runs" run "$name" "$threads" RINGTRACE_MODE=$mode \
			RINGTRACE_RINGS=4
		check "$name: shown + lost = emitted" exact "$name"
	done
done

# record_all MODE THREADS: `ringtrace record` writes every event into its file
record_all() {
	out=$work/record-$1-$2
	rm -f "$out.rt"
	"$ringtrace" record -q --mode "$1" --buffer 1M -o "$out.rt" -- \
		"$program" "$2" "$events" >"$out.out" 2>"$out.err" || return 1
	want=$(emitted "$out.out")
	set -- $(dump_counts "$ringtrace" "$out.rt")
	[ "$1" -eq "$want" ] && [ "$2" -eq 0 ] && [ ! -s "$out.err" ] && return 0
	echo "record: $1 shown + $2 lost, $want emitted" >&2
	cat "$out.err" >&2
	return 1
}

for mode in flight stream; do
	for threads in 4 64; do
		check "record --mode $mode, $threads threads: every event in the file" \
			record_all "$mode" "$threads"
	done
done

finish
