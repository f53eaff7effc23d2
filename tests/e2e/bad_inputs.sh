#!/bin/sh
# bad_inputs.sh RINGTRACE DEMO - every command that reads inputs, on every
# kind of input that is not a trace it can read.
#
# dump, info, summary, check, recover, cut, replay, report, snapshot, tail and ls,
# given a missing path, an empty file, one byte, random bytes, a text file,
# an ELF binary, a directory with no trace in it, a FIFO, /dev/zero, or an
# arena or a trace file of a future format version: exit status 2 within
# 10 seconds (a FIFO without a writer
# and a device that never ends are refused, not waited on), nothing on
# stdout that looks like events (nothing at all but for ls, which lists what
# it was given), exactly one line on stderr naming the path and, where one
# applies, the byte offset; recover, cut and snapshot leave no OUT behind.
# rm refuses every one of them that is not an arena and leaves it in place.
# A trace file whose version byte was changed without its checksum, or cut
# to its first 10 bytes, is damaged, not refused: read with exit status 3
# (check: 1), the damage named (docs/FORMAT.md, "Versions").
# DEMO makes the arena and the recording the bad ones are made from.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
ringtrace=$1
demo=$2
cd "$work"
require_tools python3 timeout mkfifo

if ! RINGTRACE_ARENA=$work/good.arena RINGTRACE_RINGS=8 RINGTRACE_BUFFER=64K "$demo" \
	>/dev/null 2>demo.err || [ ! -s good.arena ]; then
	cat demo.err >&2
	fail "the example program made no arena"
	finish
	exit 1
fi
if ! "$ringtrace" record -o "$work/good.rt" -- "$demo" >/dev/null 2>record.err ||
	[ ! -s good.rt ]; then
	cat record.err >&2
	fail "ringtrace record made no trace file"
	finish
	exit 1
fi

# The inputs.  Random bytes from a fixed seed; the trace file's version
# byte (offset 15 of its first block, docs/FORMAT.md "Trace files") set to
# 99, once with the block's CRC-32C made right again (a newer writer's file)
# and once without (damage).
: >empty
printf 'x' >onebyte
printf 'hello, not a trace\nsecond line\n' >text
cp "$ringtrace" elf
mkdir emptydir
mkfifo fifo
cp good.arena future.arena
printf '\143\000\143\000' | dd of=future.arena bs=1 seek=12 conv=notrunc 2>/dev/null
head -c 10 good.rt >short.rt
if ! python3 - good.rt <<'PY'; then
import random, struct, sys

def crc32c(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 & -(crc & 1))
    return crc ^ 0xFFFFFFFF

assert crc32c(b"123456789") == 0xE3069283
rng = random.Random(20261125)
with open("random", "wb") as f:
    f.write(bytes(rng.getrandbits(8) for _ in range(4096)))
d = bytearray(open(sys.argv[1], "rb").read())
size = struct.unpack_from("<H", d, 12)[0]
assert struct.unpack_from("<I", d, 8)[0] == crc32c(d[12:size]), "first block does not check"
d[15] = 99
open("future-crc-bad.rt", "wb").write(d)
struct.pack_into("<I", d, 8, crc32c(d[12:size]))
open("future.rt", "wb").write(d)
PY
	fail "python3 could not make the inputs"
	finish
	exit 1
fi

# where INPUT COMMAND: a regular expression the error line must hold besides the path
where() {
	case "$2" in
	snapshot* | tail* | ls*) arena_only=1 ;;
	*) arena_only=0 ;;
	esac
	case $1 in
	empty | onebyte | random | text | elf) echo '(byte|offset) 0([^0-9]|$)' ;;
	future.arena) echo '(byte|offset) 12([^0-9]|$)' ;;
	future.rt)
		if [ $arena_only = 1 ]; then
			echo '(byte|offset) 0([^0-9]|$)'
		else
			echo '(byte|offset) 15([^0-9]|$).*version 99'
		fi
		;;
	fifo | /dev/zero) echo 'not a regular file' ;;
	missing) echo 'No such file' ;;
	*) echo '.' ;;
	esac
}

# run WHAT COMMAND...: the command under `timeout 10`, stdout in out, stderr in err,
# its exit status in $status; a timeout is a failure of its own
run() {
	what=$1
	shift
	status=0
	timeout 10 "$@" >out 2>err </dev/null || status=$?
	if [ "$status" -eq 124 ]; then
		fail "$what: hung (killed after 10 s)"
	fi
}

# looks_like_events FILE: a text event line or a JSON event
looks_like_events() {
	grep -q -E -e '^\[' -e '"kind":"(trace|lost|last_event)"' "$1"
}

# refused INPUT COMMAND: exit 2, one line naming INPUT, no events, no OUT left
refused() {
	input=$1
	command=$2
	[ ! -e OUT.rt ] || rm -f OUT.rt
	case $command in
	recover) set -- recover "$input" OUT.rt ;;
	cut) set -- cut --from 0s "$input" OUT.rt ;;
	snapshot) set -- snapshot -o OUT.rt "$input" ;;
	*) set -- $command "$input" ;;
	esac
	what="ringtrace $*"
	run "$what" "$ringtrace" "$@"
	check "$what: exit status 2 ($status)" test "$status" -eq 2
	lines=$(line_count err)
	check "$what: one line on stderr ($lines)" test "$lines" -eq 1
	check "$what: the line names the path" grep -q -F -e "$input" err
	pattern=$(where "$input" "$command")
	if ! grep -q -E -e "$pattern" err; then
		fail "$what: '$pattern' not in: $(cat err)"
	fi
	if looks_like_events out; then
		fail "$what: events on stdout: $(head -c 200 out)"
	fi
	case $command in
	ls*) ;; # lists what it can: "no arenas", or the unreadable arena's row
	*) check "$what: nothing on stdout" test ! -s out ;;
	esac
	check "$what: no OUT left behind" test ! -e OUT.rt
}

commands="dump;dump --json;info;info --json;summary;summary --json;check;check --json;recover;cut;replay;report;report --json;snapshot;tail;tail --json;ls;ls --json"
for input in missing empty onebyte random text elf emptydir fifo /dev/zero future.arena \
	future.rt; do
	old_ifs=$IFS
	IFS=';'
	for command in $commands; do
		IFS=$old_ifs
		# a directory is what ls lists arenas in: one without any lists none
		case "$input:$command" in
		emptydir:ls*) continue ;;
		esac
		refused "$input" "$command"
		IFS=';'
	done
	IFS=$old_ifs
done

# ls of a directory with no arena: none listed, not an error
run "ringtrace ls emptydir" "$ringtrace" ls emptydir
check "ringtrace ls emptydir: exit 0 ($status)" test "$status" -eq 0
check "ringtrace ls emptydir: no arenas" grep -q -x 'no arenas' out
check "ringtrace ls emptydir: nothing on stderr" test ! -s err

# damaged INPUT CAUSE EVENTS: a trace file damaged from byte 0 (CAUSE) is read, not
# refused: exit status 3 and a line saying so (check: 1, the region at byte 0 listed),
# EVENTS events shown; recover writes what survived into a clean file
damaged() {
	for command in dump "dump --json" info summary replay report; do
		what="ringtrace $command $1"
		run "$what" "$ringtrace" $command "$1"
		check "$what: exit status 3 ($status)" test "$status" -eq 3
		check "$what: stderr says damaged" grep -q -F -e "$1: damaged" err
		if grep -v -q -F -e "$1" err; then
			fail "$what: a line on stderr that does not name the file: $(cat err)"
		fi
	done
	run "ringtrace check $1" "$ringtrace" check "$1"
	check "ringtrace check $1: exit status 1 ($status)" test "$status" -eq 1
	check "ringtrace check $1: $2 at byte 0" \
		grep -q -E -e "^$1: bytes 0\\.\\.[0-9]+ .*$2" out
	run "ringtrace dump --json $1" "$ringtrace" dump --json "$1"
	check "ringtrace dump --json $1: $3 events ($(grep -c '"kind":"trace"' out))" \
		test "$(grep -c '"kind":"trace"' out)" -eq "$3"
	[ ! -e OUT.rt ] || rm -f OUT.rt
	run "ringtrace recover $1 OUT.rt" "$ringtrace" recover "$1" OUT.rt
	check "ringtrace recover $1 OUT.rt: exit status 3 ($status)" test "$status" -eq 3
	check "ringtrace check OUT.rt (recovered from $1) exits 0" \
		"$ringtrace" check OUT.rt >/dev/null 2>&1
	[ ! -e OUT.rt ] || rm -f OUT.rt
}
# a changed version byte whose checksum no longer holds: the FILE block lost, the rest read
events=$("$ringtrace" dump --json good.rt | grep -c '"kind":"trace"')
damaged future-crc-bad.rt 'bad checksum' "$events"
# cut short inside its first block: nothing left but the damage
damaged short.rt truncated 0

# rm: anything that is not an arena is refused and left in place (not /dev/zero: were
# that ever removed, this machine would miss it)
for input in missing empty onebyte random text elf emptydir fifo future.rt short.rt \
	good.rt future-crc-bad.rt; do
	what="ringtrace rm $input"
	run "$what" "$ringtrace" rm "$input"
	check "$what: exit status 2 ($status)" test "$status" -eq 2
	lines=$(line_count err)
	check "$what: one line on stderr ($lines)" test "$lines" -eq 1
	check "$what: the line names the path" grep -q -F -e "$input" err
	check "$what: nothing on stdout" test ! -s out
	if [ "$input" != missing ]; then
		check "$what: still there" test -e "$input"
	fi
done
check "fifo is still a FIFO" test -p fifo
check "emptydir is still a directory" test -d emptydir

# the good inputs the bad ones came from are read
for command in dump info summary check; do
	check "ringtrace $command good.arena good.rt exits 0" \
		"$ringtrace" $command good.arena good.rt >/dev/null 2>&1
done
finish
