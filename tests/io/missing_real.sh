#!/bin/sh
# missing_real.sh RINGTRACE MISSING_REAL HIDE_DLSYM - the I/O interposer when
# dlsym(RTLD_NEXT) finds no real function: with HIDE_DLSYM preloaded and
# hiding unlink and fopen, MISSING_REAL (missing_real.c) runs under
# `ringtrace record --io`.  Those calls must fail with ENOSYS (not call a
# null pointer), one line on stderr must say so, once, and the trace must
# hold the failed calls with their errno.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../e2e/lib.sh"
ringtrace=$1
program=$2
shim=$3
unset RINGTRACE_ARENA RINGTRACE_BUFFER RINGTRACE_MODE RINGTRACE_PRELOAD RINGTRACE_PRELOAD_IO
python=/usr/bin/python3
[ -x "$python" ] || python=python3
real=$(cd "$work" && pwd -P)
mkdir "$real/files"

status=0
# the shim goes after the libraries record preloads: a shell puts it there, and execs
# shellcheck disable=SC2016 # expanded by that shell
RT_TEST_HIDE=unlink,fopen "$ringtrace" record --io -q -o "$work/trace.rt" -- \
	sh -c 'LD_PRELOAD="$LD_PRELOAD:$0" exec "$@"' "$shim" "$program" "$real/files" \
	>"$work/stdout" 2>"$work/stderr" </dev/null || status=$?
cat "$work/stdout" "$work/stderr"
check "the program and record exit 0 ($status)" test "$status" -eq 0
check "every call failed as expected" sh -c "! grep -q FAIL '$work/stdout' && \
	test \$(grep -c '^ok ' '$work/stdout') -eq 7"
check "one line on stderr says unlink is missing" \
	test "$(grep -c '^ringtrace: libringtrace_io: no unlink found after the interposer' \
		"$work/stderr")" -eq 1
check "and no other line says so" test "$(grep -c 'found after the interposer' "$work/stderr")" -eq 1

"$ringtrace" dump --json "$work/trace.rt" >"$work/trace.json" || fail "dump the trace"
"$python" - "$work/trace.json" "$real/files/kept" <<'PY' || fail "the trace holds the failed calls"
import errno, json, sys
path, kept = sys.argv[1:3]
io = [o for o in map(json.loads, open(path)) if o.get("kind") == "io"]
unlinks = [o for o in io if o["op"] == "unlink" and o.get("path") == kept]
fopens = [o for o in io if o["op"] == "fopen" and o.get("path") == kept]
errors = []
if len(unlinks) != 2 or any(o["result"] != -errno.ENOSYS or o["errno"] != errno.ENOSYS for o in unlinks):
    errors.append("unlink records: %s" % unlinks)
if len(fopens) != 2 or any(o["errno"] != errno.ENOSYS for o in fopens):
    errors.append("fopen records: %s" % fopens)
for e in errors:
    print(e)
sys.exit(1 if errors else 0)
PY
finish
