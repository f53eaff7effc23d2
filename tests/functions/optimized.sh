#!/bin/sh
# optimized.sh RINGTRACE LIBRINGTRACE DIR VARIANT... - function call trees of
# optimized builds, as `ringtrace record` and uftrace see the same binary.
# DIR/VARIANT/optimized and DIR/VARIANT/optimized_cxx are optimized.c and
# optimized_cxx.cc built by one compiler with one set of flags (gcc and
# clang, -O2 and -O3, with and without LTO, clang's hooks before or after
# inlining; tests/CMakeLists.txt).  Each scenario is recorded by both and
# compare_uftrace.py compares `replay` and `report`.  Then the system calls:
# the hooks make none, so once its ring has wrapped (the arena's file grows
# until then), a program making ten times more calls makes no more of them.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../e2e/lib.sh"
ringtrace=$1
library=$2
dir=$3
shift 3
unset RINGTRACE_ARENA RINGTRACE_BUFFER RINGTRACE_MODE RINGTRACE_RINGS RINGTRACE_SYNC \
	RINGTRACE_FUNCTIONS RINGTRACE_MAX_DEPTH RINGTRACE_EXCLUDE_MODULES LD_PRELOAD
python=/usr/bin/python3
[ -x "$python" ] || python=python3
require_tools uftrace strace nm

# compare NAME MODE PROGRAM SCENARIO [UFTRACE_OPTION] [PARENT>CHILD...]
compare() {
	name=$1
	mode=$2
	program=$3
	scenario=$4
	option=$5
	shift 5
	w=$work/$name
	mkdir -p "$w"
	if ! "$ringtrace" record -o "$w/rt.rt" -- "$program" "$scenario" >"$w/rt.out" 2>&1; then
		fail "$name: ringtrace record failed"
		return
	fi
	"$ringtrace" replay "$w/rt.rt" >"$w/rt.replay" 2>&1 || fail "$name: ringtrace replay"
	"$ringtrace" report "$w/rt.rt" >"$w/rt.report" 2>&1 || fail "$name: ringtrace report"
	# uftrace follows longjmp by hooking the library's calls, which swapcontext upsets
	if ! uftrace record $option -d "$w/uf" "$program" "$scenario" >"$w/uf.out" 2>&1; then
		fail "$name: uftrace record failed"
		return
	fi
	uftrace replay -d "$w/uf" >"$w/uf.replay" 2>&1 || fail "$name: uftrace replay"
	uftrace report -d "$w/uf" >"$w/uf.report" 2>&1 || fail "$name: uftrace report"
	nm -C --defined-only "$program" | awk '$2 ~ /^[tTwW]$/ { $1 = ""; $2 = ""; print substr($0, 3) }' \
		>"$w/names"
	check "$name" "$python" "$here/compare_uftrace.py" "$mode" "$w/rt.replay" "$w/rt.report" \
		"$w/uf.replay" "$w/uf.report" "$w/names" "$@"
}

for v in "$@"; do
	c=$dir/$v/optimized
	cxx=$dir/$v/optimized_cxx
	compare "$v inline" tree "$c" inline ""
	compare "$v longjmp" tree "$c" longjmp ""
	compare "$v coro" counts "$c" coro --no-libcall "main>coro" "coro>after" "coro>co_resume" \
		"co_resume>co_body"
	case $v in
	gcc*) compare "$v throw" tree "$cxx" throw "" ;;
	# clang++ runs no exit hook as an exception passes, and uftrace cannot tell
	*) compare "$v throw" counts "$cxx" throw "" "catcher>mid" "mid>thrower" "catcher>after" ;;
	esac
done

# syscalls PROGRAM ROUNDS: the system calls of the program, its hooks recording
syscalls() {
	rm -f "$work/sys.arena"
	RINGTRACE_ARENA=$work/sys.arena LD_PRELOAD=$library strace -f -c -U name,calls \
		-o "$work/strace.txt" \
		"$1" loop "$2" >/dev/null 2>&1 || echo "failed"
	awk '$1 == "total" { print $2 }' "$work/strace.txt"
}
for v in "$@"; do
	few=$(syscalls "$dir/$v/optimized" 3000)
	many=$(syscalls "$dir/$v/optimized" 30000)
	check "$v: the hooks make no system call ($few with 3000 rounds, $many with 30000)" \
		test "$few" -gt 0 -a "$few" = "$many"
done
finish
