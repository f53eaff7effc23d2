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
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../e2e/lib.sh"
ringtrace=$1
sparse=$2
victim=$3
unset RINGTRACE_ARENA RINGTRACE_BUFFER RINGTRACE_MODE RINGTRACE_RINGS RINGTRACE_SYNC
cd "$work"

RINGTRACE_ARENA=$work/base.rt RINGTRACE_RINGS=4 "$victim" "$work/victim.log"
"$sparse" make base.rt claims-8g.rt 8G 1G
"$sparse" make base.rt claims-64g.rt 64G 1G
"$sparse" make base.rt live-8g.rt 8G 1G live
shm=$(mktemp /dev/shm/ringtrace-sparse.XXXXXX)
trap 'rm -f "$shm"; cleanup' EXIT INT TERM
"$sparse" make base.rt "$shm" 2G 512M

failed=0
# bounded EXPECTED NAME ARGS...: ringtrace ARGS under the limits; its status must be EXPECTED
bounded() {
	expected=$1
	name=$2
	shift 2
	status=0
	timeout 120 "$sparse" run 512 256 "$ringtrace" "$@" >"$name.out" 2>"$name.err" ||
		status=$?
	if [ "$status" != "$expected" ]; then
		echo "FAIL: ringtrace $* exited $status, expected $expected" >&2
		tail -3 "$name.err" >&2
		failed=1
	fi
}

for f in claims-8g.rt claims-64g.rt live-8g.rt "$shm"; do
	n=$(basename "$f")
	before=$(stat -c '%b %Y %s' "$f")
	sum=
	[ "$f" != "$shm" ] || sum=$(sha256sum <"$f")
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
	# tail follows a live writer: the one that runs (pid 1 says so) is read in place
	status=0
	timeout 3 "$sparse" run 512 256 "$ringtrace" tail --from-start "$f" >"$n.tail.out" \
		2>"$n.tail.err" || status=$?
	case $status in
	124 | 0 | 1 | 2 | 3) ;;
	*)
		echo "FAIL: tail $f exited $status" >&2
		failed=1
		;;
	esac
	after=$(stat -c '%b %Y %s' "$f")
	if [ "$before" != "$after" ] || { [ -n "$sum" ] && [ "$sum" != "$(sha256sum <"$f")" ]; }; then
		echo "FAIL: $f changed while read: blocks, mtime, size $before -> $after" >&2
		failed=1
	fi
done
exit $failed
