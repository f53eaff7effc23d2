#!/bin/sh
# refused.sh RINGTRACE REFUSED - sites whose ABI head the library does not
# serve (refused.c) stay off: none is registered, their events are counted
# lost and never recorded, one line on stderr says why, once, and a good
# site beside them records every event.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../e2e/lib.sh"
ringtrace=$1
refused=$2
unset RINGTRACE_ARENA RINGTRACE_MODE RINGTRACE_BUFFER RINGTRACE_LEVEL LD_PRELOAD
export RINGTRACE_DIR="$work/arenas"
mkdir -m 700 "$work/arenas"

status=0
RINGTRACE_ARENA="$work/run.arena" "$refused" 10 2>"$work/stderr" || status=$?
check "no bad site registered, the program ends well ($status)" test "$status" -eq 0
check "one line on stderr" test "$(line_count "$work/stderr")" -eq 1
check "it says which version and why" grep -q -x \
	"ringtrace: a site of the program (ABI version 2, 48 bytes) is not one this library records: its events are counted lost; build the program against this library's ringtrace.h" \
	"$work/stderr"
"$ringtrace" summary --json "$work/run.arena" >"$work/summary.json"
check "the good site's 10 events shown, the bad sites' 30 counted lost" \
	grep -q '"events":10,.*"lost":{"dropped":30,"overwritten":0,"torn":0,"damaged":0}' \
	"$work/summary.json"
"$ringtrace" dump --json "$work/run.arena" >"$work/dump.json"
sed -n 's/^{"kind":"trace".*"tag":"\([^"]*\)".*"args":\[\([^]]*\)\]}$/\1 \2/p' "$work/dump.json" \
	>"$work/events"
seq 0 9 | sed 's/^/kept /' >"$work/want"
check "only the good site's events, each as emitted" cmp "$work/want" "$work/events"
check "no event of a bad site" sh -c "! grep -q -e 'later version' -e 'other size' -e 'wrong kind' '$work/dump.json'"
# the loss names the ABI as a cause: a reader cannot tell it from a full site table
check "the loss says a site ABI may be why" grep -q \
	'"count":30,"reason":"dropped","note":"trace sites refused: .*a site ABI this library does not serve"' \
	"$work/dump.json"
finish
