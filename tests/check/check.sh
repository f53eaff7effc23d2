#!/bin/sh
# check.sh RINGTRACE PROGRAM - `ringtrace check` and `ringtrace recover` on
# real recordings damaged with dd and printf, and on the checked-in damaged
# files of golden/ (make_golden.sh) against their expected output.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
ringtrace=$1
program=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM
unset RINGTRACE_ARENA RINGTRACE_BUFFER RINGTRACE_MODE RINGTRACE_RINGS RINGTRACE_SYNC
fail() {
	echo "FAIL: $*" >&2
	exit 1
}
# status CMD...: its exit status, without set -e stopping
status() {
	set +e
	"$@" >"$work/out" 2>"$work/err"
	s=$?
	set -e
	echo "$s"
}
json_ok() {
	/usr/bin/python3 -c 'import json, sys
for line in open(sys.argv[1]):
    json.loads(line)' "$1" || fail "not JSON lines: $1"
}
# same events in two JSON dumps, and the same events lost by each thread (a
# damaged region's own line, with an offset, repeats its threads' losses)
same_dump() {
	/usr/bin/python3 - "$1" "$2" <<'PY' || fail "recovered file dumps otherwise: $1 $2"
import collections, json, sys
def items(p):
    events, lost = [], collections.Counter()
    for line in open(p):
        o = json.loads(line)
        if o.get("kind") == "trace":
            events.append(o)
        elif o.get("kind") == "lost" and "offset" not in o:
            lost[(o.get("tid"), o.get("reason"))] += o.get("count", 0)
    return events, +lost
a, b = items(sys.argv[1]), items(sys.argv[2])
sys.exit(0 if a == b and a[0] else 1)
PY
}

# ---- the checked-in damaged files ----
cd "$here/golden"
for f in clean flip insert truncated chunk zeroed replay; do
	"$ringtrace" check "$f.rt" >"$work/$f.out" 2>&1 || true
	diff -u "$f.expected" "$work/$f.out" || fail "check $f.rt differs from $f.expected"
done
# dump tells each region with the events it lost and the time gap it left,
# as check does, and marks the threads' losses it explains
"$ringtrace" dump chunk.rt >"$work/chunk.dump" 2>/dev/null || true
grep -q -- '^--- damaged: bytes 6160\.\.6160 (0 B), 124 events lost, 0\.000003485 s gap: ' \
	"$work/chunk.dump" || fail "chunk: dump's region line: $(grep -- --- "$work/chunk.dump")"
grep -q -- '^--- lost: tid [0-9]* .*, 124 events damaged at .*(lost in the damaged region' \
	"$work/chunk.dump" || fail "chunk: dump's thread line: $(grep -- --- "$work/chunk.dump")"
for f in flip insert truncated chunk zeroed replay; do
	"$ringtrace" dump --json "$f.rt" >"$work/$f.json" 2>/dev/null || true
	lost=$(sed -n 's/^total: .* bytes\{0,1\}, \([0-9]*\) events\{0,1\} lost,.*/\1/p' "$f.expected")
	/usr/bin/python3 - "$work/$f.json" "$lost" <<'PY' || fail "$f: dump --json regions do not add up"
import json, sys
regions = in_region = 0
seen = 0
for line in open(sys.argv[1]):
    o = json.loads(line)
    if o.get("kind") != "lost":
        continue
    if "offset" in o:
        seen += 1
        assert o["reason"] == "damaged" and "length" in o and "count" in o, o
        regions += o["count"]
    elif o.get("in_region"):
        in_region += o["count"]
assert seen > 0, "no region"
assert regions == in_region == int(sys.argv[2]), (regions, in_region, sys.argv[2])
PY
done
cd "$work"

# ---- a real recording, damaged ----
"$ringtrace" record -q -o t.rt -- "$program" threads 3 2000 >/dev/null
[ "$(status "$ringtrace" check t.rt)" = 0 ] || fail "clean file: status"
grep -q '^total: 0 damaged regions, 0 bytes, 0 events lost, 0 noted lost earlier, 1 file checked: clean$' out ||
	fail "clean total: $(cat out)"
[ "$(status "$ringtrace" check --json t.rt)" = 0 ] || fail "clean --json"
json_ok out
grep -q '"kind":"total".*"damaged":false' out || fail "clean json total"

# block offsets (the block magic) of the clean file
grep -abo RTBLOCK t.rt | cut -d: -f1 >blocks
nblocks=$(wc -l <blocks)
[ "$nblocks" -gt 30 ] || fail "too few blocks: $nblocks"
block() { sed -n "$(($1 + 1))p" blocks; }
b20=$(block 20)
b21=$(block 21)
b22=$(block 22)

# a byte flipped in a block of records (PACKED, as record writes them): that block, bad
# checksum, its events lost.  The first block from the 20th on that is large enough to
# be one: a slow run can put a small metadata block (a thread's name) there
k=20
while [ $(($(block $((k + 1))) - $(block $k))) -lt 256 ] && [ "$k" -lt $((nblocks - 2)) ]; do
	k=$((k + 1))
done
bf=$(block $k)
bf1=$(block $((k + 1)))
cp t.rt flip.rt
printf '\377' | dd of=flip.rt bs=1 seek=$(((bf + bf1) / 2)) conv=notrunc 2>/dev/null
[ "$(status "$ringtrace" check flip.rt)" = 1 ] || fail "flip: status"
grep -q "^flip.rt: bytes $bf..$bf1 ($((bf1 - bf)) B): bad checksum; [1-9][0-9]* events lost; time " out ||
	fail "flip line (block $k at $bf): $(cat out)"
grep -q '^total: 1 damaged region, ' out || fail "flip total"

# garbage inserted between blocks: bad magic, nothing lost
{ head -c "$b20" t.rt; printf 'GARBAGE!%.0s' $(seq 1 40); tail -c +$((b20 + 1)) t.rt; } >ins.rt
[ "$(status "$ringtrace" check ins.rt)" = 1 ] || fail "insert: status"
grep -q "^ins.rt: bytes $b20..$((b20 + 320)) (320 B): bad magic; 0 events lost" out ||
	fail "insert line: $(cat out)"

# cut short in the middle of a block: truncated, and no end block
head -c $((b21 + 100)) t.rt >short.rt
[ "$(status "$ringtrace" check short.rt)" = 1 ] || fail "truncated: status"
grep -q "^short.rt: bytes $b21..$((b21 + 100)) (100 B): truncated; events lost unknown" out ||
	fail "truncated line: $(cat out)"
grep -q '^short.rt: no end block' out || fail "truncated: no end line"

# whole blocks cut out: a region of 0 bytes where they were
{ head -c "$b20" t.rt; tail -c +$((b22 + 1)) t.rt; } >chunk.rt
[ "$(status "$ringtrace" check --json chunk.rt)" = 1 ] || fail "chunk: status"
json_ok out
# whole blocks left out: no bad bytes, a region of 0 bytes where they were, their records counted
grep -q '"length":0,"cause":"blocks missing or moved","count":[1-9]' out ||
	fail "chunk: $(cat out)"
grep -q '"kind":"total".*"damaged":true' out || fail "chunk json total"

# a file with no END block only: a line, but clean
head -c "$(tail -1 blocks)" t.rt >noend.rt
[ "$(status "$ringtrace" check noend.rt)" = 0 ] || fail "no end: status $(cat out)"
grep -q '^noend.rt: no end block' out || fail "no end line"

# ---- recover ----
for f in t flip ins short chunk; do
	rm -f r.rt
	s=$(status "$ringtrace" recover "$f.rt" r.rt)
	if [ "$f" = t ]; then want=0; else want=3; fi
	[ "$s" = "$want" ] || fail "recover $f: status $s: $(cat err)"
	"$ringtrace" dump --json "$f.rt" >a.json 2>/dev/null || true
	"$ringtrace" dump --json r.rt >b.json 2>/dev/null || true
	same_dump a.json b.json
	# what recover wrote is clean: the input's losses are noted in it, not damage
	[ "$(status "$ringtrace" check r.rt)" = 0 ] || fail "recovered $f is not clean: $(cat out)"
	grep -q '^total: 0 damaged regions, 0 bytes, 0 events lost, [0-9]* noted lost earlier' out ||
		fail "recovered $f: $(cat out)"
	# every event the input lost is noted in what recover wrote
	noted=$(sed -n 's/.* events\{0,1\} lost, \([0-9]*\) noted lost earlier.*/\1/p' out)
	"$ringtrace" check "$f.rt" >in.out 2>&1 || true
	lost=$(sed -n 's/^total: .* bytes\{0,1\}, \([0-9]*\) events\{0,1\} lost,.*/\1/p' in.out)
	[ -n "$lost" ] && [ "$noted" = "$lost" ] ||
		fail "recovered $f: noted '$noted', the input lost '$lost'"
done
# every copy of the sites and threads damaged: recover keeps the marked events
/usr/bin/python3 - t.rt nometa.rt <<'PY'
import struct, sys
d = bytearray(open(sys.argv[1], "rb").read())
at = hit = 0
while True:
    at = d.find(b"RTBLOCK", at)
    if at < 0:
        break
    size, kind = struct.unpack_from("<HB", d, at + 12)
    if kind in (3, 4):  # THREADS, SITES
        d[at + 100] ^= 0xFF
        hit += 1
    at += max(size, 8)
assert hit >= 2
open(sys.argv[2], "wb").write(d)
PY
rm -f r.rt
[ "$(status "$ringtrace" recover nometa.rt r.rt)" = 3 ] || fail "recover nometa: $(cat err)"
[ "$(status "$ringtrace" check r.rt)" = 0 ] || fail "recovered nometa is not clean: $(cat out)"
"$ringtrace" dump --json nometa.rt 2>/dev/null | grep -c '"kind":"trace".*"metadata":"lost"' >a.n || true
"$ringtrace" dump --json r.rt 2>/dev/null | grep -c '"kind":"trace".*"metadata":"lost"' >b.n || true
"$ringtrace" dump --json t.rt 2>/dev/null | grep -c '"kind":"trace"' >t.n || true
[ "$(cat a.n)" = "$(cat t.n)" ] && [ "$(cat b.n)" = "$(cat t.n)" ] ||
	fail "nometa: $(cat t.n) events, $(cat a.n) shown marked, $(cat b.n) marked after recover"
rm -f r.rt
"$ringtrace" recover -q short.rt r.rt || [ $? = 3 ] || fail "recover short"
[ "$(status "$ringtrace" check r.rt)" = 0 ] || fail "recovered truncated file is not clean: $(cat out)"

# ---- refusals and usage ----
[ "$(status "$ringtrace" check)" = 2 ] || fail "check without input"
[ "$(status "$ringtrace" check --bogus t.rt)" = 2 ] || fail "check bad option"
[ "$(status "$ringtrace" check missing.rt)" = 2 ] || fail "check missing file"
echo "not a trace" >junk
[ "$(status "$ringtrace" check junk)" = 2 ] || fail "check junk"
[ "$(status "$ringtrace" recover t.rt)" = 2 ] || fail "recover without OUT"
[ "$(status "$ringtrace" recover)" = 2 ] || fail "recover without anything"
[ "$(status "$ringtrace" recover t.rt junk)" != 0 ] || fail "recover over a non-trace file"
[ "$(cat junk)" = "not a trace" ] || fail "junk overwritten"
cp t.rt keep.rt
[ "$(status "$ringtrace" recover keep.rt keep.rt)" = 2 ] || fail "recover over its input"
cmp -s t.rt keep.rt || fail "input overwritten"
"$ringtrace" check --help | grep -q 'usage: ringtrace check' || fail "check --help"
"$ringtrace" help recover | grep -q 'usage: ringtrace recover' || fail "help recover"
echo "check: ok"
