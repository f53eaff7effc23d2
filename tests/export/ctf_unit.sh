#!/bin/sh
# ctf_unit.sh TEST_CTF - the CTF exporter fed hand-made events (tests/unit/test_ctf.c):
# babeltrace2 reads the directory with no error and no warning but its report of the
# discarded events, and its Python bindings find every event and field the events had
# (losses as lost events too).
set -u
test_ctf=$1
here=$(dirname "$0")
. "$here/../e2e/lib.sh"

check "the exporter writes the trace" "$test_ctf" "$work/ctf" "$work/expected.jsonl"
check "metadata is TSDL text of CTF 1.8" sh -c 'head -n 1 "$1" | grep -qx "/\* CTF 1.8 \*/"' sh \
	"$work/ctf/metadata"
check "one stream file per thread, and one for the losses of no thread" sh -c \
	'[ "$(cd "$1" && ls stream_* | tr "\n" " ")" = "stream_10_0 stream_10_11 stream_10_12 stream_20_21 stream_20_22 " ]' \
	sh "$work/ctf"
check "babeltrace2 reads it" sh -c 'babeltrace2 "$1" >"$2" 2>"$3"' sh "$work/ctf" "$work/bt.txt" \
	"$work/bt.err"
# the only thing on stderr: the discarded events babeltrace2 reports from events_discarded
check "babeltrace2 says nothing else on stderr" sh -c \
	'! grep -v "^WARNING: Tracer discarded [0-9]* events between" "$1"' sh "$work/bt.err"
check "babeltrace2 reports every loss of a thread" sh -c \
	'[ "$(grep -o "discarded [0-9]* events" "$1" | awk "{ s += \$2 } END { print s }")" = 67 ]' \
	sh "$work/bt.err"
check "babeltrace2 prints every event, losses too" sh -c \
	'[ "$(wc -l <"$1")" -eq "$(wc -l <"$2")" ]' sh "$work/bt.txt" "$work/expected.jsonl"
check "babeltrace2 shows why events are missing" grep -q \
	'lost: .*count = 12, reason = "damaged", note = "a region of \\"ring 3\\" unreadable", estimated = 1, has_time = 0' \
	"$work/bt.txt"
check "every event and field read back" /usr/bin/python3 "$here/check_ctf.py" "$work/ctf" \
	"$work/expected.jsonl"
mkdir "$work/full" && : >"$work/full/x"
check "a directory that holds a file is refused" "$test_ctf" --refuse "$work/full"
finish
