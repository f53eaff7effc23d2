#!/bin/sh
# fork.sh RINGTRACE PROGRAM - a traced program's children trace on, each
# into an arena of its own with its own pid, and each arena decodes alone.
#
# PROGRAM (record_program.c, "fork") traces, then forks a child that forks
# a grandchild, and a child that execs PROGRAM; each process traces through
# a site the parent registered before forking and through one of its own,
# and prints "ROLE PID".  With RINGTRACE_ARENA=P.arena the children's arenas
# are P.PID.arena (the exec'd program finds P held by its running parent).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../e2e/lib.sh"
ringtrace=$1
program=$2
unset RINGTRACE_ARENA RINGTRACE_BUFFER RINGTRACE_MODE RINGTRACE_RINGS RINGTRACE_SYNC

status=0
RINGTRACE_ARENA=$work/f.arena "$program" fork 40 "$program" >"$work/out" 2>"$work/err" ||
	status=$?
check "exit 0" [ "$status" -eq 0 ]
check "nothing on stderr" [ ! -s "$work/err" ]
check "4 arenas" [ "$(find "$work" -name 'f*.arena' | wc -l)" -eq 4 ]
parent=$(awk '$1 == "parent" { print $2 }' "$work/out")
for role in parent child grandchild exec; do
	pid=$(awk -v r="$role" '$1 == r { print $2 }' "$work/out")
	arena=$work/f.$pid.arena
	[ "$role" = parent ] && arena=$work/f.arena
	check "$role: arena $arena" [ -f "$arena" ]
	[ -f "$arena" ] || continue
	dstatus=0
	"$ringtrace" dump --json "$arena" >"$work/$role.json" 2>"$work/$role.dump.err" ||
		dstatus=$?
	check "$role: dump exit 0" [ "$dstatus" -eq 0 ]
	check "$role: info names pid $pid" \
		sh -c "'$ringtrace' info --json '$arena' | grep -q '\"pid\":$pid[,}]'"
	traces=$(grep -c '"kind":"trace"' "$work/$role.json" || true)
	check "$role: 80 events ($traces)" [ "$traces" -eq 80 ]
	mine=$(grep '"kind":"trace"' "$work/$role.json" | grep -c "\"tid\":$pid," || true)
	check "$role: every event is its own ($mine)" [ "$mine" -eq 80 ]
	shared=$(grep '"kind":"trace"' "$work/$role.json" | grep -c '"tag":"event"' || true)
	check "$role: 40 shared-site events ($shared)" [ "$shared" -eq 40 ]
	own=$(grep '"kind":"trace"' "$work/$role.json" | grep -c "\"tag\":\"$role only\"" ||
		true)
	check "$role: 40 of its own site ($own)" [ "$own" -eq 40 ]
	check "$role: no losses" sh -c "! grep -q '\"kind\":\"lost\"' '$work/$role.json'"
done

# without RINGTRACE_ARENA: the default name with each child's pid, removed at exit
arena_dir=${RINGTRACE_DIR:-/dev/shm/ringtrace-$(id -u)}
"$program" fork 5 "$program" >"$work/default.out"
for role in parent child grandchild exec; do
	pid=$(awk -v r="$role" '$1 == r { print $2 }' "$work/default.out")
	check "default path: $role's arena removed at exit" \
		[ ! -e "$arena_dir/ringtrace-record_program.$pid.arena" ]
done
finish
