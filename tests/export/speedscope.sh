#!/bin/sh
# speedscope.sh TOOL PROG VIEWER_DIR - `ringtrace export --chrome` of a real
# recording of export_prog, opened in speedscope in headless Chromium.
#
# speedscope (pinned in viewer/package-lock.json) is installed with `npm ci`
# into VIEWER_DIR, in the build tree, when it is not there yet. A loopback
# HTTP server serves it and the export side by side; the page loads the
# export through its #profileURL= hash. check_speedscope.py then reads the
# page chromium prints (the sandwich view lists the functions in a table) and
# a screenshot of the time-order view (the flame chart is on a canvas).
# Missing Chromium or npm is a failure, not a skip.
set -u
tool=$1
prog=$2
viewer=$3
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../e2e/lib.sh"
unset RINGTRACE_ARENA RINGTRACE_BUFFER RINGTRACE_MODE LD_PRELOAD
python=/usr/bin/python3
[ -x "$python" ] || python=python3
server_pid=
trap '[ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null; rm -rf "$work"' EXIT
trap 'exit 1' INT TERM

# stop NAME: a requirement is missing; the test fails saying how to get it
stop() {
	fail "$*"
	finish
	exit 1
}

if ! command -v chromium >/dev/null 2>&1; then
	"$here/../../scripts/ensure-packages" chromium ||
		stop "chromium is not installed (apt-get install -y --no-install-recommends chromium)"
fi
command -v npm >/dev/null 2>&1 ||
	stop "npm is not installed (apt-get install -y nodejs npm)"

# speedscope, as the lock file pins it; installed again when the lock changes
mkdir -p "$viewer" && viewer=$(cd "$viewer" && pwd) || stop "cannot create $viewer"
release=$viewer/node_modules/speedscope/dist/release
if [ ! -f "$release/index.html" ] || ! cmp -s "$here/viewer/package-lock.json" "$viewer/package-lock.json"; then
	cp "$here/viewer/package.json" "$here/viewer/package-lock.json" "$here/viewer/.npmrc" "$viewer/" ||
		stop "cannot copy the viewer's package files into $viewer"
	tries=0
	until (cd "$viewer" && npm ci --no-audit --no-fund) >"$work/npm.log" 2>&1; do
		tries=$((tries + 1))
		if [ "$tries" -ge 3 ]; then
			cat "$work/npm.log" >&2
			stop "npm ci in $viewer failed 3 times (it needs the npm registry)"
		fi
		sleep 5
	done
fi
[ -f "$release/index.html" ] || stop "$release/index.html: speedscope is not installed"

# the page's root: speedscope's files and the export, one origin
mkdir "$work/root" && ln -s "$release" "$work/root/viewer" || stop "cannot make the server's root"
check "record --io runs the program" "$tool" record -q --io -o "$work/prog.rt" -- "$prog" "$work"
if [ -n "${SPEEDSCOPE_PROFILE:-}" ]; then
	# a given file in place of the export: how the test is shown to fail
	cp "$SPEEDSCOPE_PROFILE" "$work/root/profile.json"
else
	check "export --chrome" sh -c '"$1" export --chrome "$2" >"$3"' sh "$tool" "$work/prog.rt" \
		"$work/root/profile.json"
fi

# a free loopback port, asked of the kernel; another process may take it before
# the server binds, so a server that does not answer is started again elsewhere
free_port() {
	"$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
answers() {
	"$python" -c '
import sys, urllib.request
urllib.request.urlopen(sys.argv[1], timeout=5).read()' "http://127.0.0.1:$1/viewer/index.html" 2>/dev/null
}
port=
for attempt in 1 2 3 4 5; do
	p=$(free_port) || break
	(cd "$work/root" && exec "$python" -m http.server "$p" --bind 127.0.0.1) >"$work/http.log" 2>&1 &
	server_pid=$!
	waited=0
	while [ "$waited" -lt 30 ] && kill -0 "$server_pid" 2>/dev/null; do
		if answers "$p"; then
			port=$p
			break 2
		fi
		sleep 1
		waited=$((waited + 1))
	done
	kill "$server_pid" 2>/dev/null
	wait "$server_pid" 2>/dev/null
	server_pid=
done
[ -n "$port" ] || { cat "$work/http.log" >&2; stop "no HTTP server answered on loopback"; }
origin=http://127.0.0.1:$port
page="$origin/viewer/index.html#profileURL=$(printf %s "$origin/profile.json" | sed 's/:/%3A/g; s|/|%2F|g')"

# browse MODE OUT [HASH]: chromium prints the page (dom) or takes a screenshot
# (png) once speedscope's work is done; the virtual-time budget lets the page
# run its timers without waiting on the wall clock, the timeout bounds a hang
browse() {
	mode=$1
	out=$2
	url=$page${3:-}
	if [ "$mode" = dom ]; then
		set -- --dump-dom "$url"
	else
		set -- --screenshot="$out" "$url"
	fi
	rm -f "$out"
	HOME=$work timeout 75 chromium --headless --no-sandbox --disable-gpu --enable-unsafe-swiftshader \
		--hide-scrollbars --no-first-run --user-data-dir="$work/chromium" --window-size=1000,600 \
		--virtual-time-budget=15000 "$@" >"$work/chromium.out" 2>"$work/chromium.err"
	status=$?
	[ "$mode" = dom ] && mv "$work/chromium.out" "$out"
	return $status
}

# shown MODE OUT HASH CHECK_ARGS...: browse, and check what the page shows; a loaded
# machine may leave chromium short of time, so two tries
shown() {
	mode=$1
	out=$2
	what=$3
	shift 3
	for try in 1 2; do
		: >"$work/check.err"
		if browse "$mode" "$out" "$what" && "$python" "$here/check_speedscope.py" "$@" 2>"$work/check.err"; then
			pass
			return 0
		fi
		[ "$status" -eq 124 ] &&
			echo "chromium: no page after 75 s (speedscope alerts, and waits, on a profile it cannot import)" >"$work/check.err"
		rm -rf "$work/chromium"
	done
	grep -v -e dbus -e gl_utils "$work/chromium.err" >&2
	cat "$work/check.err" >&2
	fail "$mode: speedscope does not show the export as it should"
	return 1
}

shown dom "$work/sandwich.html" "&view=sandwich" dom "$work/root/profile.json" "$work/sandwich.html" &&
	shown png "$work/flame.png" "" png "$work/flame.png" "$work/sandwich.html"
finish
