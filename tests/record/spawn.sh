#!/bin/sh
# spawn.sh RINGTRACE SPAWN SPAWN_UNLINKED TRACE_COUNT [LIBRARY] - a child
# started with an environment of its own is traced as its parent was.
#
# SPAWN (spawn_program.c, linked with ringtrace) starts "SPAWN child N" with
# the environment {SPAWN_ENV=given, PATH=...} by execve, execle, execvpe,
# fexecve, execveat, vfork + execve, posix_spawn or posix_spawnp.  That
# environment holds no RINGTRACE_* variable and no LD_PRELOAD: the library
# adds the parent's, so the child records into the parent's arena path with
# its pid, and under `ringtrace record` into the same trace file.
# SPAWN_UNLINKED is the same program not linked with ringtrace, compiled
# with -finstrument-functions: only `record`'s LD_PRELOAD traces it, and its
# child too once the library has added its preload entry.  A caller's own
# setting of a variable wins, and RINGTRACE_INHERIT=0 in the child's
# environment keeps the parent's out.  LIBRARY (a sanitizer build) is given
# as RINGTRACE_PRELOAD; such a build has no I/O interposer to preload, and
# `record --io` is left out.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../e2e/lib.sh"
ringtrace=$1
spawn=$2
unlinked=$3
count=$4
io_modes="plain --io"
if [ $# -ge 5 ]; then
	export RINGTRACE_PRELOAD="$5"
	io_modes=plain
else
	unset RINGTRACE_PRELOAD
fi
unset RINGTRACE_ARENA RINGTRACE_BUFFER RINGTRACE_MODE RINGTRACE_RINGS RINGTRACE_SYNC \
	RINGTRACE_INHERIT RINGTRACE_FUNCTIONS LD_PRELOAD

# field OUT N: field N of the "child" line SPAWN printed
child_field() {
	awk -v n="$2" '$1 == "child" { print $n }' "$1"
}

# ---- linked, no record: the child's arena is the parent's path with its pid, kept ----
for how in execve execle execvpe fexecve execveat vfork posix_spawn posix_spawnp; do
	status=0
	RINGTRACE_ARENA=$work/$how.arena "$spawn" "$how" 30 "$spawn" >"$work/$how.out" \
		2>"$work/$how.err" || status=$?
	check "$how: exit 0" [ "$status" -eq 0 ]
	check "$how: nothing on stderr" [ ! -s "$work/$how.err" ]
	pid=$(child_field "$work/$how.out" 2)
	check "$how: its own environment reached the child" \
		[ "$(child_field "$work/$how.out" 3)" = given ]
	check "$how: and the parent's RINGTRACE_ARENA" \
		[ "$(child_field "$work/$how.out" 4)" = "$work/$how.arena" ]
	arena=$work/$how.${pid:-0}.arena
	check "$how: the child's arena $arena is kept" [ -f "$arena" ]
	[ -f "$arena" ] || continue
	events=$("$ringtrace" dump --json "$arena" 2>/dev/null | grep '"kind":"trace"' |
		grep -c "\"tid\":$pid,.*\"tag\":\"child\"" || true)
	check "$how: the child's 30 events ($events)" [ "$events" -eq 30 ]
	events=$("$ringtrace" dump --json "$work/$how.arena" 2>/dev/null | grep '"kind":"trace"' |
		grep -c '"tag":"parent"' || true)
	check "$how: the parent's 30 events in its own arena ($events)" [ "$events" -eq 30 ]
done

# ---- what the caller sets is its own ----
RINGTRACE_ARENA=$work/p.arena "$spawn" posix_spawn 10 "$spawn" \
	"RINGTRACE_ARENA=$work/own.arena" >"$work/own.out"
check "own path: the child's setting wins" \
	[ "$(child_field "$work/own.out" 4)" = "$work/own.arena" ]
check "own path: the child's arena there" [ -f "$work/own.arena" ]
pid=$(child_field "$work/own.out" 2)
check "own path: none at the parent's path with its pid" [ ! -e "$work/p.$pid.arena" ]
RINGTRACE_ARENA=$work/q.arena "$spawn" posix_spawn 10 "$spawn" RINGTRACE_INHERIT=0 \
	>"$work/off.out"
check "RINGTRACE_INHERIT=0: no RINGTRACE_ARENA for the child" \
	[ "$(child_field "$work/off.out" 4)" = - ]
pid=$(child_field "$work/off.out" 2)
check "RINGTRACE_INHERIT=0: no child arena at the parent's path" [ ! -e "$work/q.$pid.arena" ]
RINGTRACE_INHERIT=0 RINGTRACE_ARENA=$work/r.arena "$spawn" execve 10 "$spawn" >"$work/off2.out"
check "RINGTRACE_INHERIT=0 in the parent: nothing added" \
	[ "$(child_field "$work/off2.out" 4)" = - ]

# ---- under record, linked: the child is a source of the same file ----
for how in execve execle posix_spawn vfork; do
	status=0
	"$ringtrace" record -q -o "$work/$how.rt" -- "$spawn" "$how" 40 "$spawn" \
		>"$work/$how.rec.out" 2>"$work/$how.rec.err" || status=$?
	check "record $how: exit 0" [ "$status" -eq 0 ]
	check "record $how: counted" sh -c "'$count' '$work/$how.rt' >'$work/counts'"
	pid=$(child_field "$work/$how.rec.out" 2)
	src=$(awk -v p="$pid" '$1 == "source" && $4 == p { print $2 }' "$work/counts")
	check "record $how: the child ($pid) is a source" [ -n "$src" ]
	[ -n "$src" ] || continue
	got=$(value "$work/counts" events "$src" child)
	lost=$(value "$work/counts" lost "$src" dropped)
	check "record $how: child's events $got + lost $lost = 40" [ $((got + lost)) -eq 40 ]
	check "record $how: parent's 40 events" \
		[ "$(value "$work/counts" events 0 parent)" -eq 40 ]
done

# ---- under record, not linked: the preloaded library traces the child too ----
# calls_of FILE PID FUNCTION: enter events of FUNCTION on thread PID
calls_of() {
	"$ringtrace" dump --json "$1" 2>/dev/null | grep '"kind":"enter"' |
		grep "\"tid\":$2," | grep -c "\"func\":\"$3\"" || true
}
for io in $io_modes; do
	[ "$io" = plain ] && io=
	for how in posix_spawn execve; do
		name=$how${io:+-io}
		status=0
		# shellcheck disable=SC2086 # $io is one word or none
		"$ringtrace" record -q $io -o "$work/$name.u.rt" -- "$unlinked" "$how" 25 \
			"$unlinked" >"$work/$name.u.out" 2>"$work/$name.u.err" || status=$?
		check "preloaded $name: exit 0" [ "$status" -eq 0 ]
		pid=$(child_field "$work/$name.u.out" 2)
		calls=$(calls_of "$work/$name.u.rt" "$pid" child_step)
		check "preloaded $name: the child's 25 calls ($calls)" [ "$calls" -eq 25 ]
		ppid=$("$ringtrace" dump --json "$work/$name.u.rt" 2>/dev/null |
			awk -F'"tid":' '/"func":"parent_step"/ { split($2, a, ","); print a[1]; exit }')
		calls=$(calls_of "$work/$name.u.rt" "${ppid:-0}" parent_step)
		check "preloaded $name: the parent's 25 calls ($calls)" [ "$calls" -eq 25 ]
		check "preloaded $name: counted" \
			sh -c "'$count' '$work/$name.u.rt' >'$work/counts'"
		check "preloaded $name: nothing lost" \
			[ "$(awk '$1 == "lost" { n += $NF } END { print n + 0 }' "$work/counts")" -eq 0 ]
	done
done
# a child given an LD_PRELOAD of its own keeps it, the recording library after it
# (libm: not libc, whose empty __cyg_profile_func_* hooks would come first)
"$ringtrace" record -q -o "$work/own-preload.rt" -- "$unlinked" posix_spawn 5 "$unlinked" \
	LD_PRELOAD=libm.so.6 >"$work/own-preload.out"
preload=$(child_field "$work/own-preload.out" 5)
check "own LD_PRELOAD: kept first ($preload)" \
	sh -c 'case "$1" in libm.so.6:*) ;; *) exit 1 ;; esac' - "$preload"
check "own LD_PRELOAD: the recording library after it ($preload)" \
	sh -c 'case "$1" in *:*/libringtrace*) ;; *) exit 1 ;; esac' - "$preload"
pid=$(child_field "$work/own-preload.out" 2)
calls=$(calls_of "$work/own-preload.rt" "$pid" child_step)
check "own LD_PRELOAD: the child's 5 calls ($calls)" [ "$calls" -eq 5 ]
finish
