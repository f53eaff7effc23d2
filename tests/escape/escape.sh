#!/bin/sh
# escape.sh TOOL PROG MODULE - every text output of every command, on a
# recording whose every string holds control characters and bytes of no
# valid UTF-8 (hostile_prog.c: thread names, the program's path, a module's
# path, the source file, tags, a span, log messages and their format, a
# file opened under record --io), holds nothing raw: check_text.py holds
# each stdout and stderr to the rule of src/common/escape.h (no control
# byte but newline and tab, valid UTF-8, no string beginning a line of its
# own); JSON outputs must parse and escape the same strings their way.
set -u
tool=$1
prog=$2
module=$3
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../e2e/lib.sh"
unset RINGTRACE_ARENA RINGTRACE_BUFFER RINGTRACE_MODE RINGTRACE_DIR LD_PRELOAD
python=/usr/bin/python3
[ -x "$python" ] || python=python3

# a name with a marker, a newline, ESC, CR, BEL and 0xff in it
hostile() {
	printf '%s/%s\n\033[31m\r\007\377%s' "$work" "$1" "$2"
}
hostile_prog=$(hostile Zpg prog)
hostile_module=$(hostile Zmo .so)
arena=$(hostile Zar .arena)
cut_out=$(hostile Zct .rt)
missing=$(hostile Zno .rt)
cp "$prog" "$hostile_prog" && cp "$module" "$hostile_module" || {
	fail "cannot copy the program to a name with control characters"
	finish
	exit 1
}
mkdir "$work/io" "$work/io2"
out=$work/out
mkdir "$out"

# run NAME STATUS TOOL-ARGS...: the command's stdout and stderr into out/NAME.{out,err}
run() {
	name=$1
	want=$2
	shift 2
	timeout 60 "$tool" "$@" >"$out/$name.out" 2>"$out/$name.err"
	status=$?
	if [ "$status" -ne "$want" ]; then
		fail "$name: exits $status, not $want"
		head -c 2000 "$out/$name.err" | od -c | head -20 >&2
	else
		pass
	fi
}

# text NAME [MARKER,...]: out/NAME.out and .err follow the rule, and mention the markers
text() {
	if "$python" "$here/check_text.py" --want "${2:-}" "$out/$1.out" "$out/$1.err" \
		>"$out/$1.check"; then
		pass
	else
		fail "$1: raw bytes in the output"
		cat "$out/$1.check" >&2
	fi
}

json() {
	if "$python" "$here/check_text.py" --json --want "${2:-}" "$out/$1.out" >"$out/$1.check" &&
		"$python" "$here/check_text.py" "$out/$1.err" >>"$out/$1.check"; then
		pass
	else
		fail "$1: raw bytes or no JSON in the output"
		cat "$out/$1.check" >&2
	fi
}

trace=$(hostile Zrc .rt)
# a sanitizer build's tool preloads nothing (tests/CMakeLists.txt): there, no --io
io=Zio
if "$tool" record --io -o "$work/probe.rt" -- true 2>"$work/probe.err" ||
	! grep -q RINGTRACE_PRELOAD_IO "$work/probe.err"; then
	run record 0 record --io -o "$trace" -- "$hostile_prog" "$work/io" "$hostile_module"
else
	io=
	run record 0 record -o "$trace" -- "$hostile_prog" "$work/io" "$hostile_module"
fi
text record Zrc
RINGTRACE_ARENA=$arena "$hostile_prog" "$work/io2" "$hostile_module" ||
	fail "the program did not run into an arena"
[ -f "$arena" ] || fail "no arena"

for input in trace arena; do
	eval "in=\$$input"
	# the arena's program ran without --io
	[ "$input" = arena ] && io=
	all_events=Zth1,Zth2,Zth3,Ztg,Zsp,Zlg,Zfl${io:+,$io}
	run "dump-$input" 0 dump "$in"
	text "dump-$input" "$all_events"
	run "dump-json-$input" 0 dump --json "$in"
	json "dump-json-$input" "$all_events"
	run "info-$input" 0 info "$in"
	text "info-$input" Zth1,Zth2,Zth3,Zpg,Zmo
	run "info-json-$input" 0 info --json "$in"
	json "info-json-$input" Zth1,Zpg
	run "summary-$input" 0 summary "$in"
	text "summary-$input" Zth1,Zth2,Zpg,Ztg,Zfl,Zsp
	run "summary-json-$input" 0 summary --json "$in"
	json "summary-json-$input" Zth1,Zpg,Ztg
	run "check-$input" 0 check "$in"
	text "check-$input"
	run "log-$input" 0 log "$in"
	text "log-$input" Zlg,Zth1,Zfl
	run "log-json-$input" 0 log --json "$in"
	json "log-json-$input" Zlg
	run "replay-$input" 0 replay "$in"
	text "replay-$input" Zlg,Ztg,Zsp
	run "report-$input" 0 report "$in"
	text "report-$input"
	run "report-folded-$input" 0 report --folded --per-thread "$in"
	text "report-folded-$input"
	run "report-io-$input" 0 report --io "$in"
	text "report-io-$input" "$io"
	run "report-io-json-$input" 0 report --io --json "$in"
	json "report-io-json-$input" "$io"
	for a in spans:Zsp rate:Ztg stalls:Zth1; do
		run "analyze-${a%:*}-$input" 0 analyze "${a%:*}" --per-thread "$in"
		text "analyze-${a%:*}-$input" "Zth1,${a#*:}"
		run "analyze-${a%:*}-json-$input" 0 analyze "${a%:*}" --json "$in"
		json "analyze-${a%:*}-json-$input" "${a#*:}"
	done
	tag=$(printf 'Ztg\n\033[31m\r\007\177\377\302\233')
	run "analyze-latency-$input" 0 analyze latency --per-thread --from "$tag" --to "$tag" "$in"
	text "analyze-latency-$input" Ztg
	run "analyze-by-arg-$input" 0 analyze by-arg --per-thread --tag "$tag" --arg 0 "$in"
	text "analyze-by-arg-$input" Ztg
	run "analyze-html-$input" 0 analyze rate --html "$work/page.html" "$in"
	text "analyze-html-$input"
	if "$python" "$here/check_text.py" --bytes --want Ztg "$work/page.html" \
		>"$out/analyze-html-page-$input.check"; then
		pass
	else
		fail "analyze-html-page-$input: raw bytes in the page"
		cat "$out/analyze-html-page-$input.check" >&2
	fi
	run "export-chrome-$input" 0 export --chrome "$in"
	json "export-chrome-$input" Zth1,Ztg,Zlg
	run "export-perfetto-$input" 0 export --perfetto "$in"
	rm -rf "$work/ctf"
	run "export-ctf-$input" 0 export --ctf "$in" "$work/ctf"
	text "export-ctf-$input"
	# TSDL strings show a control character as '?' (src/export/ctf.c)
	if "$python" "$here/check_text.py" --bytes --want Ztg "$work/ctf/metadata" \
		>"$out/ctf-metadata-$input.check"; then
		pass
	else
		fail "ctf-metadata-$input: raw bytes in the CTF metadata"
		cat "$out/ctf-metadata-$input.check" >&2
	fi
	rm -f "$cut_out"
	run "cut-$input" 0 cut --from 0ms "$in" "$cut_out"
	text "cut-$input" Zct
	rm -f "$cut_out"
	run "recover-$input" 0 recover "$in" "$cut_out"
	text "recover-$input" Zct
	# an arena is refused by name; a trace file's server is unreachable
	[ "$input" = trace ] && ship_status=1 || ship_status=2
	run "ship-$input" "$ship_status" ship --to http://127.0.0.1:9/ --retry 0 --journal "$work/journal" "$in"
	text "ship-$input"
done

run dump-hexdump 0 dump --hexdump "$arena"
text dump-hexdump Zar
run tail 0 tail --from-start "$arena"
text tail Zth1,Ztg,Zlg
run ls 0 ls "$arena"
text ls Zar,Zpg
run ls-json 0 ls --json "$arena"
json ls-json Zar,Zpg
# its program has ended: refused, the arena named on stderr
run snapshot 2 snapshot -o "$work/snap.rt" "$arena"
text snapshot Zar
run level 0 level "$arena"
text level Zar
run missing 2 dump "$missing"
text missing Zno
run rm 0 rm "$arena"
text rm Zar

finish
