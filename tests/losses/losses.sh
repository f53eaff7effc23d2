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
	if [ "$want" -eq 0 ]; then
		check "$name: check says nothing lost" \
			grep -q "^total: .* 0 events lost, .*: clean\$" "$work/$name.check"
		check "$name: check says nothing lost while recording" \
			sh -c "! grep -q '^lost while recording' '$work/$name.check'"
	else
		check "$name: check says the $want lost" \
			grep -q "^lost while recording, not damage: $want event" "$work/$name.check"
	fi
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

# ---- an image replaced by exec: its arena says so, not "killed or crashed" ----
# tags FILE: "TAG EVENTS" per tag, from summary --json of FILE
tags() {
	"$ringtrace" summary --json "$1" | "$python" -c 'import json, sys
print(" ".join("%s %d" % (t["tag"], t["events"]) for t in json.load(sys.stdin)["tags"]))'
}
# of the arena at PATH.last (the first image, 120 events) and PATH (the second, 80)
for how in execve execv execl execle execvp execlp execvpe fexecve execveat; do
	a=$work/$how.arena
	RINGTRACE_ARENA=$a "$program" end exec "$how" 120 80 >"$work/$how.out" 2>"$work/$how.err"
	check "$how: the second image ran" grep -q "^emitted 200\$" "$work/$how.out"
	"$ringtrace" info "$a.last" >"$work/$how.info" 2>&1 || true
	check "$how: info of the first image: ended by exec" \
		grep -q "^Ended  *: exec (the image was replaced" "$work/$how.info"
	check "$how: info of the first image: state replaced" \
		grep -q "^State  *: replaced (its image was replaced by exec)" "$work/$how.info"
	check "$how: info of the first image: its end time" grep -q "^End time  *: " "$work/$how.info"
	check "$how: info of the first image: its 120 events" \
		grep -q "^Events present  *: 120\$" "$work/$how.info"
	"$ringtrace" info --json "$a.last" >"$work/$how.infoj"
	check "$how: info --json of the first image: end exec, its time, 120 events" \
		[ "$(json "$work/$how.infoj" '(d["end"], d["end_ns"] is not None, d["state"], d["events_present"])')" = \
		"('exec', True, 'replaced', 120)" ]
	"$ringtrace" info --json "$a" >"$work/$how.infoj2"
	check "$how: info --json of the second image: end exit, 80 events" \
		[ "$(json "$work/$how.infoj2" '(d["end"], d["events_present"])')" = "('exit', 80)" ]
	"$ringtrace" ls "$a" >"$work/$how.ls"
	check "$how: ls: the first image replaced by exec" \
		grep -q "^replaced by exec  .* $a.last\$" "$work/$how.ls"
	check "$how: ls: the second image exited" grep -q "^exited  .* $a\$" "$work/$how.ls"
	"$ringtrace" ls --json "$a" >"$work/$how.lsj"
	check "$how: ls --json: replaced_by_exec, not running" [ "$("$python" -c 'import json, sys
print([(o["status"], o["running"]) for o in map(json.loads, open(sys.argv[1])) if o["kind"] == "arena"])' \
		"$work/$how.lsj")" = "[('exited', False), ('replaced_by_exec', False)]" ]
	"$ringtrace" summary "$a.last" >"$work/$how.summary"
	check "$how: summary of the first image: replaced by exec" \
		grep -q "  replaced by exec  .*loss_program" "$work/$how.summary"
	"$ringtrace" dump "$a.last" >"$work/$how.dump" 2>&1 || true
	check "$how: dump of the first image: 120/120" \
		grep -q "^ringtrace: recovered 120/120 events .*(0 lost)" "$work/$how.dump"
done

# through `record`: the first image's end is exec, the second's exit, every event there
# (record attaches the two images' arenas in either order: the first may be set aside first)
for how in execv execve; do
	"$ringtrace" record -o "$work/exec-$how.rt" -- "$program" end exec "$how" 120 80 \
		>"$work/exec-$how.out" 2>"$work/exec-$how.err"
	file "exec-$how" 0
	check "exec-$how: summary: one image replaced by exec, one exited" [ "$(json \
		"$work/exec-$how.summary" 'sorted(p["end"] for p in d["processes"])')" = \
		"['exited', 'replaced by exec']" ]
	check "exec-$how: info: the first's 120 events end by exec, the second's 80 by exit" [ "$(json \
		"$work/exec-$how.info" 'sorted((p["end"], p["end_ns"] is not None, p["events"]) for p in d["processes"])')" = \
		"[('exec', True, 120), ('exit', True, 80)]" ]
	check "exec-$how: info text: exec and exit" [ "$("$ringtrace" info "$work/exec-$how.rt" |
		grep "^Ended  *: e" | cut -c26-29 | sort | tr '\n' ' ')" = "exec exit " ]
	check "exec-$how: 120 events first, 80 second" \
		[ "$(tags "$work/exec-$how.rt")" = "first 120 second 80" ]
done

# another thread still tracing at the exec: the kernel ends it, at most one record torn
RINGTRACE_ARENA=$work/busy.arena "$program" end exec-busy 100 50 >"$work/busy.out" 2>&1
"$ringtrace" info --json "$work/busy.arena.last" >"$work/busy.info"
check "busy: the first image ended by exec" [ "$(json "$work/busy.info" 'd["end"]')" = exec ]
check "busy: check finds no damage" "$ringtrace" check "$work/busy.arena.last" >/dev/null
"$ringtrace" record -o "$work/busy.rt" -- "$program" end exec-busy 100 50 \
	>"$work/busy.rec.out" 2>&1
check "busy: record: the file checks" "$ringtrace" check "$work/busy.rt" >/dev/null
"$ringtrace" info --json "$work/busy.rt" >"$work/busy.rec.info"
check "busy: record: exec and exit; no damage, at most one record torn" [ "$(json \
	"$work/busy.rec.info" '(sorted(p["end"] for p in d["processes"]), sum(p["damaged"] for p in d["processes"]), sum(p["torn"] for p in d["processes"]) <= 1)')" = \
	"(['exec', 'exit'], 0, True)" ]
check "busy: record: 100 events first, 50 second" \
	sh -c "'$ringtrace' summary --json '$work/busy.rt' | grep -q '\"tag\":\"first\",\"events\":100' &&
		'$ringtrace' summary --json '$work/busy.rt' | grep -q '\"tag\":\"second\",\"events\":50'"

# an exec that fails leaves the arena as it was: the image records on and ends by exit
RINGTRACE_ARENA=$work/fails.arena "$program" end exec-fails 50 >"$work/fails.arena.out" 2>&1
check "fails: after each failed exec, end_reason 0 and end_counter 0" [ "$(grep -c \
	'^failed exec: end_reason 0 end_counter 0$' "$work/fails.arena.out")" -eq 4 ]
check "fails: no image set aside" [ ! -e "$work/fails.arena.last" ]
"$ringtrace" info --json "$work/fails.arena" >"$work/fails.info"
check "fails: the arena ends by exit, with its 100 events" \
	[ "$(json "$work/fails.info" '(d["end"], d["events_present"])')" = "('exit', 100)" ]
arena fails 0
"$ringtrace" record -o "$work/fails.rt" -- "$program" end exec-fails 50 >"$work/fails.out" \
	2>"$work/fails.err"
file fails 0
check "fails: record: after each failed exec, end_reason 0 and end_counter 0" [ "$(grep -c \
	'^failed exec: end_reason 0 end_counter 0$' "$work/fails.out")" -eq 4 ]
check "fails: record: one process, exited" [ "$(json "$work/fails.summary" \
	'[p["end"] for p in d["processes"]]')" = "['exited']" ]

# a vfork child that execs: the arena it shares memory with is its parent's, never marked
RINGTRACE_ARENA=$work/vfork.arena "$program" end vfork 30 >"$work/vfork.arena.out" 2>&1
check "vfork: the parent's arena unmarked after the child's exec" \
	grep -q '^after vfork: end_reason 0 end_counter 0$' "$work/vfork.arena.out"
"$ringtrace" info --json "$work/vfork.arena" >"$work/vfork.info"
check "vfork: the parent's arena ends by exit, with its 60 events" \
	[ "$(json "$work/vfork.info" '(d["end"], d["events_present"])')" = "('exit', 60)" ]
"$ringtrace" record -o "$work/vfork.rt" -- "$program" end vfork 30 >"$work/vfork.out" \
	2>"$work/vfork.err"
file vfork 0
check "vfork: record: the parent's arena unmarked after the child's exec" \
	grep -q '^after vfork: end_reason 0 end_counter 0$' "$work/vfork.out"
check "vfork: record: the parent exited, then the child" [ "$(json "$work/vfork.summary" \
	'sorted(p["end"] for p in d["processes"])')" = "['exited', 'exited']" ]

# record does not wait for an image replaced by exec while its process runs on
"$ringtrace" record -o "$work/left.rt" -- "$program" end exec-left 40 "$work/left.go" \
	>"$work/left.out" 2>"$work/left.err"
pid=$(awk '$1 == "child" { print $2 }' "$work/left.out")
check "left: record ended while the exec'd child still ran" kill -0 "${pid:-0}"
touch "$work/left.go"
file left 0
check "left: the program exited, the child's image replaced by exec" [ "$(json "$work/left.summary" \
	'sorted((p["end"], p["parent_pid"] != 0) for p in d["processes"])')" = \
	"[('exited', False), ('replaced by exec', True)]" ]

finish
