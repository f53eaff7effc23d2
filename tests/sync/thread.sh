#!/bin/sh
# thread.sh VICTIM - the write-back thread seen from inside the traced
# program, and the configuration around it (no root needed):
#   - RINGTRACE_SYNC on a disk file: one thread named ringtrace-sync with
#     every signal blocked, writing back periodically; a forked child has
#     none and closes nothing; ringtrace_shutdown writes back a last time
#     and the thread ends; it never appears in the trace;
#   - ringtrace_options.sync_ms: on, RINGTRACE_SYNC_OFF over the
#     environment, 0 for "not asked";
#   - an arena on tmpfs: no thread, one line on stderr, tracing stays on.
set -u
victim=$1
tool=$2
work=$(mktemp -d "${TMPDIR:-/tmp}/ringtrace-sync.XXXXXX")
trap 'rm -rf "$work"' EXIT
trap 'exit 1' INT TERM
if [ "$(stat -f -c %T "$work")" = tmpfs ]; then
	echo "SKIP: $work is on tmpfs; the write-back thread needs a disk file"
	exit 77
fi
passed=0
failed=0
check() {
	description=$1
	shift
	if "$@"; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		echo "FAIL: $description" >&2
	fi
}

# run NAME MODE VAR=VALUE...: the victim checks itself; stderr kept apart
run() {
	name=$1
	mode=$2
	shift 2
	env -u RINGTRACE_SYNC RINGTRACE_ARENA="$work/$name.arena" "$@" "$victim" "$mode" \
		>"$work/$name.out" 2>"$work/$name.err"
	status=$?
	sed "s/^/$name: /" "$work/$name.out"
	check "$name: the victim's own checks (status $status)" test "$status" -eq 0
}

run thread thread RINGTRACE_SYNC=20
check "thread: nothing on stderr" test ! -s "$work/thread.err"
"$tool" dump --json "$work/thread.arena" >"$work/thread.json"
check "thread: the trace has the program's event" grep -q '"tag":"sync check start"' \
	"$work/thread.json"
check "thread: the write-back thread is not in the trace" \
	sh -c "! grep -q ringtrace-sync '$work/thread.json'"

run option-on option-on
check "option-on: nothing on stderr" test ! -s "$work/option-on.err"
run option-off option-off RINGTRACE_SYNC=30
check "option-off: nothing on stderr" test ! -s "$work/option-off.err"
run none none
check "none: nothing on stderr" test ! -s "$work/none.err"

# tmpfs: tracing on, no thread, one line saying why
shm=/dev/shm/ringtrace-sync-test.$$.arena
env RINGTRACE_ARENA="$shm" RINGTRACE_SYNC=20 "$victim" none >"$work/tmpfs.out" \
	2>"$work/tmpfs.err"
status=$?
rm -f "$shm"
sed 's/^/tmpfs: /' "$work/tmpfs.out"
check "tmpfs: tracing on, no write-back thread (status $status)" test "$status" -eq 0
check "tmpfs: one line on stderr" test "$(awk 'END { print NR }' "$work/tmpfs.err")" -eq 1
check "tmpfs: it says why" grep -q '^ringtrace: RINGTRACE_SYNC ignored: .*tmpfs' \
	"$work/tmpfs.err"

for f in "$work"/*.err; do
	[ -s "$f" ] && { echo "$f:"; cat "$f"; }
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
