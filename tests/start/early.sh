#!/bin/sh
# early.sh RINGTRACE PROGRAM - the first events come before the recording
# library's constructors (early.c): from a .preinit_array entry, before the
# C library has set up the environment, and from the constructor of a
# library initialised first.  RINGTRACE_ARENA is honoured (the arena is
# there, and kept at exit), and the children forked then and later are
# traced into arenas of their own; under `ringtrace record` the file holds
# every event of the three processes.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../e2e/lib.sh"
. "$here/counts.sh"
ringtrace=$1
program=$2
unset RINGTRACE_ARENA RINGTRACE_BUFFER RINGTRACE_MODE RINGTRACE_RINGS RINGTRACE_SYNC
events=1000 # START_EARLY_EVENTS

run() {
	RINGTRACE_ARENA=$work/$1.arena "$program" "$1" >"$work/$1.out" 2>"$work/$1.err"
}

# arena_holds ARENA EVENTS [TAG COUNT]: exactly EVENTS shown, none lost (and COUNT of TAG)
arena_holds() {
	[ -f "$1" ] || { echo "no arena $1" >&2; return 1; }
	set -- "$@" $(dump_counts "$ringtrace" "$1")
	shown=$(($# > 4 ? $5 : $3))
	lost=$(($# > 4 ? $6 : $4))
	[ "$shown" -eq "$2" ] && [ "$lost" -eq 0 ] || {
		echo "$1: $shown shown + $lost lost, $2 wanted" >&2
		return 1
	}
	[ $# -lt 5 ] || [ "$(tag_count "$ringtrace" "$3" "$1")" -eq "$4" ]
}

children() {
	awk '$1 == "child" { print $2 }' "$work/$1.out"
}

for mode in preinit library; do
	check "$mode: the program runs" run "$mode"
	check "$mode: nothing said on stderr" test ! -s "$work/$mode.err"
	check "$mode: RINGTRACE_ARENA holds the first event and main's" \
		arena_holds "$work/$mode.arena" $((1 + events)) "$mode" 1
	n=0
	for child in $(children "$mode"); do
		n=$((n + 1))
		check "$mode: child $n traced into an arena of its own" \
			arena_holds "$work/$mode.$child.arena" "$events" child "$events"
	done
	check "$mode: two children" test "$n" -eq 2

	# under record: the program's events and both children's, in one file
	rm -f "$work/$mode.arena" "$work/$mode".*.arena
	check "$mode: record runs" "$ringtrace" record -q -o "$work/$mode.rt" -- "$program" "$mode" \
		>"$work/$mode.record.out" 2>"$work/$mode.record.err"
	set -- $(dump_counts "$ringtrace" "$work/$mode.rt")
	check "$mode: the trace file holds all events ($1 shown, $2 lost)" \
		test "$1" -eq $((1 + 3 * events)) -a "$2" -eq 0
	check "$mode: the trace file holds both children's" \
		test "$(tag_count "$ringtrace" child "$work/$mode.rt")" -eq $((2 * events))
done

finish
