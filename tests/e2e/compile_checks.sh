#!/bin/sh
# compile_checks.sh BUILD_DIR CMAKE - what the installed header accepts and
# refuses at compile time, in C and C++ with gcc and clang:
#  - with -DRINGTRACE_DISABLE a program references no ringtrace symbol
#    (nm -g: nothing external, defined or undefined),
#    links without the library, still runs, and does not evaluate the
#    arguments of RT_TRACE, RT_BEGIN or RT_END (nor leaves anything of RT_SCOPE);
#  - a tag that is not a string literal, a seventh argument, and a
#    floating-point argument are compile errors, reported at the RT_TRACE;
#    so are a format that is not a string literal and a seventeenth argument
#    at an RT_LOG; a wrong count says what the limit is;
#  - the short level names RT_FATAL ... RT_DEBUG are not defined (a program
#    may have its own), unless the program defines RINGTRACE_SHORT_LEVELS,
#    and then they log as RT_LOG_FATAL ... RT_LOG_DEBUG do (levels.c).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
build=$1
cmake=$2

require_tools gcc g++ clang clang++ pkg-config nm
install_build "$build" "$cmake"
cp "$here/programs/app.c" "$here/programs/misuse.c" "$here/programs/unevaluated.c" \
	"$here/programs/levels.c" "$work/"
cd "$work"
cflags=$(pkg-config --cflags ringtrace)
libs=$(pkg-config --libs ringtrace)

# ---- -DRINGTRACE_DISABLE ----
disabled() {
	name=$1
	shift
	# no library on the command line: it links only if nothing refers to it
	if ! "$@" -DRINGTRACE_DISABLE -Wall -Wextra -Werror -pthread $cflags -o "off-$name" app.c \
		2>"off-$name.build"; then
		cat "off-$name.build" >&2
		fail "$name -DRINGTRACE_DISABLE: builds without the library"
		return
	fi
	pass
	# external symbols, defined or undefined (the inline stubs may stay as local ones at -O0)
	check "$name disabled: no ringtrace symbol" sh -c "! nm -g 'off-$name' | grep -i ringtrace"
	if RINGTRACE_ARENA=$work/off-$name.arena "./off-$name" >"off-$name.out" 2>"off-$name.err"
	then
		pass
	else
		fail "$name disabled: the program runs"
	fi
	check "$name disabled: no arena" test ! -e "off-$name.arena"
	check "$name disabled: nothing on stderr" test ! -s "off-$name.err"
	check "$name disabled: tracing reported off" grep -q -x 'arena	(off)' "off-$name.out"
	# even with the library on the link line, nothing is taken from it
	if "$@" -DRINGTRACE_DISABLE -pthread -o "off-linked-$name" app.c $cflags $libs \
		2>/dev/null; then
		check "$name disabled, linked: no ringtrace symbol" \
			sh -c "! nm -g 'off-linked-$name' | grep -i ringtrace"
	else
		fail "$name -DRINGTRACE_DISABLE with the library"
	fi
	# RT_BEGIN, RT_END and RT_SCOPE too: no library, no symbol
	if "$@" -DRINGTRACE_DISABLE -pthread $cflags -o "uneval-nolib-$name" \
		unevaluated.c 2>"uneval-nolib-$name.build"; then
		check "$name disabled spans: no ringtrace symbol" \
			sh -c "! nm -g 'uneval-nolib-$name' | grep -i ringtrace"
	else
		cat "uneval-nolib-$name.build" >&2
		fail "$name -DRINGTRACE_DISABLE: the span macros build without the library"
	fi
	for mode in on off; do
		define=
		[ "$mode" = off ] && define=-DRINGTRACE_DISABLE
		if "$@" $define -pthread -o "uneval-$mode-$name" unevaluated.c $cflags $libs \
			2>"uneval-$mode-$name.build"; then
			out=$(RINGTRACE_ARENA=$work/uneval-$mode-$name.arena "./uneval-$mode-$name")
			want=5
			[ "$mode" = off ] && want=0
			check "$name: tracing $mode evaluates the arguments $want times ($out)" \
				test "$out" = "$want"
		else
			cat "uneval-$mode-$name.build" >&2
			fail "$name: unevaluated.c ($mode)"
		fi
	done
}

disabled gcc gcc -std=c11
disabled clang clang -std=c17
disabled gxx g++ -x c++ -std=c++11
disabled clangxx clang++ -x c++ -std=c++20

# ---- misuse is a compile error, at the line of the misuse ----
line_of() {
	grep -n -F "$1" misuse.c | head -n 1 | cut -d: -f1
}

misuse() {
	name=$1
	shift
	if "$@" -Wall -Wextra -Werror $cflags -c -o /dev/null misuse.c 2>"misuse-$name.log"; then
		pass
	else
		cat "misuse-$name.log" >&2
		fail "$name: the correct use compiles"
		return
	fi
	for what in NON_LITERAL_TAG SEVEN_ARGUMENTS FLOAT_ARGUMENT DOUBLE_ARGUMENT \
		LONG_DOUBLE_ARGUMENT NON_LITERAL_FORMAT SEVENTEEN_LOG_ARGUMENTS; do
		# what the error says, where it is not only a syntax error
		says=
		case $what in
		NON_LITERAL_TAG) line=$(line_of 'RT_TRACE(tag,') ;;
		SEVEN_ARGUMENTS)
			line=$(line_of 'RT_TRACE("seven"')
			says='RT_TRACE, RT_BEGIN and RT_END take at most 6 arguments'
			;;
		FLOAT_ARGUMENT) line=$(line_of 'RT_TRACE("float"') ;;
		DOUBLE_ARGUMENT) line=$(line_of 'RT_TRACE("double"') ;;
		LONG_DOUBLE_ARGUMENT) line=$(line_of 'RT_TRACE("long double"') ;;
		NON_LITERAL_FORMAT) line=$(line_of 'RT_LOG(RT_LOG_INFO, tag,') ;;
		SEVENTEEN_LOG_ARGUMENTS)
			line=$(line_of 'RT_LOG(RT_LOG_INFO, "seventeen"')
			says='RT_LOG takes at most 16 arguments'
			;;
		esac
		log=misuse-$name-$what.log
		if "$@" -D"$what" $cflags -c -o /dev/null misuse.c >"$log" 2>&1; then
			fail "$name: $what compiles"
		elif ! grep -q "misuse.c:$line:" "$log"; then
			fail "$name: $what fails, but not at misuse.c:$line:"
			head -n 20 "$log" >&2
		elif [ -n "$says" ] && ! grep -q -F "$says" "$log"; then
			fail "$name: $what fails, but does not say '$says'"
			head -n 20 "$log" >&2
		else
			pass
		fi
	done
}

misuse gcc gcc -std=c11
misuse clang clang -std=c11
misuse gxx g++ -x c++ -std=c++11
misuse clangxx clang++ -x c++ -std=c++17

# ---- the level names: short ones only on request ----
# messages NAME: the messages of the program's arena, "LEVEL message" a line
messages() {
	"$prefix/bin/ringtrace" log "$work/levels-$1.arena" | cut -d" " -f2,7-
}

levels() {
	name=$1
	shift
	# without the request: the program's own RT_ERROR and RT_WARN, no clash, no warning
	if "$@" -Wall -Wextra -Werror -pthread $cflags -o "levels-own-$name" levels.c $libs \
		2>"levels-own-$name.build"; then
		check "$name: the program's own RT_ERROR and RT_WARN keep their values" \
			env RINGTRACE_ARENA="$work/levels-own-$name.arena" "./levels-own-$name"
		messages "own-$name" >"levels-own-$name.log"
		printf 'WARN own 3\nERROR own 2\n' >"levels-own-$name.want"
		check "$name: RT_LOG_WARN and RT_LOG_ERROR logged" \
			cmp "levels-own-$name.want" "levels-own-$name.log"
	else
		cat "levels-own-$name.build" >&2
		fail "$name: a program with macros named RT_ERROR and RT_WARN builds"
	fi
	# with RINGTRACE_SHORT_LEVELS: the short names, RINGTRACE_LOG_MIN=RT_WARN included
	if "$@" -DSHORT_LEVELS -DRINGTRACE_LOG_MIN=RT_WARN -Wall -Wextra -Werror -pthread \
		$cflags -o "levels-short-$name" levels.c $libs 2>"levels-short-$name.build"; then
		check "$name: RINGTRACE_SHORT_LEVELS names the levels RT_FATAL ... RT_DEBUG" \
			env RINGTRACE_ARENA="$work/levels-short-$name.arena" "./levels-short-$name"
		messages "short-$name" >"levels-short-$name.log"
		printf 'WARN short 3\nERROR long 2\n' >"levels-short-$name.want"
		check "$name: RT_WARN logs at warn, RINGTRACE_LOG_MIN=RT_WARN leaves RT_INFO out" \
			cmp "levels-short-$name.want" "levels-short-$name.log"
	else
		cat "levels-short-$name.build" >&2
		fail "$name: RINGTRACE_SHORT_LEVELS builds"
	fi
}

levels gcc gcc -std=c11
levels clang clang -std=c17
levels gxx g++ -x c++ -std=c++11
levels clangxx clang++ -x c++ -std=c++20
finish
