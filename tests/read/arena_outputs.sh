#!/bin/sh
# arena_outputs.sh TOOL SUMS CORPUS [--write] - every reading command over
# every arena of the fuzz corpus (damaged ones mostly) must print what it
# printed when SUMS was written: one line per arena and command, the
# sha256 of its standard output, standard error and exit status.  So a
# change to how arenas are read (the check pass, the cursors, the merge)
# that changes one byte of any of them is seen here.  --write writes SUMS
# anew from TOOL: only when the output is meant to change, said in the
# commit that does it.
set -u
tool=$1
sums=$2
corpus=$3
write=${4:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# commands as one word each: '+' stands for a space
commands="dump dump+--json dump+--last-events dump+--tail+3 dump+--json+--tail+2
dump+--hexdump log log+--json summary summary+--json check check+--json info+--json
replay report report+--json report+--folded export+--chrome export+--perfetto
analyze+spans analyze+rate analyze+stalls"

cd "$corpus" || exit 1
for arena in *.arena; do
	[ "$(head -c 7 "$arena")" = RTARENA ] || continue # sparse seeds are not arenas
	for c in $commands; do
		# shellcheck disable=SC2046 # the command's words
		"$tool" $(echo "$c" | tr + ' ') "$arena" >"$work/out" 2>"$work/err"
		echo "status $?" >>"$work/err"
		sum=$(cat "$work/out" "$work/err" | sha256sum | cut -c1-64)
		echo "$arena $c $sum"
	done
done >"$work/now"

if [ "$write" = --write ]; then
	cp "$work/now" "$sums"
	echo "wrote $(wc -l <"$sums") sums to $sums"
	exit 0
fi
if ! diff "$sums" "$work/now" >"$work/diff"; then
	echo "arena outputs changed (< as written, > now):"
	cat "$work/diff"
	exit 1
fi
echo "$(wc -l <"$sums") outputs as before"
