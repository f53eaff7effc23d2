#!/bin/sh
# others_arenas.sh RINGTRACE PROGRAM - `ringtrace rm`, `snapshot` and `tail` act only
# on the caller's own arenas: run as another user (setpriv, so root only;
# skipped with status 77 otherwise), all refuse root's arena with one line
# naming it and its owner, and leave it as it was; root itself may act on
# an arena of another user.  PROGRAM is tests/functions' calls program,
# which makes an arena at RINGTRACE_ARENA.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
ringtrace=$1
program=$2
require_other_users "$ringtrace"
chmod 0755 "$work"
RINGTRACE_ARENA="$work/root.arena" "$program" "$work/addr" basic
cp "$work/root.arena" "$work/root.copy"

for command in rm snapshot tail; do
	status=0
	as_user 65534 "$ringtrace" $command "$work/root.arena" >"$work/$command.out" \
		2>"$work/$command.err" || status=$?
	check "$command as another user: refused ($status)" test "$status" -ne 0
	check "$command as another user: one line on stderr" test "$(line_count "$work/$command.err")" -eq 1
	check "$command as another user: the line names the arena" grep -q -F "$work/root.arena" \
		"$work/$command.err"
	check "$command as another user: the line names the owner" grep -q "uid 0" \
		"$work/$command.err"
	check "$command as another user: the arena is untouched" cmp -s "$work/root.arena" \
		"$work/root.copy"
done
# root may remove an arena of another user
chown 65534:65534 "$work/root.arena"
check "root removes another user's arena" "$ringtrace" rm "$work/root.arena" 2>"$work/root-rm.err"
check "root's rm: gone" test ! -e "$work/root.arena"
finish
