#!/bin/sh
# losses.sh RINGTRACE PROGRAM - every loss reaches every output.
#
# PROGRAM is loss_program.c: events lost in known numbers (threads that
# find no ring, sites refused for want of string room, images of an exec
# chain replaced before `record` read them), and processes that end in
# known ways.  For each: events shown + events counted lost = events
# emitted, exactly, in `dump` of the arena and in what `record` wrote, as
# record, summary, check, info, dump and every export format say it.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../e2e/lib.sh"
ringtrace=$1
program=$2
unset RINGTRACE_ARENA RINGTRACE_BUFFER RINGTRACE_MODE RINGTRACE_RINGS RINGTRACE_SYNC
ulimit -c 0 2>/dev/null || true
python=/usr/bin/python3

# emitted FILE: the count the program printed
emitted() {
	awk '$1 == "emitted" { print $2 }' "$1"
}

# json FILE EXPR: EXPR of the JSON document in FILE (d), printed
json() {
	"$python" -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(eval(sys.argv[2]))' "$1" "$2"
}

# lost_of JSON: all events a summary --json counts lost
lost_of() {
	json "$1" 'sum(d["lost"].values())'
}

# arena NAME EXPECT_LOST: dump of the arena the program left at $work/NAME.arena
arena() {
	name=$1
	want=$2
	n=$(emitted "$work/$name.arena.out")
	"$ringtrace" dump "$work/$name.arena" >"$work/$name.dump" 2>&1 || true
	check "$name: arena dump: $want of $n lost" \
		grep -q "^ringtrace: recovered $((n - want))/$n events .*($want lost)" "$work/$name.dump"
}

# file NAME EXPECT_LOST: everything said of $work/NAME.rt, which `record` wrote
file() {
	name=$1
	want=$2
	f=$work/$name.rt
	n=$(emitted "$work/$name.out")
	shown=$((n - want))
	check "$name: record's closing line: $want lost" \
		grep -q "records written to $f ($want lost: " "$work/$name.err"
	"$ringtrace" summary --json "$f" >"$work/$name.summary"
	check "$name: summary: $shown events" [ "$(json "$work/$name.summary" 'd["events"]')" = "$shown" ]
	check "$name: summary: $want lost" [ "$(lost_of "$work/$name.summary")" = "$want" ]
	"$ringtrace" summary "$f" >"$work/$name.summary.txt"
	check "$name: summary text: lost $want" grep -q "^lost  *$want\$" "$work/$name.summary.txt"
	"$ringtrace" check "$f" >"$work/$name.check" || true
	check "$name: check says the $want lost" \
		grep -q "^lost while recording, not damage: $want event" "$work/$name.check"
	"$ringtrace" check --json "$f" >"$work/$name.checkj" || true
	check "$name: check --json says the $want lost" "$python" -c 'import json, sys
t = json.loads(open(sys.argv[1]).read().splitlines()[-1])
sys.exit(t["dropped"] + t["overwritten"] + t["torn"] != int(sys.argv[2]))' "$work/$name.checkj" "$want"
	"$ringtrace" info --json "$f" >"$work/$name.info"
	check "$name: info: $want lost" [ "$(json "$work/$name.info" \
		'sum(p["dropped"] + p["overwritten"] + p["torn"] + p["damaged"] for p in d["processes"])')" = "$want" ]
	"$ringtrace" dump "$f" >"$work/$name.fdump" 2>&1 || true
	check "$name: dump of the file: $shown/$n ($want lost)" \
		grep -q "^ringtrace: recovered $shown/$n events .*($want lost)" "$work/$name.fdump"
	"$ringtrace" export --chrome "$f" >"$work/$name.json"
	check "$name: chrome export: $want lost" [ "$(json "$work/$name.json" \
		'sum(e["args"]["count"] for e in d["traceEvents"] if e.get("cat") == "loss")')" = "$want" ]
	"$ringtrace" analyze rate --json "$f" >"$work/$name.analyze" 2>/dev/null || true
	check "$name: analyze: $want lost" [ "$("$python" -c 'import json, sys
print(sum(o.get("lost", 0) for o in map(json.loads, open(sys.argv[1])) if "reason" in o))' \
		"$work/$name.analyze")" = "$want" ]
}

# ---- threads that found no ring: RINGTRACE_RINGS=4, 8 threads of 1,000 ----
RINGTRACE_RINGS=4 RINGTRACE_ARENA=$work/rings.arena "$program" together 8 1000 >"$work/rings.arena.out"
arena rings 5000
RINGTRACE_RINGS=4 "$ringtrace" record -o "$work/rings.rt" -- "$program" together 8 1000 \
	>"$work/rings.out" 2>"$work/rings.err"
file rings 5000
check "rings: dump names the cause" [ "$(grep -c '1000 events dropped (no ring)' "$work/rings.fdump")" -eq 5 ]
"$ringtrace" export --perfetto "$work/rings.rt" >"$work/rings.pb"
check "rings: perfetto export: 5 losses of 1000" \
	[ "$(grep -a -o 'lost 1000 events (dropped)' "$work/rings.pb" | wc -l)" -eq 5 ]
"$ringtrace" export --ctf "$work/rings.rt" "$work/rings.ctf"
check "rings: ctf export: 5 losses for want of a ring" \
	[ "$(cat "$work"/rings.ctf/stream_* | grep -a -o 'no ring' | wc -l)" -eq 5 ]

# flight mode: the same losses, written by the snapshot at exit
RINGTRACE_MODE=flight RINGTRACE_RINGS=4 "$ringtrace" record -o "$work/flight.rt" -- \
	"$program" together 8 1000 >"$work/flight.out" 2>"$work/flight.err"
file flight 5000

# ---- 100 threads at once with the default 64 rings: 37 find none ----
RINGTRACE_BUFFER=256K RINGTRACE_ARENA=$work/many.arena "$program" together 100 2000 \
	>"$work/many.arena.out"
arena many 74000
RINGTRACE_BUFFER=256K "$ringtrace" record -o "$work/many.rt" -- "$program" together 100 2000 \
	>"$work/many.out" 2>"$work/many.err"
file many 74000

# ---- sites refused: 300 sites of 4 KiB strings, more than the string area holds ----
RINGTRACE_ARENA=$work/sites.arena "$program" sites 3 >"$work/sites.arena.out"
refused=$("$ringtrace" info --json "$work/sites.arena" | "$python" -c 'import json, sys
print(json.load(sys.stdin)["sites_refused"])')
check "sites: some refused ($refused)" [ "$refused" -gt 0 ]
# each event of a refused site tries again, and is refused again
arena sites "$refused"
"$ringtrace" record -o "$work/sites.rt" -- "$program" sites 3 >"$work/sites.out" 2>"$work/sites.err"
file sites "$refused"
check "sites: dump names the cause" \
	grep -q "^--- lost: $refused events dropped (trace sites refused" "$work/sites.fdump"

# ---- more than 16 images of one process while record is stopped ----
# images 16, 17 and 18 of 0..20 find every PATH.last.N taken: replaced unread
"$ringtrace" record -o "$work/exec.rt" -- "$program" stopped-exec 20 50 \
	>"$work/exec.out" 2>"$work/exec.err"
check "exec: the library says it" grep -q "replaced before ringtrace record read it" "$work/exec.err"
file exec 150
check "exec: dump names the cause" \
	grep -q "events dropped (an earlier image's arena (before an exec) replaced" "$work/exec.fdump"

# ---- how each process ended, and every thread's latest name ----
status=0
"$ringtrace" record -o "$work/exit.rt" -- "$program" end exit 3 >"$work/exit.out" \
	2>"$work/exit.err" || status=$?
check "exit: record ends as the program did" [ "$status" -eq 3 ]
"$ringtrace" info "$work/exit.rt" >"$work/exit.info"
check "exit: info says it exited" grep -q "^Ended  *: exit" "$work/exit.info"
check "exit: info names main by its latest name" grep -q "  renamed-main  " "$work/exit.info"
check "exit: info names the live thread by its latest name" \
	grep -q "  renamed-live  .* live " "$work/exit.info"
"$ringtrace" summary "$work/exit.rt" >"$work/exit.summary"
check "exit: summary says it exited" grep -q "  exited  .*loss_program" "$work/exit.summary"
check "exit: summary names the live thread" grep -q " renamed-live " "$work/exit.summary"
check "exit: summary names main" grep -q " renamed-main " "$work/exit.summary"

status=0
# (under AddressSanitizer too: the fault is the program's to die of, not ASan's to report)
ASAN_OPTIONS=handle_segv=0 "$ringtrace" record -o "$work/segv.rt" -- "$program" end segv \
	>"$work/segv.out" 2>"$work/segv.err" || status=$?
check "segv: record ends as the program did" [ "$status" -eq 139 ]
"$ringtrace" info --json "$work/segv.rt" >"$work/segv.info"
check "segv: info --json says SIGSEGV" [ "$(json "$work/segv.info" \
	'(d["processes"][0]["end"], d["processes"][0]["end_signal_name"])')" = "('signal', 'SIGSEGV')" ]
"$ringtrace" info "$work/segv.rt" >"$work/segv.info.txt"
check "segv: info says SIGSEGV" grep -q "^Ended  *: SIGSEGV (signal 11)" "$work/segv.info.txt"
"$ringtrace" summary "$work/segv.rt" >"$work/segv.summary"
check "segv: summary says SIGSEGV" grep -q "  SIGSEGV at 0x0  .*loss_program" "$work/segv.summary"

finish
