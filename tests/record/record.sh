#!/bin/sh
# record.sh RINGTRACE PROGRAM TRACE_COUNT - `ringtrace record` and
# `ringtrace snapshot` end to end, with real processes.
#
# PROGRAM is record_program.c (traced events of known count in several
# threads, a fork tree, stdio, sleeping); TRACE_COUNT (trace_count.c) counts
# what the trace files hold, independently of the tool's reader.  Every
# count is exact: decoded plus counted lost equals emitted.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../e2e/lib.sh"
ringtrace=$1
program=$2
count=$3
unset RINGTRACE_ARENA RINGTRACE_BUFFER RINGTRACE_MODE RINGTRACE_RINGS RINGTRACE_SYNC
ulimit -c 0 2>/dev/null || true

# counts TRACE... -> $work/counts, and trace_count must succeed
counts() {
	"$count" "$@" >"$work/counts" 2>"$work/counts.err"
}

# wait_for FILE TEXT: until FILE holds TEXT (5 s at most)
wait_for() {
	tries=0
	while ! grep -q "$2" "$1" 2>/dev/null; do
		tries=$((tries + 1))
		[ "$tries" -gt 500 ] && return 1
		sleep 0.01
	done
}

# the program's pid under a record: its private arena in the user's arena directory names it
arena_dir=${RINGTRACE_DIR:-/dev/shm/ringtrace-$(id -u)}
program_pid() {
	for f in "$arena_dir"/ringtrace-record_program.*.arena; do
		[ -e "$f" ] || continue
		p=${f#"$arena_dir"/ringtrace-record_program.}
		p=${p%.arena}
		if [ "$(cat "/proc/$p/stat" 2>/dev/null | awk '{ print $4 }')" = "$1" ]; then
			echo "$p"
			return
		fi
	done
}

# ---- events of several threads, stream mode: all accounted for ----
status=0
"$ringtrace" record -o "$work/t.rt" -- "$program" threads 4 50000 2>"$work/t.err" || status=$?
check "threads: exit 0" [ "$status" -eq 0 ]
check "threads: trace counted" counts "$work/t.rt"
ticks=$(value "$work/counts" events 0 tick)
dropped=$(value "$work/counts" lost 0 dropped)
check "threads: decoded $ticks + dropped $dropped = 200000" [ $((ticks + dropped)) -eq 200000 ]
check "threads: start event" [ "$(value "$work/counts" events 0 start)" -eq 1 ]
check "threads: no gap" [ "$(value "$work/counts" gaps)" -eq 0 ]
check "threads: END block" [ "$(value "$work/counts" files 1 ended)" -eq 1 ]
check "threads: closing line" grep -q "records written to $work/t.rt" "$work/t.err"
# the tool's own reader agrees with the independent count
decoded=$("$ringtrace" dump --json "$work/t.rt" 2>/dev/null | grep '"kind":"trace"' |
	grep -c '"tag":"tick"' || true)
check "threads: dump --json decodes $decoded, counted $ticks" [ "$decoded" -eq "$ticks" ]
pid=$(awk '$1 == "source" && $2 == 0 { print $4 }' "$work/counts")
check "threads: private arena removed" [ ! -e "$arena_dir/ringtrace-record_program.$pid.arena" ]

# ---- flight mode: written at exit ----
"$ringtrace" record -q --mode flight --buffer 256K -o "$work/f.rt" -- "$program" threads 2 1000 \
	2>"$work/f.err" || true
check "flight: counted" counts "$work/f.rt"
check "flight: every event" [ "$(value "$work/counts" events 0 tick)" -eq 2000 ]
check "flight: quiet" [ ! -s "$work/f.err" ]

# ---- stdin, stdout, stderr and the exit status pass through ----
status=0
echo hi | "$ringtrace" record -q -o "$work/s.rt" -- "$program" stdio 7 >"$work/s.out" \
	2>"$work/s.err" || status=$?
check "stdio: exit 7" [ "$status" -eq 7 ]
check "stdio: stdout" [ "$(cat "$work/s.out")" = hi ]
check "stdio: stderr" [ "$(cat "$work/s.err")" = "to stderr" ]
check "stdio: traced" counts "$work/s.rt"
check "stdio: the event" [ "$(value "$work/counts" events 0 stdio)" -eq 1 ]
status=0
echo hi | "$ringtrace" record -q -o "$work/sh.rt" -- sh -c 'cat; exit 7' >"$work/sh.out" ||
	status=$?
check "sh: exit 7" [ "$status" -eq 7 ]
check "sh: stdout" [ "$(cat "$work/sh.out")" = hi ]
check "sh: untraced program: a valid trace" counts "$work/sh.rt"
check "sh: no source" [ "$(grep -c '^source' "$work/counts")" -eq 0 ]
# record keeps its draining thread on one CPU: the program keeps every CPU it had
mine=$(awk '/^Cpus_allowed_list/ { print $2 }' /proc/self/status)
theirs=$("$ringtrace" record -q -o "$work/cpus.rt" -- \
	awk '/^Cpus_allowed_list/ { print $2 }' /proc/self/status)
check "cpus: the program may run on every CPU record may ($mine)" [ "$theirs" = "$mine" ]
status=0
"$ringtrace" record -q -o "$work/n.rt" "$program" notrace 3 || status=$?
check "no --: exit 3" [ "$status" -eq 3 ]

# ---- bad usage: 2, nothing runs; unwritable output: 1, nothing runs ----
for args in "--mode bogus" "--max-files 3" "--buffer 12" "--max-size 1" "--bogus"; do
	status=0
	# shellcheck disable=SC2086 # the words are the arguments
	"$ringtrace" record $args -o "$work/u.rt" -- sh -c "touch $work/ran" 2>"$work/u.err" ||
		status=$?
	check "usage '$args': exit 2" [ "$status" -eq 2 ]
	check "usage '$args': usage line" grep -q "^usage: ringtrace record" "$work/u.err"
done
status=0
"$ringtrace" record 2>/dev/null || status=$?
check "usage: no program: exit 2" [ "$status" -eq 2 ]
status=0
"$ringtrace" record -o "$work/no/such/dir/x.rt" -- sh -c "touch $work/ran" 2>"$work/w.err" ||
	status=$?
check "unwritable: exit 1" [ "$status" -eq 1 ]
check "unwritable: says where" grep -q "no/such/dir" "$work/w.err"
check "nothing ran" [ ! -e "$work/ran" ]
status=0
"$ringtrace" record -q -o "$work/e.rt" -- "$work/no-such-program" 2>"$work/e.err" || status=$?
check "not found: 127" [ "$status" -eq 127 ]
check "not found: says so" grep -q "no-such-program" "$work/e.err"
: >"$work/not-executable"
status=0
"$ringtrace" record -q -o "$work/e.rt" -- "$work/not-executable" 2>/dev/null || status=$?
check "not executable: 126" [ "$status" -eq 126 ]

# ---- kill -9 mid-run: the trace is complete up to the kill ----
"$ringtrace" record -o "$work/k.rt" -- "$program" threads 3 20000 wait >"$work/k.out" \
	2>"$work/k.err" &
rec=$!
background="$background $rec"
check "kill: program traced" wait_for "$work/k.out" traced
victim=$(program_pid "$rec")
check "kill: program found" [ -n "$victim" ]
[ -n "$victim" ] && kill -9 "$victim"
status=0
wait "$rec" || status=$?
check "kill: record dies of SIGKILL too (137), got $status" [ "$status" -eq 137 ]
check "kill: counted" counts "$work/k.rt"
ticks=$(value "$work/counts" events 0 tick)
dropped=$(value "$work/counts" lost 0 dropped)
check "kill: decoded $ticks + dropped $dropped = 60000" [ $((ticks + dropped)) -eq 60000 ]
check "kill: END block" [ "$(value "$work/counts" files 1 ended)" -eq 1 ]

# ---- signals sent to record reach the program ----
for sig in 15 1 2; do
	# the last round's "traced" must not be taken for this one's: the shell
	# truncates the file only once the background job runs
	rm -f "$work/g.out"
	"$ringtrace" record -q -o "$work/g.rt" -- "$program" sleep 30 >"$work/g.out" &
	rec=$!
	background="$background $rec"
	check "$sig: program traced" wait_for "$work/g.out" traced
	kill -"$sig" "$rec"
	status=0
	wait "$rec" || status=$?
	want=$((128 + sig))
	check "$sig: record ends like the program ($want), got $status" [ "$status" -eq "$want" ]
	check "$sig: counted" counts "$work/g.rt"
	check "$sig: the event" [ "$(value "$work/counts" events 0 sleeping)" -eq 1 ]
done

# ---- rotation through record ----
"$ringtrace" record -q --max-size 64K --max-files 3 -o "$work/r.rt" -- \
	"$program" threads 2 100000 || true
files=$(find "$work" -name 'r.rt.[0-9][0-9][0-9][0-9][0-9][0-9]' | wc -l)
check "rotation: rotated ($files files)" [ "$files" -ge 2 ]
check "rotation: at most 3 files ($files)" [ "$files" -le 3 ]
check "rotation: no unrotated name" [ ! -e "$work/r.rt" ]
for f in "$work"/r.rt.*; do
	check "rotation: $f decodes alone" counts "$f"
	check "rotation: $f has its source" grep -q '^source 0 pid' "$work/counts"
	size=$(stat -c %s "$f")
	check "rotation: $f is about 64K ($size)" [ "$size" -le $((65536 + 8192)) ]
done

# ---- children: their own arenas, their own pids, in the same trace ----
"$ringtrace" record -q -o "$work/c.rt" -- "$program" fork 100 "$program" >"$work/c.out"
check "fork: counted" counts "$work/c.rt"
check "fork: 4 sources" [ "$(grep -c '^source' "$work/counts")" -eq 4 ]
for role in parent child grandchild exec; do
	pid=$(awk -v r="$role" '$1 == r { print $2 }' "$work/c.out")
	src=$(awk -v p="$pid" '$1 == "source" && $4 == p { print $2 }' "$work/counts")
	check "fork: $role ($pid) is a source" [ -n "$src" ]
	# the text dump names each event's process (several are shown): its 200
	# events, and its thread's last event at the end
	check "fork: dump names $role's process" \
		[ "$("$ringtrace" dump "$work/c.rt" | grep -c "\]\[cpu [0-9?]* pid $pid tid $pid ")" -eq 201 ]
	[ -n "$src" ] || continue
	check "fork: $role's shared-site events" \
		[ "$(value "$work/counts" events "$src" event)" -eq 100 ]
	check "fork: $role's own events" \
		[ "$(value "$work/counts" events "$src" "$role" only)" -eq 100 ]
	for other in parent child grandchild exec; do
		[ "$other" = "$role" ] && continue
		check "fork: no $other events in $role's source" \
			[ "$(value "$work/counts" events "$src" "$other" only)" -eq 0 ]
	done
done
ppid_of() {
	awk -v p="$1" '$1 == "source" && $4 == p { print $6 }' "$work/counts"
}
parent=$(awk '$1 == "parent" { print $2 }' "$work/c.out")
child=$(awk '$1 == "child" { print $2 }' "$work/c.out")
check "fork: parent has no parent_pid" [ "$(ppid_of "$parent")" = 0 ]
# the arena does not name its parent: /proc does while the child runs, else the program
gparent=$(ppid_of "$(awk '$1 == "grandchild" { print $2 }' "$work/c.out")")
check "fork: grandchild's parent is child or program ($gparent)" \
	sh -c '[ "$1" = "$2" ] || [ "$1" = "$3" ]' - "$gparent" "$child" "$parent"
check "fork: child's parent is program" [ "$(ppid_of "$child")" = "$parent" ]

# ---- snapshot: a running flight-mode program, no collector ----
RINGTRACE_MODE=flight RINGTRACE_ARENA=$work/p.arena "$program" threads 2 1000 wait \
	>"$work/p.out" &
prog=$!
background="$background $prog"
check "snapshot: program traced" wait_for "$work/p.out" traced
status=0
"$ringtrace" snapshot -o "$work/p.rt" "$work/p.arena" 2>/dev/null || status=$?
check "snapshot ARENA: exit 0" [ "$status" -eq 0 ]
check "snapshot ARENA: counted" counts "$work/p.rt"
check "snapshot ARENA: every event" [ "$(value "$work/counts" events 0 tick)" -eq 2000 ]
check "snapshot ARENA: program still runs" kill -0 "$prog"
kill -9 "$prog"

# ---- snapshot PID through record's collector ----
"$ringtrace" record -q --mode flight -o "$work/q.rt" -- "$program" threads 1 700 wait \
	>"$work/q.out" &
rec=$!
background="$background $rec"
check "snapshot PID: program traced" wait_for "$work/q.out" traced
victim=$(program_pid "$rec")
status=0
"$ringtrace" snapshot --timeout 5 "$victim" 2>"$work/q.err" || status=$?
check "snapshot PID: collector answered" [ "$status" -eq 0 ]
check "snapshot PID: says so" grep -q "written by the collector" "$work/q.err"
kill -9 "$victim"
wait "$rec" || true
check "snapshot PID: counted" counts "$work/q.rt"
check "snapshot PID: every event once" [ "$(value "$work/counts" events 0 tick)" -eq 700 ]
# ---- snapshot PID of a stream-mode recording: nothing to ask, said at once ----
"$ringtrace" record -q -o "$work/s.rt" -- "$program" threads 1 700 wait >"$work/s.out" &
rec=$!
background="$background $rec"
check "stream snapshot: program traced" wait_for "$work/s.out" traced
victim=$(program_pid "$rec")
status=0
started=$(date +%s)
"$ringtrace" snapshot --timeout 30 "$victim" 2>"$work/s.err" || status=$?
took=$(($(date +%s) - started))
check "stream snapshot: no snapshot, status 1 ($status)" [ "$status" -eq 1 ]
check "stream snapshot: says the collector streams" grep -q "streams every event" "$work/s.err"
check "stream snapshot: answered at once, not after the timeout (${took} s)" [ "$took" -lt 20 ]
kill -9 "$victim"
wait "$rec" || true
# ---- a process that runs on is never said to have torn a record ----
# snapshots of a flight-mode program whose threads trace without end: at any
# instant some ring has a record in the making, which is not torn
RINGTRACE_MODE=flight RINGTRACE_BUFFER=64K RINGTRACE_ARENA=$work/spin.arena "$program" spin 4 \
	>"$work/spin.out" &
prog=$!
background="$background $prog"
check "live snapshot: program traced" wait_for "$work/spin.out" traced
for i in 1 2 3 4 5; do
	status=0
	"$ringtrace" snapshot -o "$work/spin$i.rt" "$work/spin.arena" 2>/dev/null || status=$?
	check "live snapshot $i: exit 0" [ "$status" -eq 0 ]
	check "live snapshot $i: counted" counts "$work/spin$i.rt"
	check "live snapshot $i: events" [ "$(value "$work/counts" events 0 spin)" -gt 0 ]
	check "live snapshot $i: nothing torn" [ "$(value "$work/counts" lost 0 torn)" -eq 0 ]
	check "live snapshot $i: no gap" [ "$(value "$work/counts" gaps)" -eq 0 ]
done
check "live snapshot: program still runs" kill -0 "$prog"
kill -9 "$prog"
# a child still running when the program ends is detached, not torn (--no-wait: record
# does not wait for it to end)
status=0
"$ringtrace" record --no-wait --mode flight --buffer 64K -o "$work/o.rt" -- "$program" orphan 4 \
	>"$work/o.out" 2>"$work/o.err" || status=$?
orphan=$(awk '$1 == "orphan" { print $2 }' "$work/o.out")
background="$background $orphan"
check "orphan: exit 0" [ "$status" -eq 0 ]
check "orphan: runs on" kill -0 "${orphan:-0}"
check "orphan: nothing torn in the closing line" grep -q ", 0 torn)" "$work/o.err"
check "orphan: counted" counts "$work/o.rt"
src=$(awk -v p="$orphan" '$1 == "source" && $4 == p { print $2 }' "$work/counts")
check "orphan: a source of its own" [ -n "$src" ]
check "orphan: its events" [ "$(value "$work/counts" events "${src:-0}" spin)" -gt 0 ]
check "orphan: nothing torn" [ "$(value "$work/counts" lost "${src:-0}" torn)" -eq 0 ]
[ -n "$orphan" ] && kill -9 "$orphan"

status=0
"$ringtrace" snapshot 2>/dev/null || status=$?
check "snapshot: usage 2" [ "$status" -eq 2 ]
status=0
"$ringtrace" snapshot "$work/p.rt-no-such" 2>/dev/null || status=$?
check "snapshot: no such arena 2" [ "$status" -eq 2 ]

# a file whose END block is missing (its collector killed between blocks):
# what it holds reads clean, and dump says it may not be all
"$ringtrace" record -q -o "$work/e.rt" -- "$program" threads 2 1000 >/dev/null
size=$(stat -c %s "$work/e.rt")
head -c $((size - 112)) "$work/e.rt" >"$work/e-cut.rt" # END: 80-byte header + 32
check "no end block: reads (exit 0)" \
	sh -c "'$ringtrace' dump '$work/e-cut.rt' >/dev/null 2>'$work/e.err'"
check "no end block: said" grep -q "no end block" "$work/e.err"
check "with its end block: nothing said" \
	sh -c "'$ringtrace' dump '$work/e.rt' 2>&1 >/dev/null | grep -c . | grep -qx 0"

# a full disk: a clear message, the program's status, a valid file, and a
# closing count that still adds up to every event (root: a small tmpfs).
# With huge pages the disk fills a large page at a time, and the file's last
# whole block rarely leaves room for END in what is already allocated.
full_disk() { # MOUNT_OPTIONS NAME
	full="$work/full"
	mkdir -p "$full"
	if [ "$(id -u)" != 0 ] || ! mount -t tmpfs -o "$1" tmpfs "$full" 2>/dev/null; then
		echo "skip: $2 (needs root and a tmpfs mounted with $1)"
		return
	fi
	status=0
	RINGTRACE_ARENA="$work/full.arena" "$ringtrace" record -o "$full/f.rt" -- \
		"$program" threads 2 100000 >/dev/null 2>"$work/f.err" || status=$?
	check "$2: the program's status" [ "$status" -eq 0 ]
	check "$2: says so" grep -q "No space left on device; the file is valid up to" \
		"$work/f.err"
	check "$2: the file ends with an end block" \
		sh -c "'$ringtrace' info '$full/f.rt' | grep -q 'stopped (writing failed'"
	check "$2: the file reads clean (exit 0)" \
		sh -c "'$ringtrace' dump '$full/f.rt' >/dev/null 2>'$work/f.dump.err'"
	check "$2: dump says where writing stopped" \
		grep -q "writing stopped there (the output failed)" "$work/f.dump.err"
	written=$(sed -n 's/^ringtrace: \([0-9]*\) records written.*/\1/p' "$work/f.err")
	lost=$(sed -n 's/^ringtrace: .* (\([0-9]*\) lost.*/\1/p' "$work/f.err")
	check "$2: some written" [ "${written:-0}" -gt 0 ]
	check "$2: some lost" [ "${lost:-0}" -gt 0 ]
	check "$2: written + lost = all 200001 events" \
		[ $((${written:-0} + ${lost:-0})) -eq 200001 ]
	check "$2: the file holds what the line says" \
		sh -c "'$ringtrace' summary --json '$full/f.rt' | grep -q '\"events\":${written:-0},'"
	umount "$full"
	rm -f "$work/full.arena"
}
full_disk size=256k "full disk"
for round in 1 2 3 4 5; do
	full_disk size=512k,huge=always "full disk, huge pages ($round)"
done

finish
