#!/bin/sh
# pairing.sh TOOL PAIRING_TRACE - the views that pair enters with exits and begins with
# ends (analyze spans, ship, export --chrome, export --perfetto) on one recording of every
# hard case (pairing_trace.c), each held by check_pairing.py to the span tracker's rules
# and to the others.  ship needs clickhouse-server, export --perfetto protoc.
set -u
tool=$1
trace=$2
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../e2e/lib.sh"
python=/usr/bin/python3
[ -x "$python" ] || python=python3
if ! command -v protoc >/dev/null 2>&1; then
	fail "protoc not found (Debian: protobuf-compiler; make test installs it)"
	finish
	exit 1
fi
check "pairing_trace writes the recording" "$trace" "$work"
check "every view gives the tracker's answers" "$python" "$here/check_pairing.py" \
	--tool "$tool" --dir "$work" --proto "$here/../export/perfetto.proto"
finish
