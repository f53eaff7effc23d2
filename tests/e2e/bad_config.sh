#!/bin/sh
# bad_config.sh BUILD_DIR CMAKE - a program built against the installed
# library, run with a bad configuration in its environment: it runs to
# completion with exit status 0 and all its output, tracing turns itself
# off, exactly one `ringtrace:` line on stderr says why, and nothing is
# created or touched on disk.  Also the default arena path: a private file
# under /dev/shm while the program runs, removed at its clean exit.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
build=$1
cmake=$2

require_tools gcc pkg-config
install_build "$build" "$cmake"
cp "$here/programs/app.c" "$work/app.c"
cd "$work"
if ! gcc -std=c11 -pthread -o app app.c $(pkg-config --cflags --libs ringtrace) 2>build.log; then
	cat build.log >&2
	fail "gcc app.c \$(pkg-config --cflags --libs ringtrace)"
	finish
	exit 1
fi

# the reference run: tracing on, silent
RINGTRACE_ARENA=$work/good.arena ./app >good.out 2>good.err
check "good run: nothing on stderr" test ! -s good.err
check "good run: arena made" test -s good.arena
events=$(grep -c '^expect' good.out || true)

printf 'precious data, not an arena\n' >precious
cp precious precious.orig

# bad NAME VARIABLE=VALUE...: run the program with this environment
bad() {
	name=$1
	shift
	status=0
	env RINGTRACE_ARENA="$work/$name.arena" "$@" ./app >"$name.out" 2>"$name.err" || status=$?
	check "$name: exit status 0 ($status)" test "$status" -eq 0
	check "$name: the program did all its work" \
		test "$(grep -c '^expect' "$name.out")" -eq "$events"
	check "$name: tracing off" grep -q -x 'arena	(off)' "$name.out"
	check "$name: one line on stderr ($(line_count "$name.err"))" \
		test "$(line_count "$name.err")" -eq 1
	check "$name: it starts with 'ringtrace: '" grep -q '^ringtrace: ' "$name.err"
	check "$name: no arena made" test ! -e "$name.arena"
}

bad buffer-not-a-size RINGTRACE_BUFFER=abc
bad buffer-too-small RINGTRACE_BUFFER=1
bad buffer-bad-suffix RINGTRACE_BUFFER=12Q
bad mode-unknown RINGTRACE_MODE=bogus
bad rings-not-a-count RINGTRACE_RINGS=lots
bad crash-events-not-a-count RINGTRACE_CRASH_EVENTS=some
bad crash-events-too-many RINGTRACE_CRASH_EVENTS=1001
bad sync-not-a-period RINGTRACE_SYNC=soon
bad sync-zero RINGTRACE_SYNC=0
bad sync-too-long RINGTRACE_SYNC=3600001
bad missing-directory RINGTRACE_ARENA="$work/no/such/directory/x.arena"
bad not-an-arena RINGTRACE_ARENA="$work/precious"
check "not-an-arena: the file is untouched" cmp -s precious precious.orig
check "buffer-not-a-size: the line quotes the value" grep -q 'abc' buffer-not-a-size.err
check "mode-unknown: the line quotes the value" grep -q 'bogus' mode-unknown.err
check "sync-too-long: the line names the variable" grep -q 'RINGTRACE_SYNC=3600001' \
	sync-too-long.err
check "missing-directory: the line names the path" grep -q 'no/such/directory' \
	missing-directory.err

# no RINGTRACE_ARENA: /dev/shm/ringtrace-PROGRAM.PID.arena, gone after a clean exit
env -u RINGTRACE_ARENA ./app >default.out 2>default.err
pid=$(awk -F'	' '$1 == "pid" { print $2 }' default.out)
path=$(awk -F'	' '$1 == "arena" { print $2 }' default.out)
check "default path: nothing on stderr" test ! -s default.err
check "default path is /dev/shm/ringtrace-app.$pid.arena ($path)" \
	test "$path" = "/dev/shm/ringtrace-app.$pid.arena"
check "default path: removed at exit" test ! -e "$path"
finish
