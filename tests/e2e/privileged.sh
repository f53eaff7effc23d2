#!/bin/sh
# privileged.sh PROGRAM - a privileged program obeys none of its caller's
# RINGTRACE_* variables.  PROGRAM (tests/e2e/programs/privileged.c, linked
# with the static library) is installed root-owned, set-user-ID (4755) and
# set-group-ID (2755), and run as uid 65534 (setpriv: root only; skipped
# with status 77 otherwise) with variables that name a root-only directory,
# an existing empty root-owned file and a new directory: nothing is made or
# replaced there, one line on stderr says the settings were ignored, and the
# program runs.  The set-user-ID program records into root's own directory;
# the set-group-ID one, whose files would be its caller's, records only
# where its own code says; a child either starts with an environment of its
# own making gets no RINGTRACE_ variable added.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
program=$1
require_other_users
ignored="tracing settings from the environment (RINGTRACE_*) were ignored"
shm_root=/dev/shm/ringtrace-0

# only uid 65534 passes through $work; bin/ holds the privileged copies
chmod 0711 "$work"
mkdir "$work/bin" "$work/rootonly" "$work/group"
chmod 0711 "$work/bin"
chmod 0700 "$work/rootonly"
chmod 0070 "$work/group" # group root only: what the set-group-ID program may write
: >"$work/rootonly/empty"
cp "$program" "$work/bin/setuid"
cp "$program" "$work/bin/setgid"
chown 0:0 "$work/bin/setuid" "$work/bin/setgid"
chmod 4755 "$work/bin/setuid"
chmod 2755 "$work/bin/setgid"

# run NAME BINARY [ARG...]: as uid 65534, with only the variables in $vars;
# the program must run (status 0, its "arena" line printed)
run() {
	name=$1
	shift
	status=0
	# shellcheck disable=SC2086 # $vars holds separate NAME=VALUE words
	env -i PATH=/usr/bin:/bin $vars setpriv --reuid 65534 --regid 65534 --clear-groups \
		"$@" >"$work/$name.out" 2>"$work/$name.err" || status=$?
	check "$name: the program ran ($status)" test "$status" -eq 0
	check "$name: the program printed its arena" grep -q '^arena ' "$work/$name.out"
}

# said NAME COUNT: COUNT lines of NAME's stderr say that the environment was ignored
said() {
	check "$1: $2 line(s) on stderr say the environment was ignored" \
		test "$(grep -c -F "$ignored" "$work/$1.err" || true)" -eq "$2"
}

arena_of() {
	sed -n 's/^arena //p' "$work/$1.out"
}

vars=
run probe "$work/bin/setuid"
if ! grep -q '^secure 1 uid 65534 euid 0 ' "$work/probe.out"; then
	echo "skipped: a set-user-ID program does not run privileged here:" \
		"$(cat "$work/probe.out" "$work/probe.err")" >&2
	exit 77
fi
check "privileged without RINGTRACE_ variables: nothing said" test ! -s "$work/probe.err"
said probe 0
case $(arena_of probe) in
"$shm_root"/*) pass ;;
*) fail "set-user-ID: the arena is in root's own directory, not $(arena_of probe)" ;;
esac
check "set-user-ID: root's default arena is removed at exit" test ! -e "$(arena_of probe)"

# RINGTRACE_ARENA at a new path in a root-only directory
vars="RINGTRACE_ARENA=$work/rootonly/new.arena RINGTRACE_MODE=stream RINGTRACE_BUFFER=1G"
run uid_new "$work/bin/setuid"
check "uid_new: nothing made at RINGTRACE_ARENA" test ! -e "$work/rootonly/new.arena"
check "uid_new: one line on stderr" test "$(line_count "$work/uid_new.err")" -eq 1
said uid_new 1
case $(arena_of uid_new) in
"$shm_root"/*) pass ;;
*) fail "uid_new: the arena is in root's own directory, not $(arena_of uid_new)" ;;
esac

# the same for a first event before the C library has set up environ
vars="RINGTRACE_ARENA=$work/rootonly/early.arena"
run uid_early "$work/bin/setuid" --early
check "uid_early: nothing made at RINGTRACE_ARENA" test ! -e "$work/rootonly/early.arena"
said uid_early 1
case $(arena_of uid_early) in
"$shm_root"/*) pass ;;
*) fail "uid_early: the arena is in root's own directory, not $(arena_of uid_early)" ;;
esac

# RINGTRACE_ARENA at an existing empty root-owned file
before=$(stat -c '%i %s %u %a' "$work/rootonly/empty")
vars="RINGTRACE_ARENA=$work/rootonly/empty"
run uid_empty "$work/bin/setuid"
check "uid_empty: the empty file is the same file, still empty" \
	test "$(stat -c '%i %s %u %a' "$work/rootonly/empty")" = "$before"
check "uid_empty: nothing kept beside it" test ! -e "$work/rootonly/empty.last"
said uid_empty 1

# RINGTRACE_DIR at a new directory, in a directory only root may write
vars="RINGTRACE_DIR=$work/newdir RINGTRACE_COLLECTOR=1 RINGTRACE_RINGS=4096"
run uid_dir "$work/bin/setuid"
check "uid_dir: no directory made at RINGTRACE_DIR" test ! -e "$work/newdir"
said uid_dir 1
case $(arena_of uid_dir) in
"$shm_root"/*) pass ;;
*) fail "uid_dir: the arena is in root's own directory, not $(arena_of uid_dir)" ;;
esac

# the program's own path is used; a child given its own environment gets nothing added
vars="RINGTRACE_ARENA=$work/rootonly/env.arena RINGTRACE_INHERIT=1 RINGTRACE_MODE=flight"
run uid_named "$work/bin/setuid" --arena "$work/rootonly/named.arena" --exec /usr/bin/env
check "uid_named: the arena is at the program's path" \
	test "$(arena_of uid_named)" = "$work/rootonly/named.arena"
check "uid_named: the arena is root's, mode 0600" \
	test "$(stat -c '%u %a' "$work/rootonly/named.arena")" = "0 600"
check "uid_named: nothing made at RINGTRACE_ARENA" test ! -e "$work/rootonly/env.arena"
check "uid_named: the child got the environment the program gave" \
	grep -q -x 'FROM_PROGRAM=1' "$work/uid_named.out"
check "uid_named: no RINGTRACE_ variable added to it" \
	test "$(grep -c '^RINGTRACE_' "$work/uid_named.out" || true)" -eq 0
said uid_named 1

# set-group-ID: the caller's directory and files are no place for its arena
vars="RINGTRACE_ARENA=$work/group/new.arena"
run gid_new "$work/bin/setgid"
check "gid_new: privileged, as uid 65534 with group 0" \
	grep -q '^secure 1 uid 65534 euid 65534 gid 65534 egid 0$' "$work/gid_new.out"
check "gid_new: nothing made at RINGTRACE_ARENA" test ! -e "$work/group/new.arena"
check "gid_new: no arena" test "$(arena_of gid_new)" = none
said gid_new 1
check "gid_new: the reason tracing is off is said" \
	grep -q 'tracing off: .*ringtrace_options.arena_path' "$work/gid_new.err"

vars="RINGTRACE_DIR=$work/group/dir"
run gid_dir "$work/bin/setgid"
check "gid_dir: no directory made at RINGTRACE_DIR" test ! -e "$work/group/dir"
check "gid_dir: no arena in the caller's directory" test "$(arena_of gid_dir)" = none
said gid_dir 1

vars=
run gid_none "$work/bin/setgid"
check "gid_none: no arena in the caller's directory" test "$(arena_of gid_none)" = none
said gid_none 0

vars="RINGTRACE_ARENA=$work/group/env.arena"
run gid_named "$work/bin/setgid" --arena "$work/group/named.arena"
check "gid_named: the arena is at the program's path" \
	test "$(arena_of gid_named)" = "$work/group/named.arena"
check "gid_named: nothing made at RINGTRACE_ARENA" test ! -e "$work/group/env.arena"
said gid_named 1
finish
