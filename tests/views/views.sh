#!/bin/sh
# views.sh RINGTRACE CALLS_O0 CALLS_O2 CORRUPT - `ringtrace replay` and
# `ringtrace report` of the programs of tests/functions (calls.c built with
# -finstrument-functions, at -O0 and -O2), checked by check_views.py against
# the calls they make; then the same views of traces cut short and truncated.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../e2e/lib.sh"
ringtrace=$1
o0=$2
o2=$3
corrupt=$4
unset RINGTRACE_ARENA RINGTRACE_BUFFER RINGTRACE_MODE RINGTRACE_RINGS RINGTRACE_SYNC \
	RINGTRACE_FUNCTIONS RINGTRACE_MAX_DEPTH RINGTRACE_EXCLUDE_MODULES LD_PRELOAD
python=/usr/bin/python3
[ -x "$python" ] || python=python3
checker="$here/check_views.py"

# status NAME WANT COMMAND...: the command's exit status must be WANT
status() {
	name=$1
	want=$2
	shift 2
	set +e
	"$@" >"$work/out" 2>"$work/err"
	got=$?
	set -e
	if [ "$got" -eq "$want" ]; then
		pass
	else
		fail "$name: exit status $got, not $want ($(head -c 300 "$work/err"))"
	fi
}

for build in o0 o2; do
	eval "program=\$$build"
	for scenario in basic threads; do
		name=$build-$scenario
		arena="$work/$name.arena"
		if ! RINGTRACE_ARENA="$arena" "$program" "$work/$name.addr" "$scenario"; then
			fail "$name: the program failed"
			continue
		fi
		"$ringtrace" replay "$arena" >"$work/$name.replay" || fail "$name: replay failed"
		check "$name replay" "$python" "$checker" replay "$work/$name.replay" \
			"$work/$name.addr" "$scenario"
		"$ringtrace" report --json "$arena" >"$work/$name.merged" ||
			fail "$name: report failed"
		"$ringtrace" report --json --per-thread --sort calls "$arena" \
			>"$work/$name.threads" || fail "$name: report --per-thread failed"
		check "$name report" "$python" "$checker" report "$work/$name.merged" \
			"$work/$name.threads" "$scenario"
		"$ringtrace" report --folded "$arena" >"$work/$name.folded" ||
			fail "$name: report --folded failed"
		check "$name folded" "$python" "$checker" folded "$work/$name.folded" "$scenario"
	done
done

# --tid: that thread's lines only, the whole of its tree
tid=$(sed -n '2s/^.\{10\} \[ *\([0-9]*\)\].*/\1/p' "$work/o0-threads.replay")
"$ringtrace" replay --tid "$tid" "$work/o0-threads.arena" >"$work/tid.replay"
check "replay --tid: one thread" test "$(grep -c "\[ *$tid\]" "$work/tid.replay")" -eq \
	"$(grep -c "\[ *$tid\]" "$work/o0-threads.replay")"
check "replay --tid: no other" test "$(wc -l <"$work/tid.replay")" -eq \
	"$(($(grep -c "\[ *$tid\]" "$work/o0-threads.replay") + 1))"

# cut short: calls still open are marked, exits without their enter too
for range in "0 20" "30 1000" "7 33"; do
	# shellcheck disable=SC2086 # two numbers, split on purpose
	set -- $range
	out="$work/cut-$1-$2"
	rm -f "$out.rt"
	"$ringtrace" cut -q --from "seq:$1" --to "seq:$2" "$work/o0-basic.arena" "$out.rt"
	"$ringtrace" replay "$out.rt" >"$out.replay" || fail "cut $1..$2: replay failed"
	check "cut $1..$2 replay" "$python" "$checker" cut "$out.replay" "$work/o0-basic.addr" \
		basic "$1" "$2"
	status "cut $1..$2 report" 0 "$ringtrace" report "$out.rt"
	if [ "$2" -lt 1000 ]; then # calls still open at the end
		check "cut $1..$2 report: incomplete calls said" grep -q "without an exit" "$work/out"
	else
		check "cut $1..$2 report: all calls complete" test -z "$(grep "without an exit" \
			"$work/out")"
	fi
done

# truncated anywhere: read as far as it goes (0, or 3 damaged), never a crash
size=$(wc -c <"$work/o0-threads.arena")
for cut in 4096 65536 $((size / 3)) $((size / 2)) $((size - 4096)); do
	"$corrupt" "$work/o0-threads.arena" "$work/trunc.arena" truncate 1 "$cut" >/dev/null
	for view in replay report "report --folded"; do
		set +e
		# shellcheck disable=SC2086 # view is a command and its options
		"$ringtrace" $view "$work/trunc.arena" >"$work/out" 2>"$work/err"
		rc=$?
		set -e
		case $rc in
		0 | 2 | 3) pass ;;
		*) fail "truncated at $cut: $view exit status $rc: $(head -c 300 "$work/err")" ;;
		esac
	done
done

# a trace file damaged every way: what reads is shown, never a crash
if "$ringtrace" record -q -o "$work/rec.rt" -- "$o0" "$work/rec.addr" threads; then
	"$ringtrace" replay "$work/rec.rt" >"$work/rec.replay" || fail "record: replay failed"
	check "record: replay" "$python" "$checker" replay "$work/rec.replay" "$work/rec.addr" \
		threads
	for mode in flip zero overwrite omit insert truncate; do
		for seed in 1 2 3 4; do
			"$corrupt" "$work/rec.rt" "$work/bad.rt" "$mode" "$seed" >/dev/null 2>&1 ||
				continue
			for view in replay report "report --folded"; do
				set +e
				# shellcheck disable=SC2086 # view is a command and its options
				"$ringtrace" $view "$work/bad.rt" >"$work/out" 2>"$work/err"
				rc=$?
				set -e
				case $rc in
				0 | 2 | 3) pass ;;
				*) fail "$mode $seed: $view exit status $rc: $(head -c 300 "$work/err")" ;;
				esac
			done
		done
	done
else
	fail "record failed"
fi

# usage
status "replay without input" 2 "$ringtrace" replay
status "replay --bogus" 2 "$ringtrace" replay --bogus "$work/o0-basic.arena"
status "replay --tid 0" 2 "$ringtrace" replay --tid 0 "$work/o0-basic.arena"
status "report --sort bogus" 2 "$ringtrace" report --sort bogus "$work/o0-basic.arena"
status "report --folded --json" 2 "$ringtrace" report --folded --json "$work/o0-basic.arena"
status "report of no file" 2 "$ringtrace" report "$work/no-such-file"
status "replay --help" 0 "$ringtrace" replay --help
check "replay --help says what" grep -q "not returned" "$work/out"
status "report --help" 0 "$ringtrace" report --help
check "report --help says what" grep -q -- "--folded" "$work/out"

finish
