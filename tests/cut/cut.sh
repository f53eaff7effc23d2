#!/bin/sh
# cut.sh RINGTRACE PROGRAM TRACE_COUNT - `ringtrace cut` end to end.
#
# Traces are recorded with `ringtrace record` running PROGRAM
# (tests/record/record_program.c) or, for an arena, PROGRAM alone.  A cut
# must hold exactly the events `ringtrace dump --json` of its inputs shows
# in the range (every field the same line for line: time, pid, tid, cpu,
# seq, site, arguments), decode alone, and keep its losses; TRACE_COUNT
# (tests/record/trace_count.c, a second reader of the format) checks that
# it is a whole file: every block checks, an END block, no gap.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../e2e/lib.sh"
ringtrace=$1
program=$2
count=$3
unset RINGTRACE_ARENA RINGTRACE_BUFFER RINGTRACE_MODE RINGTRACE_RINGS RINGTRACE_SYNC
cd "$work"

# events FILE... -> stdout: the trace lines of dump --json, in order
events() {
	"$ringtrace" dump --json "$@" 2>/dev/null | grep '"kind":"trace"' || true
}

# losses FILE... -> stdout: the lost lines of dump --json
losses() {
	"$ringtrace" dump --json "$@" 2>/dev/null | grep '"kind":"lost"' || true
}

# ts_of LINE_NUMBER FILE: ts_ns of that line of a file of events
ts_of() {
	sed -n "$1p" "$2" | sed 's/.*"ts_ns":\([0-9-]*\).*/\1/'
}

# between FROM TO FILE: the event lines with FROM <= ts_ns <= TO
between() {
	awk -v from="$1" -v to="$2" '{
		s = $0; sub(/.*"ts_ns":/, "", s); sub(/[,}].*/, "", s);
		if (s + 0 >= from + 0 && s + 0 <= to + 0) print }' "$3"
}

# summary_value FILE WORD: the number before WORD in the losses part of `summary`
summary_value() {
	"$ringtrace" summary "$1" 2>/dev/null |
		awk -v w="$2" '/^losses/ { on = 1 } on && $2 == w { print $1 }'
}

# whole FILE: the second reader finds every block good, an END block, no gap
whole() {
	"$count" "$1" >"$1.count" 2>&1 &&
		grep -q '^gaps 0$' "$1.count" && grep -q '^files 1 ended 1$' "$1.count"
}

# cut_ok NAME ARGS...: ringtrace cut ARGS exits 0 and writes a whole file (the last ARG)
cut_ok() {
	name=$1
	shift
	status=0
	"$ringtrace" cut -q "$@" 2>"$work/cut.err" || status=$?
	if [ "$status" -ne 0 ]; then
		fail "$name: exit status $status: $(cat "$work/cut.err")"
		return 1
	fi
	for last in "$@"; do :; done
	check "$name: a whole trace file" whole "$last"
}

# same NAME EXPECTED ACTUAL: two files of event lines are the same, and not empty unless allowed
same() {
	if cmp -s "$2" "$3"; then
		pass
	else
		fail "$1: $(line_count "$2") events expected, $(line_count "$3") in the cut; first difference:"
		diff "$2" "$3" | head -4 >&2
	fi
}

# ---- a recorded trace: 3 threads, stream mode ----
"$ringtrace" record -q -o t.rt -- "$program" threads 3 2000 >/dev/null
events t.rt >t.ev
total=$(line_count t.ev)
check "recorded: 6001 events ($total)" [ "$total" -eq 6001 ]

# by time: between the times of events 1000 and 4000 (ns, so the bounds are exact)
from=$(ts_of 1001 t.ev)
to=$(ts_of 4001 t.ev)
between "$from" "$to" t.ev >want
cut_ok "time" --from "${from}ns" --to "${to}ns" t.rt time.rt
events time.rt >got
same "time: the events of the range" want got
check "time: more than the 3001 events of the bounds' indices" [ "$(line_count got)" -ge 3001 ]
check "time: summary says $(line_count got) events" sh -c \
	"'$ringtrace' summary time.rt | grep -q '^events *$(line_count got) '"

# a time with a coarser unit: the bound is that time
mid_us=$(( $(ts_of 3001 t.ev) / 1000 ))
between "$((mid_us * 1000))" 999999999999999 t.ev >want
cut_ok "us" --from "${mid_us}us" t.rt us.rt
events us.rt >got
same "--from ${mid_us}us: every event from that time" want got

# by seq: events 100 to 199 of the merged time line
sed -n '101,200p' t.ev >want
cut_ok "seq" --from seq:100 --to seq:199 t.rt seq.rt
events seq.rt >got
same "seq:100..seq:199" want got

# bounds at the first and the last event keep everything
first=$(ts_of 1 t.ev)
last=$(ts_of "$total" t.ev)
cut_ok "first..last by time" --from "${first}ns" --to "${last}ns" t.rt all.rt
events all.rt >got
same "first..last by time: every event" t.ev got
cut_ok "first..last by seq" --from seq:0 --to "seq:$((total - 1))" t.rt allseq.rt
events allseq.rt >got
same "seq:0..seq:last: every event" t.ev got
cut_ok "only the last" --from "seq:$((total - 1))" t.rt lastone.rt
events lastone.rt >got
sed -n "${total}p" t.ev >want
same "seq:last alone: the last event" want got
cut_ok "only the first" --to seq:0 t.rt firstone.rt
events firstone.rt >got
head -n 1 t.ev >want
same "--to seq:0: the first event" want got
cut_ok "past the last" --from "seq:$total" t.rt none.rt
events none.rt >got
check "seq past the last: no event" [ ! -s got ]

# an empty range: a valid file, no events, the process still described
cut_ok "empty" --from 1h t.rt empty.rt
status=0
"$ringtrace" dump --json empty.rt >empty.out 2>&1 || status=$?
check "empty: dump reads it (exit $status)" [ "$status" -eq 0 ]
check "empty: no events" [ "$(grep -c '"kind":"trace"' empty.out || true)" -eq 0 ]
check "empty: summary says 0 events" sh -c "'$ringtrace' summary empty.rt | grep -q '^events *0\$'"
check "empty: the program is still named" sh -c \
	"'$ringtrace' summary empty.rt | grep -q record_program"

# a cut of a cut: times and seqs are those of the original
sed -n '111,120p' t.ev >want
cut_ok "cut of a cut" --from seq:10 --to seq:19 seq.rt seqseq.rt
events seqseq.rt >got
same "cut of a cut by seq" want got
between "$from" "$(ts_of 2001 t.ev)" t.ev >want
cut_ok "cut of a cut by time" --to "$(ts_of 2001 t.ev)ns" time.rt timetime.rt
events timetime.rt >got
same "cut of a cut by time: the original's times" want got

# ---- flight mode with small rings: overwritten losses keep their counts ----
"$ringtrace" record -q --mode flight --buffer 4K -o f.rt -- "$program" threads 2 3000 >/dev/null
ow=$(summary_value f.rt overwritten)
check "flight: records were overwritten ($ow)" [ "${ow:-0}" -gt 0 ]
cut_ok "flight" --to 1h f.rt fcut.rt
check "flight: the cut says $ow overwritten" [ "$(summary_value fcut.rt overwritten)" = "$ow" ]
check "flight: no damage in the cut" [ "$(summary_value fcut.rt damaged)" = 0 ]
events f.rt >want
events fcut.rt >got
same "flight: every event" want got
losses f.rt >want
losses fcut.rt >got
same "flight: the same loss lines" want got

# ---- stream mode with small rings: drops (LOST records) keep their counts ----
"$ringtrace" record -q --buffer 4K -o d.rt -- "$program" threads 4 50000 >/dev/null
dropped=$(summary_value d.rt dropped)
cut_ok "drops" --from 0s d.rt dcut.rt
check "drops: the cut says $dropped dropped" [ "$(summary_value dcut.rt dropped)" = "$dropped" ]
events d.rt >want
events dcut.rt >got
same "drops: every event" want got
losses d.rt >want
losses dcut.rt >got
same "drops: the same loss lines" want got

# ---- an arena, read by the arena reader ----
RINGTRACE_ARENA=$work/a.arena "$program" threads 2 500 >/dev/null
events a.arena >a.ev
check "arena: 1001 events" [ "$(line_count a.ev)" -eq 1001 ]
sed -n '201,700p' a.ev >want
cut_ok "arena" --from seq:200 --to seq:699 a.arena acut.rt
events acut.rt >got
same "arena: seq:200..seq:699" want got

# ---- a rotated set, given as its files and as its directory ----
mkdir rot
"$ringtrace" record -q --max-size 64K -o rot/r.rt -- "$program" threads 3 20000 >/dev/null
check "rotated: several files" [ "$(ls rot | wc -l)" -gt 3 ]
events rot >r.ev
rfrom=$(ts_of 10001 r.ev)
rto=$(ts_of 40001 r.ev)
between "$rfrom" "$rto" r.ev >want
cut_ok "rotated files" --from "${rfrom}ns" --to "${rto}ns" rot/r.rt.* rcut.rt
events rcut.rt >got
same "rotated files: the events of the range" want got
cut_ok "rotated directory" --from "${rfrom}ns" --to "${rto}ns" rot rdcut.rt
events rdcut.rt >got
same "rotated directory: the events of the range" want got
check "rotated: the cut is smaller than its inputs" \
	[ "$(wc -c <rcut.rt)" -lt "$(cat rot/* | wc -c)" ]
# files 2 and 3 alone: what the earlier files held is not lost, nor a gap
set -- rot/r.rt.*
second=$2
third=$3
cut_ok "two rotated files" --from 0s "$second" "$third" r23.rt
events "$second" "$third" >want
events r23.rt >got
same "two rotated files: their events" want got
check "two rotated files: nothing damaged" [ "$(summary_value r23.rt damaged)" = 0 ]

# ---- a damaged input: the cut is written, with the damage counted, exit 3 ----
cp d.rt bad.rt
size=$(wc -c <bad.rt)
printf 'XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX' |
	dd of=bad.rt bs=1 seek=$((size / 2)) conv=notrunc 2>/dev/null
status=0
"$ringtrace" cut --from 0s bad.rt badcut.rt 2>bad.err || status=$?
check "damaged: exit 3 ($status)" [ "$status" -eq 3 ]
check "damaged: says so" grep -q damaged bad.err
check "damaged: the cut is whole" [ -s badcut.rt ]
events bad.rt >want
events badcut.rt >got
same "damaged: every event that was read" want got
lost=$(summary_value bad.rt damaged)
check "damaged: the cut counts the $lost damaged" [ "$(summary_value badcut.rt damaged)" = "$lost" ]

# ---- the output ----
echo "not a trace" >text.txt
status=0
"$ringtrace" cut --from 0s t.rt text.txt 2>err || status=$?
check "non-trace OUT: exit 1 ($status)" [ "$status" -eq 1 ]
check "non-trace OUT: untouched" [ "$(cat text.txt)" = "not a trace" ]
check "non-trace OUT: says why" grep -q "not a trace file" err
cp t.rt t2.rt
status=0
"$ringtrace" cut --from 0s t2.rt t2.rt 2>err || status=$?
check "OUT is the input: exit 2 ($status)" [ "$status" -eq 2 ]
check "OUT is the input: untouched" cmp -s t.rt t2.rt
status=0
"$ringtrace" cut --from 0s "$second" rot/r.rt 2>err || status=$?
check "OUT whose rotated files are the inputs: exit 2 ($status)" [ "$status" -eq 2 ]
check "OUT whose rotated files are the inputs: kept" [ -s "$second" ]
status=0
"$ringtrace" cut --from 0s t.rt "$work/no/such/dir/x.rt" 2>err || status=$?
check "unwritable OUT: exit 1 ($status)" [ "$status" -eq 1 ]
check "unwritable OUT: names it" grep -q "no/such/dir" err
cut_ok "over an old trace file" --to seq:0 t.rt time.rt
check "over an old trace file: replaced" [ "$(events time.rt | wc -l)" -eq 1 ]

# ---- ringtrace info on trace files: files, how they ended, processes ----
"$ringtrace" info t.rt >info.txt
check "info: trace file heading" grep -q '^ringtrace trace files$' info.txt
check "info: recording id" grep -q '^Recording id *: [0-9a-f]\{16\}$' info.txt
check "info: finished" grep -q '^Ended *: finished' info.txt
check "info: no damaged bytes" grep -q '^Damaged bytes *: 0$' info.txt
check "info: blocks" grep -q '^Blocks *: [1-9][0-9]*$' info.txt
check "info: the process, 4 threads, 6001 events" \
	grep -q '^ *[0-9][0-9]* *0  stream *4 *6001 .*record_program$' info.txt
check "info: events" grep -q '^Events *: 6001$' info.txt
"$ringtrace" info rot >info.txt
files=$(ls rot | wc -l)
check "info rotated: every file" [ "$(grep -c '^File  ' info.txt)" -eq "$files" ]
check "info rotated: all but the last rotated" \
	[ "$(grep -c '^Ended *: rotated' info.txt)" -eq $((files - 1)) ]
check "info rotated: file numbers" grep -q "^File number *: $((files - 1))\$" info.txt
"$ringtrace" info --json t.rt >info.json
check "info --json: end finished" grep -q '"end":"finished"' info.json
check "info --json: the process" grep -q '"threads":4,"events":6001,' info.json
size=$(wc -c <t.rt)
head -c $((size - 100)) t.rt >short.rt
status=0
"$ringtrace" info short.rt >info.txt 2>err || status=$?
check "info cut short: exit 3 ($status)" [ "$status" -eq 3 ]
check "info cut short: says so" grep -q '^Ended *: cut short' info.txt
check "info cut short: damaged bytes" grep -q '^Damaged bytes *: [1-9]' info.txt
"$ringtrace" info a.arena >info.txt
check "info arena: as before" grep -q '^ringtrace arena$' info.txt
status=0
"$ringtrace" info a.arena a.arena 2>err || status=$?
check "info two arenas: exit 2 ($status)" [ "$status" -eq 2 ]

# ---- usage: exit 2, a usage line ----
for args in "t.rt x.rt" "--from 2ms --to 1ms t.rt x.rt" "--from seq:9 --to seq:3 t.rt x.rt" \
	"--from 2 t.rt x.rt" "--from seq:x t.rt x.rt" "--to t.rt x.rt" "--from 1ms t.rt" \
	"--from 1ms" "--bogus t.rt x.rt"; do
	status=0
	# shellcheck disable=SC2086 # the words are the arguments
	"$ringtrace" cut $args 2>err || status=$?
	check "usage '$args': exit 2 ($status)" [ "$status" -eq 2 ]
	check "usage '$args': usage line" grep -q "^usage: ringtrace cut" err
done
check "usage: nothing written" [ ! -e x.rt ]
status=0
"$ringtrace" cut --from 1ms no-such.rt x.rt 2>err || status=$?
check "missing input: exit 2 ($status)" [ "$status" -eq 2 ]
check "missing input: names it" grep -q no-such.rt err
check "--help: exit 0" sh -c "'$ringtrace' cut --help >/dev/null"

finish
