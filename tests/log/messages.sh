#!/bin/sh
# messages.sh RINGTRACE MESSAGES - RT_LOG messages of many types and sizes
# (messages.c), read back from an arena, from a trace file written by
# `ringtrace record`, and from a cut of each, equal the program's own
# snprintf of the same arguments; `ringtrace log` shows them one a line.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../e2e/lib.sh"
ringtrace=$1
messages=$2
unset RINGTRACE_ARENA RINGTRACE_MODE RINGTRACE_BUFFER RINGTRACE_LEVEL LD_PRELOAD
export RINGTRACE_DIR="$work/arenas"
mkdir -m 700 "$work/arenas"

# msgs FILE: the msg field of every log object of `dump --json FILE`, in order
msgs() {
	"$ringtrace" dump --json "$1" >"$work/dump.json"
	sed -n 's/^{"kind":"log".*"msg":"\([^"]*\)".*/\1/p' "$work/dump.json"
}

# the program's own lines: debug is below the default threshold (info), so not logged
RINGTRACE_ARENA="$work/run.arena" "$messages" 3 >"$work/all"
grep -v '^double ' "$work/all" >"$work/expected"
check "the program printed its messages" test "$(wc -l <"$work/expected")" -eq 36

msgs "$work/run.arena" >"$work/arena.msgs"
check "arena: every message as snprintf printed it" cmp "$work/expected" "$work/arena.msgs"
check "arena: levels" sh -c "grep -c '^{\"kind\":\"log\".*\"level\":\"fatal\",\"msg\":\"fatal but not really' \
	'$work/dump.json' | grep -q -x 3"

RINGTRACE_LEVEL=debug "$ringtrace" record -q -o "$work/run.rt" -- "$messages" 3 >"$work/all2"
# (pointers differ from run to run: each run is checked against its own lines)
check "record: the program's output passes through" test "$(wc -l <"$work/all2")" -eq 39
msgs "$work/run.rt" >"$work/trace.msgs"
check "trace file: every message as snprintf printed it" cmp "$work/all2" "$work/trace.msgs"

"$ringtrace" cut -q --from 0s "$work/run.rt" "$work/cut.rt"
msgs "$work/cut.rt" >"$work/cut.msgs"
check "cut of a trace file: the same messages" cmp "$work/all2" "$work/cut.msgs"
"$ringtrace" cut -q --from 0s "$work/run.arena" "$work/cut-arena.rt"
msgs "$work/cut-arena.rt" >"$work/cut-arena.msgs"
check "cut of an arena: the same messages" cmp "$work/expected" "$work/cut-arena.msgs"

# %p of a char *: RT_LOG copied the string, and kept its address too
RINGTRACE_ARENA="$work/pointers.arena" "$messages" 1 pointers >"$work/pointers.all"
grep -v '^double ' "$work/pointers.all" >"$work/pointers.expected"
msgs "$work/pointers.arena" >"$work/pointers.msgs"
check "%p of a char *: its address, as snprintf printed it" cmp "$work/pointers.expected" \
	"$work/pointers.msgs"
check "%p of a char *: the lines are there" grep -q '^char pointer 0x' "$work/pointers.msgs"

# ringtrace log: WALL LEVEL [tid T name] file:line message
"$ringtrace" log "$work/run.rt" >"$work/log.txt"
check "log: one line a message" test "$(wc -l <"$work/log.txt")" -eq 39
check "log: wall clock, level, thread, place" sh -c "grep -c -E \
	'^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{9}Z (FATAL|ERROR|WARN|NOTICE|INFO|DEBUG) \\[tid [0-9]+ [^]]*\\] messages\\.c:[0-9]+ ' \
	'$work/log.txt' | grep -q -x 39"
sed 's/^[^ ]* [A-Z]* \[[^]]*\] messages\.c:[0-9]* //' "$work/log.txt" >"$work/log.msgs"
check "log: the messages" cmp "$work/all2" "$work/log.msgs"
"$ringtrace" log --level warn "$work/run.rt" >"$work/warn.txt"
check "log --level warn: warn, error and fatal only" sh -c \
	"test \$(grep -c -v -E '^[^ ]* (WARN|ERROR|FATAL) ' '$work/warn.txt') -eq 0 && \
	 test \$(wc -l <'$work/warn.txt') -eq 15"
"$ringtrace" log --since seq:12 "$work/run.arena" >"$work/since.txt"
check "log --since seq:12: from the second round" sh -c \
	"head -n 1 '$work/since.txt' | grep -q ' round 1\$' && test \$(wc -l <'$work/since.txt') -eq 24"
"$ringtrace" log --since 1h "$work/run.arena" >"$work/late.txt"
check "log --since 1h: nothing that late" test ! -s "$work/late.txt"
"$ringtrace" log --json "$work/run.arena" >"$work/log.json"
check "log --json: log objects only" sh -c \
	"test \$(grep -c '^{\"kind\":\"log\",' '$work/log.json') -eq 36 && test \$(wc -l <'$work/log.json') -eq 36"
"$ringtrace" summary --json "$work/run.rt" >"$work/summary.json"
check "summary: every message counted as a log message" \
	grep -q '"kinds":{"trace":39,"log":39,' "$work/summary.json"
# -f: the messages of a running program as it writes them, until it ends
mkfifo "$work/go"
RINGTRACE_ARENA="$work/live.arena" "$messages" 3 wait <"$work/go" >"$work/live.out" &
pid=$!
exec 3>"$work/go"
i=0
while ! grep -q -x "fatal but not really 0" "$work/live.out" 2>/dev/null && [ "$i" -lt 1000 ]; do
	i=$((i + 1))
	sleep 0.01
done
: >"$work/follow.txt"
"$ringtrace" log -f "$work/live.arena" >>"$work/follow.txt" &
follower=$!
# the follower has printed the first round before the second is written
i=0
while [ "$(wc -l <"$work/follow.txt")" -lt 12 ] && [ "$i" -lt 1000 ]; do
	i=$((i + 1))
	sleep 0.01
done
check "log -f: the first round while the program waits" test "$(wc -l <"$work/follow.txt")" -eq 12
echo go >&3
echo go >&3
exec 3>&-
wait "$pid"
status=0
wait "$follower" || status=$?
check "log -f: ends with the program ($status)" test "$status" -eq 0
grep -v '^double ' "$work/live.out" >"$work/live.expected"
sed 's/^[^ ]* [A-Z]* \[[^]]*\] messages\.c:[0-9]* //' "$work/follow.txt" >"$work/follow.msgs"
check "log -f: every message once, in order" cmp "$work/live.expected" "$work/follow.msgs"
# -f PID: the running arena of that process in RINGTRACE_DIR, as tail finds it
rm -f "$work/go"
mkfifo "$work/go"
"$messages" 2 wait <"$work/go" >"$work/pid.out" &
pid=$!
exec 3>"$work/go"
i=0
while ! grep -q -x "fatal but not really 0" "$work/pid.out" 2>/dev/null && [ "$i" -lt 1000 ]; do
	i=$((i + 1))
	sleep 0.01
done
: >"$work/pid.txt"
"$ringtrace" log -f "$pid" >>"$work/pid.txt" 2>"$work/pid.err" &
follower=$!
i=0
while [ "$(wc -l <"$work/pid.txt")" -lt 12 ] && [ "$i" -lt 1000 ]; do
	i=$((i + 1))
	sleep 0.01
done
check "log -f PID: the first round while the program waits" test "$(wc -l <"$work/pid.txt")" -eq 12
echo go >&3
exec 3>&-
wait "$pid"
status=0
wait "$follower" || status=$?
check "log -f PID: ends with the program ($status)" test "$status" -eq 0
grep -v '^double ' "$work/pid.out" >"$work/pid.expected"
sed 's/^[^ ]* [A-Z]* \[[^]]*\] messages\.c:[0-9]* //' "$work/pid.txt" >"$work/pid.msgs"
check "log -f PID: every message once, in order" cmp "$work/pid.expected" "$work/pid.msgs"
status=0
"$ringtrace" log -f 999999999 2>"$work/nopid.err" || status=$?
check "log -f PID of no running arena: usage error ($status)" test "$status" -eq 2
check "log -f PID of no running arena: said" grep -q "no running arena of pid 999999999" \
	"$work/nopid.err"
status=0
"$ringtrace" log -f "$work/run.rt" 2>/dev/null || status=$?
check "log -f of a trace file: not an arena ($status)" test "$status" -eq 2
status=0
"$ringtrace" log --level loud "$work/run.rt" 2>/dev/null || status=$?
check "log --level loud: usage error ($status)" test "$status" -eq 2
finish
