#!/bin/sh
# sparse_arenas.sh RINGTRACE SPARSE_ARENA VICTIM - crafted sparse arenas against every reader.
#
# VICTIM (tests/damaged/victim.c) writes a real arena of four rings; SPARSE_ARENA
# (tests/hostile/sparse_arena.c) rewrites it to claim rings of 1 GiB in files of 8 and
# 64 GiB (512 MiB rings in 2 GiB under /dev/shm, where reading a hole through a shared
# mapping allocates shared memory), with every ring's head at 2^40 + 5: a window of a
# whole ring that lies in a hole.  Each file holds about 2 MB.  Every reading command
# runs on each under timeout, with its data limit at 512 MB and its peak resident size
# checked below 256 MB: it must report the damage (check: 1, the others: 3) and never be
# killed.  The /dev/shm one must come out as it went in: no block added, not written.
# RINGTRACE_SPARSE_DATA_MB, when set, replaces the data limit (0: none, for the
# sanitizers, whose shadow memory alone passes any).
#
# Then arenas that claim huge tables (SPARSE_ARENA tables): 16 Mi thread and site entries,
# 4 GiB of strings, the most module and descriptor entries, 4 Mi rings of 4 KiB, every
# used counter at its capacity, one entry past a hole at each table's end (26 GiB; 2.4 GiB
# in /dev/shm), read by the same commands.  On every file `ls` and `level` list and show
# it, `snapshot` refuses an arena whose program is gone (status 2) and writes a running
# one's or runs out of memory (1), never killed, the input as it was; `tail` reports the
# hole.  Last a trace file with a hole of 4 TiB between two copies of its blocks: read
# in the time its data takes, the hole reported as damage.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../e2e/lib.sh"
ringtrace=$1
sparse=$2
victim=$3
unset RINGTRACE_ARENA RINGTRACE_BUFFER RINGTRACE_MODE RINGTRACE_RINGS RINGTRACE_SYNC
data_mb=${RINGTRACE_SPARSE_DATA_MB:-512}
cd "$work"

RINGTRACE_ARENA=$work/base.rt RINGTRACE_RINGS=4 "$victim" "$work/victim.log"
"$sparse" make base.rt claims-8g.rt 8G 1G
"$sparse" make base.rt claims-64g.rt 64G 1G
"$sparse" make base.rt live-8g.rt 8G 1G live
RINGTRACE_ARENA=$work/small.rt RINGTRACE_RINGS=4 RINGTRACE_BUFFER=4K "$victim" "$work/small.log"
"$sparse" tables small.rt tables.rt 16M 16M 4G 4M
"$sparse" tables small.rt tables-live.rt 16M 16M 4G 4M live
shm=$(mktemp /dev/shm/ringtrace-sparse.XXXXXX)
shm_tables=$(mktemp /dev/shm/ringtrace-sparse-tables.XXXXXX)
shm_headless=$(mktemp /dev/shm/ringtrace-sparse-headless.XXXXXX)
trap 'rm -f "$shm" "$shm_tables" "$shm_headless"; cleanup' EXIT INT TERM
"$sparse" make base.rt "$shm" 2G 512M
"$sparse" tables small.rt "$shm_tables" 4M 4M 256M 256K

failed=0
# how long tail follows a live one: long enough to reach the hole on a loaded machine
# (under the sanitizers too), since a live one is followed until then
tail_seconds=${RINGTRACE_SPARSE_TAIL_SECONDS:-8}
# bounded EXPECTED NAME ARGS...: ringtrace ARGS under the limits; its status must be EXPECTED
bounded() {
	expected=$1
	name=$2
	shift 2
	status=0
	timeout 120 "$sparse" run "$data_mb" 256 "$ringtrace" "$@" >"$name.out" 2>"$name.err" ||
		status=$?
	if [ "$status" != "$expected" ]; then
		echo "FAIL: ringtrace $* exited $status, expected $expected" >&2
		tail -3 "$name.err" >&2
		failed=1
	fi
}

for f in claims-8g.rt claims-64g.rt live-8g.rt "$shm" tables.rt tables-live.rt "$shm_tables"; do
	n=$(basename "$f")
	# on a disk, writeback allocates a sparse file's extent blocks some seconds after it
	# was written: done now, so that blocks counted later are a reader's
	sync "$f"
	before=$(stat -c '%b %Y %s' "$f")
	sum=
	case $f in /dev/shm/*) sum=$(sha256sum <"$f") ;; esac
	bounded 3 "$n.dump" dump "$f"
	grep -q 'a hole in the file where records should be' "$n.dump.out" ||
		{ echo "FAIL: dump $f does not name the hole" >&2; failed=1; }
	bounded 3 "$n.json" dump --json "$f"
	bounded 3 "$n.hexdump" dump --hexdump "$f"
	bounded 3 "$n.info" info "$f"
	bounded 3 "$n.summary" summary "$f"
	bounded 1 "$n.check" check "$f"
	grep -q 'a hole in the file' "$n.check.out" ||
		{ echo "FAIL: check $f does not name the hole" >&2; failed=1; }
	bounded 3 "$n.log" log "$f"
	bounded 3 "$n.replay" replay "$f"
	bounded 3 "$n.report" report "$f"
	for a in spans rate stalls; do
		bounded 3 "$n.analyze-$a" analyze "$a" "$f"
	done
	bounded 3 "$n.latency" analyze latency --from one --to two "$f"
	bounded 3 "$n.by-arg" analyze by-arg --tag one --arg 0 "$f"
	bounded 3 "$n.chrome" export --chrome "$f"
	bounded 3 "$n.perfetto" export --perfetto "$f"
	bounded 3 "$n.ctf" export --ctf "$f" "$n.ctf.dir"
	bounded 3 "$n.cut" cut --from 0s "$f" "$n.cut.rt"
	bounded 3 "$n.recover" recover "$f" "$n.recovered.rt"
	bounded 0 "$n.ls" ls "$f"
	bounded 0 "$n.level" level "$f"
	# tail follows a live writer: the one that runs (pid 1 says so) until stopped
	live=0
	case $n in live-* | *-live.rt) live=1 ;; esac
	status=0
	timeout "$tail_seconds" "$sparse" run "$data_mb" 256 "$ringtrace" tail --from-start "$f" \
		>"$n.tail.out" 2>"$n.tail.err" || status=$?
	if [ "$status" != "$([ $live = 1 ] && echo 124 || echo 0)" ]; then
		echo "FAIL: tail $f exited $status" >&2
		failed=1
	fi
	grep -q 'a hole in the file where records should be' "$n.tail.out" ||
		{ echo "FAIL: tail $f does not report the hole" >&2; failed=1; }
	after=$(stat -c '%b %Y %s' "$f")
	if [ "$before" != "$after" ] || { [ -n "$sum" ] && [ "$sum" != "$(sha256sum <"$f")" ]; }; then
		echo "FAIL: $f changed while read: blocks, mtime, size $before -> $after" >&2
		failed=1
	fi
	# snapshot attaches to a running program's arena only, which writes its header (the
	# collector's pid, given back after): the file keeps its blocks, size and header
	before=$(stat -c '%b %s' "$f")
	header=$(head -c 4096 "$f" | sha256sum)
	status=0
	timeout 120 "$sparse" run "$data_mb" 256 "$ringtrace" snapshot -o "$n.snap.rt" "$f" \
		>"$n.snap.out" 2>"$n.snap.err" || status=$?
	if [ $live = 0 ]; then
		[ "$status" = 2 ] && grep -q 'no longer runs' "$n.snap.err" ||
			{ echo "FAIL: snapshot $f exited $status" >&2; failed=1; }
	elif [ "$status" != 0 ] && { [ "$status" != 1 ] || ! grep -q 'out of memory' "$n.snap.err"; }; then
		echo "FAIL: snapshot $f exited $status: $(tail -1 "$n.snap.err")" >&2
		failed=1
	fi
	after=$(stat -c '%b %s' "$f")
	if [ "$before" != "$after" ] || [ "$header" != "$(head -c 4096 "$f" | sha256sum)" ]; then
		echo "FAIL: $f changed by snapshot: blocks, size $before -> $after, or its header" >&2
		failed=1
	fi
done

# a file of 1 GiB whose header is a hole, its only data an arena's bytes at 512 MiB:
# refused by every reader, not one block added to it
truncate -s 1G "$shm_headless"
dd if=small.rt of="$shm_headless" bs=1M seek=512 conv=notrunc status=none
before=$(stat -c '%b %Y %s' "$shm_headless")
for c in dump info summary check log replay report ls level "tail --from-start" \
	"snapshot -o headless.snap.rt" recover; do
	name=headless.$(echo "$c" | cut -d' ' -f1)
	# shellcheck disable=SC2086 # the words of the command
	set -- $c "$shm_headless"
	[ "$1" = recover ] && set -- "$@" headless.recovered.rt
	bounded 2 "$name" "$@"
done
grep -q 'its header is a hole of the file' headless.dump.err ||
	{ echo "FAIL: dump does not say the header is a hole" >&2; failed=1; }
after=$(stat -c '%b %Y %s' "$shm_headless")
if [ "$before" != "$after" ]; then
	echo "FAIL: a file whose header is a hole changed while read: $before -> $after" >&2
	failed=1
fi

# a trace file of 4 TiB: its blocks, a hole, the same blocks again (a replay)
"$ringtrace" recover base.rt trace.rt 2>/dev/null
cp trace.rt hole-4t.rt
dd if=trace.rt of=hole-4t.rt bs=1M seek=4194304 conv=notrunc status=none
for c in dump info summary log replay report; do
	bounded 3 "trace.$c" "$c" hole-4t.rt
done
bounded 1 trace.check check hole-4t.rt
grep -q '\.\.4398046511104 ' trace.check.out ||
	{ echo "FAIL: check of the trace file does not report the hole" >&2; failed=1; }
bounded 3 trace.cut cut --from 0s hole-4t.rt trace.cut.rt
exit $failed
