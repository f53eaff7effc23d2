#!/bin/sh
# abi_v0.sh RINGTRACE LIBRINGTRACE PROGRAM... - programs built against the
# header of ABI version 0 (v0_program.o, linked in the ways the CMake file
# lists: against this build's library, and as programs were linked before
# it versioned its symbols, PROGRAM_unversioned) load this build's library,
# need no symbol of it newer than RINGTRACE_0, and record exactly: every
# thread's events, arguments, log messages and spans as the program says it
# emitted them, and what is not shown is counted lost (compare.py):
#   - into an arena with room for everything: all of it, nothing lost;
#   - into a flight ring far too small: the last events, the rest counted
#     overwritten (the slow path refreshes the clock once a lap);
#   - under `ringtrace record`, in stream mode: all of it, and with --drop
#     and a ring far too small, some of it, the rest counted dropped (the
#     slow path's full ring and its lost notes).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../e2e/lib.sh"
ringtrace=$1
library=$2
shift 2
unset RINGTRACE_ARENA RINGTRACE_MODE RINGTRACE_BUFFER RINGTRACE_LEVEL LD_PRELOAD
export RINGTRACE_DIR="$work/arenas"
mkdir -m 700 "$work/arenas"

# compared NAME HOW INPUT: the events of INPUT against NAME.expected
compared() {
	"$ringtrace" dump --json "$3" >"$work/$1.dump"
	"$ringtrace" summary --json "$3" >"$work/$1.summary"
	python3 "$here/compare.py" "$2" "$work/$1.expected" "$work/$1.dump" "$work/$1.summary" \
		>"$work/$1.compared" 2>&1
}

# program: the object of ABI version 0, as one link of it
for program in "$@"; do
	name=$(basename "$program")
	# ldd: where the loader finds libringtrace.so.0 for it
	loaded=$(LD_TRACE_LOADED_OBJECTS=1 "$program" | sed -n 's/^[[:space:]]*libringtrace\.so\.0 => \([^ ]*\) .*/\1/p')
	check "$name loads this build's library (${loaded:-none})" \
		test "$(readlink -f "${loaded:-/nonexistent}")" = "$(readlink -f "$library")"
	# the versions it needs of libringtrace.so.0: RINGTRACE_0 alone, none when linked unversioned
	needs=$(readelf --version-info --wide "$program" | grep -o 'Name: RINGTRACE_[A-Z0-9_]*' | sort -u |
		tr '\n' ' ')
	case $name in
	*_unversioned) want= ;;
	*) want="Name: RINGTRACE_0 " ;;
	esac
	check "$name needs ${needs:-no version of the library}" test "$needs" = "$want"
	run=$name-arena
	if RINGTRACE_ARENA="$work/$run.arena" "$program" 20 >"$work/$run.expected"; then
		check "$name, arena: every event as emitted" compared "$run" exact "$work/$run.arena"
		cat "$work/$run.compared"
	else
		fail "$name, arena: the program runs"
	fi

	run=$name-flight
	if RINGTRACE_ARENA="$work/$run.arena" RINGTRACE_BUFFER=4096 "$program" 300 \
		>"$work/$run.expected"; then
		check "$name, a small flight ring: the last events, the others counted" \
			compared "$run" last "$work/$run.arena"
		cat "$work/$run.compared"
	else
		fail "$name, a small flight ring: the program runs"
	fi

	run=$name-record
	if "$ringtrace" record -q -o "$work/$run.rt" -- "$program" 20 >"$work/$run.expected"; then
		check "$name, record: every event as emitted" compared "$run" exact "$work/$run.rt"
		cat "$work/$run.compared"
	else
		fail "$name, record: the program runs"
	fi

	run=$name-drop
	if "$ringtrace" record -q --drop --buffer 4096 -o "$work/$run.rt" -- "$program" 300 \
		>"$work/$run.expected"; then
		check "$name, record --drop, a small ring: events in order, the others counted" \
			compared "$run" some "$work/$run.rt"
		cat "$work/$run.compared"
	else
		fail "$name, record --drop: the program runs"
	fi
done
finish
