#!/bin/sh
# level.sh RINGTRACE TARGET - the RT_LOG threshold, changed from outside the
# process (`ringtrace level`) and from inside (ringtrace_set_level), and set
# at start (RINGTRACE_LEVEL), checked by what is recorded.
#
# TARGET (level_target.c) logs "debug R", "info R" and "warn R" in each
# round R, when told to on stdin.  Started with RINGTRACE_LEVEL=warn; before
# round 1 `ringtrace level ARENA debug`; before round 2 `ringtrace level PID
# error`; in round 3 the program sets info itself.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../e2e/lib.sh"
ringtrace=$1
target=$2
unset RINGTRACE_ARENA RINGTRACE_MODE RINGTRACE_BUFFER LD_PRELOAD
# a default arena, in an arena directory of the test's own: `level PID` finds it there
export RINGTRACE_DIR="$work/arenas"
mkfifo "$work/in"
RINGTRACE_LEVEL=warn "$target" 5 <"$work/in" >"$work/out" &
pid=$!
exec 3>"$work/in"

# wait_for LINE: until the program printed it (10 s at most)
wait_for() {
	i=0
	while ! grep -q -x "$1" "$work/out" 2>/dev/null; do
		i=$((i + 1))
		if [ "$i" -gt 1000 ]; then
			fail "the program never printed '$1'"
			return 1
		fi
		sleep 0.01
	done
}

i=0
while ! grep -q "^arena " "$work/out" 2>/dev/null && [ "$i" -lt 1000 ]; do
	i=$((i + 1))
	sleep 0.01
done
arena=$(awk '$1 == "arena" { print $2 }' "$work/out")
check "the arena is in RINGTRACE_DIR ($arena)" test "${arena#"$work/arenas/"}" != "$arena"
check "the threshold starts as RINGTRACE_LEVEL says" sh -c \
	"'$ringtrace' level '$arena' | grep -q -x '$arena: warn'"
echo go >&3
wait_for "done 0 3"
"$ringtrace" level "$arena" debug >"$work/set1"
check "level ARENA debug says what it did" grep -q -x "$arena: warn -> debug" "$work/set1"
echo go >&3
wait_for "done 1 6"
"$ringtrace" level "$pid" error >"$work/set2"
check "level PID error" grep -q -x "$arena: debug -> error" "$work/set2"
echo go >&3
wait_for "done 2 2"
echo go >&3
wait_for "done 3 5"
# read while the program runs (its default arena goes when it exits)
"$ringtrace" dump --json "$arena" >"$work/dump.json"
got=$(sed -n 's/.*"kind":"log".*"msg":"\([^"]*\)".*/\1/p' "$work/dump.json" | tr '\n' ',')
check "recorded: warn 0; debug, info, warn 1; nothing in 2; info, warn 3 ($got)" \
	test "$got" = "warn 0,debug 1,info 1,warn 1,info 3,warn 3,"
status=0
"$ringtrace" level "$arena" loud 2>"$work/bad.err" || status=$?
check "level: a bad name exits 2 ($status)" test "$status" -eq 2
status=0
"$ringtrace" level "$work/out" debug 2>"$work/notarena.err" || status=$?
check "level: not an arena exits 2 ($status)" test "$status" -eq 2
check "level: not an arena is left alone" grep -q "^done 3" "$work/out"
exec 3>&-
wait "$pid"
finish
