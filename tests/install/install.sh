#!/bin/sh
# install.sh SOURCE_DIR - `make install PREFIX=DIR` as the README tells users
# to run it, and the installed tree used as they use it.
#
# Two installs from one copy of the source tree (what a fresh clone holds,
# with the working tree's changes):
#   1. a fresh copy: `make install PREFIX=A`;
#   2. the same tree, already built, and configured meanwhile with the
#      default prefix and an untyped -DCMAKE_INSTALL_LIBDIR=lib (which CMake
#      turns into the source tree's lib/: how earlier `make install` runs
#      left build trees): `make install PREFIX=B`.
# Each must put bin/, include/, lib/ (with pkgconfig/ringtrace.pc) and
# share/man/ (man1: ringtrace(1) and a page per command; man3: ringtrace(3))
# under its prefix and nothing into the source tree.  Then, per
# prefix, with the source copy gone for B: examples/demo.c built through
# `pkg-config --cflags --libs ringtrace` (gcc -O2, clang -O2 -flto) runs
# without LD_LIBRARY_PATH on the prefix's library, and the prefix's
# `ringtrace` dumps its arena; `ringtrace record --io` traces a program built
# with -finstrument-functions but not linked with ringtrace (preloaded.c),
# preloading both libraries from the prefix.  With B, tests/start/together.c
# (threads whose first events come at once) built the same way by gcc -O2,
# gcc -O3 -flto, clang -O2 -flto and clang -O3: 16 threads in flight and in
# stream mode, every event shown and none lost, as the prefix's `ringtrace
# summary` says; under the prefix's `ringtrace record` with 4 rings for 8
# threads, shown + counted lost = emitted; and tests/losses/loss_program.c,
# whose threads hold their rings, 5,000 of 8,001 events lost for want of a
# ring, in its arena and in record's file alike.  B is then moved: the tool
# still preloads from where it now is.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../e2e/lib.sh"
src=$(cd "$1" && pwd)
unset LD_PRELOAD LD_LIBRARY_PATH RINGTRACE_PRELOAD RINGTRACE_PRELOAD_IO RINGTRACE_ARENA \
	RINGTRACE_BUFFER RINGTRACE_MODE RINGTRACE_FUNCTIONS PKG_CONFIG_PATH BUILD PREFIX \
	CMAKE_ARGS MAKEFLAGS MFLAGS
python=/usr/bin/python3
[ -x "$python" ] || python=python3
require_tools git make cmake gcc clang pkg-config tar

copy=$work/source
mkdir "$copy"
if git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	# tracked and new files as they are now; a tracked file deleted is skipped
	(cd "$src" && git ls-files -z --cached --others --exclude-standard |
		tar --null -T - --ignore-failed-read -cf - 2>/dev/null) | tar -xf - -C "$copy"
else
	(cd "$src" && tar --exclude='./build*' -cf - .) | tar -xf - -C "$copy"
fi

# the man pages of the copy, which is gone when B is checked
cp -R "$copy/docs/man" "$work/man"

# Files of the source copy outside its build directory.
source_files() {
	(cd "$copy" && find . -path ./build -prune -o -print | sort)
}

# make_install PREFIX: `make install PREFIX=...` in the copy; its output in $work.
make_install() {
	source_files >"$work/before"
	log=$work/install-$(basename "$1").log
	if ! make -C "$copy" install PREFIX="$1" JOBS=2 >"$log" 2>&1; then
		tail -30 "$log" >&2
		fail "make install PREFIX=$1"
		finish
		exit 1
	fi
	source_files >"$work/after"
	diff "$work/before" "$work/after" | head >&2 || true
	check "make install PREFIX=$1 put nothing into the source tree" \
		cmp -s "$work/before" "$work/after"
}

# module_paths FILE: the module map's paths of an arena or trace file, one a line.
module_paths() {
	"$prefix/bin/ringtrace" info --json "$1" | "$python" -c '
import json, sys
d = json.load(sys.stdin)
for m in d.get("modules", []) + [m for p in d.get("processes", []) for m in p["modules"]]:
    print(m["path"])'
}

# under_lib PATH...: every path, symlinks resolved, is a file of $prefix/lib.
under_lib() {
	[ $# -gt 0 ] || return 1
	for p in "$@"; do
		case $(readlink -f "$p") in
		"$lib"/*) ;;
		*)
			echo "$p is not in $lib" >&2
			return 1
			;;
		esac
	done
}

# check_demo NAME COMPILER FLAGS...: examples/demo.c built through pkg-config, run
# on the prefix's library, its arena dumped by the prefix's tool.
check_demo() {
	name=$1
	shift
	# shellcheck disable=SC2086 # the flags are words
	if ! "$@" "$here/../../examples/demo.c" $pkg_flags -o "$work/$name"; then
		fail "$name: builds through pkg-config ($* ... $pkg_flags)"
		return 0
	fi
	rm -f "$work/$name.arena"
	check "$name: runs" env RINGTRACE_ARENA="$work/$name.arena" "$work/$name" 2>/dev/null
	"$prefix/bin/ringtrace" dump "$work/$name.arena" >"$work/$name.dump" 2>&1 || true
	check "$name: the prefix's ringtrace dumps it, nothing lost" \
		grep -Eq '^ringtrace: recovered ([1-9][0-9]*)/\1 events from 6 threads \(0 lost\)$' \
		"$work/$name.dump"
	check "$name: its events are named" grep -q 'demo.c:main:[0-9]* (demo start)' "$work/$name.dump"
	libs=$(module_paths "$work/$name.arena" | grep /libringtrace || true)
	# shellcheck disable=SC2086 # one path a word: the paths have no blanks
	check "$name: libringtrace came from $lib ($libs)" under_lib $libs
}

# check_record: `ringtrace record --io` preloads both libraries from the prefix.
check_record() {
	rm -f "$work/preloaded.rt" "$work/io.txt"
	check "record --io runs the uninstrumented program" \
		"$prefix/bin/ringtrace" record --io -q -o "$work/preloaded.rt" -- \
		"$work/preloaded" "$work/io.txt" >"$work/maps.out"
	check "the program had libringtrace and libringtrace_io mapped" \
		test "$(grep -c -e '/libringtrace\.so' -e '/libringtrace_io\.so' "$work/maps.out")" -eq 2
	# shellcheck disable=SC2046 # one path a line: the paths have no blanks
	check "both were preloaded from $lib ($(tr '\n' ' ' <"$work/maps.out"))" \
		under_lib $(cat "$work/maps.out")
	# shellcheck disable=SC2046
	check "the trace's module map says so" \
		under_lib $(module_paths "$work/preloaded.rt" | grep /libringtrace)
	"$prefix/bin/ringtrace" dump --json "$work/preloaded.rt" >"$work/preloaded.json" || true
	check "its calls were recorded and named" \
		test "$(grep -c '"kind":"enter".*"func":"preloaded_work"' "$work/preloaded.json")" -eq 5
	check "its I/O was recorded" grep -q "\"op\":\"write\".*\"path\":\"$work/io.txt\"" \
		"$work/preloaded.json"
}

# check_prefix DIR: the layout, the pkg-config file, programs built and traced with it.
check_prefix() {
	prefix=$1
	lib=$(readlink -f "$prefix/lib")
	check "$prefix: format.h is not installed" test ! -e "$prefix/include/ringtrace/format.h"
	for f in bin/ringtrace include/ringtrace.h include/ringtrace/abi.h \
		lib/libringtrace.so lib/libringtrace.so.0 lib/libringtrace.a \
		lib/libringtrace_io.so.0 lib/pkgconfig/ringtrace.pc share/man/man1/ringtrace.1 \
		share/man/man3/ringtrace.3; do
		check "$prefix/$f installed" test -e "$prefix/$f"
	done
	# a page for each command of the tool, and every page of the source tree
	for c in $("$prefix/bin/ringtrace" --help | sed -n 's/^  \([a-z][a-z-]*\)  *.*/\1/p'); do
		check "$prefix: the page of $c installed" \
			test -e "$prefix/share/man/man1/ringtrace-$c.1"
	done
	for page in "$work"/man/*.1 "$work"/man/*.3; do
		check "$prefix: $(basename "$page") installed" \
			cmp -s "$page" "$prefix/share/man/man${page##*.}/$(basename "$page")"
	done
	if ! pkg_flags=$(PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --cflags --libs ringtrace)
	then
		fail "pkg-config finds ringtrace in $prefix/lib/pkgconfig"
		return 0
	fi
	check_demo demo-gcc gcc -O2
	check_demo demo-clang-lto clang -O2 -flto
	gcc -O2 -g -finstrument-functions "$here/preloaded.c" -o "$work/preloaded"
	check_record
}

# summed SUMMARY_JSON: "EVENTS LOST" of a summary --json: the events shown, and all
# those counted lost
summed() {
	"$python" -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(d["events"], sum(d["lost"].values()))' "$1"
}

# holds NAME INPUT LOST: the prefix's ringtrace says of INPUT (an arena or a trace
# file): events shown + events counted lost = what $work/NAME.out says was emitted,
# exactly, with LOST of them lost (a number, or "any"), each loss dump --json shows for
# want of a ring; and the program said nothing on stderr
holds() {
	"$prefix/bin/ringtrace" summary --json "$2" >"$work/$1.summary" || return 1
	# shellcheck disable=SC2046 # two numbers
	set -- "$1" "$2" "$3" $(summed "$work/$1.summary") \
		"$(awk '$1 == "emitted" { print $2 }' "$work/$1.out")"
	shown=$4 lost=$5 emitted=$6 others=0
	if [ "$lost" -gt 0 ]; then
		others=$("$prefix/bin/ringtrace" dump --json "$2" | grep '"kind":"lost"' |
			grep -vc '"note":"no ring"' || true)
	fi
	if [ "$shown" -gt 0 ] && [ $((shown + lost)) -eq "$emitted" ] && [ "$others" -eq 0 ] &&
		[ ! -s "$work/$1.err" ] && { [ "$3" = any ] || [ "$lost" -eq "$3" ]; }; then
		return 0
	fi
	echo "$1: $shown shown + $lost lost ($3 expected, $others losses for another cause" \
		"than no ring), $emitted emitted" >&2
	cat "$work/$1.err" >&2
	return 1
}

# output NAME COMMAND...: the command, its stdout in $work/NAME.out, its stderr in
# $work/NAME.err
output() {
	output_name=$1
	shift
	"$@" >"$work/$output_name.out" 2>"$work/$output_name.err"
}

# check_together: tests/start/together.c, threads whose first events come at once,
# built through pkg-config by each compiler as users build it, in flight and stream
# mode; then under the prefix's `ringtrace record` with fewer rings than threads, and
# loss_program.c, whose threads keep their rings to the end, there and in its arena.
check_together() {
	for build in "gcc -O2" "gcc -O3 -flto" "clang -O2 -flto" "clang -O3"; do
		name=together-$(echo "$build" | tr -d ' ')
		# shellcheck disable=SC2086 # the flags are words
		if ! $build -pthread "$here/../start/together.c" $pkg_flags -o "$work/$name"; then
			fail "$name: builds through pkg-config ($build ... $pkg_flags)"
			continue
		fi
		for mode in flight stream; do
			rm -f "$work/$name-$mode.arena"
			check "$name, $mode: 16 threads at once run" output "$name-$mode" \
				env RINGTRACE_MODE=$mode RINGTRACE_BUFFER=1M \
				RINGTRACE_ARENA="$work/$name-$mode.arena" "$work/$name" 16 10000
			check "$name, $mode: every event of the 16 threads, none lost" \
				holds "$name-$mode" "$work/$name-$mode.arena" 0
		done
	done
	# 8 threads, 4 rings: a thread that finds none, if any, has its events counted
	check "together under record, 4 rings: it runs" output together-rings \
		env RINGTRACE_RINGS=4 "$prefix/bin/ringtrace" record -q --buffer 1M \
		-o "$work/together-rings.rt" -- "$work/together-gcc-O2" 8 10000
	check "together under record, 4 rings: shown + lost = emitted, each loss for want of a ring" \
		holds together-rings "$work/together-rings.rt" any
	# the threads of loss_program hold their rings until all have traced, and main holds
	# one from its first event: 5 of the 8 threads lose their 1000 events, and the file
	# counts those the arena counts
	# (it reads two fields of its arena's header: ringtrace/format.h, which is not
	# installed, comes from the source tree, searched after everything else)
	# shellcheck disable=SC2086 # the flags are words
	if ! gcc -O2 -pthread "$here/../losses/loss_program.c" $pkg_flags \
		-idirafter "$here/../../include" -o "$work/losses"; then
		fail "loss_program.c: builds through pkg-config"
		return 0
	fi
	rm -f "$work/losses-arena.arena"
	check "loss_program, 4 rings: it runs" output losses-arena env RINGTRACE_RINGS=4 \
		RINGTRACE_ARENA="$work/losses-arena.arena" "$work/losses" together 8 1000
	check "loss_program, 4 rings, its arena: 5000 of 8001 lost" \
		holds losses-arena "$work/losses-arena.arena" 5000
	check "loss_program, 4 rings, under record: it runs" output losses-record \
		env RINGTRACE_RINGS=4 "$prefix/bin/ringtrace" record -q -o "$work/losses-record.rt" -- \
		"$work/losses" together 8 1000
	check "loss_program, 4 rings, the file: the same 5000 of 8001 lost" \
		holds losses-record "$work/losses-record.rt" 5000
}

make_install "$work/a"
check_prefix "$work/a"

# a build tree configured as earlier `make install` runs left it: default prefix, lib/
# made absolute under the source tree
(cd "$copy" && cmake -S . -B build -DCMAKE_INSTALL_PREFIX=/usr/local \
	-DCMAKE_INSTALL_LIBDIR=lib >/dev/null)
make_install "$work/b"
rm -rf "$copy" "$work/a"
check_prefix "$work/b"
check_together

mv "$work/b" "$work/moved"
prefix=$work/moved
lib=$(readlink -f "$prefix/lib")
check_record
finish
