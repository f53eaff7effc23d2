#!/bin/sh
# record_read.sh RINGTRACE DEMO - what `ringtrace record` writes, read back:
# one file and a rotated set (a directory), every record written is an event
# or a counted loss, and dump and summary agree with the collector's count.
set -eu
ringtrace=$1
demo=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0
fail() {
	echo "FAIL: $*"
	failed=1
}

# written N: the records the collector says it wrote
written() {
	sed -n 's/^ringtrace: \([0-9]*\) records written.*/\1/p' "$1"
}

for shape in one rotated; do
	mkdir "$work/$shape"
	if [ "$shape" = one ]; then
		set -- -o "$work/$shape/out.rt"
	else
		set -- -o "$work/$shape/out.rt" --max-size 64K
	fi
	"$ringtrace" record "$@" -- "$demo" >/dev/null 2>"$work/$shape.err" ||
		fail "$shape: record failed: $(cat "$work/$shape.err")"
	n=$(written "$work/$shape.err")
	[ -n "$n" ] && [ "$n" -gt 0 ] || fail "$shape: no record count in: $(cat "$work/$shape.err")"
	files=$(ls "$work/$shape" | wc -l)
	if [ "$shape" = rotated ] && [ "$files" -lt 3 ]; then
		fail "rotated: only $files files"
	fi
	status=0
	"$ringtrace" summary --json "$work/$shape" >"$work/$shape.json" || status=$?
	[ "$status" -eq 0 ] || fail "$shape: summary exit $status"
	events=$(sed -n 's/.*"events":\([0-9]*\),"events_per_second".*/\1/p' "$work/$shape.json")
	lost=$(sed -n 's/.*"lost":{"dropped":\([0-9]*\),"overwritten":\([0-9]*\),"torn":\([0-9]*\),"damaged":\([0-9]*\)}.*/\1 \2 \3 \4/p' \
		"$work/$shape.json")
	[ "$events" = "$n" ] || fail "$shape: summary counted $events events, $n written"
	[ "$lost" = "0 0 0 0" ] || fail "$shape: losses $lost"
	status=0
	"$ringtrace" dump --json "$work/$shape" >"$work/$shape.dump" || status=$?
	[ "$status" -eq 0 ] || fail "$shape: dump exit $status"
	traces=$(grep -c '"kind":"trace"' "$work/$shape.dump" || true)
	[ "$traces" = "$n" ] || fail "$shape: dump --json gave $traces events, $n written"
	# each file of a rotated set decodes alone
	for f in "$work/$shape"/*; do
		"$ringtrace" summary "$f" >/dev/null || fail "$shape: $f does not read alone"
	done
	echo "$shape: $n records written, $events read, $files files"
done
exit $failed
