#!/bin/sh
# build_and_dump.sh BUILD_DIR CMAKE - what a user does, end to end: install
# the build, compile a program through `pkg-config --cflags --libs ringtrace`
# with gcc and clang (C11, C17) and g++ and clang++ (C++11, C++17, C++20),
# run it with RINGTRACE_ARENA set, and compare `ringtrace dump` and
# `ringtrace dump --json` with what the program says it traced (app.c).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
build=$1
cmake=$2

require_tools gcc g++ clang clang++ pkg-config
install_build "$build" "$cmake"
ringtrace=$prefix/bin/ringtrace
for f in bin/ringtrace include/ringtrace.h include/ringtrace/abi.h lib/libringtrace.so \
	lib/libringtrace.a lib/pkgconfig/ringtrace.pc; do
	check "installed $f" test -e "$prefix/$f"
done
# the reader side of the format is the library's and the tool's: never installed
check "format.h is not installed" test ! -e "$prefix/include/ringtrace/format.h"
cp "$here/programs/app.c" "$work/app.c"
cd "$work"
pkg_flags=$(pkg-config --cflags --libs ringtrace)

# A text event line:
# [seconds.nanoseconds][cpu C tid T name] : hex arguments : (delta uSec) : file:func:line (tag)
stamp='\[ *[0-9]+\.[0-9]{9}\]'
who='\[cpu [^ ]+ tid [0-9]+ [^]]*\]'
delta='\( *[0-9]+\.[0-9]{3} uSec\)'
event_line="^$stamp$who : [0-9a-f ]* : $delta : [^ ]+:[^ ]+:[0-9]+ \\(.*\\)\$"

# The arguments column of a text event line, trailing blanks removed.
hex_column() {
	sed -e 's/^\[[^]]*\]\[[^]]*\] : //' -e 's/ *: ( *[0-9.]* uSec) : .*$//'
}

# check_json NAME: every expected event is one trace line with exactly its fields.
check_json() {
	json=$1.json
	trace_lines=$(grep -c '"kind":"trace"' "$json" || true)
	check "$1: one JSON trace line per event ($trace_lines)" test "$trace_lines" -eq "$events"
	check "$1: no losses in the JSON" test "$(grep -c '"kind":"lost"' "$json" || true)" -eq 0
	check "$1: a last_event line per thread" \
		test "$(grep -c '"kind":"last_event"' "$json" || true)" -eq 2
	check "$1: every JSON line is one object" \
		test "$(grep -c -v '^{.*}$' "$json" || true)" -eq 0
	check "$1: last_event lines come last" \
		awk '/"kind":"last_event"/ { seen = 1; next } seen { exit 1 }' "$json"
	grep '"kind":"trace"' "$json" >"$1.traces" || true
	check "$1: main thread's tid is the pid" \
		test "$(grep -F "\"tid\":$pid," "$1.traces" | grep -c -F '"func":"main"')" -eq \
		"$main_events"
	check "$1: the worker is named" \
		test "$(grep -F '"thread":"e2e-worker"' "$1.traces" |
			grep -c -F '"tag":"worker step"')" -eq 3
	check "$1: ts_ns never runs back" awk -F'"ts_ns":' '/"kind":"trace"/ {
		split($2, a, ","); t = a[1] + 0; if (t < last) exit 1; last = t }' "$json"
	while IFS="	" read -r word tag line func args hex; do
		[ "$word" = expect ] || continue
		matches=$(grep -F "\"tag\":\"$tag\"," "$json" | grep '"kind":"trace"' |
			grep -F "\"line\":$line," | grep -F "\"args\":$args" || true)
		n=$(printf '%s' "$matches" | awk 'END { print NR }')
		if [ "$n" -ne 1 ]; then
			fail "$1: $n JSON trace lines for $tag at line $line with args $args"
			continue
		fi
		case $matches in
		*'"file":"app.c",'*'"func":"'"$func"'",'*) pass ;;
		*) fail "$1: $tag: file or func wrong in: $matches" ;;
		esac
	done <"$1.out"
}

# check_text NAME: the JTRACE-style listing, its per-thread section and last line.
check_text() {
	text=$1.txt
	heading=$(grep -n '^Last recorded per-thread events$' "$text" | cut -d: -f1)
	if [ -z "$heading" ]; then
		fail "$1: no 'Last recorded per-thread events' section"
		return
	fi
	head -n $((heading - 1)) "$text" | grep '^\[' >"$1.events" || true
	# besides events, at most a one-line summary (no losses here, so no loss lines)
	check "$1: nothing but events before the section" \
		test "$(head -n $((heading - 1)) "$text" | grep -c -v -e '^\[' -e '^$')" -le 1
	tail -n +$((heading + 1)) "$text" | grep -v '^$' >"$1.section" || true
	check "$1: one text line per event" test "$(line_count "$1.events")" -eq "$events"
	check "$1: every event line has the JTRACE format" \
		test "$(grep -c -v -E "$event_line" "$1.events" || true)" -eq 0
	while IFS="	" read -r word tag line func args hex; do
		[ "$word" = expect ] || continue
		found=$(grep -F " : app.c:$func:$line ($tag)" "$1.events" | hex_column |
			grep -c -x -F "$hex" || true)
		check "$1: text line of $tag ($hex)" test "$found" -ge 1
	done <"$1.out"
	check "$1: worker lines name the thread" \
		test "$(grep -c "tid [0-9]* e2e-worker\] .* (worker step)$" "$1.events")" -eq 3
	check "$1: main thread lines carry the pid" \
		test "$(grep -c "tid $pid " "$1.events" || true)" -eq "$main_events"
	# the section: each thread's last event, then the last timestamp
	last_line=$(tail -n 1 "$1.section")
	grep -v '^Last timestamp' "$1.section" >"$1.lasts" || true
	check "$1: a last event per thread" test "$(line_count "$1.lasts")" -eq 2
	check "$1: main's last event is 'end'" \
		grep -q -E "tid $pid .*: app.c:main:[0-9]+ \(end\)$" "$1.lasts"
	check "$1: the worker's last event is its third" \
		grep -q -E "e2e-worker\] : 00000002 +: .*\(worker step\)$" "$1.lasts"
	newest=$(awk -F']' '{ t = substr($1, 2) + 0 }
		NR == 1 || t >= max { max = t; s = $1 "]" } END { print s }' "$1.events")
	check "$1: ends with 'Last timestamp $newest'" test "$last_line" = "Last timestamp $newest"
	check "$1: the last timestamp is the last event's" \
		test "$(tail -n 1 "$1.events" | cut -d']' -f1)]" = "$newest"
}

# build_and_check NAME COMPILER FLAGS...
build_and_check() {
	name=$1
	compiler=$2
	shift 2
	if ! $compiler "$@" -Wall -Wextra -Werror -pthread -o "app-$name" app.c $pkg_flags \
		2>"$name.build"; then
		fail "$name: $compiler $* app.c \$(pkg-config --cflags --libs ringtrace)"
		cat "$name.build" >&2
		return
	fi
	pass
	rm -f "$name.arena"
	if ! RINGTRACE_ARENA=$work/$name.arena "./app-$name" >"$name.out" 2>"$name.err"; then
		fail "$name: the program failed"
		return
	fi
	check "$name: the program wrote nothing on stderr" test ! -s "$name.err"
	check "$name: the arena is kept at exit" test -f "$name.arena"
	pid=$(awk -F'	' '$1 == "pid" { print $2 }' "$name.out")
	events=$(grep -c '^expect' "$name.out" || true)
	main_events=$(grep -c '^expect.*	main	' "$name.out" || true)
	check "$name: dump exits 0" "$ringtrace" dump "$name.arena" >"$name.txt" 2>"$name.dump.err"
	check "$name: dump --json exits 0" "$ringtrace" dump --json "$name.arena" >"$name.json" \
		2>"$name.json.err"
	check_json "$name"
	check_text "$name"
}

build_and_check gcc-c11 gcc -std=c11
build_and_check gcc-c17 gcc -std=c17
build_and_check clang-c11 clang -std=c11
build_and_check clang-c17 clang -std=c17
build_and_check gxx-cxx11 g++ -x c++ -std=c++11
build_and_check gxx-cxx17 g++ -x c++ -std=c++17
build_and_check gxx-cxx20 g++ -x c++ -std=c++20
build_and_check clangxx-cxx11 clang++ -x c++ -std=c++11
build_and_check clangxx-cxx17 clang++ -x c++ -std=c++17
build_and_check clangxx-cxx20 clang++ -x c++ -std=c++20

# the static library, with no pkg-config: nothing of ringtrace left to load at run time
if gcc -std=c11 -pthread -I"$prefix/include" -o app-static app.c "$prefix/lib/libringtrace.a" \
	2>static.build; then
	pass
	check "static: no libringtrace.so needed" sh -c "! ldd ./app-static | grep -q libringtrace"
	check "static: runs and records" env RINGTRACE_ARENA="$work/static.arena" ./app-static \
		>static.out
	check "static: dump reads it" "$ringtrace" dump "$work/static.arena" >static.txt 2>/dev/null
	check "static: all its events" test "$(grep -c ' : app.c:' static.txt)" -eq \
		$(($(grep -c '^expect' static.out) + 2))
else
	cat static.build >&2
	fail "static: gcc app.c libringtrace.a"
fi
finish
