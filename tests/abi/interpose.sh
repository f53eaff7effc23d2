#!/bin/sh
# interpose.sh CC LIBRINGTRACE LIBRINGTRACE_IO - every C library function
# the two libraries stand in front of (the unversioned names of
# exports-libringtrace.txt and exports-libringtrace_io.txt) still reaches
# their wrapper from a program, now that the libraries version their own
# symbols:
#   - a program built against the C library alone, whose references carry
#     the C library's versions (dlopen@GLIBC_2.34, read@GLIBC_2.2.5), with
#     the libraries preloaded, as `ringtrace record` and `record --io` do;
#   - a program linked with the libraries (link order: they come first).
# The dynamic linker's own account says where each reference went
# (LD_DEBUG=bindings, every reference bound at start: LD_BIND_NOW).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../e2e/lib.sh"
cc=$1
rt=$2
io=$3
unset RINGTRACE_ARENA LD_PRELOAD
export RINGTRACE_DIR="$work/arenas"
mkdir -m 700 "$work/arenas"
require_tools "$cc" readelf

# name LIBRARY: one line per wrapped C function of the list, "LIBRARY NAME"
wrapped() {
	grep -v '^#' "$here/exports-$1.txt" | awk -v lib="$1" '$3 !~ /@/ && $3 !~ /^RINGTRACE_/ { print lib, $3 }'
}
{
	wrapped libringtrace
	wrapped libringtrace_io
} >"$work/wrapped"
check "the lists name the wrapped functions" test "$(line_count "$work/wrapped")" -gt 80

# a program that refers to every one of them, and calls none: no header, so no prototype
# clashes (-w: the compilers know some of them as built-ins, and say so)
{
	echo "/* every C library function libringtrace and libringtrace_io stand in front of */"
	awk '{ print "extern void " $2 "(void);" }' "$work/wrapped"
	echo "void (*const volatile wrapped[])(void) = {"
	awk '{ print "\t" $2 "," }' "$work/wrapped"
	echo "};"
	echo "int main(void) { return wrapped[0] == 0; }"
} >"$work/refs.c"

# bound PROGRAM NAME: where the program's reference to NAME went, and with which version
bound() {
	sed -n "s/^ *[0-9]*:[[:space:]]*binding file [^ ]*$1 \[0\] to \([^ ]*\) \[0\]: normal symbol \`$2' *\(.*\)\$/\1 \2/p" \
		"$work/$1.bindings".* | head -n 1
}

# reaches PROGRAM VERSIONED PRELOAD: run with PRELOAD, each reference of the program went to
# the library of the list (VERSIONED: with the C library's version)
reaches() {
	program=$1
	LD_PRELOAD=$3 LD_BIND_NOW=1 LD_DEBUG=bindings LD_DEBUG_OUTPUT="$work/$program.bindings" \
		"$work/$program" || fail "$program runs"
	while read -r lib name; do
		where=$(bound "$program" "$name")
		case $where in
		*/"$lib".so*)
			if [ "$2" = versioned ] && ! echo "$where" | grep -q '\[GLIBC_'; then
				fail "$program: the reference to $name carries no C library version ($where)"
			else
				pass
			fi
			;;
		*) fail "$program: $name went to ${where:-nowhere}, not to $lib" ;;
		esac
	done <"$work/wrapped"
}

# references versioned by the C library, the libraries preloaded
if "$cc" -fno-builtin -w -o "$work/refs-plain" "$work/refs.c" -ldl 2>"$work/plain.build"; then
	check "the program's references carry the C library's versions" \
		sh -c "readelf --dyn-syms --wide '$work/refs-plain' | grep -q ' UND dlopen@GLIBC_'"
	reaches refs-plain versioned "$rt $io"
else
	cat "$work/plain.build" >&2
	fail "a program referring to the wrapped functions builds"
fi

# link order: the program linked with the libraries, which come before the C library
if "$cc" -fno-builtin -w -o "$work/refs-linked" "$work/refs.c" "$io" "$rt" -ldl \
	-Wl,-rpath,"$(dirname "$rt")" -Wl,-rpath,"$(dirname "$io")" 2>"$work/linked.build"; then
	reaches refs-linked any ""
else
	cat "$work/linked.build" >&2
	fail "a program linked with the libraries builds"
fi
finish
