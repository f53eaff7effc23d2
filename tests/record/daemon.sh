#!/bin/sh
# daemon.sh RINGTRACE SPAWN SPAWN_UNLINKED TRACE_COUNT [LIBRARY] - `ringtrace
# record` of a program that leaves a daemon behind goes on collecting until
# the daemon ends, or until it is interrupted, and ends with the program's
# exit status.
#
# "SPAWN daemon N GO" (spawn_program.c) records one event, forks a child
# that calls setsid and forks the daemon, and exits 3.  The daemon prints
# "daemon PID" once the program has exited, and has recorded nothing yet:
# it holds no arena of its own, only its parent's, mapped.  Once the file
# GO exists it records N/2 events and prints "half PID"; once GO.2 exists,
# N/2 more, and exits.  Every count is exact: events in the file plus
# events counted lost equal those emitted.
# SPAWN_UNLINKED is the same program traced through `record`'s preload
# (function calls); LIBRARY (a sanitizer build) is given as RINGTRACE_PRELOAD.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../e2e/lib.sh"
ringtrace=$1
spawn=$2
unlinked=$3
count=$4
# the library a sanitizer build gives, if any, as RINGTRACE_PRELOAD
clean_tracing_environment ${5+"$5"}

# wait_for FILE TEXT: until FILE holds TEXT (10 s at most)
wait_for() {
	tries=0
	while ! grep -q "$2" "$1" 2>/dev/null; do
		tries=$((tries + 1))
		[ "$tries" -gt 1000 ] && return 1
		sleep 0.01
	done
}

# gone PID: until PID has ended (10 s at most)
gone() {
	tries=0
	while kill -0 "$1" 2>/dev/null; do
		tries=$((tries + 1))
		[ "$tries" -gt 1000 ] && return 1
		sleep 0.01
	done
}

# source_of PID: the trace_count source number of PID in $work/counts
source_of() {
	awk -v p="$1" '$1 == "source" && $4 == p { print $2 }' "$work/counts"
}

# daemon_counted NAME FILE EMITTED: FILE counted; the daemon ($daemon) is one of
# its sources, whose events + dropped = EMITTED, none torn; leaves $work/counts
daemon_counted() {
	check "$1: counted" sh -c "'$count' '$work/$2' >'$work/counts'"
	src=$(source_of "$daemon")
	check "$1: the daemon ($daemon) is a source" [ -n "$src" ]
	got=$(value "$work/counts" events "${src:-99}" daemon)
	lost=$(value "$work/counts" lost "${src:-99}" dropped)
	check "$1: the daemon's events $got + lost $lost = $3" [ $((got + lost)) -eq "$3" ]
	check "$1: nothing torn" [ "$(value "$work/counts" lost "${src:-99}" torn)" -eq 0 ]
}

# ---- --help says that record waits, and how to stop it ----
"$ringtrace" record --help >"$work/help"
check "help: says record waits for what outlives PROGRAM" grep -q "outlive" "$work/help"
check "help: Ctrl-C stops the waiting" grep -q "Ctrl-C" "$work/help"
check "help: --no-wait" grep -q -- "--no-wait" "$work/help"

# ---- record waits for the daemon: every one of its events is in the file ----
"$ringtrace" record -o "$work/d.rt" -- "$spawn" daemon 2000 "$work/go" >"$work/d.out" \
	2>"$work/d.err" &
rec=$!
background="$background $rec"
check "wait: the program ended, the daemon runs" wait_for "$work/d.out" daemon
daemon=$(awk '$1 == "daemon" { print $2 }' "$work/d.out")
background="$background $daemon"
check "wait: record says it waits" wait_for "$work/d.err" "waiting for"
check "wait: record waits for a daemon that has not recorded yet" kill -0 "$rec"
: >"$work/go"
check "wait: the daemon recorded" wait_for "$work/d.out" half
check "wait: record waits for a daemon that recorded" kill -0 "$rec"
: >"$work/go.2"
status=0
wait "$rec" || status=$?
check "wait: record ends with the program's status (3), got $status" [ "$status" -eq 3 ]
check "wait: the daemon has ended" gone "$daemon"
daemon_counted wait d.rt 2000
check "wait: the program's event" [ "$(value "$work/counts" events 0 parent)" -eq 1 ]
check "wait: no gap" [ "$(value "$work/counts" gaps)" -eq 0 ]
check "wait: END block" [ "$(value "$work/counts" files 1 ended)" -eq 1 ]

# ---- interrupted while waiting: what the daemon recorded so far, the file closed ----
"$ringtrace" record -o "$work/i.rt" -- "$spawn" daemon 600 "$work/go-i" >"$work/i.out" \
	2>"$work/i.err" &
rec=$!
background="$background $rec"
check "interrupt: the program ended" wait_for "$work/i.out" daemon
daemon=$(awk '$1 == "daemon" { print $2 }' "$work/i.out")
background="$background $daemon"
: >"$work/go-i"
check "interrupt: the daemon recorded" wait_for "$work/i.out" half
check "interrupt: record says it waits" wait_for "$work/i.err" "waiting for"
check "interrupt: record signalled" kill -INT "$rec"
status=0
wait "$rec" || status=$?
check "interrupt: record ends with the program's status (3), got $status" [ "$status" -eq 3 ]
check "interrupt: the daemon runs on" kill -0 "$daemon"
daemon_counted interrupt i.rt 300
check "interrupt: END block" [ "$(value "$work/counts" files 1 ended)" -eq 1 ]
: >"$work/go-i.2"
check "interrupt: the daemon ends" gone "$daemon"

# ---- --no-wait: record ends with the program, the daemon runs on ----
status=0
"$ringtrace" record -q --no-wait -o "$work/n.rt" -- "$spawn" daemon 10 "$work/go-n" \
	>"$work/n.out" 2>"$work/n.err" || status=$?
check "--no-wait: the program's status (3), got $status" [ "$status" -eq 3 ]
check "--no-wait: the daemon started" wait_for "$work/n.out" daemon
daemon=$(awk '$1 == "daemon" { print $2 }' "$work/n.out")
background="$background $daemon"
check "--no-wait: record did not wait for the daemon" kill -0 "${daemon:-0}"
check "--no-wait: quiet" [ ! -s "$work/n.err" ]
check "--no-wait: a valid file" "$count" "$work/n.rt"
: >"$work/go-n"
: >"$work/go-n.2"
check "--no-wait: the daemon ends" gone "${daemon:-0}"

# ---- preloaded (function calls): the daemon's calls all reach the file ----
"$ringtrace" record -q -o "$work/u.rt" -- "$unlinked" daemon 400 "$work/go-u" >"$work/u.out" \
	2>"$work/u.err" &
rec=$!
background="$background $rec"
check "preloaded: the program ended" wait_for "$work/u.out" daemon
daemon=$(awk '$1 == "daemon" { print $2 }' "$work/u.out")
background="$background $daemon"
check "preloaded: record waits for a daemon that has not recorded yet" kill -0 "$rec"
: >"$work/go-u"
check "preloaded: the daemon recorded" wait_for "$work/u.out" half
check "preloaded: record waits for a daemon that recorded" kill -0 "$rec"
: >"$work/go-u.2"
status=0
wait "$rec" || status=$?
check "preloaded: the program's status (3), got $status" [ "$status" -eq 3 ]
calls=$("$ringtrace" dump --json "$work/u.rt" 2>/dev/null | grep '"kind":"enter"' |
	grep "\"tid\":${daemon:-0}," | grep -c '"func":"daemon_step"' || true)
check "preloaded: the daemon's 400 calls ($calls)" [ "$calls" -eq 400 ]
check "preloaded: counted" sh -c "'$count' '$work/u.rt' >'$work/counts'"
check "preloaded: nothing lost" \
	[ "$(awk '$1 == "lost" { n += $NF } END { print n + 0 }' "$work/counts")" -eq 0 ]
finish
