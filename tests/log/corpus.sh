#!/bin/sh
# corpus.sh RINGTRACE CORPUS - the conformance corpus (corpus.c): every
# message RT_LOG recorded, read back from the arena with `dump --json`, from
# a trace file written by `ringtrace record`, and with `ringtrace log`, is
# byte for byte what snprintf made of the same format and arguments in the
# same program.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../e2e/lib.sh"
ringtrace=$1
corpus=$2
unset RINGTRACE_ARENA RINGTRACE_MODE RINGTRACE_BUFFER RINGTRACE_LEVEL LD_PRELOAD
python=/usr/bin/python3
[ -x "$python" ] || python=python3

# the "msg" of every log object, JSON-decoded (the corpus has UTF-8 in it)
msgs() {
	"$ringtrace" dump --json "$1" | "$python" -c '
import json, sys
for line in sys.stdin:
    o = json.loads(line)
    if o.get("kind") == "log":
        sys.stdout.write(o["msg"] + "\n")'
}

RINGTRACE_ARENA="$work/corpus.arena" RINGTRACE_BUFFER=4M "$corpus" >"$work/expected" \
	2>"$work/count"
n=$(wc -l <"$work/expected")
check "the corpus printed its messages ($n; $(cat "$work/count"))" test "$n" -gt 250
msgs "$work/corpus.arena" >"$work/arena.msgs"
check "arena: every message as snprintf printed it" cmp "$work/expected" "$work/arena.msgs"
if ! cmp -s "$work/expected" "$work/arena.msgs"; then
	diff "$work/expected" "$work/arena.msgs" | head -20 >&2
fi

"$ringtrace" record -q -o "$work/corpus.rt" -- "$corpus" >"$work/expected2" 2>/dev/null
msgs "$work/corpus.rt" >"$work/trace.msgs"
check "trace file: every message as snprintf printed it" cmp "$work/expected2" \
	"$work/trace.msgs"

"$ringtrace" log "$work/corpus.rt" >"$work/log.txt"
sed 's/^[^ ]* [A-Z]* \[[^]]*\] corpus\.c:[0-9]* //' "$work/log.txt" >"$work/log.msgs"
check "ringtrace log: every message as snprintf printed it" cmp "$work/expected2" \
	"$work/log.msgs"
finish
