#!/bin/sh
# read_limits.sh RINGTRACE READ_LIMITS - the reading limits of `replay` and `report`:
# -t TIME (only calls that lasted TIME or more) and -D N (only calls at levels below N).
#
# READ_LIMITS (read_limits.c) makes calls of known depths and lengths, long ones spinning
# 40 ms and short ones lasting microseconds, ended every way: returned, unwound, exit not
# recorded, enter not recorded, thread ended, and by its argument open at exit() or not
# returned.  Checked: replay's exact lines with -t 10ms, -D, both, and with -F, -N, --tid,
# --since; report's exact call counts; --folded; every count also against what
# check_limits.py works out from `dump --json` on its own, at thresholds that split the
# short calls by their measured lengths; and the command line.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../e2e/lib.sh"
ringtrace=$1
program=$2
clean_tracing_environment
python=/usr/bin/python3
[ -x "$python" ] || python=python3
cd "$work"

# The fixed lines below hold while every short call lasts well under 10 ms and every long
# one well over: on a loaded machine a short call can lose its CPU for longer.  So a run
# whose calls do not split cleanly (the calls lasting 5 ms or more are not those lasting
# 20 ms or more, as check_limits.py counts them, or stays, short, lasted 5 ms: exit()
# runs other handlers first, a sanitizer's leak check among them) is made again, up to
# five times.
split_cleanly() {
	a=$("$python" "$here/check_limits.py" "$1" 5000000 0)
	b=$("$python" "$here/check_limits.py" "$1" 20000000 0)
	[ "$a" = "$b" ] && ! printf '%s\n' "$a" | grep -q '^stays '
}
for how in return exit _exit; do
	tries=0
	while :; do
		rm -f "$work/$how.arena"
		if ! RINGTRACE_ARENA=$work/$how.arena "$program" "$how" >/dev/null; then
			fail "the program ($how) failed"
			finish
			exit 1
		fi
		"$ringtrace" dump --json "$work/$how.arena" >"$work/$how.json"
		tries=$((tries + 1))
		if split_cleanly "$work/$how.json" || [ "$tries" -ge 5 ]; then
			break
		fi
		echo "# $how: a short call lasted 5 ms or more (a loaded machine): run again" >&2
	done
done
arena=$work/return.arena
cp "$work/return.json" dump.json

# view OUT ARGS...: `ringtrace ARGS...` into OUT; a failure is said in OUT.err
view() {
	out=$1
	shift
	"$ringtrace" "$@" >"$out" 2>"$out.err" || echo "ringtrace $*: exit $?" >>"$out.err"
}

# lines ARGS...: the function column of `replay ARGS...`, no heading, into replay.out
lines() {
	view replay.raw replay "$@"
	sed -n '/^#/d; s/^[^|]*| //p' replay.raw >replay.out
}

# counts ARGS...: "function calls" of `report --json ARGS...`, sorted, on one line
counts() {
	view report.json report --json "$@"
	"$python" -c 'import json, sys
for line in sys.stdin:
    o = json.loads(line)
    print(o["function"], o["calls"])' <report.json | sort | tr '\n' ' '
}

# same NAME EXPECTED_FILE: replay.out must be it, else the difference on stderr
same() {
	if diff "$2" replay.out >diff.out 2>&1; then
		pass
	else
		fail "$1"
		cat diff.out replay.raw.err >&2
	fi
}

# ---- -t: the calls that lasted 10 ms or more -------------------------------------

cat >t.expected <<'EOF'
main() {
  warm();
  /* begin */
  work() {
    slow() {
      /* note */
    } /* slow */
  } /* work */
  /* begin */
  work() {
    slow() {
      /* note */
    } /* slow */
  } /* work */
  nest() {
    nest() {
      nest() {
        nest() {
          nest();
        } /* nest */
      } /* nest */
    } /* nest */
  } /* nest */
  jumper() {
    jump_away(); /* unwound */
  } /* jumper */
  lost_exit(); /* exit not recorded */
ends_thread() {
  te_outer(); /* thread ended */
} /* ends_thread: thread ended */
} /* main */
EOF
lines -t 10ms "$arena"
same "replay -t 10ms: the long calls nested as they ran, the events of short ones under \
the innermost call shown, a call's event before its line when it came before the call \
was known long" t.expected
lines --time-filter 10ms "$arena"
same "replay --time-filter: the same" t.expected
lines --min-duration=10ms "$arena"
same "replay --min-duration (record's name): the same" t.expected

long="ends_thread 1 jump_away 1 jumper 1 lost_exit 1 main 1 nest 5 slow 2 te_outer 1 warm 1 work 2 "
check "report -t 10ms: the long calls counted" [ "$(counts -t 10ms "$arena")" = "$long" ]
# the time of a hidden call is its caller's own: work's self time is its total but slow's
check "report -t 10ms: work's self time holds its hidden callees" "$python" -c '
import json, sys
rows = {o["function"]: o for o in map(json.loads, open(sys.argv[1]))}
sys.exit(rows["work"]["self_ns"] != rows["work"]["total_ns"] - rows["slow"]["total_ns"])' \
	report.json
check "report -t 10ms: the incomplete call is lost_exit's" \
	grep -q '"function":"lost_exit","calls":1,.*"incomplete":1}' report.json
view folded.out report --folded -t 10ms "$arena"
cut -d' ' -f1 folded.out | tr '\n' ' ' >folded.paths
check "report --folded -t 10ms: the paths of the long calls" [ "$(cat folded.paths)" = \
	"ends_thread ends_thread;te_outer main main;jumper main;jumper;jump_away main;lost_exit main;nest main;nest;nest main;nest;nest;nest main;nest;nest;nest;nest main;nest;nest;nest;nest;nest main;warm main;work main;work;slow " ]
work_self=$(sed -n 's/.*"function":"work",.*"self_ns":\([0-9]*\),.*/\1/p' report.json)
check "report --folded -t 10ms: a path weighs its calls' self time, as report counts it" \
	grep -qx "main;work $work_self" folded.out

# every count against the reference, at thresholds the short calls' measured lengths
# split (a call's length as the trace says it, whatever the machine's load made it)
for limits in "10000000 0" "1000 0" "20000 0" "200000 0" "0 2" "0 3" "1000 3" "20000 4"; do
	# shellcheck disable=SC2086 # two numbers, split on purpose
	set -- $limits
	"$python" "$here/check_limits.py" dump.json "$1" "$2" | tr '\n' ' ' >reference
	depth=
	[ "$2" = 0 ] || depth="-D $2"
	# shellcheck disable=SC2086 # depth is empty or two words
	got=$(counts -t "$1ns" $depth "$arena")
	check "report -t $1ns $depth: the calls the trace says lasted that long ($(wc -w <reference) words)" \
		[ "$got" = "$(cat reference)" ]
done

# ---- -D: the calls at levels below N -----------------------------------------------

printf 'main() {\n  /* begin */\n  /* note */\n  /* begin */\n  /* note */\nends_thread(); /* thread ended */\n} /* main */\n' >d1.expected
lines -D 1 "$arena"
same "replay -D 1: the outermost calls, every event under them" d1.expected
cat >d2.expected <<'EOF'
main() {
  warm();
  work() {
    /* begin */
    /* note */
  } /* work */
  work() {
    /* begin */
    /* note */
  } /* work */
  nest();
  jumper();
  lost_exit(); /* exit not recorded */
  quick();
  } /* unentered: enter not recorded */
ends_thread() {
  te_outer(); /* thread ended */
} /* ends_thread: thread ended */
} /* main */
EOF
lines --depth 2 "$arena"
same "replay -D 2: two levels, a call whose callees are all deeper is one line" d2.expected
check "report -D 2: the calls at levels 0 and 1" [ "$(counts -D 2 "$arena")" = \
	"ends_thread 1 jumper 1 lost_exit 1 main 1 nest 1 quick 1 te_outer 1 warm 1 work 2 " ]
check "report -D 1: the outermost calls" [ "$(counts -D 1 "$arena")" = "ends_thread 1 main 1 " ]

# ---- both, and with the other filters ------------------------------------------------

cat >dt.expected <<'EOF'
main() {
  warm();
  /* begin */
  work() {
    slow() {
      /* note */
    } /* slow */
  } /* work */
  /* begin */
  work() {
    slow() {
      /* note */
    } /* slow */
  } /* work */
  nest() {
    nest();
  } /* nest */
  jumper() {
    jump_away(); /* unwound */
  } /* jumper */
  lost_exit(); /* exit not recorded */
ends_thread() {
  te_outer(); /* thread ended */
} /* ends_thread: thread ended */
} /* main */
EOF
lines -D 3 -t 10ms "$arena"
same "replay -D 3 -t 10ms" dt.expected
check "report -D 3 -t 10ms" [ "$(counts -t 10ms -D 3 "$arena")" = \
	"ends_thread 1 jump_away 1 jumper 1 lost_exit 1 main 1 nest 2 slow 2 te_outer 1 warm 1 work 2 " ]

printf 'nest() {\n  nest();\n} /* nest */\n' >fn.expected
lines -F nest -D 2 "$arena"
same "replay -F nest -D 2: levels count from the filtered call" fn.expected
check "report -F nest -D 2" [ "$(counts -F nest -D 2 "$arena")" = "nest 2 " ]
printf 'work() {\n  /* begin */\n  /* note */\n} /* work */\n' >fw.expected
cat fw.expected fw.expected >fw2.expected
lines -F work -D 1 "$arena"
same "replay -F work -D 1: the filtered calls, their events under them" fw2.expected
printf 'slow() {\n  /* note */\n} /* slow */\n' >fs.expected
cat fs.expected fs.expected >fs2.expected
lines -F slow -t 10ms "$arena"
same "replay -F slow -t 10ms" fs2.expected
check "report -t 10ms -N work -D 2" [ "$(counts -t 10ms -N work -D 2 "$arena")" = \
	"ends_thread 1 jumper 1 lost_exit 1 main 1 nest 1 te_outer 1 warm 1 " ]

# --tid: the thread that called pthread_exit
lines "$arena"
tid=$(sed -n 's/.*\[ *\([0-9]*\)\] | ends_thread() {$/\1/p' replay.raw | head -n 1)
lines --tid "${tid:-0}" -t 10ms "$arena"
printf 'ends_thread() {\n  te_outer(); /* thread ended */\n} /* ends_thread: thread ended */\n' \
	>tid.expected
same "replay --tid -t 10ms: te_inner, short, is hidden" tid.expected

# --since the second "begin": main's and work's enters came before it, slow is the first
# call kept, at level 0
since=$(sed -n 's/.*"kind":"trace","ts_ns":\([0-9]*\),.*"tag":"begin".*/\1/p' dump.json |
	sed -n 2p)
lines --since "${since:-0}ns" -t 10ms -D 2 "$arena"
cat >since.expected <<'EOF2'
/* begin */
slow() {
  /* note */
} /* slow */
nest() {
  nest();
} /* nest */
jumper() {
  jump_away(); /* unwound */
} /* jumper */
lost_exit(); /* exit not recorded */
ends_thread() {
  te_outer(); /* thread ended */
} /* ends_thread: thread ended */
EOF2
same "replay --since -t 10ms -D 2: levels from the outermost call kept" since.expected

# ---- how calls ended ---------------------------------------------------------------

lines -t 10ms "$work/exit.arena"
check "replay -t 10ms: a long call open at exit()" grep -qx '  exit_inside(); /\* open at exit() \*/' replay.out
check "replay -t 10ms: ... main too" grep -qx '} /\* main: open at exit() \*/' replay.out
check "replay -t 10ms: ... not the short one" sh -c '! grep -q stays replay.out'
check "report -t 10ms: the call open at exit() counted" [ "$(counts -t 10ms "$work/exit.arena")" = \
	"ends_thread 1 exit_inside 1 jump_away 1 jumper 1 lost_exit 1 main 1 nest 5 slow 2 te_outer 1 warm 1 work 2 " ]

lines "$work/_exit.arena"
check "replay: the calls open at the end, stays too" grep -qx '    stays(); /\* not returned \*/' \
	replay.out
lines -t 10ms "$work/_exit.arena"
check "replay -t 10ms: a call open at the end that lasted 10 ms by its thread's last event" \
	grep -qx '  exit_inside(); /\* not returned \*/' replay.out
check "replay -t 10ms: ... not stays, entered at the very end" sh -c '! grep -q stays replay.out'
check "replay -t 10ms: ... main not returned" grep -qx '} /\* main: not returned \*/' replay.out
"$ringtrace" dump --json "$work/_exit.arena" >dump_exit.json
"$python" "$here/check_limits.py" dump_exit.json 10000000 0 | tr '\n' ' ' >reference
check "report -t 10ms of calls open at the end: as the reference" \
	[ "$(counts -t 10ms "$work/_exit.arena")" = "$(cat reference)" ]

# an exit without its enter: with -t, only when nothing of its thread was open around it
# and it came 10 ms after the thread's first event (main's enter cut off here)
"$ringtrace" cut -q --from seq:1 "$arena" cut.rt
lines -t 10ms cut.rt
check "replay -t 10ms of a cut: main's exit without its enter, long" \
	grep -qx '} /\* main: enter not recorded \*/' replay.out
check "replay -t 10ms of a cut: ... unentered's, nothing open around it now" \
	grep -qx '} /\* unentered: enter not recorded \*/' replay.out
lines -t 10ms "$arena"
check "replay -t 10ms: unentered's exit, main open around it, is hidden" \
	sh -c '! grep -q unentered replay.out'
lines -D 1 "$arena"
check "replay -D 1: unentered's exit, at level 1, is hidden" sh -c '! grep -q unentered replay.out'

# ---- the command line --------------------------------------------------------------

# refused NAME WORDS...: `ringtrace WORDS...` must exit 2; its stderr in refused.err
refused() {
	name=$1
	shift
	status=0
	"$ringtrace" "$@" >/dev/null 2>refused.err || status=$?
	check "$name: status 2" [ "$status" -eq 2 ]
}
for cmd in replay report; do
	refused "$cmd -t 5" $cmd -t 5 "$arena"
	check "$cmd -t 5: a number without a unit is said" grep -q "'5' has no unit" refused.err
	refused "$cmd -t 2.5" $cmd -t 2.5 "$arena"
	check "$cmd -t 2.5: ... with a fraction too" grep -q "'2.5' has no unit" refused.err
	refused "$cmd -t 10xs" $cmd -t 10xs "$arena"
	check "$cmd -t 10xs: a duration is asked for" grep -q -- "-t needs a duration" refused.err
	refused "$cmd -t with nothing" $cmd "$arena" -t
	refused "$cmd -D 0" $cmd -D 0 "$arena"
	check "$cmd -D 0: says what -D takes" grep -q -- "-D needs a number of levels" refused.err
	refused "$cmd -D x" $cmd -D x "$arena"
	"$ringtrace" $cmd --help >help.out
	check "$cmd --help: -t" grep -q -- '-t, --time-filter TIME' help.out
	check "$cmd --help: -D" grep -q -- '-D, --depth N' help.out
	check "$cmd --help: the usage line" grep -q -- '\[-t TIME\] \[-D N\]' help.out
done
refused "report --io -t" report --io -t 1ms "$arena"
refused "report --io -D" report --io -D 2 "$arena"
finish
