# lib.sh - shared by the end-to-end scripts (sourced, not run).
#
# Every script gets a fresh temporary directory $work, removed on exit, and
# counts its checks: `check NAME COMMAND...` runs a command and records a
# pass or a failure; `finish` prints "N passed, M failed" and sets the exit
# status.

work=$(mktemp -d /tmp/ringtrace-e2e.XXXXXX)
# processes a script leaves running (it adds their pids to $background) end with it
background=
cleanup() {
	for pid in $background; do
		kill -9 "$pid" 2>/dev/null || true
	done
	rm -rf "$work"
}
trap cleanup EXIT INT TERM
passed=0
failed=0

pass() {
	passed=$((passed + 1))
}

fail() {
	failed=$((failed + 1))
	echo "FAIL: $*" >&2
}

# check DESCRIPTION COMMAND [ARG...]: the command must succeed.
check() {
	description=$1
	shift
	if "$@"; then
		pass
	else
		fail "$description"
	fi
}

finish() {
	echo "$passed passed, $failed failed"
	[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
}

# install_build BUILD_DIR CMAKE: install the build into $work/prefix, as a user would.
install_build() {
	prefix=$work/prefix
	if ! "$2" --install "$1" --prefix "$prefix" >"$work/install.log" 2>&1; then
		cat "$work/install.log" >&2
		fail "cmake --install $1"
		finish
		exit 1
	fi
	PKG_CONFIG_PATH=$prefix/lib/pkgconfig
	export PKG_CONFIG_PATH
}

# Lines of a file (0 for an empty one, and a last line without newline counts).
line_count() {
	awk 'END { print NR }' "$1"
}

# require_tools TOOL...: a missing compiler is a failure, not a skip: the
# issue asks for every one of them to be tested.
require_tools() {
	for t in "$@"; do
		if ! command -v "$t" >/dev/null 2>&1; then
			fail "$t is not installed (apt-get install clang g++ pkg-config)"
			finish
			exit 1
		fi
	done
}

# value FILE KEY...: the last field of the trace_count line starting with KEY...
value() {
	file=$1
	shift
	awk -v key="$*" 'index($0, key " ") == 1 { v = $NF } END { print v + 0 }' "$file"
}

# require_other_users [PROGRAM]: these checks act as other users through
# setpriv, so they need root; skipped (status 77) without it, or when
# another user cannot run PROGRAM (a private directory on its path).
require_other_users() {
	if [ "$(id -u)" -ne 0 ] || ! command -v setpriv >/dev/null 2>&1; then
		echo "skipped: needs root and setpriv to act as another user" >&2
		exit 77
	fi
	if [ $# -ge 1 ] && ! as_user 65534 "$1" --version >/dev/null 2>&1; then
		echo "skipped: another user cannot run $1 here (a private directory on its path)" >&2
		exit 77
	fi
}

# as_user UID COMMAND...: run COMMAND as UID (its own group, no other groups).
as_user() {
	uid=$1
	shift
	setpriv --reuid "$uid" --regid "$uid" --clear-groups "$@"
}

# clean_tracing_environment [LIBRARY]: none of the caller's RINGTRACE_*
# settings reach the programs a test runs; LIBRARY (a sanitizer build's
# library) becomes RINGTRACE_PRELOAD, for record to preload.
clean_tracing_environment() {
	if [ $# -ge 1 ]; then
		export RINGTRACE_PRELOAD="$1"
	else
		unset RINGTRACE_PRELOAD
	fi
	unset RINGTRACE_ARENA RINGTRACE_BUFFER RINGTRACE_MODE RINGTRACE_RINGS RINGTRACE_SYNC \
		RINGTRACE_INHERIT RINGTRACE_FUNCTIONS RINGTRACE_MAX_DEPTH \
		RINGTRACE_EXCLUDE_MODULES LD_PRELOAD
}
