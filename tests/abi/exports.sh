#!/bin/sh
# exports.sh LIBRARY EXPECTED - the symbols a shared library of the build
# exports (readelf --dyn-syms: type, binding, name@version), against the
# list kept in EXPECTED (lines starting with # are comments).  A symbol
# exported by accident, one lost, one whose version changed (the C
# library's functions the library stands in front of must have none: see
# src/record/ringtrace.map) fails, with the difference.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../e2e/lib.sh"
library=$1
expected=$2

require_tools readelf
# the defined symbols of the dynamic symbol table; entry 0 and the undefined ones are not exports
readelf --dyn-syms --wide "$library" |
	awk '$1 ~ /^[0-9]+:$/ && $7 != "UND" { print $4, $5, $8 }' | LC_ALL=C sort >"$work/exported"
grep -v '^#' "$expected" | LC_ALL=C sort >"$work/expected"
if cmp -s "$work/expected" "$work/exported"; then
	pass
else
	fail "$(basename "$library") exports other symbols than $(basename "$expected") lists" \
		"(- listed only, + exported only):"
	diff "$work/expected" "$work/exported" | sed -n 's/^< /- /p; s/^> /+ /p' >&2
fi
check "$(basename "$library") exports something" test -s "$work/exported"
finish
