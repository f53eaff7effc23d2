#!/bin/sh
# span.sh TOOL C_PROG CXX_PROG SOURCE_DIR - spans marked in the source, in a
# C program (instrumented, so the spans mix with calls) and a C++ one,
# recorded under `ringtrace record`, then checked by check_spans.py in
# dump --json, dump and export --chrome; summary names their sites.
set -u
tool=$1
cprog=$2
cxxprog=$3
src=$4
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../e2e/lib.sh"
unset RINGTRACE_ARENA RINGTRACE_BUFFER RINGTRACE_MODE LD_PRELOAD
python=/usr/bin/python3
[ -x "$python" ] || python=python3

spans() {
	name=$1
	prog=$2
	source=$3
	check "$name: record runs the program" "$tool" record -q -o "$work/$name.rt" -- "$prog"
	check "$name: dump --json" sh -c '"$1" dump --json "$2" >"$3"' sh "$tool" \
		"$work/$name.rt" "$work/$name.jsonl"
	check "$name: dump" sh -c '"$1" dump "$2" >"$3"' sh "$tool" "$work/$name.rt" \
		"$work/$name.txt"
	check "$name: export --chrome" sh -c '"$1" export --chrome "$2" >"$3"' sh "$tool" \
		"$work/$name.rt" "$work/$name.json"
	check "$name: the spans as the program marked them" "$python" "$here/check_spans.py" \
		"$name" "$source" "$work/$name.jsonl" "$work/$name.txt" "$work/$name.json"
}

spans c "$cprog" "$src/span_prog.c"
spans cxx "$cxxprog" "$src/span_prog.cc"

# summary: a span's sites say which end they are
check "summary --json runs" sh -c '"$1" summary --json "$2" >"$3"' sh "$tool" "$work/c.rt" \
	"$work/summary.json"
check "summary --json: the sites of request's begin and end" "$python" -c '
import json, sys
sites = json.load(open(sys.argv[1]))["sites"]
kinds = sorted(s.get("span", "") for s in sites if s["tag"] == "request")
assert kinds == ["begin", "end"], kinds
assert all("span" not in s for s in sites if s["tag"] in ("main",)), sites
' "$work/summary.json"
check "summary: the begin site shown as such" sh -c \
	'"$1" summary "$2" | grep -q "span_prog.c:[0-9]* main (begin request)"' sh "$tool" "$work/c.rt"
finish
