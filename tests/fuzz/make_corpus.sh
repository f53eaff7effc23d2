#!/bin/sh
# make_corpus.sh [BUILD] - regenerate the seeds of tests/fuzz/corpus/arena.
#
# Real arenas, written by the library into rings of 4 KiB (seed_program),
# cut down to the tables their writer used (seed_edit shrink: ~15 KB each
# instead of 1.7 MB), and variants of them damaged in one way each (seed_edit
# variant).  Only the files listed here are rewritten: crash-* inputs that
# fuzzing found stay.  BUILD is a configured build directory (default
# build); its seed_program and seed_edit are built first.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-build}
corpus=$here/corpus/arena
cmake --build "$build" --target seed_program seed_edit seed_io_arena log_messages ringtrace_tool \
	>/dev/null
program=$build/tests/seed_program
edit=$build/tests/seed_edit
work=$(mktemp -d /tmp/ringtrace-corpus.XXXXXX)
trap 'rm -rf "$work"' EXIT INT TERM

# real NAME SCENARIO [VAR=VALUE...]: the library's arena of a seed_program run, shrunk
real() {
	name=$1
	scenario=$2
	shift 2
	env RINGTRACE_ARENA="$work/$name.full" RINGTRACE_RINGS=2 RINGTRACE_BUFFER=4K "$@" \
		"$program" "$scenario"
	"$edit" shrink "$work/$name.full" "$corpus/$name.arena"
}

# logs NAME: the arena of RT_LOG messages of every type and size (tests/log/messages.c),
# shrunk, and a trace file `ringtrace record` wrote of them
logs() {
	env RINGTRACE_ARENA="$work/$1.full" RINGTRACE_RINGS=2 RINGTRACE_BUFFER=4K \
		RINGTRACE_LEVEL=debug "$build/tests/log_messages" 4 >/dev/null
	"$edit" shrink "$work/$1.full" "$corpus/$1.arena"
	mkdir -m 700 "$work/arenas"
	RINGTRACE_DIR="$work/arenas" RINGTRACE_LEVEL=debug "$build/ringtrace" record -q \
		--buffer 4K -o "$here/corpus/trace/$1.rt" -- "$build/tests/log_messages" 1 >/dev/null
}

# variant KIND FROM: a copy of FROM.arena changed as seed_edit KIND says
variant() {
	"$edit" variant "$1" "$corpus/$2.arena" "$corpus/$1.arena"
}

mkdir -p "$corpus"
real flight flight
real stream stream RINGTRACE_MODE=stream
real reuse-crashed reuse
real modules flight RINGTRACE_MODULES=8
logs logs
# file I/O: made by hand (seed_io_arena), not by the library
"$build/tests/seed_io_arena" "$corpus/io.arena"
variant header-only flight
variant live flight
variant torn reuse-crashed
variant slots flight
variant sites flight
variant threads flight
variant counters stream
variant clock reuse-crashed
variant truncated flight
variant header-fields flight
variant geometry stream
variant tables reuse-crashed
variant cut-slots flight
echo "$(find "$corpus" -type f | wc -l) files, $(du -cb "$corpus"/* | tail -n 1 | cut -f 1) bytes"
