#!/bin/sh
# full_wait.sh RINGTRACE LOSS_PROGRAM - `record` loses nothing by default, drops with --drop.
#
# LOSS_PROGRAM (tests/losses/loss_program.c) "together": four threads that trace as fast
# as they can into rings of 16 KiB, far faster than record drains them.  By default a
# thread whose ring is full waits for record: every event is in the file, none lost.  With
# --drop it drops instead: some lost, events + lost = emitted, exactly.  With record
# stopped (SIGSTOP) the program still ends (each ring waits 0.1 s at most, once per
# place of the collector), and what could not wait is counted: events + lost = emitted.
# With record killed (SIGKILL) the program still ends.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../e2e/lib.sh"
ringtrace=$1
program=$2
unset RINGTRACE_ARENA RINGTRACE_BUFFER RINGTRACE_MODE RINGTRACE_RINGS RINGTRACE_SYNC
unset RINGTRACE_FULL_WAIT_US
cd "$work"

emitted() { awk '$1 == "emitted" { print $2 }' "$1"; }
# events and losses of a trace file, as summary --json counts them
counts() {
	"$ringtrace" summary --json "$1" >"$1.json"
	/usr/bin/python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(d["events"], sum(d["lost"].values()))' "$1.json"
}

# ---- by default: nothing lost ----
"$ringtrace" record --buffer 16K -o wait.rt -- "$program" together 4 50000 >wait.out 2>wait.err
n=$(emitted wait.out)
set -- $(counts wait.rt)
check "default: the program emitted 200001" [ "$n" = 200001 ]
check "default: every event in the file ($1 of $n, $2 lost)" [ "$1" = "$n" -a "$2" = 0 ]
check "default: record says 0 lost" grep -q "(0 lost" wait.err
# the arena, kept, counts the waits its rings made; with --drop none
RINGTRACE_ARENA=$work/waits.arena "$ringtrace" record -q --buffer 16K -o waits.rt -- \
	"$program" together 4 50000 >/dev/null
waits=$("$ringtrace" info --json waits.arena | sed -n 's/.*"full_ring_waits":\([0-9]*\).*/\1/p')
check "default: info counts the rings' waits ($waits)" [ "${waits:-0}" -gt 0 ]
RINGTRACE_ARENA=$work/nowaits.arena "$ringtrace" record -q --drop --buffer 16K -o nowaits.rt -- \
	"$program" together 4 50000 >/dev/null
waits=$("$ringtrace" info --json nowaits.arena | sed -n 's/.*"full_ring_waits":\([0-9]*\).*/\1/p')
check "--drop: no wait" [ "$waits" = 0 ]

# ---- --drop: losses, counted exactly ----
"$ringtrace" record --drop --buffer 16K -o drop.rt -- "$program" together 4 50000 >drop.out \
	2>drop.err
n=$(emitted drop.out)
set -- $(counts drop.rt)
check "--drop: some events dropped ($2)" [ "$2" -gt 0 ]
check "--drop: events $1 + lost $2 = emitted $n" [ $(($1 + $2)) = "$n" ]

# ---- record stopped while the program runs: the program ends, losses counted ----
"$ringtrace" record --buffer 16K -o stopped.rt -- "$program" together 4 200000 >stopped.out \
	2>stopped.err &
record=$!
background="$background $record"
# stopped once the program has started tracing (its arena is in the directory)
for _ in $(seq 1 200); do
	ls /dev/shm/ringtrace-"$(id -u)"/ringtrace-loss_program.* >/dev/null 2>&1 && break
	sleep 0.01
done
kill -STOP "$record"
for _ in $(seq 1 600); do
	[ -s stopped.out ] && break
	sleep 0.05
done
check "stopped record: the program ended on its own" [ -s stopped.out ]
kill -CONT "$record"
wait "$record" || true
n=$(emitted stopped.out)
set -- $(counts stopped.rt)
check "stopped record: events $1 + lost $2 = emitted $n" [ $(($1 + $2)) = "$n" ]

# ---- record killed: the program still ends ----
"$ringtrace" record --buffer 16K -o killed.rt -- "$program" together 4 200000 >killed.out \
	2>killed.err &
record=$!
for _ in $(seq 1 200); do
	ls /dev/shm/ringtrace-"$(id -u)"/ringtrace-loss_program.* >/dev/null 2>&1 && break
	sleep 0.01
done
kill -KILL "$record"
wait "$record" 2>/dev/null || true
for _ in $(seq 1 600); do
	[ -s killed.out ] && break
	sleep 0.05
done
check "killed record: the program ended on its own" [ -s killed.out ]
"$ringtrace" rm --dead >/dev/null 2>&1 || true
finish
