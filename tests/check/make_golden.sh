#!/bin/sh
# make_golden.sh RINGTRACE [--record PROGRAM] - regenerate tests/check/golden.
#
# golden/clean.rt is a small real recording, checked in (--record PROGRAM
# records a new one first).  Every damaged file is made from it with dd and
# printf at fixed offsets, so the same clean.rt always gives the same bytes;
# NAME.expected is `ringtrace check` of NAME.rt run inside golden/.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
ringtrace=$1
g=$here/golden
if [ "${2:-}" = --record ]; then
	"$ringtrace" record -q -o "$g/clean.rt" -- "$3" threads 2 300 >/dev/null
fi
cd "$g"
# offset of the Nth block (0 is the first): where the block magic is
block() {
	grep -abo 'RTBLOCK' clean.rt | sed -n "$(($1 + 1))p" | cut -d: -f1
}
size=$(wc -c <clean.rt)
# a flipped byte inside a block's payload
cp clean.rt flip.rt
printf '\377' | dd of=flip.rt bs=1 seek=$(($(block 9) + 200)) conv=notrunc 2>/dev/null
# 300 bytes of garbage inserted between two blocks
b=$(block 8)
{ head -c "$b" clean.rt; printf 'garbage!%.0s' $(seq 1 37); printf 'xxxx'; tail -c +$((b + 1)) clean.rt; } >insert.rt
# cut short in the middle of a block
head -c $(($(block 10) + 1000)) clean.rt >truncated.rt
# two whole blocks cut out: no bad bytes, records missing
{ head -c "$(block 9)" clean.rt; tail -c +$(($(block 10) + 1)) clean.rt; } >chunk.rt
# 4 KiB zeroed across a block boundary
cp clean.rt zeroed.rt
dd if=/dev/zero of=zeroed.rt bs=1 seek=$(($(block 10) - 1000)) count=4096 conv=notrunc 2>/dev/null
# block 5 written a second time between blocks 9 and 10: a replay
b5=$(block 5)
n5=$(($(block 6) - b5))
b=$(block 10)
{ head -c "$b" clean.rt; tail -c +$((b5 + 1)) clean.rt | head -c "$n5"; tail -c +$((b + 1)) clean.rt; } >replay.rt
[ "$size" -gt 0 ]
for f in clean flip insert truncated chunk zeroed replay; do
	"$ringtrace" check "$f.rt" >"$f.expected" 2>&1 || true
done
