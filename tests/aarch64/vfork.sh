#!/bin/sh
# vfork.sh RINGTRACE PROGRAM LIB DLOPEN_PROGRAM - the AArch64 vfork() wrapper of
# the library (src/record/vfork.c) under qemu-user, and the library loaded late.
#
# qemu-user runs vfork() as fork(): it drops CLONE_VM and CLONE_VFORK, so the
# child has a copy of its parent's memory and the parent does not wait for it.
# What the wrapper does still shows: vfork() returns the child's pid in the
# parent and 0 in the child, each process goes on from the right place with
# its stack intact, and the child, whose copy of the writer says it is a
# vfork child, records into its parent's arena (a shared mapping) as a
# thread of its own whose tid is its pid, flagged a vfork child.  What does
# not show: the parent ending the child's thread entry (in its own memory it
# never saw the child attach), so the entry stays live; and the parent's
# wait, so the exec case of record/forks.sh, whose image makes an arena at
# the same path while the parent still records, is not run here.  Each case
# (forks_program.c: vfork, vfork-nested, vfork-quiet) must show the parent's
# 2N events in its thread, the child's N (and its signal handler's, and its
# own vfork child's) in theirs, nothing lost, and a clean arena.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../e2e/lib.sh"
ringtrace=$1
program=$2
lib=$3
dlopen_program=$4
unset RINGTRACE_ARENA RINGTRACE_BUFFER RINGTRACE_MODE RINGTRACE_RINGS RINGTRACE_SYNC
n=1000

check "vfork exported by $(basename "$lib")" \
	sh -c "nm -D --defined-only '$lib' | awk '{ print \$3 }' | grep -qx vfork"
status=0
RINGTRACE_ARENA=$work/dl.arena "$dlopen_program" "$lib" >"$work/out" 2>"$work/err" || status=$?
check "dlopen after start-up: exit 0 ($status: $(cat "$work/err"))" [ "$status" -eq 0 ]
check "dlopen after start-up: the arena made" [ -s "$work/dl.arena" ]

# threads ARENA: per thread "TID TAG N" for each tag, "TID vfork" when flagged, "TID state
# STATE", and "lost N" (every loss), from dump --json and info --json
threads() {
	"$ringtrace" dump --json "$1" >"$work/dump.json" || true
	"$ringtrace" info --json "$1" >"$work/info.json" || true
	python3 -c '
import collections, json, sys
tags, lost = collections.Counter(), 0
for o in map(json.loads, open(sys.argv[1])):
    if o["kind"] == "lost":
        lost += o["count"]
    elif o["kind"] != "last_event":
        tags[(o["tid"], o.get("tag", o["kind"]))] += 1
for (tid, tag), count in sorted(tags.items()):
    print(tid, tag, count)
for t in json.load(open(sys.argv[2]))["threads"]:
    print(t["tid"], "state", t["state"])
    if t["vfork_child"]:
        print(t["tid"], "vfork")
print("lost", lost)' "$work/dump.json" "$work/info.json" || true
}

# count FILE WORD...: the last field of FILE's line starting with WORD..., 0 if none
count() {
	file=$1
	shift
	awk -v key="$*" 'index($0, key " ") == 1 { v = $NF } END { print v + 0 }' "$file"
}

# role OUT ROLE: the pid the program printed for ROLE
role() {
	awk -v role="$2" '$1 == role { print $2 }' "$1"
}

for how in vfork vfork-nested vfork-quiet; do
	rm -f "$work"/f*.arena
	status=0
	RINGTRACE_ARENA=$work/f.arena "$program" "$how" $n >"$work/out" 2>"$work/err" || status=$?
	check "$how: exit 0 ($status)" [ "$status" -eq 0 ]
	check "$how: nothing on stderr" [ ! -s "$work/err" ]
	parent=$(role "$work/out" parent)
	child=$(role "$work/out" made)
	said=$(role "$work/out" child)
	[ "$how" = vfork-quiet ] || check "$how: vfork() gave the parent the child's pid ($child, $said)" \
		[ "${child:-none}" = "${said:-unsaid}" ]
	check "$how: no arena of the child's own" [ ! -e "$work/f.$child.arena" ]
	threads "$work/f.arena" >"$work/t"
	check "$how: the parent's $((2 * n)) events in its thread" \
		[ "$(count "$work/t" "$parent" parent)" -eq $((2 * n)) ]
	check "$how: the parent's thread is no vfork child" [ "$(count "$work/t" "$parent" vfork)" -eq 0 ]
	check "$how: nothing lost ($(count "$work/t" lost))" [ "$(count "$work/t" lost)" -eq 0 ]
	check "$how: the arena is clean" "$ringtrace" check "$work/f.arena"
	case $how in
	vfork-quiet)
		check "$how: no thread of the child, which traced nothing" \
			sh -c "! grep -q '^$child ' '$work/t'"
		;;
	*)
		check "$how: the child's $n events in thread $child" \
			[ "$(count "$work/t" "$child" child)" -eq $n ]
		check "$how: thread $child flagged a vfork child" grep -qx "$child vfork" "$work/t"
		echo "$how: the child's thread entry is $(awk -v t="$child" '$1 == t && $2 == "state" { print $3 }' "$work/t")"
		;;
	esac
	if [ "$how" = vfork-nested ]; then
		grandchild=$(role "$work/out" grandchild)
		check "$how: the child's signal handler's event in its thread" \
			[ "$(count "$work/t" "$child" handler)" -eq 1 ]
		check "$how: the grandchild's $n events in thread $grandchild" \
			[ "$(count "$work/t" "$grandchild" grandchild)" -eq $n ]
		check "$how: thread $grandchild flagged a vfork child" grep -qx "$grandchild vfork" "$work/t"
	fi
done
finish
