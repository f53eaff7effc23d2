#!/bin/sh
# trace_damage.sh RINGTRACE PROGRAM CORRUPT TRACE_DAMAGE [SEEDS] - real recordings
# (stream mode with drops, a flight-mode snapshot, a rotated set), damaged by
# `corrupt` seed after seed and read back by `ringtrace dump --json`;
# trace_damage.c says what each damaged dump must show.
set -eu
ringtrace=$1
program=$2
corrupt=$3
driver=$4
seeds=${5:-300}
unset RINGTRACE_ARENA RINGTRACE_BUFFER RINGTRACE_MODE RINGTRACE_RINGS RINGTRACE_SYNC
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM

# stream mode, small rings: LOST records among the events
"$ringtrace" record -q --buffer 16K -o "$work/s.rt" -- "$program" threads 4 5000
# flight mode: one snapshot at exit
"$ringtrace" record -q --mode flight --buffer 64K -o "$work/f.rt" -- "$program" threads 3 1500
# a rotated set: the middle file is damaged, the set read as one
"$ringtrace" record -q --max-size 32K -o "$work/r.rt" -- "$program" threads 2 3000
set -- "$work"/r.rt.*
middle=$(($# / 2))

status=0
"$driver" "$ringtrace" "$corrupt" "$seeds" 0 0 "$work/s.rt" || status=1
"$driver" "$ringtrace" "$corrupt" "$((seeds / 2))" 1000 0 "$work/f.rt" || status=1
"$driver" "$ringtrace" "$corrupt" "$((seeds / 2))" 2000 "$middle" "$@" || status=1
exit $status
