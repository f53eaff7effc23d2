#!/bin/sh
# cross_read.sh HOST_TOOL TOOL PROGRAM LIB - what an AArch64 program records,
# read by the host's tool (HOST_TOOL, x86-64) and by the AArch64 build's own
# (TOOL, under the emulator): both must say the same, byte for byte.
#
# PROGRAM (export_prog.c: function calls, trace events, log messages, three
# threads) records into an arena, and again under `ringtrace record` of each
# tool, which preloads LIB, the AArch64 library (for the AArch64 tool, the one
# beside it).  On each recording, each tool's dump --json, summary --json,
# replay (function names read from the AArch64 program's symbols) and check
# must match the other's; the arena's events all present (none lost), and
# the trace files hold as many events as the arena did.  The arena format is
# little-endian and of fixed widths: nothing in it depends on which machine
# wrote it or reads it.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../e2e/lib.sh"
host_tool=$1
tool=$2
program=$3
lib=$4
unset RINGTRACE_ARENA RINGTRACE_BUFFER RINGTRACE_MODE RINGTRACE_RINGS RINGTRACE_SYNC

# same NAME INPUT: every reading of INPUT alike by both tools
same() {
	for reading in "dump --json" "summary --json" "replay" "check"; do
		what=$(echo "$reading" | tr -d ' -')
		# shellcheck disable=SC2086 # the reading's words are split on purpose
		"$host_tool" $reading "$2" >"$work/$1.$what.host" 2>&1 || true
		# shellcheck disable=SC2086
		"$tool" $reading "$2" >"$work/$1.$what.aarch64" 2>&1 || true
		check "$1: $reading alike" cmp -s "$work/$1.$what.host" "$work/$1.$what.aarch64"
		check "$1: $reading says something" [ -s "$work/$1.$what.host" ]
	done
	if ! cmp -s "$work/$1.dumpjson.host" "$work/$1.dumpjson.aarch64"; then
		diff "$work/$1.dumpjson.host" "$work/$1.dumpjson.aarch64" | head -20 >&2 || true
	fi
}

# summary_field FILE KEY: a top-level number of summary --json
summary_field() {
	python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2" ||
		echo 0
}

mkdir "$work/files"
status=0
RINGTRACE_ARENA=$work/prog.arena "$program" "$work/files" >"$work/out" 2>"$work/err" || status=$?
check "the program runs (exit $status: $(cat "$work/err"))" [ "$status" -eq 0 ]
same arena "$work/prog.arena"
events=$(summary_field "$work/arena.summaryjson.host" events)
check "the arena holds events ($events)" [ "$events" -gt 0 ]
lost=$(python3 -c 'import json, sys; print(sum(json.load(open(sys.argv[1]))["lost"].values()))' \
	"$work/arena.summaryjson.host" || echo none)
check "the arena counts no loss ($lost)" [ "$lost" = 0 ]
check "check: the arena is clean" grep -q 'checked: clean$' "$work/arena.check.host"
check "replay names the program's functions" grep -q recurse "$work/arena.replay.host"

# record_with NAME TOOL: TOOL records the program into $work/NAME.rt
record_with() {
	status=0
	"$2" record -q -o "$work/$1.rt" -- "$program" "$work/files" >"$work/$1.out" \
		2>"$work/$1.err" || status=$?
	check "$1: record exits 0 ($status: $(cat "$work/$1.err"))" [ "$status" -eq 0 ]
	check "$1: nothing on stderr" [ ! -s "$work/$1.err" ]
	same "$1" "$work/$1.rt"
	recorded=$(summary_field "$work/$1.summaryjson.host" events)
	check "$1: the trace file holds the arena's $events events ($recorded)" \
		[ "$recorded" -eq "$events" ]
	check "check: the trace file is clean" grep -q 'checked: clean$' "$work/$1.check.host"
}
RINGTRACE_PRELOAD=$lib
export RINGTRACE_PRELOAD
record_with host-record "$host_tool"
# the AArch64 tool preloads the library beside it, as an installed one does
unset RINGTRACE_PRELOAD
record_with aarch64-record "$tool"
finish
