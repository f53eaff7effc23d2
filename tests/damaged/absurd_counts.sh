#!/bin/sh
# absurd_counts.sh RINGTRACE RECORD_PROGRAM ABSURD_COUNTS - a loss count no
# recording reaches (2^48 or more), written with a good checksum into real
# trace files and arenas by absurd_counts, is damage: `check` says so and
# names it, and no command shows the count (or a total made of it).
set -eu
ringtrace=$1
program=$2
edit=$3
. "$(dirname "$0")/../e2e/lib.sh"
unset RINGTRACE_ARENA RINGTRACE_BUFFER RINGTRACE_MODE RINGTRACE_RINGS RINGTRACE_SYNC
absurd=0x7fffffffffffffff

# stream mode, small rings, --drop: drops no LOST record noted (LOSS entries).  Whether a
# thread's last events are among the drops is a matter of timing: recorded again (up to
# five times) until the file has a LOSS entry to edit
for _ in 1 2 3 4 5; do
	"$ringtrace" record -q --drop --buffer 16K -o "$work/drops.rt" -- "$program" threads 4 5000
	cp "$work/drops.rt" "$work/probe.rt"
	"$edit" trace loss 1 "$work/probe.rt" 2>/dev/null && break
done
spin_arena() {
	# flight mode, killed: an arena of two-slot events, no collector
	RINGTRACE_ARENA=$work/spin.arena RINGTRACE_BUFFER=16K RINGTRACE_MODE=flight \
		"$program" spin 2 >"$work/spin-arena.out" &
	pid=$!
	background="$background $pid"
	while ! grep -q traced "$work/spin-arena.out"; do sleep 0.05; done
	kill -9 "$pid"
	wait "$pid" || true
}
# spinning threads in stream mode, --drop: LOST records among the events (SLOTS blocks, not PACKED:
# the editor below sets a count in place)
RINGTRACE_PACK=0 timeout -s INT 1 "$ringtrace" record -q --drop --buffer 4K -o "$work/lost.rt" -- \
	"$program" spin 2 >/dev/null || true
spin_arena
RINGTRACE_ARENA=$work/flight.arena RINGTRACE_BUFFER=16K RINGTRACE_MODE=flight \
	"$program" threads 4 5000

# No count of 15 digits or more (2^48 has 15) in what the commands print:
# on no line about events or losses, save the damage line that names the
# field's value ("is no count"). Raw counter readings are no counts and are
# taken out first: a TSC passes 15 digits after about 11 hours of uptime.
shows_no_absurd_number() {
	file=$1
	for command in check dump summary info "dump --json" "export --format chrome -o -"; do
		# shellcheck disable=SC2086
		"$ringtrace" $command "$file" >"$work/out" 2>&1 || true
		grep -Ei 'lost|drop|event|overwr|torn' "$work/out" | grep -v 'is no count' |
			sed -E 's/"ts_raw":[0-9]+//g; s/raw counter [0-9]+ \.\. [0-9]+//g' |
			grep -E '(^|[^0-9a-fA-F])[0-9]{15}' >"$work/absurd" || true
		if [ -s "$work/absurd" ]; then
			echo "$file: $command shows: $(cut -c1-160 "$work/absurd" | head -1)"
			return 1
		fi
	done
}

# check_says FILE TEXT: check exits 1 (damaged) and its report holds TEXT.
check_says() {
	"$ringtrace" check "$1" >"$work/check.out" 2>&1 && rc=0 || rc=$?
	[ "$rc" -eq 1 ] && grep -q "$2" "$work/check.out"
}

for original in drops.rt lost.rt flight.arena spin.arena; do
	check "$original: clean before any edit" "$ringtrace" check "$work/$original"
done

for field in loss ring-dropped no-ring untracked; do
	cp "$work/drops.rt" "$work/$field.rt"
	check "trace $field: the field is found and set" "$edit" trace "$field" "$absurd" "$work/$field.rt"
	check "trace $field: check calls the block damaged" check_says "$work/$field.rt" "absurd count"
	check "trace $field: no command shows the count" shows_no_absurd_number "$work/$field.rt"
done
cp "$work/lost.rt" "$work/lost-record.rt"
check "trace lost: a LOST record is found and set" "$edit" trace lost "$absurd" "$work/lost-record.rt"
check "trace lost: check counts the record as damage" check_says "$work/lost-record.rt" "1 event lost"
check "trace lost: no command shows the count" shows_no_absurd_number "$work/lost-record.rt"

for field in ring-dropped no-ring; do
	cp "$work/flight.arena" "$work/$field.arena"
	check "arena $field: the field is found and set" "$edit" arena "$field" "$absurd" "$work/$field.arena"
	check "arena $field: check names the counter" check_says "$work/$field.arena" "is no count: taken as 0"
	check "arena $field: no command shows the count" shows_no_absurd_number "$work/$field.arena"
done
cp "$work/spin.arena" "$work/lost.arena"
check "arena lost: a LOST record is made and set" "$edit" arena lost "$absurd" "$work/lost.arena"
check "arena lost: check names the record" check_says "$work/lost.arena" "whose count no ring reaches"
check "arena lost: no command shows the count" shows_no_absurd_number "$work/lost.arena"

# just below the bound is still a count: the tool believes it
below=$(( (1 << 48) - 1 ))
cp "$work/flight.arena" "$work/below.arena"
check "arena: 2^48 - 1 is set" "$edit" arena no-ring "$below" "$work/below.arena"
check "arena: 2^48 - 1 is a count, not damage" "$ringtrace" check "$work/below.arena"

finish
