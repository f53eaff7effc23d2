#!/bin/sh
# uninstrumented.sh RINGTRACE PLAIN PRELOADED LINKED [LIBRARY] - `ringtrace record`
# of a program that records nothing says so, and how a program is made to
# record, after its closing line.
#
# PLAIN (plain_program.c) is neither built with -finstrument-functions nor
# linked with ringtrace: record must say so, and name the ways to make it
# record (-finstrument-functions, -lringtrace with RT_TRACE or RT_LOG,
# --io), whether it is given by its path or found in PATH.  A script is
# said to have recorded nothing.  PRELOADED (forks_program.c built with
# -finstrument-functions, not linked) records under record, which preloads
# the library (LIBRARY, when given, through RINGTRACE_PRELOAD): nothing is
# said; with RINGTRACE_PRELOAD=0 it records nothing, and record says the
# library was not preloaded.  LINKED (forks_program.c, linked with
# ringtrace) run with "none" traces nothing: record says none of its traced
# code ran.  -q says nothing at all.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../e2e/lib.sh"
ringtrace=$1
plain=$2
preloaded=$3
linked=$4
# the library a sanitizer build gives, if any, as RINGTRACE_PRELOAD
clean_tracing_environment ${5+"$5"}

# said NAME TEXT: the last record's stderr holds TEXT (a fixed string)
said() {
	check "$1: says '$2' ($(tr '\n' ' ' <"$work/err" | head -c 600))" grep -q -F -- "$2" \
		"$work/err"
}

# recorded NAME WANT COMMAND...: record the command, its exit status WANT
recorded() {
	name=$1
	want=$2
	shift 2
	rm -f "$work/out.rt"
	status=0
	"$@" >"$work/out" 2>"$work/err" || status=$?
	check "$name: exit status $status, not $want" [ "$status" -eq "$want" ]
}

for how in path PATH; do
	if [ "$how" = path ]; then
		recorded "plain" 3 "$ringtrace" record -o "$work/out.rt" -- "$plain" 3
	else
		recorded "plain in PATH" 0 env PATH="$(dirname "$plain"):$PATH" \
			"$ringtrace" record -o "$work/out.rt" -- "$(basename "$plain")"
	fi
	said "plain ($how)" "0 records written"
	said "plain ($how)" "recorded nothing: it is neither built with -finstrument-functions nor linked with libringtrace"
	said "plain ($how)" "build it with -finstrument-functions"
	said "plain ($how)" "link it with -lringtrace and mark them with RT_TRACE or RT_LOG"
	said "plain ($how)" "ringtrace record --io"
done

printf '#!/bin/sh\nexit 0\n' >"$work/script.sh"
chmod +x "$work/script.sh"
# (the shell is no sanitizer build: a sanitizer build's library is not preloaded into it)
recorded "a script" 0 env -u RINGTRACE_PRELOAD "$ringtrace" record -o "$work/out.rt" -- \
	"$work/script.sh"
said "a script" "script.sh recorded nothing"
said "a script" "build it with -finstrument-functions"

recorded "-q" 0 "$ringtrace" record -q -o "$work/out.rt" -- "$plain"
check "-q: nothing on stderr" [ ! -s "$work/err" ]

recorded "preloaded" 0 "$ringtrace" record -o "$work/out.rt" -- "$preloaded" _Fork 2
check "preloaded: records ($(cat "$work/err"))" grep -q '^ringtrace: [1-9][0-9]* records written' \
	"$work/err"
check "preloaded: nothing said of recording nothing" test -z "$(grep 'recorded nothing' "$work/err")"

recorded "not preloaded" 0 env RINGTRACE_PRELOAD=0 \
	"$ringtrace" record -o "$work/out.rt" -- "$preloaded" _Fork 2
said "not preloaded" "recorded nothing: it is built with -finstrument-functions, but no recording library was preloaded"

recorded "linked, tracing nothing" 0 "$ringtrace" record -o "$work/out.rt" -- "$linked" none
said "linked, tracing nothing" "recorded nothing: none of its traced code ran"
check "linked, tracing nothing: no advice to build it otherwise" \
	test -z "$(grep -e '-finstrument-functions' "$work/err")"

finish
