#!/bin/sh
# html_page.sh TOOL DEMO - the `analyze --html` page, opened in headless Chromium.
#
# DEMO (html_demo.c) writes a page of one of each plot from known numbers and
# prints what it drew; check_html_page.py reads the file as written (well
# formed, nothing loaded), the page chromium prints (--dump-dom: the SVG
# elements, their counts and titles) and a screenshot (the bars' colours and
# heights in pixels). A truncated copy of the page must fail those checks.
# HTML_PAGE_KEEP=DIR keeps the pages, DOMs and screenshots there.
# Missing Chromium is a failure, not a skip.
set -u
tool=$1
demo=$2
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

# browse MODE PAGE OUT: chromium prints the page (dom) or takes a screenshot
# (png) of the file; the page runs nothing, so a short virtual-time budget
# does, and the timeout bounds a hang
browse() {
	mode=$1
	out=$3
	if [ "$mode" = dom ]; then
		what=--dump-dom
	else
		what=--screenshot=$out
	fi
	rm -f "$out"
	HOME=$work timeout 75 chromium --headless --no-sandbox --disable-gpu --enable-unsafe-swiftshader \
		--hide-scrollbars --no-first-run --user-data-dir="$work/chromium" --window-size=1000,1400 \
		--force-device-scale-factor=1 --virtual-time-budget=2000 "$what" "file://$2" \
		>"$work/chromium.out" 2>"$work/chromium.err"
	status=$?
	[ "$mode" = dom ] && mv "$work/chromium.out" "$out"
	return $status
}

# shown MODE PAGE OUT CHECK_ARGS...: browse, then check what chromium made of
# the page; a loaded machine may leave chromium short of time, so two tries
shown() {
	mode=$1
	page=$2
	out=$3
	shift 3
	for try in 1 2; do
		: >"$work/check.err"
		if browse "$mode" "$page" "$out" && "$python" "$checker" "$@" 2>"$work/check.err"; then
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

if [ -n "${HTML_PAGE_KEEP:-}" ]; then
	mkdir -p "$HTML_PAGE_KEEP" && cp "$work"/*.html "$work"/*.dom "$work"/*.png "$work"/*.json "$HTML_PAGE_KEEP"/ 2>/dev/null
fi
finish
