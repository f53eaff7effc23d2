#!/bin/sh
# others_outputs.sh RINGTRACE PROGRAM - an output file is made new, never
# found: in a sticky directory open to all (mode 1777), another user
# (uid 65533) makes files first at the paths where uid 65534 then writes
# with `record -o`, `cut`, `recover`, `analyze --html`, `export --ctf` and
# `ship --journal`
# (setpriv: root only; skipped with status 77 otherwise).  None of them is written into:
# each command refuses with one line naming the path and its owner, exit
# status 2, and the file keeps its inode and its contents.  A path that is
# free, or holds the caller's own earlier output, gets a new file with the
# caller's umask, which the other user cannot read under umask 077.
# PROGRAM is the example program, linked with libringtrace.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
ringtrace=$1
program=$2
require_other_users "$ringtrace"
chmod 0711 "$work"
shared=$work/shared
mkdir "$shared"
chmod 1777 "$shared"

# identity PATH: inode, size, owner, mode and checksum of the file at PATH
identity() {
	echo "$(stat -c '%i %s %u %a' "$1") $(cksum <"$1")"
}

# the other user's files, mode 0666: an empty one, a trace file, a FIFO
"$ringtrace" record -q --buffer 64K -o "$work/valid.rt" -- "$program" >/dev/null 2>"$work/valid.err" ||
	{
		cat "$work/valid.err" >&2
		fail "root records the example program"
	}
as_user 65533 sh -c "umask 0; : >'$shared/empty.rt'; cat '$work/valid.rt' >'$shared/trace.rt'; \
	mkfifo '$shared/fifo.rt'; : >'$shared/page.html'; mkdir '$shared/ctf'; \
	: >'$shared/journal'"
for f in empty.rt trace.rt page.html journal; do
	identity "$shared/$f" >"$work/$f.before"
done

# refused OUT WHAT COMMAND...: run as uid 65534, which must refuse to write OUT
refused() {
	out=$1
	what=$2
	shift 2
	status=0
	as_user 65534 "$@" >"$work/$what.out" 2>"$work/$what.err" || status=$?
	check "$what: refused with status 2 ($status)" test "$status" -eq 2
	check "$what: one line on stderr" test "$(line_count "$work/$what.err")" -eq 1
	check "$what: the line names the path and its owner" \
		grep -q -F "$out exists and belongs to uid 65533," "$work/$what.err"
}

refused "$shared/empty.rt" "record onto an empty file" \
	"$ringtrace" record -q -o "$shared/empty.rt" -- "$program"
refused "$shared/trace.rt" "record onto a trace file" \
	"$ringtrace" record -q -o "$shared/trace.rt" -- "$program"
refused "$shared/fifo.rt" "record into a FIFO" \
	"$ringtrace" record -q -o "$shared/fifo.rt" -- "$program"
refused "$shared/empty.rt" "cut onto an empty file" \
	"$ringtrace" cut --from seq:0 "$work/valid.rt" "$shared/empty.rt"
refused "$shared/trace.rt" "recover onto a trace file" \
	"$ringtrace" recover "$work/valid.rt" "$shared/trace.rt"
refused "$shared/page.html" "analyze --html onto a page" \
	"$ringtrace" analyze rate --html "$shared/page.html" "$work/valid.rt"
refused "$shared/journal" "ship --journal onto the other user's journal" \
	"$ringtrace" ship --to http://127.0.0.1:9/ --journal "$shared/journal" "$work/valid.rt"
status=0
as_user 65534 "$ringtrace" export --ctf "$work/valid.rt" "$shared/ctf" >/dev/null 2>"$work/ctf.err" ||
	status=$?
check "export --ctf into the other user's empty directory: refused with status 2 ($status)" \
	test "$status" -eq 2
check "export --ctf: one line on stderr naming the directory's owner" \
	grep -q -F "$shared/ctf: the directory belongs to uid 65533" "$work/ctf.err"
check "export --ctf: the directory is still empty" test -z "$(ls -A "$shared/ctf")"
for f in empty.rt trace.rt page.html journal; do
	check "$f: the other user's file is as it was" \
		test "$(identity "$shared/$f")" = "$(cat "$work/$f.before")"
done
check "no file left beside them" \
	test "$(find "$shared" -newer "$work/page.html.before" | wc -l)" -eq 0

# a free path: a new file with the caller's umask; 077 keeps the other user out
status=0
as_user 65534 sh -c "umask 077; exec '$ringtrace' record -q --buffer 64K -o '$shared/mine.rt' -- \
	'$program'" >/dev/null 2>"$work/mine.err" || status=$?
check "record into a free path ($status)" test "$status" -eq 0
check "the new trace is uid 65534's, mode 0600 (umask 077)" \
	test "$(stat -c '%u %a' "$shared/mine.rt")" = "65534 600"
check "the other user cannot read it" eval "! as_user 65533 cat '$shared/mine.rt' >/dev/null 2>&1"
check "the new trace reads" "$ringtrace" check "$shared/mine.rt" >/dev/null 2>&1

# the caller's own earlier output is replaced by a new file, under umask 022
first=$(stat -c %i "$shared/mine.rt")
status=0
as_user 65534 sh -c "umask 022; exec '$ringtrace' record -q --buffer 64K -o '$shared/mine.rt' -- \
	'$program'" >/dev/null 2>"$work/again.err" || status=$?
check "record again over one's own trace ($status)" test "$status" -eq 0
check "the new trace is mode 0644 (umask 022)" test "$(stat -c '%u %a' "$shared/mine.rt")" = "65534 644"
check "the new trace is a new file" test "$(stat -c %i "$shared/mine.rt")" != "$first"
check "the new trace reads" "$ringtrace" check "$shared/mine.rt" >/dev/null 2>&1
check "no file left beside it" test "$(find "$shared" -name 'mine.rt?*' | wc -l)" -eq 0
finish
