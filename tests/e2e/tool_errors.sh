#!/bin/sh
# tool_errors.sh RINGTRACE DEMO - bad input and bad usage of the tool.
#
# An input that is not an arena (no magic and nothing else of one), shorter
# than a header, of a format version this reader cannot read, of the other
# byte order, or whose writer never finished its header, gets exactly one
# line on stderr naming the file, the byte offset and what was wrong, exit
# status 2 and nothing on stdout, from every command; never a crash (this
# test also runs under ASan+UBSan).
# An arena whose header is damaged but repairable, or that is cut short, is
# read: every event that survived is shown, each damaged region is a line
# naming its bytes, stderr says it was damaged in one line, and the exit
# status is 3 (docs/FORMAT.md, "Damaged arenas"; tests/damaged for the rest).
# --help works on every command; an unknown command or option exits 2.
# The arena to damage is made by the example program DEMO.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
ringtrace=$1
demo=$2
cd "$work"

# a small arena (8 rings of 64 KiB): copies of it stay small
if ! RINGTRACE_ARENA=$work/good.arena RINGTRACE_RINGS=8 RINGTRACE_BUFFER=64K "$demo" \
	>/dev/null 2>demo.err || [ ! -s good.arena ]; then
	cat demo.err >&2
	fail "the example program made no arena"
	finish
	exit 1
fi

# damaged NAME OFFSET BYTES: a copy of the good arena with BYTES (printf escapes) at OFFSET
damaged() {
	cp good.arena "$1.arena"
	printf "$3" | dd of="$1.arena" bs=1 seek="$2" conv=notrunc 2>/dev/null
}

# u16 N: N as the header's 16-bit fields hold it (little-endian), in printf escapes
u16() {
	printf '\\%03o\\%03o' $(($1 % 256)) $(($1 / 256))
}

# at N: a regular expression for "byte offset N" in an error line
at() {
	echo "(byte|offset) $1([^0-9]|\$)"
}

# refused FILE WHERE: every command refuses FILE with one line naming it and WHERE
refused() {
	for command in dump "dump --json" "dump --last-events" info "info --json"; do
		status=0
		$ringtrace $command "$1" >out 2>err || status=$?
		what="ringtrace $command $1"
		check "$what: exit status 2 ($status)" test "$status" -eq 2
		check "$what: nothing on stdout" test ! -s out
		lines=$(line_count err)
		check "$what: one line on stderr ($lines)" test "$lines" -eq 1
		check "$what: the line names the file and '$2'" grep -q -F -e "$1" err
		if ! grep -q -E -e "$2" err; then
			fail "$what: '$2' not in: $(cat err)"
		fi
	done
}

# read_damaged FILE OFFSET EVENTS: every command reads FILE with exit status 3 and one line
# on stderr; the dump names a damaged region starting at byte OFFSET, in text, in JSON and
# in the hex dump, and shows EVENTS events
read_damaged() {
	for command in dump "dump --json" "dump --last-events" "dump --hexdump" info "info --json"; do
		status=0
		$ringtrace $command "$1" >out 2>err || status=$?
		what="ringtrace $command $1"
		check "$what: exit status 3 ($status)" test "$status" -eq 3
		check "$what: prints" test -s out
		lines=$(line_count err)
		check "$what: one line on stderr ($lines)" test "$lines" -eq 1
		check "$what: stderr says damaged" grep -q -F -e "$1: damaged" err
		case $command in
		dump) check "$what: a damaged line at byte $2" grep -q -E -e "^--- damaged: bytes $2\\.\\." out ;;
		"dump --json")
			check "$what: a damaged object at byte $2" grep -q -E -e "\"reason\":\"damaged\",\"offset\":$2," out
			check "$what: $3 events ($(grep -c '"kind":"trace"' out))" test "$(grep -c '"kind":"trace"' out)" -eq "$3"
			;;
		"dump --hexdump") check "$what: the region at byte $2" grep -q -E -e "^--- bytes $2\\.\\." out ;;
		esac
	done
}

# accepted FILE: every command reads FILE
# several inputs are merged (the same arena twice: the same source twice)
check "ringtrace dump good.arena good.arena exits 0" $ringtrace dump good.arena good.arena \
	>/dev/null 2>err

accepted() {
	for command in dump "dump --json" "dump --last-events" info "info --json"; do
		check "ringtrace $command $1 exits 0" $ringtrace $command "$1" >/dev/null 2>err
	done
}

printf 'hello, not an arena\n' >text.arena
: >empty.arena
head -c 1000 good.arena >short-header.arena
head -c 5000 good.arena >header-only.arena
size=$(wc -c <good.arena)
head -c $((size / 2)) good.arena >half.arena
damaged bad-magic 0 'RTARENX'
# the format version this tool reads, and the next one, which it does not know
known=$($ringtrace --version | sed -n 's/.*(arena format \([0-9]*\)).*/\1/p')
check "ringtrace --version names the arena format it reads ($known)" test -n "$known"
next=$((known + 1))
damaged version-99 12 '\143\000\143\000'
damaged version-next-compat-next 12 "$(u16 $next)$(u16 $next)"
damaged version-next-compat-known 12 "$(u16 $next)$(u16 "$known")"
damaged header-size 8 '\000\001\000\000'
damaged byte-order 16 '\001\002\003\004'
damaged creating 20 '\000\000\000\000'
damaged ring-bytes 40 '\001\020\000\000\000\000\000\000'
damaged slot-size 48 '\100\000\000\000'
damaged mode 52 '\011\000\000\000'
damaged ring-count 60 '\377\377\377\377'
damaged thread-table 80 '\377\377\377\377\377\377\377\177'
mkdir directory.arena

accepted good.arena
accepted version-next-compat-known.arena # a newer writer that says this reader can read it
refused text.arena "$(at '0')"
refused empty.arena "$(at '0')"
refused short-header.arena "$(at '[0-9]+')"
refused version-99.arena "$(at '1[24]')"
refused version-99.arena "unknown format version 99 \\(this reader knows $known\\)"
refused version-next-compat-next.arena "$(at '1[24]')"
refused version-next-compat-next.arena "unknown format version $next \\(this reader knows $known\\)"
refused byte-order.arena "$(at '16')"
refused creating.arena "$(at '20')"
refused directory.arena 'directory.arena'
refused missing.arena 'missing.arena'
# damaged, and repaired from the rest of the header: every event is still there
events=$($ringtrace dump --json good.arena | grep -c '"kind":"trace"')
read_damaged bad-magic.arena 0 "$events"
read_damaged header-size.arena 8 "$events"
read_damaged ring-bytes.arena 40 "$events"
read_damaged slot-size.arena 48 "$events"
read_damaged mode.arena 52 "$events"
read_damaged ring-count.arena 60 "$events"
read_damaged thread-table.arena 80 "$events"
# cut short: what is past the end is missing (here, every ring)
read_damaged header-only.arena 5000 0
read_damaged half.arena $((size / 2)) 0

# --help on every command, on stdout, exit 0
for args in --help help "help dump" "help info" "dump --help" "info --help" --version; do
	status=0
	$ringtrace $args >out 2>err || status=$?
	check "ringtrace $args: exit 0 ($status)" test "$status" -eq 0
	check "ringtrace $args: prints to stdout" test -s out
	check "ringtrace $args: nothing on stderr" test ! -s err
done
check "dump --help lists --json" sh -c "'$ringtrace' dump --help | grep -q -e --json"

# usage errors: exit 2, said on stderr, nothing on stdout
for args in "" frobnicate "frobnicate good.arena" "help frobnicate" "dump --bogus good.arena" \
	"info --bogus good.arena" dump info "dump --last good.arena good.arena" \
	"dump --hexdump good.arena good.arena" "dump --tail good.arena" \
	"dump --tail x good.arena"; do
	status=0
	$ringtrace $args >out 2>err || status=$?
	check "ringtrace $args: exit 2 ($status)" test "$status" -eq 2
	check "ringtrace $args: nothing on stdout" test ! -s out
	check "ringtrace $args: says why on stderr" test -s err
done
finish
