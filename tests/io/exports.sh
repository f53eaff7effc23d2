#!/bin/sh
# exports.sh IO_LIB SRC_DIR - every function the interposer defines to stand
# in front of the C library's is exported by libringtrace_io.so: one that is
# not (a compiler keeping a header's hidden visibility for it) lets the
# program's calls go past it, and nothing else would say so.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../e2e/lib.sh"
lib=$1
src=$2

# "RT_IO_EXPORT <type> name(" in the wrappers' sources, the names alone
sed -n 's/^RT_IO_EXPORT [^(]*[ *]\([A-Za-z_0-9]*\)(.*/\1/p' "$src"/src/record/io/interpose_*.c |
	sort -u >"$work/defined"
nm -D --defined-only "$lib" | awk '{ print $3 }' | sort -u >"$work/exported"

n=$(wc -l <"$work/defined")
[ "$n" -ge 60 ] && pass || fail "only $n wrappers found in the sources: the pattern is stale"
for f in read write getline vprintf fopen fclose; do
	grep -qx "$f" "$work/defined" && pass || fail "$f is not among the wrappers found"
done
missing=$(comm -23 "$work/defined" "$work/exported")
[ -z "$missing" ] && pass || fail "defined but not exported: $(echo $missing)"
finish
