#!/bin/sh
# plugin_names.sh RINGTRACE TARGET PLUGIN_A PLUGIN_B - function events of a
# plugin unloaded and replaced by another at the same addresses are named
# after the plugin that was loaded there at the time of each event.
#
# TARGET (modules_target.c) loads PLUGIN_A, calls it, unloads it, then loads
# PLUGIN_B and calls it; both are plugin.c built with -finstrument-functions,
# A's inner function named plugin_a_work and B's plugin_b_work.  The check
# needs the loader to have put B exactly where A was, which it does on an
# otherwise idle address space; the test fails, rather than passes
# vacuously, if it did not.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../e2e/lib.sh"
ringtrace=$1
target=$2
plugin_a=$3
plugin_b=$4
unset RINGTRACE_ARENA RINGTRACE_BUFFER RINGTRACE_MODE RINGTRACE_FUNCTIONS LD_PRELOAD
python=/usr/bin/python3
[ -x "$python" ] || python=python3

RINGTRACE_ARENA="$work/plugins.arena" "$target" "$plugin_a" "$plugin_b" >"$work/out"
check "both plugins ran" sh -c "grep -q '^A ' '$work/out' && grep -q '^B ' '$work/out'"
a_addr=$(awk '$1 == "A" { print $2 }' "$work/out")
b_addr=$(awk '$1 == "B" { print $2 }' "$work/out")
check "the loader put B where A was ($a_addr, $b_addr)" [ "$a_addr" = "$b_addr" ]

for input in arena trace; do
	if [ "$input" = trace ]; then
		"$ringtrace" record -q -o "$work/plugins.rt" -- "$target" "$plugin_a" "$plugin_b" \
			>/dev/null
		file="$work/plugins.rt"
	else
		file="$work/plugins.arena"
	fi
	"$ringtrace" dump --json "$file" >"$work/$input.json"
	# the enters, in order: function, module and address of each
	"$python" - "$work/$input.json" "$(basename "$plugin_a")" "$(basename "$plugin_b")" \
		>"$work/$input.check" <<'PY' || fail "$input: names by the plugin loaded at the time"
import json, sys
path, mod_a, mod_b = sys.argv[1:4]
enters = [o for o in map(json.loads, open(path)) if o.get("kind") == "enter"]
got = [(o["func"], o["module"]) for o in enters]
want = [("plugin_value", mod_a), ("plugin_a_work", mod_a),
        ("plugin_value", mod_b), ("plugin_b_work", mod_b)]
errors = []
if got != want:
    errors.append("enters %s, expected %s" % (got, want))
elif enters[0]["addr"] != enters[2]["addr"] or enters[1]["addr"] != enters[3]["addr"]:
    errors.append("A and B ran at different addresses: nothing was tested")
for e in errors:
    print(e)
sys.exit(1 if errors else 0)
PY
	cat "$work/$input.check"
done
finish
