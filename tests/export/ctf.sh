#!/bin/sh
# ctf.sh RINGTRACE CTF_PROG - `ringtrace export --ctf` of a real program (trace points,
# log messages, function calls, file I/O on three threads): an arena, a trace file of
# `record --io`, and both at once (two processes).  babeltrace2 must read each
# directory with exit status 0 and nothing on stderr, and its Python bindings must find
# the events of `ringtrace dump --json` of the same inputs, field by field
# (check_ctf.py).
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../e2e/lib.sh"
ringtrace=$1
prog=$2
unset RINGTRACE_ARENA RINGTRACE_BUFFER RINGTRACE_MODE RINGTRACE_RINGS RINGTRACE_SYNC \
	RINGTRACE_PRELOAD RINGTRACE_PRELOAD_IO LD_PRELOAD

mkdir "$work/files"
before=$(date +%s)
check "the program runs with an arena" env RINGTRACE_ARENA="$work/a.arena" "$prog" \
	"$work/files"
check "record --io runs it" "$ringtrace" record --io -q -o "$work/b.rt" -- "$prog" "$work/files"
after=$(date +%s)

# export NAME INPUT...: export, read back, compare
export_check() {
	name=$1
	shift
	out=$work/$name
	status=0
	"$ringtrace" dump --json "$@" >"$out.jsonl" || status=$?
	check "$name: dump --json exits 0 ($status)" test "$status" -eq 0
	status=0
	"$ringtrace" export --ctf "$@" "$out.ctf" 2>"$out.export.err" || status=$?
	check "$name: export --ctf exits 0 ($status)" test "$status" -eq 0
	check "$name: export --ctf says nothing" test ! -s "$out.export.err"
	status=0
	babeltrace2 "$out.ctf" >"$out.bt" 2>"$out.bt.err" || status=$?
	check "$name: babeltrace2 exits 0 ($status)" test "$status" -eq 0
	check "$name: babeltrace2 says nothing on stderr" test ! -s "$out.bt.err"
	[ -s "$out.bt.err" ] && head -n 20 "$out.bt.err" >&2
	check "$name: babeltrace2 prints every event and loss" sh -c \
		'[ "$(wc -l <"$1")" -eq "$(grep -c "\"kind\":\"\(trace\|log\|enter\|exit\|io\|lost\)\"" "$2")" ]' \
		sh "$out.bt" "$out.jsonl"
	check "$name: every event and field read back" /usr/bin/python3 "$here/check_ctf.py" \
		"$out.ctf" "$out.jsonl"
}
export_check arena "$work/a.arena"
export_check trace "$work/b.rt"
export_check both "$work/a.arena" "$work/b.rt"

check "the trace file has every kind of event" sh -c \
	'for k in trace log enter exit io; do grep -q "^$k:\|\] ([^)]*) $k:" "$1" || exit 1; done' \
	sh "$work/trace.bt"
check "two processes in one trace: stream files of both" sh -c \
	'[ "$(ls "$1" | sed -n "s/^stream_\([0-9]*\)_.*/\1/p" | sort -u | wc -l)" -eq 2 ]' \
	sh "$work/both.ctf"
# the clock's offset: the wall-clock time the recording started
offset=$(sed -n 's/^[[:space:]]*offset_s = \([0-9]*\);$/\1/p' "$work/arena.ctf/metadata")
check "the clock's offset is the wall-clock start ($before <= $offset <= $after)" \
	test "${offset:-0}" -ge "$before" -a "${offset:-0}" -le "$after"

# a flight arena too small for it: the overwritten events are lost events in their
# threads' streams, and discarded events, which babeltrace2 reports itself (and says
# nothing else)
check "the program runs with a small arena" env RINGTRACE_ARENA="$work/small.arena" \
	RINGTRACE_BUFFER=4K "$prog" "$work/files"
"$ringtrace" dump --json "$work/small.arena" >"$work/small.jsonl"
lost=$(sed -n 's/.*"kind":"lost".*"count":\([0-9]*\).*/\1/p' "$work/small.jsonl" |
	awk '{ s += $1 } END { print s + 0 }')
check "the small arena lost events ($lost)" test "$lost" -gt 0
check "small: export --ctf" "$ringtrace" export --ctf "$work/small.arena" "$work/small.ctf"
status=0
babeltrace2 "$work/small.ctf" >"$work/small.bt" 2>"$work/small.bt.err" || status=$?
check "small: babeltrace2 exits 0 ($status)" test "$status" -eq 0
check "small: babeltrace2 reports the discarded events and nothing else" sh -c \
	'! grep -v "^WARNING: Tracer discarded [0-9]* events between" "$1"' sh "$work/small.bt.err"
check "small: it reports every lost event" test "$(grep -o "discarded [0-9]* events" \
	"$work/small.bt.err" | awk '{ s += $2 } END { print s + 0 }')" -eq "$lost"
check "small: and shows each loss as a lost event, with its count and reason" test \
	"$(sed -n 's/.* lost: .*count = \([0-9]*\), reason = "overwritten".*/\1/p' "$work/small.bt" |
		awk '{ s += $1 } END { print s + 0 }')" -eq "$lost"
check "small: every event and field read back" /usr/bin/python3 "$here/check_ctf.py" \
	"$work/small.ctf" "$work/small.jsonl"

status=0
"$ringtrace" export --ctf "$work/a.arena" "$work/arena.ctf" 2>"$work/refused.err" || status=$?
check "a directory that is not empty is refused ($status)" test "$status" -ne 0
check "and the refusal names it" grep -q "arena.ctf" "$work/refused.err"
finish
