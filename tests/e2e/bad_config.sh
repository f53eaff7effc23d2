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
# a symbolic link at the arena path, to a file of someone's: never followed
ln -s "$work/precious" victim-link.arena
status=0
env RINGTRACE_ARENA="$work/victim-link.arena" ./app >victim.out 2>victim.err || status=$?
check "symlink-to-victim: exit status 0 ($status)" test "$status" -eq 0
check "symlink-to-victim: the program did all its work" \
	test "$(grep -c '^expect' victim.out)" -eq "$events"
check "symlink-to-victim: tracing off" grep -q -x 'arena	(off)' victim.out
check "symlink-to-victim: one line on stderr" test "$(line_count victim.err)" -eq 1
check "symlink-to-victim: the victim is untouched" cmp -s precious precious.orig
check "symlink-to-victim: the link is still a link" test -L victim-link.arena

# bad_dir NAME DIR: no RINGTRACE_ARENA, RINGTRACE_DIR=DIR, which is not fit for arenas
bad_dir() {
	name=$1
	dir=$2
	ls -A "$dir" >"$name.before" 2>/dev/null || true
	status=0
	env -u RINGTRACE_ARENA RINGTRACE_DIR="$dir" ./app >"$name.out" 2>"$name.err" || status=$?
	check "$name: exit status 0 ($status)" test "$status" -eq 0
	check "$name: the program did all its work" \
		test "$(grep -c '^expect' "$name.out")" -eq "$events"
	check "$name: tracing off" grep -q -x 'arena	(off)' "$name.out"
	check "$name: one line on stderr ($(line_count "$name.err"))" \
		test "$(line_count "$name.err")" -eq 1
	check "$name: the line names the directory" grep -q -F "$dir" "$name.err"
	ls -A "$dir" >"$name.after" 2>/dev/null || true
	check "$name: nothing made in it" cmp -s "$name.before" "$name.after"
}
mkdir -m 0755 open-dir
bad_dir dir-open-to-others "$work/open-dir"
mkdir -m 0700 private-dir
ln -s "$work/private-dir" dir-link
bad_dir dir-symlink "$work/dir-link"
check "dir-symlink: its target is untouched" test -z "$(ls -A private-dir)"
: >not-a-dir
bad_dir dir-is-a-file "$work/not-a-dir"
if [ "$(id -u)" -eq 0 ]; then
	# root can make a directory that belongs to someone else
	mkdir -m 0700 others-dir
	chown 65534:65534 others-dir
	bad_dir dir-of-another-user "$work/others-dir"
	check "dir-of-another-user: the line names the owner" grep -q 'uid 65534' \
		dir-of-another-user.err
else
	echo "note: not root: the directory of another user is not tried" >&2
fi
# a missing directory is made, mode 0700, and the arena in it is the user's, 0600
env -u RINGTRACE_ARENA RINGTRACE_DIR="$work/fresh-dir" ./app >fresh.out 2>fresh.err
check "fresh-dir: nothing on stderr" test ! -s fresh.err
check "fresh-dir: made with mode 700" test "$(stat -c %a fresh-dir)" = 700
fresh=$(awk -F'	' '$1 == "arena" { print $2 }' fresh.out)
case $fresh in
"$work/fresh-dir/ringtrace-app."*.arena) pass ;;
*) fail "fresh-dir: the arena was $fresh" ;;
esac
check "buffer-not-a-size: the line quotes the value" grep -q 'abc' buffer-not-a-size.err
check "mode-unknown: the line quotes the value" grep -q 'bogus' mode-unknown.err
check "sync-too-long: the line names the variable" grep -q 'RINGTRACE_SYNC=3600001' \
	sync-too-long.err
check "missing-directory: the line names the path" grep -q 'no/such/directory' \
	missing-directory.err

# no RINGTRACE_ARENA: /dev/shm/ringtrace-UID/ringtrace-PROGRAM.PID.arena, gone after a
# clean exit
env -u RINGTRACE_ARENA -u RINGTRACE_DIR ./app >default.out 2>default.err
pid=$(awk -F'	' '$1 == "pid" { print $2 }' default.out)
path=$(awk -F'	' '$1 == "arena" { print $2 }' default.out)
check "default path: nothing on stderr" test ! -s default.err
check "default path is /dev/shm/ringtrace-$(id -u)/ringtrace-app.$pid.arena ($path)" \
	test "$path" = "/dev/shm/ringtrace-$(id -u)/ringtrace-app.$pid.arena"
check "default path: removed at exit" test ! -e "$path"
finish
