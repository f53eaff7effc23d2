#!/bin/sh
# functions.sh RINGTRACE CALLS_O0 CALLS_O2 CALLS_UNLINKED [LIBRARY] - function
# enter/exit events end to end.
#
# CALLS_O0 and CALLS_O2 are calls.c built with -finstrument-functions and
# linked with ringtrace, at -O0 and at -O2 -foptimize-sibling-calls.  The
# hooks must still pair at -O2: the compiler instruments before it turns
# calls into jumps (without the hooks, gcc -O2 makes tail_a's call of tail_b
# a jmp; with them it stays a call between enter and exit).  CALLS_UNLINKED
# is calls.c not linked with ringtrace, traced by `ringtrace record`, which
# preloads the library (LIBRARY, when given, through RINGTRACE_PRELOAD: a
# sanitizer build finds none by itself).  For each scenario, check_calls.py
# compares `ringtrace dump --json` with the calls the program made, thread
# by thread.  `ringtrace cut` and `ringtrace recover` of an arena and of a
# trace file must name the calls as their input does: they keep its module
# map.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../e2e/lib.sh"
ringtrace=$1
o0=$2
o2=$3
unlinked=$4
# the library a sanitizer build gives, if any, as RINGTRACE_PRELOAD
clean_tracing_environment ${5+"$5"}
python=/usr/bin/python3
[ -x "$python" ] || python=python3

# linked NAME PROGRAM SCENARIO [CHECK OPTIONS...]: run it with an arena of
# its own (environment from the caller), dump it, check it
linked() {
	name=$1
	program=$2
	scenario=$3
	shift 3
	rm -f "$work/$name.arena"
	if ! RINGTRACE_ARENA="$work/$name.arena" "$program" "$work/$name.addr" "$scenario"; then
		fail "$name: the program failed"
		return
	fi
	if ! "$ringtrace" dump --json "$work/$name.arena" >"$work/$name.json"; then
		fail "$name: dump --json failed"
		return
	fi
	check "$name" "$python" "$here/check_calls.py" "$work/$name.json" "$work/$name.addr" \
		"$scenario" "$@"
}

# recorded NAME SCENARIO [CHECK OPTIONS...]: the unlinked program under
# record, with $record_env (VAR=VALUE words) in record's environment only
recorded() {
	name=$1
	scenario=$2
	shift 2
	# shellcheck disable=SC2086 # record_env is a list of words
	if ! env ${record_env:-} "$ringtrace" record -q -o "$work/$name.rt" -- "$unlinked" \
		"$work/$name.addr" "$scenario"; then
		fail "$name: record failed"
		return
	fi
	if ! "$ringtrace" dump --json "$work/$name.rt" >"$work/$name.json"; then
		fail "$name: dump --json failed"
		return
	fi
	check "$name" "$python" "$here/check_calls.py" "$work/$name.json" "$work/$name.addr" \
		"$scenario" "$@"
}

for build in o0 o2; do
	eval "program=\$$build"
	linked "$build-basic" "$program" basic
	linked "$build-threads" "$program" threads
	export RINGTRACE_MAX_DEPTH=3
	linked "$build-env-depth" "$program" basic --max-depth 3
	export RINGTRACE_MAX_DEPTH=1
	linked "$build-env-depth1" "$program" threads --max-depth 1
	unset RINGTRACE_MAX_DEPTH
	linked "$build-api-depth" "$program" api-depth --max-depth 3
	linked "$build-api-exclude-function" "$program" api-exclude-function --exclude fact,pong
	linked "$build-api-exclude-module" "$program" api-exclude-module --exclude-lib
	export RINGTRACE_EXCLUDE_MODULES=nothing-here,libfn_lib
	linked "$build-env-exclude-module" "$program" basic --exclude-lib 2>"$work/warn"
	unset RINGTRACE_EXCLUDE_MODULES
	check "$build: a module no one loaded is named on stderr" \
		grep -q "no loaded module matches 'nothing-here'" "$work/warn"
done

# events FILE: the events of dump --json (calls and RT_TRACE), merged time order
events() {
	"$ringtrace" dump --json "$1" | grep -E '"kind":"(enter|exit|trace)"' || true
}

# modules FILE: the module objects of info --json, one a line
modules() {
	"$ringtrace" info --json "$1" | "$python" -c 'import json, sys
d = json.load(sys.stdin)
ms = d["modules"] if "modules" in d else [m for p in d["processes"] for m in p["modules"]]
for m in ms:
    print(json.dumps(m, sort_keys=True))'
}

# same_file NAME EXPECTED ACTUAL: equal and not empty
same_file() {
	if [ -s "$2" ] && cmp -s "$2" "$3"; then
		pass
	else
		fail "$1: $(wc -l <"$2") lines expected, $(wc -l <"$3") got; first difference:"
		diff "$2" "$3" | head -4 >&2
	fi
}

# kept NAME SCENARIO: `cut` and `recover` of $work/NAME.arena or .rt (a run of
# SCENARIO) name every call as the input does (func, file, line, module), so
# report agrees, and keep its module map; so does a cut of events 20 to 60
kept() {
	name=$1
	scenario=$2
	input=$work/$name.arena
	[ -e "$input" ] || input=$work/$name.rt
	events "$input" >"$work/$name.events"
	"$ringtrace" report --json "$input" >"$work/$name.report"
	modules "$input" >"$work/$name.modules"
	for how in cut recover; do
		out=$work/$name.$how.rt
		if [ "$how" = cut ]; then
			set -- cut -q --from 0s
		else
			set -- recover -q
		fi
		if ! "$ringtrace" "$@" "$input" "$out"; then
			fail "$name: $how failed"
			continue
		fi
		"$ringtrace" dump --json "$out" >"$out.json"
		check "$name $how: calls named" "$python" "$here/check_calls.py" "$out.json" \
			"$work/$name.addr" "$scenario"
		events "$out" >"$out.events"
		same_file "$name $how: the same events, named the same" "$work/$name.events" \
			"$out.events"
		"$ringtrace" report --json "$out" >"$out.report"
		same_file "$name $how: the same report" "$work/$name.report" "$out.report"
		modules "$out" >"$out.modules"
		same_file "$name $how: the same modules" "$work/$name.modules" "$out.modules"
	done
	out=$work/$name.part.rt
	if ! "$ringtrace" cut -q --from seq:20 --to seq:60 "$input" "$out"; then
		fail "$name: cut seq:20..seq:60 failed"
		return
	fi
	sed -n '21,61p' "$work/$name.events" >"$out.want"
	events "$out" >"$out.events"
	check "$name part: calls in it" grep -q '"kind":"enter"' "$out.events"
	same_file "$name part: events 20 to 60, named the same" "$out.want" "$out.events"
	modules "$out" >"$out.modules"
	same_file "$name part: the same modules" "$work/$name.modules" "$out.modules"
}

kept o0-threads threads
kept o2-basic basic

# RINGTRACE_FUNCTIONS=0: RT_TRACE events only
RINGTRACE_FUNCTIONS=0 RINGTRACE_ARENA="$work/off.arena" "$o0" "$work/off.addr" basic
"$ringtrace" dump --json "$work/off.arena" >"$work/off.json"
check "RINGTRACE_FUNCTIONS=0 records no call" \
	sh -c "! grep -q '\"kind\":\"enter\"\\|\"kind\":\"exit\"' '$work/off.json'"
check "RINGTRACE_FUNCTIONS=0 keeps RT_TRACE" grep -q '"tag":"leaf"' "$work/off.json"
# a bad setting turns the hooks off with one line, and the program runs on
RINGTRACE_MAX_DEPTH=deep RINGTRACE_ARENA="$work/bad.arena" "$o0" "$work/bad.addr" basic \
	2>"$work/bad.err"
check "a bad RINGTRACE_MAX_DEPTH is reported" grep -q "RINGTRACE_MAX_DEPTH is 'deep'" \
	"$work/bad.err"
"$ringtrace" dump --json "$work/bad.arena" >"$work/bad.json"
check "a bad RINGTRACE_MAX_DEPTH records no call" \
	sh -c "! grep -q '\"kind\":\"enter\"' '$work/bad.json'"

# the program on disk is no longer the one that ran (another build-id): dump
# says so once, naming the file, and names none of its functions
cp "$o0" "$work/moved"
RINGTRACE_ARENA="$work/moved.arena" "$work/moved" "$work/moved.addr" basic
cp "$o2" "$work/moved"
"$ringtrace" dump --json "$work/moved.arena" >"$work/moved.json" 2>"$work/moved.err" || true
check "a rebuilt binary: stderr names it" grep -q "$work/moved" "$work/moved.err"
check "a rebuilt binary: stderr says build-id" grep -qi "build-id" "$work/moved.err"
check "a rebuilt binary: said once" \
	sh -c "[ \$(grep -c \"$work/moved\" '$work/moved.err') -eq 1 ]"
check "a rebuilt binary: no name from it" \
	sh -c "! grep '\"module\":\"moved\"' '$work/moved.json' | grep -q '\"func\":\"'"
check "a rebuilt binary: module and offset instead" \
	grep -q '"func":null.*"module":"moved","offset":[0-9]' "$work/moved.json"
"$ringtrace" dump "$work/moved.arena" 2>/dev/null | grep -q ': enter moved+0x' ||
	fail "a rebuilt binary: text shows module+offset"

# not linked with ringtrace: `ringtrace record` preloads it
recorded unlinked-basic basic
recorded unlinked-threads threads
export RINGTRACE_MAX_DEPTH=2
recorded unlinked-depth threads --max-depth 2
unset RINGTRACE_MAX_DEPTH
export RINGTRACE_EXCLUDE_MODULES=libfn_lib
recorded unlinked-exclude-module basic --exclude-lib
unset RINGTRACE_EXCLUDE_MODULES
# an LD_PRELOAD of the user's is kept, the library appended to it
record_env="LD_PRELOAD=$(dirname "$unlinked")/libfn_lib.so"
recorded unlinked-user-preload basic
record_env=
kept unlinked-threads threads
# without the library there is nothing to record
RINGTRACE_PRELOAD=0 "$ringtrace" record -q -o "$work/none.rt" -- "$unlinked" "$work/none.addr" \
	basic
"$ringtrace" dump --json "$work/none.rt" >"$work/none.json" 2>/dev/null || true
check "RINGTRACE_PRELOAD=0 preloads nothing" sh -c "! grep -q enter '$work/none.json'"

finish
