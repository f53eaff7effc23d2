#!/bin/sh
# names.sh RINGTRACE NAMES_CXX - C++ names in `replay` and `report`, and the
# reading filters of `replay`, `report` and `dump`.
#
# NAMES_CXX is names_cxx.cc built with -finstrument-functions at -O0 and
# linked with ringtrace.  The views name functions short by default
# (scopes and name: "geo::inner::Box::get"), whole with --full-names;
# report keeps overloads and template instances apart and shows those
# whose short names are the same by their full names.  The filters
# (--pid, --since/--until, -F/-N) are held to exactly the calls they must
# show.  Library functions (std::, __gnu_cxx::) vary with the C++ library:
# the exact lists leave them out with -N.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../e2e/lib.sh"
ringtrace=$1
program=$2
unset RINGTRACE_ARENA RINGTRACE_BUFFER RINGTRACE_MODE RINGTRACE_RINGS RINGTRACE_SYNC \
	RINGTRACE_FUNCTIONS RINGTRACE_MAX_DEPTH RINGTRACE_EXCLUDE_MODULES LD_PRELOAD

# run NAME: the program with an arena of its own; its pid in $work/NAME.pid
run() {
	# shellcheck disable=SC2016 # $$ is the shell's, which exec makes the program's
	if ! RINGTRACE_ARENA="$work/$1.arena" sh -c 'echo $$ >"$1"; exec "$2"' sh \
		"$work/$1.pid" "$program"; then
		fail "$1: the program failed"
		finish
		exit 1
	fi
}
run a
run b
arena=$work/a.arena
no_lib="-N std::* -N __gnu_cxx::*"

# view OUT ARGS...: `ringtrace ARGS...` into OUT; a failure is said in OUT.err and
# leaves what the checks of OUT then find
view() {
	out=$1
	shift
	"$ringtrace" "$@" >"$out" 2>"$out.err" || echo "ringtrace $*: exit $?" >>"$out.err"
}

# lambda FILE: the lambda as g++ names it ("main::{lambda(int, int)#1}"); clang++
# names it "main::$_0"
lambda() {
	sed 's/main::\$_0::/main::{lambda#1}::/' "$1"
}

# calls ARGS...: the function column of `replay ARGS...`, no heading
calls() {
	view "$work/replay.out" replay "$@"
	sed -n '/^#/d; s/^[^|]*| //p' "$work/replay.out" | lambda /dev/stdin
}

# same NAME EXPECTED ACTUAL: files equal, else the difference on stderr
same() {
	if diff "$2" "$3" >"$work/diff" 2>&1; then
		pass
	else
		fail "$1"
		cat "$work/diff" >&2
	fi
}

# ---- short names ---------------------------------------------------------------

cat >"$work/main.expected" <<'EOF'
main() {
  geo::area();
  geo::area();
  geo::twice();
  geo::twice();
  geo::inner::Box::Box();
  geo::inner::Box::get();
  geo::inner::Box::as();
  geo::Point::operator+();
  geo::Point::operator<();
  geo::Point::operator[]();
  (anonymous namespace)::hidden();
  main::{lambda#1}::operator()();
  geo::inner::Box::~Box();
} /* main */
EOF
# shellcheck disable=SC2086 # no_lib is a list of words
calls $no_lib "$arena" >"$work/main.out"
same "replay -N: main's own calls, named short" "$work/main.expected" "$work/main.out"

calls "$arena" >"$work/all.out"
check "replay names std::sort short" grep -qx '  std::sort() {' "$work/all.out"
check "replay: no template argument nor parameter in any name" \
	sh -c '! sed "s/operator()//; s/operator[<>]//; s/(anonymous namespace)//" "$1" | grep -qE "[<>]|\([^)]"' sh "$work/all.out"

# shellcheck disable=SC2086
view "$work/full.out" replay --full-names $no_lib "$arena"
check "replay --full-names: overloads whole" grep -qF 'geo::area(int, int)' "$work/full.out"
check "replay --full-names: template instances whole" \
	grep -qF 'int geo::twice<int>(int)' "$work/full.out"
check "replay --full-names: members whole" \
	grep -qF 'geo::inner::Box<int>::get() const' "$work/full.out"

# report: one row per function; a short name two functions share shows full
# shellcheck disable=SC2086
view "$work/report.json" report --json $no_lib "$arena"
lambda "$work/report.json" | sed 's/.*"function":"\([^"]*\)".*/\1/' | LC_ALL=C sort >"$work/rows.out"
LC_ALL=C sort >"$work/rows.expected" <<'EOF'
(anonymous namespace)::hidden
double geo::twice<double>(double)
geo::Point::operator+
geo::Point::operator<
geo::Point::operator[]
geo::area(double)
geo::area(int, int)
geo::inner::Box::Box
geo::inner::Box::as
geo::inner::Box::get
geo::inner::Box::~Box
int geo::twice<int>(int)
main
main::{lambda#1}::operator()
EOF
same "report: short names, full where two functions share one" "$work/rows.expected" \
	"$work/rows.out"
view "$work/report.txt" report "$arena"
check "report names std::sort short" grep -qE '  std::sort$' "$work/report.txt"
view "$work/report-full.txt" report --full-names "$arena"
check "report --full-names" grep -qF 'geo::inner::Box<int>::get() const' "$work/report-full.txt"
view "$work/folded.out" report --folded -F 'geo::area*' "$arena"
check "report --folded: the paths by the rows' names" \
	sh -c 'grep -q "^geo::area(double) [0-9]*$" "$1" && grep -q "^geo::area(int, int) [0-9]*$" "$1" &&
		[ "$(wc -l <"$1")" -eq 2 ]' sh "$work/folded.out"

# ---- function filters ------------------------------------------------------------

printf 'geo::area();\ngeo::area();\n' >"$work/area.expected"
calls -F 'geo::area' "$arena" >"$work/area.out"
same "replay -F: the short name, both overloads" "$work/area.expected" "$work/area.out"
printf 'geo::area();\n' >"$work/area1.expected"
calls -F 'geo::area(int, int)' "$arena" >"$work/area1.out"
same "replay -F: the full name, one overload" "$work/area1.expected" "$work/area1.out"
printf 'geo::Point::operator+();\ngeo::Point::operator<();\n' >"$work/glob.expected"
calls --filter 'geo::*::operator?' "$arena" >"$work/glob.out"
same "replay -F: a glob" "$work/glob.expected" "$work/glob.out"

calls -F std::sort "$arena" >"$work/sort.out"
check "replay -F: the call first, at the left" \
	sh -c '[ "$(head -n 1 "$1")" = "std::sort() {" ] && [ "$(tail -n 1 "$1")" = "} /* std::sort */" ]' \
	sh "$work/sort.out"
check "replay -F: its callees, inside it" \
	sh -c '[ "$(wc -l <"$1")" -gt 4 ] && ! sed "1d;\$d" "$1" | grep -qv "^  "' sh "$work/sort.out"
check "replay -F: nothing of main's own" sh -c '! grep -qE "geo::|main" "$1"' sh "$work/sort.out"

calls -F main -N 'std::sort' "$arena" >"$work/nosort.out"
check "replay -N inside -F: std::sort and its callees are gone" \
	sh -c '! grep -qE "sort|insertion|__unguarded" "$1"' sh "$work/nosort.out"
check "replay -N inside -F: the rest stays" grep -qF '  std::vector::vector() {' "$work/nosort.out"

# dump: the events of the calls kept
view "$work/dump-f.json" dump --json -F 'geo::area(double)' "$arena"
check "dump -F: the enter and the exit of that call" \
	sh -c '[ "$(grep -c "\"kind\":\"\(enter\|exit\)\"" "$1")" -eq 2 ] &&
		[ "$(grep -c "\"func\":\"geo::area(double)\"" "$1")" -eq 2 ]' sh "$work/dump-f.json"
view "$work/dump-n.json" dump --json -N 'std::*' -N '__gnu_cxx::*' -N 'geo::*' "$arena"
check "dump -N: main, hidden and the lambda left: 6 events" \
	sh -c '[ "$(grep -c "\"kind\":\"\(enter\|exit\)\"" "$1")" -eq 6 ]' sh "$work/dump-n.json"
view "$work/dump-tail.txt" dump -F 'geo::area' --tail 1 "$arena"
check "dump -F --tail 1: the last event kept" \
	sh -c '[ "$(grep -c "xit geo::area(double)" "$1")" -eq 1 ] && ! grep -q "enter" "$1"' \
	sh "$work/dump-tail.txt"

# ---- time range ------------------------------------------------------------------

# the time of geo::area(double)'s enter, as dump shows times
ts=$(sed -n 's/.*"kind":"enter","ts_ns":\([0-9]*\),.*"func":"geo::area(double)".*/\1/p' \
	"$work/dump-f.json")
if [ -z "$ts" ]; then
	fail "no time for geo::area(double)"
	ts=0
fi
printf 'geo::area();\n' >"$work/span.expected"
calls --since "${ts}ns" --until "${ts}ns" "$arena" >"$work/span.out"
same "replay --since/--until: the call entered then, with its exit" "$work/span.expected" \
	"$work/span.out"
view "$work/span.json" dump --json --since "${ts}ns" --until "${ts}ns" "$arena"
check "dump --since/--until: that enter and its exit" \
	sh -c '[ "$(grep -c "\"func\":\"geo::area(double)\"" "$1")" -eq 2 ] &&
		[ "$(grep -c "\"kind\":\"\(enter\|exit\)\"" "$1")" -eq 2 ]' sh "$work/span.json"
view "$work/span-report.json" report --json --since "${ts}ns" --until "${ts}ns" "$arena"
check "report --since/--until: one call counted" \
	sh -c '[ "$(wc -l <"$1")" -eq 1 ] && grep -q "\"function\":\"geo::area\",\"calls\":1," "$1"' \
	sh "$work/span-report.json"
printf 'main() {\n  geo::area();\n  geo::area();\n} /* main */\n' >"$work/until.expected"
calls --until "${ts}ns" "$arena" >"$work/until.out"
same "replay --until: main and what it called by then, main with its exit" \
	"$work/until.expected" "$work/until.out"
calls --since "${ts}ns" $no_lib "$arena" >"$work/since.out"
check "replay --since: the calls from then on, main's enter before it is not shown" \
	sh -c '[ "$(head -n 1 "$1")" = "geo::area();" ] && ! grep -q main\( "$1" &&
		[ "$(wc -l <"$1")" -eq 12 ]' sh "$work/since.out"

# ---- processes -----------------------------------------------------------------

pid_a=$(cat "$work/a.pid")
pid_b=$(cat "$work/b.pid")
# shellcheck disable=SC2086
calls --pid "$pid_b" $no_lib "$arena" "$work/b.arena" >"$work/pid.out"
check "replay --pid: that process alone" \
	sh -c 'grep -q "$2" "$1" && ! grep -q "$3" "$1" && [ "$(grep -c "main() {" "$1")" -eq 1 ]' sh \
	"$work/replay.out" "$pid_b" "$pid_a"
same "replay --pid: its calls" "$work/main.expected" "$work/pid.out"
view "$work/pid.json" dump --json --pid "$pid_a" "$arena" "$work/b.arena"
check "dump --pid: that process's events alone" \
	sh -c 'grep -q "\"pid\":$2" "$1" && ! grep -q "\"pid\":$3" "$1"' sh "$work/pid.json" \
	"$pid_a" "$pid_b"
view "$work/pids.json" report --json --pid "$pid_a" --pid "$pid_b" -F main "$arena" "$work/b.arena"
check "report --pid twice: both processes" grep -q '"function":"main","calls":2,' \
	"$work/pids.json"

# ---- the command line ----------------------------------------------------------

for cmd in replay report dump; do
	status=0
	"$ringtrace" $cmd --since 2ms --until 1ms "$arena" >/dev/null 2>&1 || status=$?
	check "$cmd: --until before --since is refused" [ "$status" -eq 2 ]
	status=0
	"$ringtrace" $cmd "$arena" -F >/dev/null 2>&1 || status=$?
	check "$cmd: -F needs a pattern" [ "$status" -eq 2 ]
	status=0
	"$ringtrace" $cmd --since 5 "$arena" >/dev/null 2>&1 || status=$?
	check "$cmd: a time needs its unit" [ "$status" -eq 2 ]
	"$ringtrace" $cmd --help >"$work/help" 2>&1 || :
	check "$cmd --help names the filters" grep -q -- '-N, --notrace PATTERN' "$work/help"
done
finish
