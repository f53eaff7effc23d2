#!/bin/sh
# full_fs.sh STRESS TOOL - rings that run out of pages: a small tmpfs holds
# the arena of threads whose rings (16 MiB) are far larger than the room
# left, in flight and in stream mode.  Each thread's first events must be
# kept, every other one counted lost, and no thread may die of a SIGBUS
# (stress.c, --room).  Mounting needs the right to; without it: skipped (77).
set -eu
stress=$1
tool=$2
dir=$(mktemp -d /tmp/ringtrace-full-fs.XXXXXX)
if ! mount -t tmpfs -o size=64m,mode=0700 ringtrace-full-fs "$dir" 2>/dev/null; then
	rmdir "$dir"
	echo "cannot mount a tmpfs here: skipped"
	exit 77
fi
trap 'umount "$dir"; rmdir "$dir"' EXIT
status=0
for mode in flight stream; do
	echo "== $mode mode, 1 MiB of room for 4 rings of 16 MiB"
	"$stress" --tool "$tool" --mode "$mode" --threads 4 --events 400000 \
		--buffer 16777216 --dir "$dir" --room 1048576 || status=1
done
exit $status
