#!/bin/sh
# tail.sh RINGTRACE TARGET - `ringtrace tail` following a running program.
#
# TARGET (tail_target.c) records in phases, each when told on a FIFO.  It
# records "pre" events and logs and starts the thread "worker" before any
# tail attaches; then three tails attach (text and --json by PID,
# --from-start by the arena's path), and the program records "post" events
# and logs, the worker's, a new thread's ("late") and markers.  Checked: the
# tails print the events recorded after they attached, each once, with their
# thread names, as `ringtrace dump` prints them; the events from before only
# with --from-start; they end by themselves, status 0, when the program
# exits.  A tiny flight-mode ring flooded faster than tail polls: every event
# is printed or counted in a loss line.  Beside `ringtrace record` (stream
# mode) tail prints what the collector records, which still gets all of it.
# Threads that take each other's ring over: each event printed as its own.
# SIGINT and SIGTERM end a tail with status 0; a bad target is one error line
# and status 2.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../e2e/lib.sh"
ringtrace=$1
target=$2
require_tools python3 mkfifo
unset RINGTRACE_ARENA RINGTRACE_MODE RINGTRACE_BUFFER LD_PRELOAD
# default arenas, in an arena directory of the test's own: `tail PID` finds them there
export RINGTRACE_DIR="$work/arenas"
cd "$work"

# wait_line FILE LINE: until FILE holds LINE (20 s at most: a loaded machine, sanitizers)
wait_line() {
	i=0
	while ! grep -q -x -e "$2" "$1" 2>/dev/null; do
		i=$((i + 1))
		if [ "$i" -gt 2000 ]; then
			fail "'$2' never came in $1 (its end: $(tail -n 3 "$1" | tr '\n' '|')" \
				"stderr: $(head -c 300 "${1%.out}.err" 2>/dev/null))"
			return 1
		fi
		sleep 0.01
	done
}

# start NAME [ENV...]: the target with its commands from NAME.in, output in NAME.out;
# its pid in $pid, the FIFO open on descriptor 3
start() {
	name=$1
	shift
	mkfifo "$name.in"
	env "$@" "$target" <"$name.in" >"$name.out" 2>"$name.err" &
	pid=$!
	exec 3>"$name.in"
	wait_line "$name.out" "arena .*"
}

# say NAME COMMAND: tell the target, and wait until it did it
say() {
	echo "$2" >&3
	wait_line "$1.out" "done $2"
}

# A marker event as each output shows it: text (hex argument) and JSON.
marker_text() {
	printf ' : %08x  .*(marker)$' "$1"
}
marker_json() {
	printf '"tag":"marker",.*"args":\\[%d\\]' "$1"
}

# sync_markers NAME K TRIES WAIT FILE...: markers K, K+1... (at most TRIES of them)
# until the last one is in every FILE (each tail has attached), each given WAIT
# tenths of a second to come; the next free marker number in $marker
sync_markers() {
	name=$1
	marker=$2
	tries=$3
	wait_tenths=$4
	shift 4
	while :; do
		say "$name" "marker $marker"
		found=1
		for f in "$@"; do
			case $f in
			*.json) pattern=$(marker_json "$marker") ;;
			*) pattern=$(marker_text "$marker") ;;
			esac
			i=0
			while ! grep -q -e "$pattern" "$f" && [ "$i" -lt "$wait_tenths" ]; do
				i=$((i + 1))
				sleep 0.1
			done
			grep -q -e "$pattern" "$f" || found=0
		done
		marker=$((marker + 1))
		tries=$((tries - 1))
		[ "$found" = 1 ] && return 0
		if [ "$tries" -le 0 ]; then
			fail "marker $((marker - 1)) did not reach every tail of $name in time"
			return 1
		fi
	done
}

# attached NAME FILE...: markers until every tail printed one (each has attached)
attached() {
	name=$1
	shift
	sync_markers "$name" "${marker:-1}" 100 3 "$@"
}

# seen NAME FILE...: one marker, in every attached tail within 5 s (latency, loosely)
seen() {
	name=$1
	shift
	sync_markers "$name" "$marker" 1 50 "$@"
}

# ---- a program followed from its middle to its end ---------------------------
start p
arena=$(awk '$1 == "arena" { print $2; exit }' p.out)
say p pre
"$ringtrace" tail "$pid" >t.text 2>t.err &
tail_text=$!
"$ringtrace" tail --json "$pid" >t.json 2>tj.err &
tail_json=$!
"$ringtrace" tail --from-start "$arena" >t.from 2>tf.err &
tail_from=$!
attached p t.text t.json t.from
first_marker=$marker
say p post
say p late
seen p t.text t.json t.from
# dump while the program runs: what tail printed must look the same
"$ringtrace" dump "$arena" >dump.text 2>dump.err || true
"$ringtrace" dump --json "$arena" >dump.json 2>>dump.err || true
echo quit >&3
exec 3>&-
wait "$pid"
for t in text json from; do
	eval "tpid=\$tail_$t"
	status=0
	wait "$tpid" || status=$?
	check "tail ($t) ends by itself with status 0 when the program exits ($status)" \
		test "$status" -eq 0
done
for e in t.err tj.err tf.err; do
	check "nothing on stderr ($e: $(head -c 200 $e))" test ! -s "$e"
done

# count FILE PATTERN: lines matching
count() {
	grep -c -e "$2" "$1" || true
}
for f in t.text t.from; do
	for i in 0 1 2 3 4; do
		check "$f: post $i once" test "$(count $f "$(printf ' : %08x  .*(post)$' $i)")" -eq 1
		check "$f: post log $i once" test "$(count $f " : (.*) : INFO post log $i (")" -eq 1
	done
	for i in 0 1 2; do
		check "$f: worker post $i once, named" \
			test "$(count $f "tid [0-9]* worker\] : $(printf %08x $i)  .*(worker post)$")" -eq 1
		check "$f: late $i once, named" \
			test "$(count $f "tid [0-9]* late\] : $(printf %08x $i)  .*(late)$")" -eq 1
	done
	check "$f: every line is an event of the program" \
		test "$(grep -c -v -e '^\[ *[0-9]*\.[0-9]*\]\[cpu [0-9?]* tid [0-9]* ' $f || true)" -eq 0
	check "$f: no line twice" test -z "$(sort $f | uniq -d)"
done
check "t.text: nothing from before it attached" \
	test "$(grep -c -e '(pre)$' -e 'INFO pre log' -e '(worker pre)$' -e '(start)$' t.text || true)" -eq 0
for i in 0 1 2 3 4; do
	check "t.from: pre $i once" test "$(count t.from "$(printf ' : %08x  .*(pre)$' $i)")" -eq 1
	check "t.from: pre log $i once" test "$(count t.from " : (.*) : INFO pre log $i (")" -eq 1
done
for i in 0 1 2; do
	check "t.from: worker pre $i once" \
		test "$(count t.from "tid [0-9]* worker\] : $(printf %08x $i)  .*(worker pre)$")" -eq 1
done
check "t.from: start once" test "$(count t.from '(start)$')" -eq 1
check "t.from: every marker once" test "$(count t.from '(marker)$')" -eq "$((marker - 1))"
check "t.from: the pre events before the post ones" \
	test "$(grep -n '(pre)$' t.from | tail -1 | cut -d: -f1)" -lt \
	"$(grep -n '(post)$' t.from | head -1 | cut -d: -f1)"
# the lines of dump, but for the time and the time since the previous line
strip() {
	sed -e 's/^\[[^]]*\]//' -e 's/: ( *-\{0,1\}[0-9.]* uSec) ://' "$1"
}
strip dump.text | sort >dump.stripped
strip t.from | sort >from.stripped
check "t.from: every line as dump prints it" test -z "$(comm -23 from.stripped dump.stripped)"
strip t.text | sort >text.stripped
check "t.text: every line as dump prints it" test -z "$(comm -23 text.stripped dump.stripped)"

if ! python3 - t.json dump.json "$first_marker" "$marker" >json.check 2>&1 <<'PY'; then
import json, sys
tail = [json.loads(l) for l in open(sys.argv[1])]
dump = [json.loads(l) for l in open(sys.argv[2])]
first_marker = int(sys.argv[3])
def key(o):
    o = dict(o)
    o.pop("ts_ns", None)
    return json.dumps(o, sort_keys=True)
dumped = {key(o) for o in dump if o["kind"] in ("trace", "log")}
assert tail, "no objects"
for o in tail:
    assert o["kind"] in ("trace", "log"), o
    assert key(o) in dumped, ("not as dump --json prints it", o)
keys = [key(o) for o in tail]
assert len(keys) == len(set(keys)), "an object twice"
def args(tag):
    return sorted(o["args"][0] for o in tail if o.get("tag") == tag)
assert args("post") == [0, 1, 2, 3, 4], args("post")
assert args("worker post") == [0, 1, 2], args("worker post")
assert args("late") == [0, 1, 2], args("late")
assert {o["thread"] for o in tail if o.get("tag") == "worker post"} == {"worker"}
assert {o["thread"] for o in tail if o.get("tag") == "late"} == {"late"}
logs = sorted(o["msg"] for o in tail if o["kind"] == "log")
assert logs == ["post log %d" % i for i in range(5)], logs
assert not [o for o in tail if o.get("tag") in ("pre", "worker pre", "start")]
markers = args("marker")
assert markers and markers == list(range(markers[0], markers[-1] + 1)), markers
assert markers[0] <= first_marker - 1 and markers[-1] == int(sys.argv[4]) - 1, markers
PY
	fail "tail --json: $(cat json.check)"
else
	pass
fi

# ---- a tiny flight-mode ring flooded: printed + missed = emitted --------------
start f RINGTRACE_BUFFER=4K RINGTRACE_MODE=flight
"$ringtrace" tail "$pid" >f.text 2>f.err &
flood_text=$!
"$ringtrace" tail --json "$pid" >f.json 2>fj.err &
flood_json=$!
attached f f.text f.json
before=$((marker - 1))
echo "flood 2000000" >&3
wait_line f.out "done flood 2000000"
emitted=$(awk '$1 == "emitted" { print $2 }' f.out)
echo quit >&3
exec 3>&-
wait "$pid"
for t in text json; do
	eval "tpid=\$flood_$t"
	status=0
	wait "$tpid" || status=$?
	check "flood: tail ($t) ends with status 0 ($status)" test "$status" -eq 0
done
check "flood: the program emitted 2000000 ($emitted)" test "$emitted" = 2000000
printed=$(grep -c '(flood)$' f.text || true)
missed=$(sed -n 's/^--- lost: tid [0-9]* [^,]*, \([0-9]*\) events\{0,1\} overwritten\( at [0-9.]*\)\{0,1\} (missed by tail: .*) ---$/\1/p' f.text |
	awk '{ n += $1 } END { print n + 0 }')
check "flood (text): some events missed ($missed)" test "$missed" -gt 0
check "flood (text): printed $printed + missed $missed = emitted $emitted" \
	test "$((printed + missed))" -eq "$emitted"
check "flood (text): only flood events, markers and loss lines" \
	test "$(grep -c -v -e '(flood)$' -e '(marker)$' -e '^--- lost: .*missed by tail' f.text || true)" -eq 0
if ! python3 - f.json "$emitted" >flood.check 2>&1 <<'PY'; then
import json, sys
objs = [json.loads(l) for l in open(sys.argv[1])]
printed = [o["args"][0] for o in objs if o.get("tag") == "flood"]
missed = sum(o["count"] for o in objs if o["kind"] == "lost")
assert all(o["reason"] == "overwritten" for o in objs if o["kind"] == "lost")
assert len(printed) == len(set(printed)), "a flood event twice"
assert printed == sorted(printed), "flood events out of order"
assert len(printed) + missed == int(sys.argv[2]), (len(printed), missed)
assert missed > 0
PY
	fail "flood (json): $(cat flood.check)"
else
	pass
fi

# ---- beside a collector: stream mode, `ringtrace record` gets every event too --
mkfifo r.in
"$ringtrace" record -q -o rec.rt -- "$target" <r.in >r.out 2>r.err &
record=$!
exec 3>r.in
wait_line r.out "arena .*"
pid=$(sed -n 's/^arena .*\.\([0-9]*\)\.arena$/\1/p' r.out)
"$ringtrace" tail --json "$pid" >r.json 2>rj.err &
stream_json=$!
attached r r.json
say r "flood 300000"
echo quit >&3
exec 3>&-
status=0
wait "$record" || status=$?
check "stream: record ends with status 0 ($status)" test "$status" -eq 0
status=0
wait "$stream_json" || status=$?
check "stream: tail ends with status 0 ($status)" test "$status" -eq 0
check "stream: nothing on stderr ($(head -c 200 rj.err))" test ! -s rj.err
"$ringtrace" dump --json rec.rt >rec.json 2>rec.err || true
if ! python3 - r.json rec.json >stream.check 2>&1 <<'PY'; then
import json, sys
objs = [json.loads(l) for l in open(sys.argv[1])]
printed = [o["args"][0] for o in objs if o.get("tag") == "flood"]
missed = sum(o["count"] for o in objs if o["kind"] == "lost")
assert len(printed) == len(set(printed)), "a flood event twice"
assert len(printed) + missed == 300000, (len(printed), missed)
recorded = [json.loads(l) for l in open(sys.argv[2])]
flood = [o["args"][0] for o in recorded if o["kind"] == "trace" and o.get("tag") == "flood"]
assert sorted(flood) == list(range(300000)), "the recording lost flood events"
PY
	fail "stream: $(cat stream.check)"
else
	pass
fi

# ---- threads that come and go over two rings: each event its thread's -------
start u RINGTRACE_RINGS=2
"$ringtrace" tail --json "$pid" >u.json 2>uj.err &
reuse_json=$!
attached u u.json
say u "threads 30"
echo quit >&3
exec 3>&-
wait "$pid"
status=0
wait "$reuse_json" || status=$?
check "rings reused: tail ends with status 0 ($status)" test "$status" -eq 0
if ! python3 - u.json >reuse.check 2>&1 <<'PY'; then
import json, sys
objs = [json.loads(l) for l in open(sys.argv[1])]
got = sorted((o["args"][0], o["args"][1]) for o in objs if o.get("tag") == "thread")
assert got == [(i, k) for i in range(30) for k in range(3)], got
for o in objs:
    if o.get("tag") == "thread":
        assert o["thread"] == "t%d" % o["args"][0], o
assert not [o for o in objs if o["kind"] == "lost"], "losses"
PY
	fail "rings reused: $(cat reuse.check)"
else
	pass
fi

# ---- interrupted: SIGINT, status 0, what it read flushed ----------------------
start s
"$ringtrace" tail "$pid" >s.text 2>s.err &
tail_int=$!
attached s s.text
kill -INT "$tail_int"
status=0
wait "$tail_int" || status=$?
check "SIGINT: status 0 ($status)" test "$status" -eq 0
check "SIGINT: the marker was printed" grep -q -e "$(marker_text $((marker - 1)))" s.text
check "SIGINT: nothing on stderr" test ! -s s.err
"$ringtrace" tail "$pid" >s2.text 2>s2.err &
tail_term=$!
attached s s2.text
kill -TERM "$tail_term"
status=0
wait "$tail_term" || status=$?
check "SIGTERM: status 0 ($status)" test "$status" -eq 0
echo quit >&3
exec 3>&-
wait "$pid"

# ---- bad targets: status 2, one line ------------------------------------------
for bad in 2147483647 "$work/missing.arena" "$work/p.out"; do
	status=0
	"$ringtrace" tail "$bad" >bad.out 2>bad.err || status=$?
	check "tail $bad: status 2 ($status)" test "$status" -eq 2
	check "tail $bad: one line on stderr ($(line_count bad.err))" test "$(line_count bad.err)" -eq 1
	check "tail $bad: nothing on stdout" test ! -s bad.out
done
status=0
"$ringtrace" tail >bad.out 2>bad.err || status=$?
check "tail without a target: status 2 ($status)" test "$status" -eq 2
"$ringtrace" tail --help >help.out
check "tail --help: the usage" grep -q '^usage: ringtrace tail ' help.out
finish
