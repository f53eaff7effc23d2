#!/bin/sh
# cases.sh RINGTRACE IO_CASES CASE [user-arena] - one case of io_cases.c under
# `ringtrace record --io`, its `dump --json` checked by check_io.py against
# what the program says it did (descriptor reuse, by one thread and by two
# racing, dup and its kin, fork and exec, children that exec at once,
# children that exec twice and more at once,
# close_range then fork, pipes and
# sockets, failures, stdio, a signal handler's write during a read, a read
# cancelled by the thread's own pthread_cancel, a blocked read cancelled by
# another thread); and `dump --tail` of the second half, text and JSON,
# checked by check_printers.py against the whole dump, and `dump --since`
# its middle call, the same whether the trace is read from its start or not.  With user-arena, the arenas go where
# RINGTRACE_ARENA says, a directory of the test's (on whatever file system
# holds /tmp), rather than the private default: record must leave there no
# arena it kept only for itself (NAME.last.N).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../e2e/lib.sh"
ringtrace=$1
cases=$2
case=$3
where=${4:-}
unset RINGTRACE_ARENA RINGTRACE_BUFFER RINGTRACE_MODE RINGTRACE_RINGS RINGTRACE_SYNC \
	RINGTRACE_PRELOAD RINGTRACE_PRELOAD_IO LD_PRELOAD
python=/usr/bin/python3
[ -x "$python" ] || python=python3

# the program names its files by this directory: no symbolic link in it, as /proc names them
real=$(cd "$work" && pwd -P)
dir=$real/files
mkdir "$dir"
status=0
if [ "$where" = user-arena ]; then
	mkdir "$work/arenas"
	export RINGTRACE_ARENA="$work/arenas/p.arena"
fi
"$ringtrace" record --io -q -o "$work/trace.rt" -- "$cases" "$case" "$dir" "$work/expect.jsonl" \
	</dev/null >"$real/stdout" 2>"$work/stderr" || status=$?
unset RINGTRACE_ARENA
cat "$work/stderr" >&2
check "$case: the program and record exit 0 ($status)" test "$status" -eq 0
# a value of RINGTRACE_IO_DIRECT other than 0 and 1 is said on stderr, and changes nothing
# else; 1 asks for the wrappers' own system calls, which glibc 2.36 on x86-64 (Debian 12) allows;
# without it nothing is said
case ${RINGTRACE_IO_DIRECT:-} in
"" | 0)
	check "$case: nothing said of RINGTRACE_IO_DIRECT" \
		test -z "$(grep "RINGTRACE_IO_DIRECT" "$work/stderr")"
	;;
1)
	if [ "$(uname -m)" = x86_64 ] && ldd --version 2>&1 | head -n 1 | grep -q 'GLIBC.* 2\.36$'; then
		check "$case: the interposer finds the C library's fast path of read and write" \
			test -z "$(grep "RINGTRACE_IO_DIRECT=1" "$work/stderr")"
	fi
	;;
*)
	check "$case: RINGTRACE_IO_DIRECT=$RINGTRACE_IO_DIRECT is called bad on stderr" \
		grep -q "^ringtrace: RINGTRACE_IO_DIRECT=$RINGTRACE_IO_DIRECT: neither 0 nor 1" \
		"$work/stderr"
	;;
esac
if [ "$where" = user-arena ]; then
	check "$case: the user's arena is there" test -f "$work/arenas/p.arena"
	check "$case: no arena kept for record is left (NAME.last.N)" \
		test -z "$(ls "$work/arenas" | grep '\.last\.[0-9]*$')"
fi
status=0
"$ringtrace" dump --json "$work/trace.rt" >"$work/dump.json" 2>"$work/dump.err" || status=$?
check "$case: dump --json exits 0 ($status)" test "$status" -eq 0
[ "$status" -eq 0 ] || cat "$work/dump.err" >&2
check "$case: the trace names every call as the program made it" \
	"$python" "$here/check_io.py" "$work/dump.json" "$work/expect.jsonl" "$case"
# the second half, cut with --tail: the calls before it still name files and move positions
half=$(($(wc -l <"$work/dump.json") / 2))
"$ringtrace" dump --json --tail "$half" "$work/trace.rt" >"$work/tail.json" 2>/dev/null
"$ringtrace" dump --tail "$half" "$work/trace.rt" >"$work/tail.txt" 2>/dev/null
check "$case: dump --tail, text and JSON, shows each call as the whole dump does" \
	"$python" "$here/check_printers.py" "$work/dump.json" "$work/tail.json" "$work/tail.txt"
# from the middle call's time on: the same as read from the start (the calls before count)
mid=$("$python" -c 'import json, sys
ts = sorted(json.loads(l)["ts_ns"] for l in open(sys.argv[1]) if "\"kind\":\"io\"" in l)
print(ts[len(ts) // 2] if ts else 0)' "$work/dump.json")
"$ringtrace" dump --json --since "${mid}ns" "$work/trace.rt" >"$work/since.json" 2>&1
RINGTRACE_SEEK=0 "$ringtrace" dump --json --since "${mid}ns" "$work/trace.rt" \
	>"$work/since-start.json" 2>&1
check "$case: dump --since shows what it shows read from the start" \
	cmp -s "$work/since.json" "$work/since-start.json"
finish
