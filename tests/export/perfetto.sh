#!/bin/sh
# perfetto.sh RINGTRACE PROG - `ringtrace export --perfetto` end to end.
#
# PROG (export_prog.c, built with -finstrument-functions and linked with
# ringtrace) is recorded with file I/O; the export must be a well-formed
# Trace message as protoc decodes it with tests/export/perfetto.proto, and
# check_perfetto.py compares what it shows with `dump --json` of the same
# recording: calls, I/O calls, trace events and log messages, per thread.
# Then the program again with flight rings too small for it: the records
# of the start are overwritten, so exits come without their enters; the
# slices must still balance and the losses show.
# shellcheck disable=SC2016 # the sh -c scripts expand their own arguments
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../e2e/lib.sh"
ringtrace=$1
prog=$2
unset RINGTRACE_ARENA RINGTRACE_BUFFER RINGTRACE_MODE RINGTRACE_RINGS RINGTRACE_SYNC \
	RINGTRACE_FUNCTIONS RINGTRACE_MAX_DEPTH RINGTRACE_EXCLUDE_MODULES LD_PRELOAD
python=/usr/bin/python3
[ -x "$python" ] || python=python3
if ! command -v protoc >/dev/null 2>&1; then
	fail "protoc not found (Debian: protobuf-compiler; make test installs it)"
	finish
	exit 1
fi

mkdir "$work/files"
check "record --io runs the program" "$ringtrace" record -q --io -o "$work/x.rt" -- \
	"$prog" "$work/files"
check "dump --json" sh -c '"$1" dump --json "$2" >"$3"' - "$ringtrace" "$work/x.rt" \
	"$work/x.json"
check "export --perfetto" sh -c '"$1" export --perfetto "$2" >"$3"' - "$ringtrace" \
	"$work/x.rt" "$work/x.pftrace"
check "the export is not empty" test -s "$work/x.pftrace"
check "protoc decodes the export" sh -c \
	'protoc --proto_path="$1" --decode=ringtrace.perfetto.Trace "$1/perfetto.proto" <"$2" >"$3"' \
	- "$here" "$work/x.pftrace" "$work/x.txt"
check "the export shows what dump shows" "$python" "$here/check_perfetto.py" "$work/x.txt" \
	"$work/x.json"

# flight rings of 4 KiB: the start overwritten
RINGTRACE_ARENA="$work/flight.arena" RINGTRACE_BUFFER=4096 "$prog" "$work/files" ||
	fail "the program failed in flight mode"
check "dump --json of the flight arena" sh -c '"$1" dump --json "$2" >"$3"' - "$ringtrace" \
	"$work/flight.arena" "$work/flight.json"
check "export --perfetto of the flight arena" sh -c '"$1" export --perfetto "$2" >"$3"' - \
	"$ringtrace" "$work/flight.arena" "$work/flight.pftrace"
check "protoc decodes the flight export" sh -c \
	'protoc --proto_path="$1" --decode=ringtrace.perfetto.Trace "$1/perfetto.proto" <"$2" >"$3"' \
	- "$here" "$work/flight.pftrace" "$work/flight.txt"
check "the flight export shows what dump shows" "$python" "$here/check_perfetto.py" \
	"$work/flight.txt" "$work/flight.json" --partial

# a byte cut off the end: protoc must notice (the decoding above means something)
head -c "$(($(wc -c <"$work/x.pftrace") - 1))" "$work/x.pftrace" >"$work/cut.pftrace"
check "protoc rejects a cut export" sh -c \
	'! protoc --proto_path="$1" --decode=ringtrace.perfetto.Trace "$1/perfetto.proto" <"$2" \
	>/dev/null 2>&1' - "$here" "$work/cut.pftrace"
finish
