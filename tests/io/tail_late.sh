#!/bin/sh
# tail_late.sh TOOL PROG - `ringtrace tail` attached to a `record --io`
# program after it opened its file: the later writes and the close name the
# file all the same (from the arena's descriptor table), and nothing from
# before the attach is printed.
set -u
tool=$1
prog=$2
. "$(dirname "$0")/../e2e/lib.sh"

# wait_for SECONDS COMMAND...: poll until the command succeeds
wait_for() {
	tries=$(($1 * 20))
	shift
	while [ "$tries" -gt 0 ]; do
		"$@" && return 0
		sleep 0.05
		tries=$((tries - 1))
	done
	return 1
}

out=$work/late.out
"$tool" record -q --io -o "$work/late.rt" -- "$prog" "$out" "$work/go" 2>"$work/prog.err" &
record=$!
check "the program opened its file" wait_for 20 grep -q ready "$work/prog.err"
pid=$(awk '$1 == "ready" { print $2 }' "$work/prog.err")
check "the program's pid" test -n "$pid"
"$tool" tail --json "$pid" >"$work/tail.json" 2>"$work/tail.err" &
tail=$!

# following: the arena mapped, and asleep between two polls.  A mapping
# alone is no sign: tail maps each arena a moment while it looks the pid's
# up, and what the program writes before tail's first look at the rings is
# from before the attach.  Asleep in clock_nanosleep (the kernel's wait
# channel; or the system call, x86-64 230, arm64 115) comes after it.
following() {
	grep -q "ringtrace-.*\.$pid\.arena" "/proc/$tail/maps" 2>/dev/null || return 1
	grep -q nanosleep "/proc/$tail/wchan" 2>/dev/null && return 0
	case $(cut -d' ' -f1 "/proc/$tail/syscall" 2>/dev/null) in
	230 | 115) return 0 ;;
	esac
	return 1
}
check "tail follows the program" wait_for 20 following
touch "$work/go"
check "the program ends" wait "$record"
check "tail ends by itself" wait "$tail"

check "tail's lines" /usr/bin/python3 - "$work/tail.json" "$out" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
io = [l for l in lines if l.get("kind") == "io"]
ops = [(l["op"], l.get("path"), l.get("size")) for l in io]
want = [("write", sys.argv[2], 6)] * 3 + [("close", sys.argv[2], 0)]
if ops != want:
    print("tail printed", ops, "expected", want)
    sys.exit(1)
PY
check "nothing on tail's stderr" test ! -s "$work/tail.err"
# what tail said, shown when it said anything: a failure above is read from it
if [ -s "$work/tail.err" ]; then
	echo "tail's stderr:" >&2
	cat "$work/tail.err" >&2
fi
check "the recording has the write before the attach" sh -c \
	'"$1" dump --json "$2" | grep "\"op\":\"write\"" | grep -q "\"size\":7"' sh "$tool" "$work/late.rt"
finish
