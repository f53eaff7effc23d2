#!/bin/sh
# outputs.sh RINGTRACE PROCESSES PROCESSES_LINKED [LIBRARY] - how the views
# show a function trace of two processes.
#
# PROCESSES is processes.cc built with -finstrument-functions and not
# linked with ringtrace, run under `ringtrace record` (which preloads the
# library: LIBRARY, when given, through RINGTRACE_PRELOAD); PROCESSES_LINKED
# is the same linked with ringtrace, recording into arenas of its own (the
# child's ARENA.PID.arena).  Parent and child call Player::hit(int) in
# turns.  Checked:
#   replay: every line carries PID/TID, the processes' calls merged by time
#     (the hit calls alternate, parent first), from a trace file and from
#     the two arenas given in either order; a C++ name that carries its
#     parameters (--full-names) is not given "()" again;
#   dump --json: the last_event objects of enter and exit events name their
#     function (and the file and line of main);
#   summary: the library's function enter and exit sites are named so, not
#     ":0 (enter)".
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../e2e/lib.sh"
ringtrace=$1
processes=$2
linked=$3
# the library a sanitizer build gives, if any, as RINGTRACE_PRELOAD
clean_tracing_environment ${4+"$4"}
python=/usr/bin/python3
[ -x "$python" ] || python=python3
rounds=5

# replayed NAME PARENT CHILD REPLAY: the checks of replay's output
replayed() {
	name=$1
	parent=$2
	child=$3
	out=$4
	check "$name: the header names PID/TID" grep -q '^# DURATION \[ *PID/TID *\] | FUNCTION$' \
		"$out"
	check "$name: every line carries PID/TID" test -z "$(sed 1d "$out" |
		grep -v '^.\{10\} \[ *[0-9][0-9]*/[0-9][0-9]* *\] | ')"
	# the process of each Player::hit call, in the order shown
	sed -n 's/^.\{10\} \[ *\([0-9]*\)\/[0-9]* *\] | *Player::hit.*/\1/p' "$out" >"$work/order"
	i=0
	: >"$work/want"
	while [ "$i" -lt "$rounds" ]; do
		printf '%s\n%s\n' "$parent" "$child" >>"$work/want"
		i=$((i + 1))
	done
	check "$name: the processes' calls alternate, as they ran ($(tr '\n' ' ' <"$work/order"))" \
		cmp -s "$work/order" "$work/want"
	check "$name: Player::hit(int) named once with its parameters" \
		grep -q '| *Player::hit(int);' "$out"
	check "$name: no name given () twice" test -z "$(grep -F ')()' "$out")"
}

# ---- under record: one trace file ----
if "$ringtrace" record -q -o "$work/rec.rt" -- "$processes" "$rounds" >"$work/rec.out"; then
	parent=$(sed -n 's/^parent \([0-9]*\) child .*/\1/p' "$work/rec.out")
	child=$(sed -n 's/^parent [0-9]* child //p' "$work/rec.out")
	"$ringtrace" replay --full-names "$work/rec.rt" >"$work/rec.replay" || fail "record: replay failed"
	replayed "record" "$parent" "$child" "$work/rec.replay"

	# dump --json: each thread's last event is an exit, named
	"$ringtrace" dump --json --last-events "$work/rec.rt" >"$work/last.json" ||
		fail "dump --json --last-events failed"
	check "dump --json: last events of enter and exit name their function" \
		"$python" - "$work/last.json" "$parent" <<'EOF'
import json, sys
objs = [json.loads(l) for l in open(sys.argv[1])]
last = [o for o in objs if o["kind"] == "last_event"]
ok = len(last) == 2
for o in last:
    kind = o.get("event", o.get("tag"))
    if kind != "exit" or not o.get("func") or o.get("addr") is None:
        ok = False
    if o.get("pid") == int(sys.argv[2]):
        ok = ok and o["func"] == "main" and (o.get("file") or "").endswith("processes.cc") \
            and isinstance(o.get("line"), int) and o["line"] > 0
    else:
        ok = ok and o["func"] == "give_turn(int)"
if not ok:
    print("last_event objects:", last, file=sys.stderr)
sys.exit(0 if ok else 1)
EOF

	# summary: the function sites by name
	"$ringtrace" summary "$work/rec.rt" >"$work/summary" || fail "summary failed"
	check "summary: no site named ':0'" test -z "$(grep '^ *[0-9][0-9]*  :0 ' "$work/summary")"
	check "summary: function enter sites" grep -q '^ *[0-9][0-9]*  function enter$' \
		"$work/summary"
	check "summary: function exit sites" grep -q '^ *[0-9][0-9]*  function exit$' \
		"$work/summary"
	"$ringtrace" summary --json "$work/rec.rt" >"$work/summary.json" ||
		fail "summary --json failed"
	check "summary --json: the function sites say so" "$python" - "$work/summary.json" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))
kinds = sorted(x.get("function", "") for x in s["sites"])
ok = kinds == ["enter", "enter", "exit", "exit"]
if not ok:
    print("sites:", s["sites"], file=sys.stderr)
sys.exit(0 if ok else 1)
EOF
else
	fail "record failed"
fi

# ---- linked: the parent's arena and the child's ----
if RINGTRACE_ARENA="$work/p.arena" "$linked" "$rounds" >"$work/linked.out"; then
	parent=$(sed -n 's/^parent \([0-9]*\) child .*/\1/p' "$work/linked.out")
	child=$(sed -n 's/^parent [0-9]* child //p' "$work/linked.out")
	parent_arena="$work/p.arena"
	child_arena="$work/p.$child.arena"
	"$ringtrace" replay --full-names "$parent_arena" "$child_arena" >"$work/a.replay" ||
		fail "arenas: replay failed"
	replayed "arenas" "$parent" "$child" "$work/a.replay"
	"$ringtrace" replay --full-names "$child_arena" "$parent_arena" >"$work/b.replay" ||
		fail "arenas, the child's first: replay failed"
	replayed "arenas, the child's first" "$parent" "$child" "$work/b.replay"
else
	fail "the linked program failed"
fi

finish
