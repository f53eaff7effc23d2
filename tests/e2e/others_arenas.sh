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
if [ "$(id -u)" -ne 0 ] || ! command -v setpriv >/dev/null 2>&1; then
	echo "skipped: needs root and setpriv to act as another user" >&2
	exit 77
fi
chmod 0755 "$work"
as_nobody() {
	setpriv --reuid 65534 --regid 65534 --clear-groups "$@"
}
if ! as_nobody "$ringtrace" --version >/dev/null 2>&1; then
	echo "skipped: another user cannot run $ringtrace here (a private directory on its path)" >&2
	exit 77
fi
RINGTRACE_ARENA="$work/root.arena" "$program" "$work/addr" basic
cp "$work/root.arena" "$work/root.copy"

for command in rm snapshot tail; do
	status=0
	as_nobody "$ringtrace" $command "$work/root.arena" >"$work/$command.out" \
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
