#!/bin/sh
# trace_damage.sh RINGTRACE PROGRAM TRACE_DAMAGE RECORDING [SEEDS] - a real
# recording, damaged by `corrupt` seed after seed and read back by `ringtrace
# dump --json`; trace_damage.c says what each damaged dump must show.
# RECORDING is one of
#   stream   stream mode with drops: SEEDS seeds (from seed 0)
#   flight   a flight-mode snapshot: SEEDS / 2 seeds (from seed 1000)
#   rotated  a rotated set, its middle file damaged: SEEDS / 2 (from seed 2000)
# Each is a test of its own, so that ctest runs them side by side.
set -eu
ringtrace=$1
program=$2
driver=$3
recording=$4
seeds=${5:-300}
unset RINGTRACE_ARENA RINGTRACE_BUFFER RINGTRACE_MODE RINGTRACE_RINGS RINGTRACE_SYNC
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM

case $recording in
stream)
	# stream mode, small rings: LOST records among the events
	"$ringtrace" record -q --buffer 16K -o "$work/s.rt" -- "$program" threads 4 5000
	"$driver" "$ringtrace" "$seeds" 0 0 "$work/s.rt"
	;;
flight)
	# flight mode: one snapshot at exit
	"$ringtrace" record -q --mode flight --buffer 64K -o "$work/f.rt" -- "$program" threads 3 1500
	"$driver" "$ringtrace" "$((seeds / 2))" 1000 0 "$work/f.rt"
	;;
rotated)
	# a rotated set: the middle file is damaged, the set read as one
	# files of about 40 KB (PACKED blocks): no damage of the driver covers one whole
	"$ringtrace" record -q --max-size 48K -o "$work/r.rt" -- "$program" threads 2 20000
	set -- "$work"/r.rt.*
	"$driver" "$ringtrace" "$((seeds / 2))" 2000 "$(($# / 2))" "$@"
	;;
*)
	echo "trace_damage.sh: no recording $recording (stream, flight or rotated)" >&2
	exit 2
	;;
esac
