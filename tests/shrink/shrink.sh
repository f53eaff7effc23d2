#!/bin/sh
# shrink.sh RINGTRACE TARGET - an arena truncated while the tool reads it is
# damage, said on stderr with status 3, never a crash.
#
# TARGET (shrink_target.c) fills a large flight-mode arena (4 threads of
# 16 MiB rings, about 68 MB of data) and waits, the arena untouched.  Each
# command then reads it while the file is truncated from here at a moment
# chosen at random (seeded by the round, so a failing round can be run
# again): `dump` of a copy, `tail --from-start` and `log -f` beside the
# running program, `snapshot` (no collector: it drains the arena itself),
# and `record --mode flight`, whose collector maps the arena read-write and
# reads its rings when the program ends.  Checked in every round: the exit
# status is never a signal (>= 128); when the command says the file shrank,
# its status is 3.  A truncation that comes before or after the read is
# fine either way; over all the dump rounds the shrink must have been seen.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../e2e/lib.sh"
ringtrace=$1
target=$2
require_tools mkfifo truncate
unset RINGTRACE_ARENA RINGTRACE_MODE RINGTRACE_BUFFER LD_PRELOAD
export RINGTRACE_DIR="$work/arenas"
cd "$work"
rounds=${SHRINK_ROUNDS:-5}

# delay ROUND SCALE: a pseudo-random pause of up to SCALE seconds, the same for a round
delay() {
	awk -v r="$1" -v s="$2" 'BEGIN { srand(r); for (i = 0; i < r; i++) rand(); printf "%.3f\n", rand() * s }'
}

# size ROUND: what the file is cut to: nothing, less than a header, 8 KiB, 1 MiB
size() {
	case $(($1 % 4)) in
	0) echo 0 ;;
	1) echo 8K ;;
	2) echo 1000 ;;
	*) echo 1M ;;
	esac
}

told=0
# outcome WHAT STATUS ERR: never a signal; a shrink said means status 3
outcome() {
	if [ "$2" -ge 128 ]; then
		fail "$1: ended by a signal (status $2): $(head -c 300 "$3" | tr '\n' '|')"
		return
	fi
	if grep -q "shrank while it was read" "$3"; then
		told=$((told + 1))
		[ "$2" -eq 3 ] || fail "$1: the shrink said, but status $2"
	fi
	pass
}

# wait_line FILE LINE: until FILE holds a line matching LINE (20 s at most)
wait_line() {
	i=0
	while ! grep -q -e "$2" "$1" 2>/dev/null; do
		i=$((i + 1))
		if [ "$i" -gt 2000 ]; then
			fail "'$2' never came in $1"
			return 1
		fi
		sleep 0.01
	done
}

# start NAME: the target filling an arena NAME.arena, idle then until told on descriptor 3
start() {
	# the last round's "filled" must not be read before the new program's redirection empties it
	rm -f "$1.in" "$1.arena" "$1.out" "$1.err"
	mkfifo "$1.in"
	RINGTRACE_MODE=flight RINGTRACE_BUFFER=16M RINGTRACE_ARENA=$work/$1.arena \
		"$target" 4 1000000 <"$1.in" >"$1.out" 2>"$1.err" &
	pid=$!
	background="$background $pid"
	exec 3>"$1.in"
	wait_line "$1.out" "^filled"
}

# stop: the target told to end, and waited for
stop() {
	exec 3>&-
	wait "$pid" 2>/dev/null || true
}

# ---- dump: a copy of a finished arena, cut while it is read ----
start big
stop
dump_told=0
r=1
while [ "$r" -le "$rounds" ]; do
	cp --sparse=always big.arena d.arena
	"$ringtrace" dump d.arena >d.out 2>d.err 3>&- &
	p=$!
	sleep "$(delay "$r" 0.3)"
	truncate -s "$(size "$r")" d.arena
	st=0
	wait "$p" || st=$?
	before=$told
	outcome "dump round $r" "$st" d.err
	[ "$told" -eq "$before" ] || dump_told=$((dump_told + 1))
	r=$((r + 1))
done
check "dump: the shrink seen in at least one of $rounds rounds" [ "$dump_told" -gt 0 ]

# ---- tail, log -f, snapshot: the running program's arena cut under them ----
for what in tail log snapshot; do
	r=1
	while [ "$r" -le "$rounds" ]; do
		start live
		case $what in
		# 3>&-: the program's stdin must close when stop closes it here
		tail) "$ringtrace" tail --from-start live.arena >c.out 2>c.err 3>&- & ;;
		log) "$ringtrace" log -f live.arena >c.out 2>c.err 3>&- & ;;
		snapshot) "$ringtrace" snapshot -o snap.rt live.arena >c.out 2>c.err 3>&- & ;;
		esac
		p=$!
		sleep "$(delay "$r" 0.4)"
		truncate -s "$(size "$r")" live.arena
		sleep 0.2
		stop # the program ends: a follower that saw nothing ends too
		st=0
		wait "$p" || st=$?
		outcome "$what round $r" "$st" c.err
		r=$((r + 1))
	done
done

# ---- record's collector: the arena cut while the last pass reads it ----
r=1
while [ "$r" -le "$rounds" ]; do
	rm -f rec.in rec.rt rec.out rec.err # no "filled" of the round before
	mkfifo rec.in
	RINGTRACE_ARENA=$work/rec.arena "$ringtrace" record --mode flight --buffer 16M -o rec.rt \
		-- "$target" 4 1000000 <rec.in >rec.out 2>rec.err &
	p=$!
	background="$background $p"
	exec 3>rec.in
	wait_line rec.out "^filled"
	program=$(sed -n 's/^pid //p' rec.out)
	[ -n "$program" ] || fail "record round $r: the program said no pid"
	exec 3>&- # the program ends; record reads its rings
	# the cut must come after the program's last write, or the program is what it stops
	i=0
	while [ -d "/proc/$program" ] && ! grep -q '^State:.*Z' "/proc/$program/status" 2>/dev/null; do
		i=$((i + 1))
		[ "$i" -le 2000 ] || break
		sleep 0.01
	done
	sleep "$(delay "$r" 0.3)"
	truncate -s "$(size "$r")" rec.arena
	st=0
	wait "$p" || st=$?
	# record ends as the program did (0): a shrink is said, the status stays the program's
	if [ "$st" -ge 128 ]; then
		fail "record round $r: ended by a signal (status $st), program $program: $(head -c 600 rec.err)"
	else
		pass
	fi
	grep -q "shrank while it was read" rec.err && told=$((told + 1))
	rm -f rec.arena rec.arena.last
	r=$((r + 1))
done

echo "the shrink was said $told times"
finish
