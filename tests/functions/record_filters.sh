#!/bin/sh
# record_filters.sh RINGTRACE NAMES_CXX TREE DURATIONS - the filters of `record` (-F, -N,
# -D, -t).
#
# NAMES_CXX (names_cxx.cc: namespaces, templates, std::sort) is recorded whole, and
# again with each filter; what a filtered recording holds must be what the reading
# filters of `report` keep of the whole one: the same functions with the same call
# counts (the program does the same calls every run).  TREE (record_tree.c) has known
# call counts, checked exactly for -F, -N, both, and -D.  DURATIONS (record_durations.c)
# has calls of 2 ms and of nanoseconds: -t 1ms keeps the long ones and the calls around
# them, nested as they ran, the trace clean.  -D and -t keep what the reading views' -D
# and -t show of a whole recording.  A pattern that selects no function stops record
# before the program runs (status 2).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../e2e/lib.sh"
ringtrace=$1
names=$2
tree=$3
durations=$4
unset RINGTRACE_ARENA RINGTRACE_BUFFER RINGTRACE_MODE RINGTRACE_RINGS RINGTRACE_SYNC \
	RINGTRACE_FUNCTIONS RINGTRACE_MAX_DEPTH RINGTRACE_EXCLUDE_MODULES \
	RINGTRACE_FUNCTION_FILTER LD_PRELOAD
cd "$work"

# calls FILE [REPORT OPTIONS]: "function calls" lines of report --json, sorted
calls() {
	file=$1
	shift
	"$ringtrace" report --json "$@" "$file" | /usr/bin/python3 -c 'import json, sys
for line in sys.stdin:
    o = json.loads(line)
    if "function" in o:
        print(o["function"], o["calls"])' | sort
}

"$ringtrace" record -q -o whole.rt -- "$names" >/dev/null
n=0
for filter in "-F geo::*" "-N std::*" "-F geo::inner::* -N *get*" "-F main -N std::sort" \
	"-F *twice*"; do
	n=$((n + 1))
	# shellcheck disable=SC2086 # the words of the filter
	"$ringtrace" record -q -o "f$n.rt" $filter -- "$names" >/dev/null
	# shellcheck disable=SC2086
	calls whole.rt $filter >"want$n"
	calls "f$n.rt" >"got$n"
	check "record $filter holds what report $filter keeps of the whole ($(wc -l <"want$n") functions)" \
		cmp -s "want$n" "got$n"
	[ -s "want$n" ] || fail "$filter: the whole recording has none of these calls"
done

# exact counts on a tree of known calls: main -> 3 x (outer -> (inner -> leaf), leaf; other -> leaf)
"$ringtrace" record -q -o t1.rt -F outer -- "$tree" >/dev/null
check "-F outer: outer, inner, leaf" [ "$(calls t1.rt | tr '\n' ' ')" = "inner 3 leaf 6 outer 3 " ]
"$ringtrace" record -q -o t2.rt -N inner -- "$tree" >/dev/null
check "-N inner: no inner, nor the leaf inside it" \
	[ "$(calls t2.rt | tr '\n' ' ')" = "leaf 6 main 1 other 3 outer 3 " ]
"$ringtrace" record -q -o t3.rt -F outer -F other -N leaf -- "$tree" >/dev/null
check "-F outer -F other -N leaf" [ "$(calls t3.rt | tr '\n' ' ')" = "inner 3 other 3 outer 3 " ]
"$ringtrace" record -q -o t4.rt -D 2 -- "$tree" >/dev/null
check "-D 2: main and its callees" [ "$(calls t4.rt | tr '\n' ' ')" = "main 1 other 3 outer 3 " ]
"$ringtrace" record -q -o t5.rt --filter outer --notrace inner --depth 3 -- "$tree" >/dev/null
check "--filter, --notrace, --depth" [ "$(calls t5.rt | tr '\n' ' ')" = "leaf 3 outer 3 " ]

# calls that last 1 ms or more: main, mid (which holds slow) and slow; not quick, not shallow
"$ringtrace" record -q -o d1.rt -t 1ms -- "$durations" >/dev/null
check "-t 1ms: main, mid, slow" [ "$(calls d1.rt | tr '\n' ' ')" = "main 1 mid 3 slow 3 " ]
check "-t 1ms: the trace is clean" "$ringtrace" check d1.rt
"$ringtrace" replay d1.rt >d1.replay
check "-t 1ms: slow nests in mid, mid in main" grep -q "^.*|     slow();" d1.replay
"$ringtrace" record -q -o d2.rt --min-duration 1ms -N slow -- "$durations" >/dev/null
check "-t 1ms -N slow: main, mid" [ "$(calls d2.rt | tr '\n' ' ')" = "main 1 mid 3 " ]
"$ringtrace" record -q -o d3.rt -t 10s -- "$durations" >/dev/null
check "-t 10s: nothing" [ -z "$(calls d3.rt)" ]

# record -t and -D keep the calls that replay's and report's -t and -D show of a whole
# recording (-D without -F: record counts levels from the outermost call, the reading
# views from the call -F selects)
# shape FILE [REPLAY OPTIONS]: the function column of `replay`, no heading
shape() {
	file=$1
	shift
	"$ringtrace" replay "$@" "$file" | sed -n '/^#/d; s/^[^|]*| //p'
}
"$ringtrace" record -q -o tree.rt -- "$tree" >/dev/null
check "record -D 2 holds what report -D 2 counts of the whole" \
	[ "$(calls t4.rt | tr '\n' ' ')" = "$(calls tree.rt -D 2 | tr '\n' ' ')" ]
check "record -D 2 holds what replay -D 2 shows of the whole, nested alike" \
	[ "$(shape t4.rt)" = "$(shape tree.rt -D 2)" ]
"$ringtrace" record -q -o durations.rt -- "$durations" >/dev/null
check "record -t 1ms holds what report -t 1ms counts of the whole" \
	[ "$(calls d1.rt | tr '\n' ' ')" = "$(calls durations.rt -t 1ms | tr '\n' ' ')" ]
check "record -t 1ms holds what replay -t 1ms shows of the whole, nested alike" \
	[ "$(shape d1.rt)" = "$(shape durations.rt -t 1ms)" ]
check "record -t 1ms -N slow holds what report -t 1ms -N slow counts of the whole" \
	[ "$(calls d2.rt | tr '\n' ' ')" = "$(calls durations.rt -t 1ms -N slow | tr '\n' ' ')" ]
check "record -t 10s and report -t 10s: nothing" [ -z "$(calls durations.rt -t 10s)" ]

# a filter file that does not parse, a duration without a unit: each said on stderr, and
# every call recorded
printf 'garbage\n' >bad.filter
RINGTRACE_ARENA=$work/bad.arena RINGTRACE_FUNCTION_FILTER=$work/bad.filter \
	RINGTRACE_MIN_DURATION=5 "$tree" >/dev/null 2>bad.err
check "a filter file that does not parse is said" grep -q "is not a function filter" bad.err
check "a duration without a unit is said" grep -q "RINGTRACE_MIN_DURATION is '5'" bad.err
check "... and every call is recorded" \
	[ "$(calls bad.arena | tr '\n' ' ')" = "inner 3 leaf 9 main 1 other 3 outer 3 " ]

status=0
"$ringtrace" record -q -o none.rt -F no_such_function -- "$tree" >none.out 2>none.err ||
	status=$?
check "a pattern that selects nothing: status 2" [ "$status" = 2 ]
check "... says which" grep -q "'no_such_function' selects no function" none.err
check "... and runs nothing" [ ! -s none.out ]
finish
