#!/bin/sh
# lastls.sh PROGRAM RINGTRACE - the current and the last arena, `ringtrace ls`
# and `ringtrace rm`, end to end with real processes.
#
# PROGRAM is lastls_program.c: it traces ten events whose first argument is
# its run number, prints "pid PID", then exits, waits to be killed, or dies
# of SIGSEGV at address 0x10.  Everything happens in a temporary directory:
# ls and rm are given directories, so /dev/shm is neither read nor touched.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../e2e/lib.sh"
program=$1
ringtrace=$2
unset RINGTRACE_BUFFER RINGTRACE_MODE RINGTRACE_RINGS RINGTRACE_SYNC RINGTRACE_CRASH_EVENTS
# the SIGSEGV must reach the program under AddressSanitizer too, as in a plain build
crash_asan=handle_segv=0:handle_sigbus=0:handle_abort=0:detect_leaks=0
ulimit -c 0 2>/dev/null || true

# Processes started in the background, killed (by pid) on the way out.
# run ARENA HOW RUN NAME: the program, leaving NAME.out and NAME.err in $work.
run() {
	status=0
	(RINGTRACE_ARENA=$1 ASAN_OPTIONS=$crash_asan exec "$program" "$2" "$3" \
		>"$work/$4.out" 2>"$work/$4.err") || status=$?
}

# start ARENA RUN NAME: the program waiting in the background; sets started_pid.
start() {
	RINGTRACE_ARENA=$1 "$program" wait "$2" >"$work/$3.out" 2>"$work/$3.err" &
	started_pid=$!
	background="$background $started_pid"
	tries=0
	while ! grep -q '^pid ' "$work/$3.out" 2>/dev/null; do
		tries=$((tries + 1))
		if [ "$tries" -gt 500 ]; then
			fail "$3: the program never said it traced"
			return
		fi
		sleep 0.01
	done
}

pid_of() {
	awk '$1 == "pid" { print $2 }' "$work/$1.out"
}

# The pid an arena names (info --json), or "none".
arena_pid() {
	"$ringtrace" info --json ${2:-} "$1" 2>/dev/null | sed -n 's/.*"pid":\([0-9-]*\).*/\1/p' |
		grep . || echo none
}

# Events of run RUN in an arena (dump --json [--last]).
run_events() {
	"$ringtrace" dump --json ${3:-} "$1" 2>/dev/null | grep -c "\"kind\":\"trace\".*\"args\":\\[$2," ||
		true
}

# ---- current and last ----------------------------------------------------
mkdir "$work/cur"
a=$work/cur/app.arena
run "$a" exit 101 run1
pid1=$(pid_of run1)
check "run 1 exits 0" test "$status" -eq 0
check "run 1 says nothing on stderr" test ! -s "$work/run1.err"
check "run 1: no last arena yet" test ! -e "$a.last"
run "$a" exit 102 run2
pid2=$(pid_of run2)
check "run 2 exits 0" test "$status" -eq 0
check "run 2 says nothing on stderr" test ! -s "$work/run2.err"
check "run 2: PATH is run 2's (pid $pid2)" test "$(arena_pid "$a")" = "$pid2"
check "run 2: PATH.last is run 1's (pid $pid1)" test "$(arena_pid "$a.last")" = "$pid1"
check "run 2: info --last reads PATH.last" test "$(arena_pid "$a" --last)" = "$pid1"
check "run 2: dump shows run 2's ten events" test "$(run_events "$a" 102)" -eq 10
check "run 2: dump shows none of run 1's" test "$(run_events "$a" 101)" -eq 0
check "run 2: dump --last shows run 1's ten events" test "$(run_events "$a" 101 --last)" -eq 10
check "run 2: dump --last shows none of run 2's" test "$(run_events "$a" 102 --last)" -eq 0
"$ringtrace" dump --last "$a" >"$work/dump-last.txt"
check "dump --last (text) has run 1's events" grep -q ' : 00000065 00000009 ' "$work/dump-last.txt"
"$ringtrace" dump --last-events "$a" >"$work/last-events.txt"
check "dump --last-events: only the last events section" \
	test "$(grep -c ' : 00000066 ' "$work/last-events.txt")" -eq 1
check "dump --last-events: no summary line" test "$(grep -c '^ringtrace: recovered' \
	"$work/last-events.txt")" -eq 0
run "$a" exit 103 run3
pid3=$(pid_of run3)
check "run 3 says nothing on stderr" test ! -s "$work/run3.err"
check "run 3: PATH is run 3's" test "$(arena_pid "$a")" = "$pid3"
check "run 3: PATH.last is now run 2's" test "$(arena_pid "$a.last")" = "$pid2"
check "run 3: dump --last shows run 2's events" test "$(run_events "$a" 102 --last)" -eq 10
check "run 3: run 1 is gone" test "$(ls "$work/cur" | wc -l)" -eq 2

# a crashed run is kept as the last arena too, and says how it ended
run "$a" segv 104 run4
check "run 4 dies of SIGSEGV ($status)" test "$status" -gt 128
run "$a" exit 105 run5
check "run 5: PATH.last is the crashed run 4" test "$(arena_pid "$a.last")" = "$(pid_of run4)"
"$ringtrace" info --last "$a" >"$work/info-last.txt"
check "info --last: ended by SIGSEGV at 0x10" \
	grep -q '^Ended *: SIGSEGV (signal 11) in thread [0-9]*, address 0x10$' "$work/info-last.txt"
check "info --last: end time" grep -q '^End time *: [0-9.]* s (' "$work/info-last.txt"
"$ringtrace" info --json --last "$a" >"$work/info-last.json"
check "info --json: end signal" grep -q '"end":"signal","end_signal":11,"end_signal_name":"SIGSEGV"' \
	"$work/info-last.json"
check "info --json: end address" grep -q '"end_address":16,' "$work/info-last.json"
"$ringtrace" info --json "$a" >"$work/info.json"
check "info --json: exit" grep -q '"end":"exit","end_signal":null' "$work/info.json"
check "info --json: no write-back" grep -q '"sync_ms":0,"synced_ns":null' "$work/info.json"
"$ringtrace" info "$a" >"$work/info.txt"
check "info: ended by exit" grep -q '^Ended *: exit ' "$work/info.txt"
status=0
"$ringtrace" dump --last "$work/cur/none.arena" >"$work/out" 2>"$work/err" || status=$?
check "dump --last without a last arena: exit 2 ($status)" test "$status" -eq 2
check "dump --last without a last arena: names PATH.last" \
	grep -q -F "$work/cur/none.arena.last" "$work/err"

# ---- what is not an arena is never clobbered ---------------------------------
mkdir "$work/keep"
b=$work/keep/b.arena
run "$b" exit 301 keep1
printf 'precious, not an arena\n' >"$b.last"
cp "$b.last" "$work/precious.copy"
run "$b" exit 302 keep2
check "non-arena .last: the program runs on ($status)" test "$status" -eq 0
check "non-arena .last: the program finished" grep -q '^done$' "$work/keep2.out"
check "non-arena .last: tracing turned off" grep -q '^tracing off$' "$work/keep2.out"
check "non-arena .last: one line on stderr" test "$(line_count "$work/keep2.err")" -eq 1
check "non-arena .last: the line names it" grep -q -F "$b.last" "$work/keep2.err"
check "non-arena .last: left as it was" cmp -s "$b.last" "$work/precious.copy"
check "non-arena .last: PATH still holds run 1" test "$(arena_pid "$b")" = "$(pid_of keep1)"

printf 'victim\n' >"$work/victim"
cp "$work/victim" "$work/victim.copy"
ln -s "$work/victim" "$work/keep/c.arena.last"
run "$work/keep/c.arena" exit 311 link1
run "$work/keep/c.arena" exit 312 link2
check "symlink .last: the program finished" grep -q '^done$' "$work/link2.out"
check "symlink .last: one line on stderr" test "$(line_count "$work/link2.err")" -eq 1
check "symlink .last: still a link" test -L "$work/keep/c.arena.last"
check "symlink .last: its target untouched" cmp -s "$work/victim" "$work/victim.copy"
check "symlink .last: PATH still holds run 1" \
	test "$(arena_pid "$work/keep/c.arena")" = "$(pid_of link1)"

# ---- a running process's arena is not taken from it ------------------------
mkdir "$work/busy"
start "$work/busy/d.arena" 401 busy1
busy_pid=$started_pid
run "$work/busy/d.arena" exit 402 busy2
check "running owner: the second program runs on" grep -q '^done$' "$work/busy2.out"
# a path held by a running process is taken with the pid (d.PID.arena), never touched
busy2_pid=$(pid_of busy2)
check "running owner: the second traces into d.$busy2_pid.arena" \
	test "$(arena_pid "$work/busy/d.$busy2_pid.arena")" = "$busy2_pid"
check "running owner: nothing on stderr" test "$(line_count "$work/busy2.err")" -eq 0
check "running owner: the arena is still the first's" \
	test "$(arena_pid "$work/busy/d.arena")" = "$busy_pid"
check "running owner: no last arena made" test ! -e "$work/busy/d.arena.last"
kill -9 "$busy_pid"
wait "$busy_pid" 2>/dev/null || true

# ---- images of one process: each exec sets the previous one's arena aside ----
# reexec ARENA LAST NAME [COLLECTOR]: images 1 to LAST of one process, each
# tracing its number, with RINGTRACE_COLLECTOR=COLLECTOR when given.
reexec() {
	status=0
	(
		unset RINGTRACE_COLLECTOR
		[ -z "${4:-}" ] || export RINGTRACE_COLLECTOR="$4"
		RINGTRACE_ARENA=$1 ASAN_OPTIONS=$crash_asan exec "$program" reexec 1 "$2" \
			>"$work/$3.out" 2>"$work/$3.err"
	) || status=$?
}

# images FILE FIRST LAST: FILE.N holds image N's ten events, for N from FIRST to LAST.
images() {
	n=$2
	while [ "$n" -le "$3" ]; do
		[ "$(run_events "$1.$n" "$n")" -eq 10 ] || return 1
		n=$((n + 1))
	done
}

# Outside `ringtrace record`, a process that re-execs itself (a daemon
# upgrading itself) keeps one PATH.last, however often it does.
mkdir "$work/re"
reexec "$work/re/e.arena" 30 re
check "re-exec: exits 0 ($status)" test "$status" -eq 0
check "re-exec: nothing on stderr" test ! -s "$work/re.err"
check "re-exec: PATH and PATH.last, nothing else" test "$(ls "$work/re" | wc -l)" -eq 2
check "re-exec: PATH holds image 30" test "$(run_events "$work/re/e.arena" 30)" -eq 10
check "re-exec: PATH.last holds image 29" \
	test "$(run_events "$work/re/e.arena" 29 --last)" -eq 10

# Told of a recorder (RINGTRACE_COLLECTOR: here this shell, which runs, started
# first, and never attaches anything), an earlier image's PATH.last that no
# collector attached is kept as PATH.last.N, N up to 16; after that it is
# replaced as before, and each time one line on stderr says so.
mkdir "$work/re2"
reexec "$work/re2/e.arena" 30 re2 $$
check "re-exec for a recorder: exits 0 ($status)" test "$status" -eq 0
check "re-exec for a recorder: images 1 to 16 kept at PATH.last.1 to .16" \
	images "$work/re2/e.arena.last" 1 16
check "re-exec for a recorder: no more than 16 kept" test ! -e "$work/re2/e.arena.last.17"
check "re-exec for a recorder: 16 kept, PATH and PATH.last, nothing else" \
	test "$(ls "$work/re2" | wc -l)" -eq 18
check "re-exec for a recorder: PATH holds image 30" \
	test "$(run_events "$work/re2/e.arena" 30)" -eq 10
check "re-exec for a recorder: PATH.last holds image 29" \
	test "$(run_events "$work/re2/e.arena" 29 --last)" -eq 10
check "re-exec for a recorder: the 12 images replaced unread are said on stderr" \
	test "$(grep -c 'no free name to keep it under' "$work/re2.err")" -eq 12
check "re-exec for a recorder: nothing else on stderr" test "$(line_count "$work/re2.err")" -eq 12

# `ringtrace ls` of the default directory lists a kept arena a killed record left behind
mkdir -m 700 "$work/shm"
cp "$work/re2/e.arena.last.3" "$work/shm/ringtrace-e.1.arena.last.3"
RINGTRACE_DIR=$work/shm "$ringtrace" ls >"$work/ls-kept.out" 2>&1 || true
check "ls lists a default arena's .last.N" grep -q 'ringtrace-e.1.arena.last.3' "$work/ls-kept.out"

# a RINGTRACE_COLLECTOR that is not a pid is a bad setting, as any other
mkdir "$work/re3"
reexec "$work/re3/e.arena" 1 re3 not-a-pid
check "bad RINGTRACE_COLLECTOR: exits 0 ($status)" test "$status" -eq 0
check "bad RINGTRACE_COLLECTOR: tracing off" grep -q '^tracing off$' "$work/re3.out"
check "bad RINGTRACE_COLLECTOR: says why" grep -q 'RINGTRACE_COLLECTOR=not-a-pid' "$work/re3.err"

# ---- ls ----------------------------------------------------------------------
d=$work/ls

mkdir "$d"
run "$d/clean.arena" exit 501 clean
run "$d/segv.arena" segv 502 segv
start "$d/killed.arena" 503 killed
killed_pid=$started_pid
kill -9 "$killed_pid"
wait "$killed_pid" 2>/dev/null || true
start "$d/running.arena" 504 running
running_pid=$started_pid
printf 'not an arena\n' >"$d/text.arena"
ln -s "$d/clean.arena" "$d/link.arena"

status=0
"$ringtrace" ls "$d" >"$work/ls.txt" 2>"$work/ls.err" || status=$?
check "ls: exit 0 ($status)" test "$status" -eq 0
check "ls: nothing on stderr" test ! -s "$work/ls.err"
# line_of NAME: the line for $d/NAME
line_of() {
	grep " $d/$1\$" "$work/ls.txt" || true
}
check "ls: clean exit" test -n "$(line_of clean.arena | grep '^exited  *[0-9]')"
check "ls: SIGSEGV and its address" \
	test -n "$(line_of segv.arena | grep "^SIGSEGV at 0x10  *$(pid_of segv) ")"
check "ls: SIGKILL is 'killed or crashed'" \
	test -n "$(line_of killed.arena | grep "^killed or crashed  *$killed_pid ")"
check "ls: running" test -n "$(line_of running.arena | grep "^running  *$running_pid ")"
check "ls: a non-arena is not listed" test -z "$(line_of text.arena)"
check "ls: a symbolic link is not listed" test -z "$(line_of link.arena)"
check "ls: four arenas, one running" \
	grep -q '^4 arenas: 1 running; 3 of ended processes, ' "$work/ls.txt"

"$ringtrace" ls --json "$d" >"$work/ls.json"
json_of() {
	grep "\"path\":\"$d/$1\"" "$work/ls.json" || true
}
check "ls --json: one object per arena and a total" test "$(line_count "$work/ls.json")" -eq 5
check "ls --json: clean" test -n "$(json_of clean.arena | grep '"status":"exited","running":false')"
check "ls --json: segv" test -n "$(json_of segv.arena |
	grep '"status":"signal".*"signal":11,"signal_name":"SIGSEGV".*"address":16')"
check "ls --json: killed" \
	test -n "$(json_of killed.arena | grep '"status":"killed_or_crashed","running":false')"
check "ls --json: running" \
	test -n "$(json_of running.arena | grep "\"status\":\"running\",\"running\":true.*\"pid\":$running_pid,")"
check "ls --json: a span that ends" test -n "$(json_of clean.arena | grep '"duration":"end"')"
check "ls --json: running so far" test -n "$(json_of running.arena | grep '"duration":"so_far"')"
# the dead ones' disk space, as du would count it (blocks, not the sparse size)
dead_bytes=0
for name in clean segv killed; do
	blocks=$(stat -c '%b %B' "$d/$name.arena" | awk '{ print $1 * $2 }')
	dead_bytes=$((dead_bytes + blocks))
done
check "ls --json: dead arenas hold $dead_bytes bytes" \
	grep -q "^{\"kind\":\"total\",\"arenas\":4,\"running\":1,\"dead\":3,\"dead_disk_bytes\":$dead_bytes," \
	"$work/ls.json"

# a file named, and its .last
"$ringtrace" ls "$a" >"$work/ls-file.txt"
check "ls FILE: the arena and its .last" test "$(grep -c " $a\(.last\)\{0,1\}\$" "$work/ls-file.txt")" -eq 2
status=0
"$ringtrace" ls "$d/text.arena" >/dev/null 2>"$work/err" || status=$?
check "ls of a non-arena: exit 2 ($status)" test "$status" -eq 2
check "ls of a non-arena: one line" test "$(line_count "$work/err")" -eq 1
status=0
"$ringtrace" ls "$work/nothing-here" >/dev/null 2>"$work/err" || status=$?
check "ls of a missing path: exit 2 ($status)" test "$status" -eq 2

# ---- rm ----------------------------------------------------------------------
status=0
"$ringtrace" rm "$d/text.arena" >/dev/null 2>"$work/err" || status=$?
check "rm of a non-arena: exit 2 ($status)" test "$status" -eq 2
check "rm of a non-arena: it stays" test -f "$d/text.arena"
check "rm of a non-arena: says so" grep -q 'not a ringtrace arena' "$work/err"
status=0
"$ringtrace" rm "$d/link.arena" >/dev/null 2>"$work/err" || status=$?
check "rm of a symbolic link: exit 2 ($status)" test "$status" -eq 2
check "rm of a symbolic link: it stays" test -L "$d/link.arena"
status=0
"$ringtrace" rm "$d" >/dev/null 2>"$work/err" || status=$?
check "rm of a directory without --dead: exit 2 ($status)" test "$status" -eq 2
status=0
"$ringtrace" rm "$d/running.arena" >/dev/null 2>"$work/err" || status=$?
check "rm of a running process's arena: refused ($status)" test "$status" -eq 1
check "rm of a running process's arena: it stays" test -f "$d/running.arena"
check "rm of a running process's arena: says so" grep -q 'still running' "$work/err"

status=0
"$ringtrace" rm --dead "$d" >"$work/rm.out" 2>"$work/rm.err" || status=$?
check "rm --dead: exit 0 ($status)" test "$status" -eq 0
check "rm --dead: nothing on stderr" test ! -s "$work/rm.err"
for name in clean segv killed; do
	check "rm --dead: $name.arena removed" test ! -e "$d/$name.arena"
done
check "rm --dead: the running one kept" test -f "$d/running.arena"
check "rm --dead: the non-arena kept" test -f "$d/text.arena"
check "rm --dead: the link kept" test -L "$d/link.arena"
check "rm --dead: says what it freed" grep -q "^removed 3 arenas, " "$work/rm.out"

"$ringtrace" rm --force "$d/running.arena" >"$work/rm.out" 2>&1
check "rm --force: a running process's arena removed" test ! -e "$d/running.arena"
"$ringtrace" rm "$a" "$a.last" >"$work/rm.out" 2>&1
check "rm PATH PATH.last: both removed" test ! -e "$a" -a ! -e "$a.last"
kill -9 "$running_pid"
wait "$running_pid" 2>/dev/null || true

# ---- another user's arenas ---------------------------------------------------
# As root, an arena owned by root, with rm run as nobody: refused, and kept.
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null 2>&1 &&
	setpriv --reuid=65534 --regid=65534 --clear-groups "$ringtrace" --version >/dev/null 2>&1; then
	chmod 755 "$work"
	mkdir -m 777 "$work/shared"
	run "$work/shared/root.arena" exit 601 root1
	status=0
	setpriv --reuid=65534 --regid=65534 --clear-groups "$ringtrace" rm "$work/shared/root.arena" \
		>/dev/null 2>"$work/err" || status=$?
	check "rm of another user's arena: refused ($status)" test "$status" -ne 0
	check "rm of another user's arena: it stays" test -f "$work/shared/root.arena"
	check "rm of another user's arena: one line" test "$(line_count "$work/err")" -eq 1
	check "rm of another user's arena: says whose" grep -q 'not by you' "$work/err"
	"$ringtrace" rm "$work/shared/root.arena" >/dev/null
	check "root removes it" test ! -e "$work/shared/root.arena"
else
	echo "another user's arenas: not tested (needs root, setpriv, and a tool nobody can run)"
fi

# ---- usage -------------------------------------------------------------------
for command in ls rm; do
	check "$command --help exits 0" "$ringtrace" "$command" --help >/dev/null
	status=0
	"$ringtrace" "$command" --no-such-option >/dev/null 2>&1 || status=$?
	check "$command with a bad option exits 2 ($status)" test "$status" -eq 2
done
status=0
"$ringtrace" rm >/dev/null 2>&1 || status=$?
check "rm with nothing to remove exits 2 ($status)" test "$status" -eq 2

finish
