#!/bin/sh
# html_page.sh TOOL DEMO [ANALYZER=PROG]... - the `analyze --html` page, opened
# in headless Chromium.
#
# DEMO (html_demo.c) writes a page of one of each plot from known numbers and
# prints what it drew; check_html_page.py reads the file as written (well
# formed, nothing loaded), the page chromium prints (--dump-dom: the SVG
# elements, their counts and titles) and a screenshot (the bars' colours and
# heights in pixels). A truncated copy of the page must fail those checks.
#
# Then, for each ANALYZER=PROG given (spans, latency, rate, by-arg, stalls),
# PROG is recorded as that analyzer's own test runs it and `ringtrace
# analyze ANALYZER --html` of the recording is checked the same way: well
# formed, its plots present with their marks (a histogram per span name whose
# bars add up to the span's count, lines for rates, a timeline of stalls),
# and drawn on screen.
# HTML_PAGE_KEEP=DIR keeps the pages, DOMs and screenshots there.
# Missing Chromium is a failure, not a skip.
set -u
tool=$1
demo=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../e2e/lib.sh"
unset RINGTRACE_ARENA RINGTRACE_BUFFER RINGTRACE_MODE LD_PRELOAD
python=/usr/bin/python3
[ -x "$python" ] || python=python3
checker=$here/check_html_page.py

stop() {
	fail "$*"
	finish
	exit 1
}

if ! command -v chromium >/dev/null 2>&1; then
	"$here/../../scripts/ensure-packages" chromium ||
		stop "chromium is not installed (apt-get install -y --no-install-recommends chromium)"
fi

# browse MODE PAGE OUT [PNG]: chromium prints the page (dom) or takes a
# screenshot (png) of the file, or both in one run (both: the DOM into OUT, the
# screenshot into PNG: the same bytes as two runs make, in half the time,
# chromium's start being most of it); the page runs nothing, so a short
# virtual-time budget does, and the timeout bounds a hang
browse() {
	mode=$1
	url=file://$2
	out=$3
	png=${4:-}
	rm -f "$out" ${png:+"$png"}
	case $mode in
	dom) set -- --dump-dom ;;
	png) set -- --screenshot="$out" ;;
	both) set -- --dump-dom --screenshot="$png" ;;
	esac
	HOME=$work timeout 75 chromium --headless --no-sandbox --disable-gpu --enable-unsafe-swiftshader \
		--hide-scrollbars --no-first-run --user-data-dir="$work/chromium" --window-size=1000,${height:-1400} \
		--force-device-scale-factor=1 --virtual-time-budget=2000 "$@" "$url" \
		>"$work/chromium.out" 2>"$work/chromium.err"
	status=$?
	[ "$mode" = png ] || mv "$work/chromium.out" "$out"
	return $status
}

# snap PAGE DOM PNG: the DOM and the screenshot of PAGE from one chromium run,
# for `shown` to check first; a run that failed leaves neither, and `shown`
# then starts chromium itself
snap() {
	browse both "$1" "$2" "$3" || rm -f "$2" "$3"
}

# shown MODE PAGE OUT CHECK_ARGS...: browse, then check what chromium made of
# the page; a loaded machine may leave chromium short of time, so two tries.
# An OUT that snap made is the first try's.
shown() {
	mode=$1
	page=$2
	out=$3
	shift 3
	for try in 1 2; do
		: >"$work/check.err"
		if { { [ "$try" = 1 ] && [ -s "$out" ]; } || browse "$mode" "$page" "$out"; } &&
			"$python" "$checker" "$@" 2>"$work/check.err"; then
			return 0
		fi
		rm -rf "$work/chromium"
	done
	grep -v -e dbus -e gl_utils -e Fontconfig "$work/chromium.err" >&2
	cat "$work/check.err" >&2
	return 1
}

# the demo page: one of each plot from known numbers
if "$demo" "$work/demo.html" >"$work/demo.json"; then
	pass
	check "the page as written" "$python" "$checker" source "$work/demo.html"
	snap "$work/demo.html" "$work/demo.dom" "$work/demo.png"
	check "the page in chromium: its plots, bars, lines and intervals" \
		shown dom "$work/demo.html" "$work/demo.dom" dom "$work/demo.json" "$work/demo.dom"
	check "the screenshot: colours, and bar heights in proportion to the counts" \
		shown png "$work/demo.html" "$work/demo.png" png "$work/demo.json" "$work/demo.png"
	# the checks can fail: a page cut short is caught in the file and in chromium
	size=$(wc -c <"$work/demo.html")
	head -c $((size * 3 / 5)) "$work/demo.html" >"$work/cut.html"
	if "$python" "$checker" source "$work/cut.html" 2>"$work/cut.err"; then
		fail "a page cut at 60% passes the source check"
	else
		pass
	fi
	if browse dom "$work/cut.html" "$work/cut.dom" &&
		"$python" "$checker" dom "$work/demo.json" "$work/cut.dom" 2>>"$work/cut.err"; then
		fail "a page cut at 60% passes the chromium check"
	else
		pass
	fi
else
	fail "$demo $work/demo.html"
fi

# recorded NAME PROG ARGS...: the recording $work/NAME.rt of PROG, made once
recorded() {
	name=$1
	shift
	[ -f "$work/$name.rt" ] && return 0
	"$tool" record -q "$@" >"$work/$name.record.out" 2>&1 && return 0
	cat "$work/$name.record.out" >&2
	fail "record $*"
	return 1
}

# analyzed NAME INPUT KIND MIN ANALYZE_ARGS...: $work/NAME.html (and the rows,
# NAME.json), the page's file checked, and chromium's DOM of it ($work/NAME.dom)
# holding at least MIN plots of KIND with marks drawn
analyzed() {
	name=$1
	input=$2
	kind=$3
	min=$4
	shift 4
	if ! "$tool" analyze "$@" --json "$input" >"$work/$name.json" 2>"$work/$name.err" ||
		! "$tool" analyze "$@" --html "$work/$name.html" "$input" >/dev/null 2>>"$work/$name.err"; then
		cat "$work/$name.err" >&2
		fail "analyze $* --html: failed"
		return 1
	fi
	pass
	check "$name: the page as written" "$python" "$checker" source "$work/$name.html"
	# the screenshot too, at on_screen's height: the page runs nothing, so its
	# DOM does not depend on the window's size
	height=2400
	snap "$work/$name.html" "$work/$name.dom" "$work/$name.png"
	height=
	check "$name: at least $min $kind plots in chromium" \
		shown dom "$work/$name.html" "$work/$name.dom" plots "$work/$name.dom" "$kind" "$min"
}

# on_screen NAME: the screenshot of $work/NAME.html shows what its DOM says is drawn
on_screen() {
	"$python" "$checker" expect "$work/$1.dom" "$work/$1.expect" 2>&1 &&
		{
			height=2400
			shown png "$work/$1.html" "$work/$1.png" png "$work/$1.expect" "$work/$1.png"
			rc=$?
			height=
			return $rc
		}
}

for given in "$@"; do
	[ -n "$given" ] || continue # an analyzer whose program the build does not have
	analyzer=${given%%=*}
	prog=${given#*=}
	case $analyzer in
	spans)
		recorded shape -o "$work/shape.rt" -- "$prog" shape || continue
		analyzed spans "$work/shape.rt" histogram 3 spans || continue
		check "spans: a histogram per span name, its bars adding up to the row's count" \
			"$python" "$checker" spans "$work/spans.json" "$work/spans.dom"
		check "spans: the histograms on screen" on_screen spans
		;;
	latency)
		recorded shape -o "$work/shape.rt" -- "$prog" shape || continue
		analyzed latency "$work/shape.rt" histogram 1 latency --from request --to reply || continue
		check "latency: the histogram on screen" on_screen latency
		;;
	rate)
		recorded paced --io -o "$work/paced.rt" -- "$prog" "$work" || continue
		# lines over time, by tag and by thread
		analyzed rate "$work/paced.rt" series 2 rate || continue
		check "rate: the lines on screen" on_screen rate
		;;
	by-arg)
		recorded paced --io -o "$work/paced.rt" -- "$prog" "$work" || continue
		analyzed by_arg "$work/paced.rt" table 1 by-arg --tag request --arg 4
		;;
	stalls)
		recorded sleeps -o "$work/sleeps.rt" -- "$prog" sleeps || continue
		analyzed stalls "$work/sleeps.rt" timeline 1 stalls || continue
		check "stalls: the timeline on screen" on_screen stalls
		;;
	*)
		fail "$given: no analyzer $analyzer"
		;;
	esac
done

if [ -n "${HTML_PAGE_KEEP:-}" ]; then
	mkdir -p "$HTML_PAGE_KEEP" && cp "$work"/*.html "$work"/*.dom "$work"/*.png "$work"/*.json "$HTML_PAGE_KEEP"/ 2>/dev/null
fi
finish
