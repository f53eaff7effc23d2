#!/bin/sh
# forks.sh RINGTRACE PROGRAM PRELOADED LIB DLOPEN_PROGRAM - children made without
# fork()'s handlers never write into their parent's ring: each process's
# events are all shown, in its own arena or trace-file process, or counted
# lost; shown + lost = emitted, exactly, for each process.
#
# PROGRAM (forks_program.c): the parent traces N "parent" events, makes a
# child (_Fork, clone() or a clone, clone3 or fork system call through
# syscall(), all without CLONE_VM; vfork), waits for it, traces N more; the
# child traces N "child" events.  A child of _Fork or clone traces into an
# arena of its own; a vfork child runs on its parent's memory and thread
# state, and records into its parent's arena (and process, in the trace
# file `record` writes) as a thread of its own whose tid is the child's
# pid, flagged a vfork child: the parent's 2N events in the parent's
# thread, the child's N in the child's, none lost.  More vfork cases, linked
# only: a child that makes a vfork child of its own and traces from a
# signal handler (each child in its own thread), and a child that traces
# nothing (no thread of it at all).
#
# PRELOADED: the same, not linked with the library but built with
# -finstrument-functions, its events function calls, traced by `record`
# preloading LIB: each process's own, within the few calls around them.  A
# vfork child makes the calls a _Fork child makes (the same code runs in
# both): the _Fork run, which loses nothing, says how many, and the vfork
# runs must show exactly those in the child's thread, in the arena and in
# the trace file.
#
# LIB (libringtrace.so, which `record` preloads) stands in front of the C
# library's functions that make such children, and still loads with dlopen
# into a program not linked with it (DLOPEN_PROGRAM, dlopen_program.c).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../e2e/lib.sh"
ringtrace=$1
program=$2
preloaded=$3
lib=$4
dlopen_program=$5
unset RINGTRACE_ARENA RINGTRACE_BUFFER RINGTRACE_MODE RINGTRACE_RINGS RINGTRACE_SYNC
n=1000

# flat INPUT...: `summary --json` of the inputs as lines a shell can read:
#   site PID TAG EVENTS, events PID N (all of PID's threads' events), lost PID N
#   (the losses of PID's threads), lost all N, events all N, process PID;
#   nothing when the summary fails (every count is then 0)
flat() {
	"$ringtrace" summary --json "$@" | python3 -c '
import json, sys
s = json.load(sys.stdin)
one = s["processes"][0]["pid"] if len(s["processes"]) == 1 else 0
sites = {}
for e in s["sites"]:
    key = (e.get("pid", one), e["tag"])
    sites[key] = sites.get(key, 0) + e["events"]
for (pid, tag), events in sorted(sites.items()):
    print("site", pid, tag, events)
lost = {}
for t in s["threads"]:
    lost[t.get("pid", one)] = lost.get(t.get("pid", one), 0) + sum(
        t[k] for k in ("dropped", "overwritten", "torn", "damaged"))
events = {}
for t in s["threads"]:
    events[t.get("pid", one)] = events.get(t.get("pid", one), 0) + t["events"]
for pid, n in sorted(lost.items()):
    print("lost", pid, n)
for pid, n in sorted(events.items()):
    print("events", pid, n)
print("lost all", sum(s["lost"].values()))
print("events all", s["events"])
for p in s["processes"]:
    print("process", p["pid"])
' || true
}

# get FILE WORD...: the last field of the line of FILE starting with WORD..., 0 if none
get() {
	file=$1
	shift
	awk -v key="$*" 'index($0, key " ") == 1 { v = $NF } END { print v + 0 }' "$file"
}

# between N LOW HIGH: LOW <= N < HIGH
between() {
	[ "$1" -ge "$2" ] && [ "$1" -lt "$3" ]
}

# threads INPUT...: dump --json's events (every kind but losses and last events)
# by thread, as lines a shell can read: tag TID TAG N (enter and exit count
# as tags), events TID N, vfork TID (a thread flagged a vfork child), lost N
# (every loss); tids are unique across the processes of one run, but for an
# image a vfork child exec'd, whose thread has the child's pid too
threads() {
	"$ringtrace" dump --json "$@" | python3 -c '
import collections, json, sys
tags, events, vfork, lost = collections.Counter(), collections.Counter(), set(), 0
for o in map(json.loads, sys.stdin):
    if o["kind"] == "lost":
        lost += o["count"]
        continue
    if o["kind"] == "last_event":
        continue
    tags[(o["tid"], o.get("tag", o["kind"]))] += 1
    events[o["tid"]] += 1
    if o.get("vfork_child"):
        vfork.add(o["tid"])
for (tid, tag), n in sorted(tags.items()):
    print("tag", tid, tag, n)
for tid, n in sorted(events.items()):
    print("events", tid, n)
for tid in sorted(vfork):
    print("vfork", tid)
print("lost", lost)' || true
}

# flagged FILE TID: the threads of FILE say TID is a vfork child's; unflagged: they do not
flagged() {
	grep -qx "vfork $2" "$1"
}
unflagged() {
	! flagged "$@"
}

# info_flags INPUT...: info --json's threads: "TID true|false" (vfork_child)
info_flags() {
	"$ringtrace" info --json "$@" | python3 -c '
import json, sys
o = json.load(sys.stdin)
lists = [o["threads"]] if "threads" in o else [p["thread_list"] for p in o["processes"]]
for l in lists:
    for t in l:
        print(t["tid"], "true" if t["vfork_child"] else "false")' || true
}

# checked INPUT: the events `ringtrace check` says were lost while recording
checked() {
	"$ringtrace" check "$1" | awk '/^lost while recording, not damage:/ { n = $6 }
		END { print n + 0 }' || true
}

# roles OUT: $parent, $child (made by the parent) and $grandchild from the
# program's "ROLE PID" lines
roles() {
	parent=$(awk '$1 == "parent" { print $2 }' "$1")
	child=$(awk '$1 == "made" { print $2 }' "$1")
	grandchild=$(awk '$1 == "grandchild" { print $2 }' "$1")
	said=$(awk '$1 == "child" { print $2 }' "$1")
	[ -z "$said" ] || check "the child says the pid its parent made ($said, $child)" \
		[ "$said" = "$child" ]
}

# ---- the library: its wrappers exported, loadable late ----
nm -D --defined-only "$lib" | awk '{ print $3 }' >"$work/exported"
wrapped="_Fork clone syscall"
arch=$(uname -m)
case $arch in x86_64 | aarch64) wrapped="$wrapped vfork" ;; esac
for f in $wrapped; do
	check "$f exported by $(basename "$lib")" grep -qx "$f" "$work/exported"
done
status=0
RINGTRACE_ARENA=$work/dl.arena "$dlopen_program" "$lib" >"$work/out" 2>"$work/err" || status=$?
check "dlopen after start-up: exit 0 ($status: $(cat "$work/err"))" [ "$status" -eq 0 ]
check "dlopen after start-up: ok" grep -qx ok "$work/out"
check "dlopen after start-up: the arena made" [ -s "$work/dl.arena" ]

# vfork_linked LABEL THREADS: in threads' lines (threads()) of the linked
# program's run, each process's events in its own thread, a vfork child's
# flagged, nothing lost
vfork_linked() {
	label=$1
	f=$2
	check "$label: the parent's $((2 * n)) events in its own thread" \
		[ "$(get "$f" tag "$parent" parent)" -eq $((2 * n)) ]
	check "$label: and no other event there" [ "$(get "$f" events "$parent")" -eq $((2 * n)) ]
	check "$label: the parent's thread is no vfork child" unflagged "$f" "$parent"
	check "$label: no loss ($(get "$f" lost))" [ "$(get "$f" lost)" -eq 0 ]
	case $how in
	vfork-quiet)
		check "$label: no thread of the child $child, which traced nothing" \
			[ "$(get "$f" events "$child")" -eq 0 ]
		;;
	vfork-nested)
		check "$label: the child's $n events in thread $child" \
			[ "$(get "$f" tag "$child" child)" -eq $n ]
		check "$label: its signal handler's event there too" \
			[ "$(get "$f" tag "$child" handler)" -eq 1 ]
		check "$label: and no other event there" [ "$(get "$f" events "$child")" -eq $((n + 1)) ]
		check "$label: thread $child flagged a vfork child" flagged "$f" "$child"
		check "$label: the grandchild's $n events in thread $grandchild" \
			[ "$(get "$f" tag "$grandchild" grandchild)" -eq $n ]
		check "$label: and no other event there" [ "$(get "$f" events "$grandchild")" -eq $n ]
		check "$label: thread $grandchild flagged a vfork child" flagged "$f" "$grandchild"
		;;
	*)
		check "$label: the child's $n events in thread $child" \
			[ "$(get "$f" tag "$child" child)" -eq $n ]
		check "$label: and no other event there" [ "$(get "$f" events "$child")" -eq $n ]
		check "$label: thread $child flagged a vfork child" flagged "$f" "$child"
		;;
	esac
}

hows="_Fork clone clone-fn clone3 vfork vfork-exec vfork-quiet"
# AddressSanitizer's own vfork, in front of the library's, keeps one return
# address per thread: a nested vfork overwrites its parent's
nm "$program" | grep -q __asan_init || hows="$hows vfork-nested"
[ "$arch" = x86_64 ] && hows="$hows SYS_fork"
for how in $hows; do
	# ---- into arenas ----
	rm -f "$work"/f*.arena
	status=0
	RINGTRACE_ARENA=$work/f.arena "$program" "$how" $n "$program" >"$work/out" \
		2>"$work/err" || status=$?
	check "$how: exit 0 ($status)" [ "$status" -eq 0 ]
	check "$how: nothing on stderr" [ ! -s "$work/err" ]
	roles "$work/out"
	flat "$work/f.arena" >"$work/p.flat"
	shown=$(get "$work/p.flat" site "$parent" parent)
	mixed=$(get "$work/p.flat" site "$parent" child)
	lost=$(get "$work/p.flat" lost all)
	check "$how: the parent's $((2 * n)) events all shown ($shown)" [ "$shown" -eq $((2 * n)) ]
	case $how in
	vfork*)
		check "$how: no arena of the child" [ ! -e "$work/f.$child.arena" ]
		threads "$work/f.arena" >"$work/p.threads"
		vfork_linked "$how" "$work/p.threads"
		check "$how: the arena counts no loss ($lost)" [ "$lost" -eq 0 ]
		if [ "$how" != vfork-quiet ]; then
			info_flags "$work/f.arena" >"$work/flags"
			check "$how: info --json: $child a vfork child" grep -qx "$child true" "$work/flags"
			check "$how: info --json: $parent not" grep -qx "$parent false" "$work/flags"
			check "$how: info's table says so" \
				sh -c "'$ringtrace' info '$work/f.arena' | grep -q '^ *$child .* vfork child\$'"
		fi
		;;
	*)
		check "$how: no child event in the parent's ring ($mixed)" [ "$mixed" -eq 0 ]
		check "$how: the parent's arena counts no loss ($lost)" [ "$lost" -eq 0 ]
		check "$how: the child's arena f.$child.arena" [ -f "$work/f.$child.arena" ]
		flat "$work/f.$child.arena" >"$work/c.flat"
		shown=$(get "$work/c.flat" site "$child" child)
		lost=$(get "$work/c.flat" lost all)
		check "$how: the child's events shown + lost = $n ($shown + $lost)" \
			[ $((shown + lost)) -eq $n ]
		check "$how: the child's arena shows them all ($shown)" [ "$shown" -eq $n ]
		check "$how: no parent event in the child's arena" \
			[ "$(get "$work/c.flat" site "$child" parent)" -eq 0 ]
		check "$how: the child's arena names its pid" \
			sh -c "'$ringtrace' info --json '$work/f.$child.arena' | grep -q '\"pid\":$child[,}]'"
		;;
	esac

	# ---- through record: one trace file, each process apart ----
	status=0
	"$ringtrace" record -q -o "$work/t.rt" -- "$program" "$how" $n "$program" \
		>"$work/rout" 2>"$work/rerr" || status=$?
	check "$how record: exit 0 ($status)" [ "$status" -eq 0 ]
	check "$how record: nothing on stderr" [ ! -s "$work/rerr" ]
	roles "$work/rout"
	flat "$work/t.rt"* >"$work/t.flat"
	shown=$(get "$work/t.flat" site "$parent" parent)
	lost=$(get "$work/t.flat" lost "$parent")
	check "$how record: the parent's events shown + lost = $((2 * n)) ($shown + $lost)" \
		[ $((shown + lost)) -eq $((2 * n)) ]
	case $how in
	vfork*)
		check "$how record: no process $child" sh -c "! grep -q '^process $child\$' '$work/t.flat'"
		threads "$work/t.rt"* >"$work/t.threads"
		vfork_linked "$how record" "$work/t.threads"
		lost=$(get "$work/t.flat" lost all)
		shown=$(get "$work/t.flat" events all)
		emitted=$((3 * n))
		[ "$how" = vfork-nested ] && emitted=$((4 * n + 1))
		[ "$how" = vfork-quiet ] && emitted=$((2 * n))
		check "$how record: shown + counted lost = $emitted emitted ($shown + $lost)" \
			[ $((shown + lost)) -eq $emitted ]
		check "$how record: summary counts no loss ($lost)" [ "$lost" -eq 0 ]
		lost=$(checked "$work/t.rt")
		check "$how record: check says none lost ($lost)" [ "$lost" -eq 0 ]
		if [ "$how" != vfork-quiet ]; then
			info_flags "$work/t.rt"* >"$work/flags"
			check "$how record: info --json: $child a vfork child" \
				grep -qx "$child true" "$work/flags"
			check "$how record: info --json: $parent not" grep -qx "$parent false" "$work/flags"
		fi
		;;
	*)
		check "$how record: no child event as the parent's" \
			[ "$(get "$work/t.flat" site "$parent" child)" -eq 0 ]
		check "$how record: process $child in the file" grep -q "^process $child\$" "$work/t.flat"
		shown=$(get "$work/t.flat" site "$child" child)
		lost=$(get "$work/t.flat" lost "$child")
		check "$how record: the child's events shown + lost = $n ($shown + $lost)" \
			[ $((shown + lost)) -eq $n ]
		check "$how record: no parent event as the child's" \
			[ "$(get "$work/t.flat" site "$child" parent)" -eq 0 ]
		;;
	esac
	rm -f "$work"/t.rt*

	# the preloaded program makes function events: no nested case there
	[ "$how" = vfork-nested ] && continue

	# ---- a program not linked with the library: preloaded, into arenas ----
	rm -f "$work"/p*.arena
	status=0
	LD_PRELOAD=$lib RINGTRACE_ARENA=$work/p.arena "$preloaded" "$how" $n "$preloaded" \
		>"$work/out" 2>"$work/err" || status=$?
	check "$how preloaded: exit 0 ($status)" [ "$status" -eq 0 ]
	check "$how preloaded: nothing on stderr" [ ! -s "$work/err" ]
	roles "$work/out"
	flat "$work/p.arena" >"$work/p.flat"
	calls=$(get "$work/p.flat" site "$parent" enter)
	lost=$(get "$work/p.flat" lost all)
	check "$how preloaded: no loss ($lost)" [ "$lost" -eq 0 ]
	case $how in
	vfork-quiet)
		threads "$work/p.arena" >"$work/p.threads"
		check "$how preloaded: no thread of the child $child, which traced nothing" \
			[ "$(get "$work/p.threads" events "$child")" -eq 0 ]
		;;
	vfork*)
		# the calls of _Fork's run: what each process emits
		threads "$work/p.arena" >"$work/p.threads"
		shown=$(get "$work/p.threads" events "$parent")
		check "$how preloaded: the parent's events all in its thread ($shown of $fork_parent)" \
			[ "$shown" -eq "$fork_parent" ]
		shown=$(get "$work/p.threads" events "$child")
		check "$how preloaded: the child's events all in thread $child ($shown of $fork_child)" \
			[ "$shown" -eq "$fork_child" ]
		check "$how preloaded: thread $child flagged a vfork child" flagged "$work/p.threads" "$child"
		check "$how preloaded: thread $parent not" unflagged "$work/p.threads" "$parent"
		;;
	*)
		check "$how preloaded: the parent's $((2 * n)) calls, and a few others ($calls)" \
			between "$calls" $((2 * n)) $((2 * n + 10))
		flat "$work/p.$child.arena" >"$work/c.flat"
		calls=$(get "$work/c.flat" site "$child" enter)
		check "$how preloaded: the child's $n calls in its own arena, and a few others ($calls)" \
			between "$calls" $n $((n + 10))
		lost=$(get "$work/c.flat" lost all)
		check "$how preloaded: the child's arena counts no loss ($lost)" [ "$lost" -eq 0 ]
		if [ "$how" = _Fork ]; then
			fork_parent=$(get "$work/p.flat" events "$parent")
			fork_child=$(get "$work/c.flat" events "$child")
			check "_Fork preloaded: the child's events ($fork_child)" \
				[ "$fork_child" -ge $((2 * n)) ]
		fi
		;;
	esac

	# ---- the same through record, which preloads the library ----
	status=0
	RINGTRACE_PRELOAD=$lib "$ringtrace" record -q -o "$work/t.rt" -- \
		"$preloaded" "$how" $n "$preloaded" >"$work/rout" 2>"$work/rerr" || status=$?
	check "$how preloaded record: exit 0 ($status)" [ "$status" -eq 0 ]
	check "$how preloaded record: nothing on stderr" [ ! -s "$work/rerr" ]
	roles "$work/rout"
	flat "$work/t.rt"* >"$work/t.flat"
	lost=$(get "$work/t.flat" lost all)
	check "$how preloaded record: no loss ($lost)" [ "$lost" -eq 0 ]
	calls=$(get "$work/t.flat" site "$child" enter)
	case $how in
	vfork-quiet)
		threads "$work/t.rt"* >"$work/t.threads"
		check "$how preloaded record: no thread of the child $child, which traced nothing" \
			[ "$(get "$work/t.threads" events "$child")" -eq 0 ]
		;;
	vfork*)
		# the exec'd image ("none") makes a call or two of its own, as process $child
		check "$how preloaded record: none of the child's calls as process $child ($calls)" \
			[ "$calls" -lt 10 ]
		threads "$work/t.rt"* >"$work/t.threads"
		shown=$(get "$work/t.threads" events "$parent")
		check "$how preloaded record: the parent's events all in its thread ($shown of $fork_record_parent)" \
			[ "$shown" -eq "$fork_record_parent" ]
		shown=$(get "$work/t.threads" events "$child")
		[ "$how" = vfork-exec ] && shown=$((shown - $(get "$work/t.flat" events "$child")))
		check "$how preloaded record: the child's events all in thread $child ($shown of $fork_record_child)" \
			[ "$shown" -eq "$fork_record_child" ]
		check "$how preloaded record: thread $child flagged a vfork child" \
			flagged "$work/t.threads" "$child"
		check "$how preloaded record: thread $parent not" unflagged "$work/t.threads" "$parent"
		lost=$(checked "$work/t.rt")
		check "$how preloaded record: check says none lost ($lost)" [ "$lost" -eq 0 ]
		;;
	*)
		calls=$(get "$work/t.flat" site "$parent" enter)
		check "$how preloaded record: the parent's $((2 * n)) calls, and a few others ($calls)" \
			between "$calls" $((2 * n)) $((2 * n + 10))
		calls=$(get "$work/t.flat" site "$child" enter)
		check "$how preloaded record: the child's $n calls, and a few others ($calls)" \
			between "$calls" $n $((n + 10))
		if [ "$how" = _Fork ]; then
			# at least the child's n calls, entered and left
			fork_record_parent=$(get "$work/t.flat" events "$parent")
			fork_record_child=$(get "$work/t.flat" events "$child")
			check "_Fork preloaded record: the child's events ($fork_record_child)" \
				[ "$fork_record_child" -ge $((2 * n)) ]
		fi
		;;
	esac
	rm -f "$work"/t.rt*
done
finish
