#!/bin/sh
# relative_names.sh RINGTRACE TARGET PLUGIN - a plugin loaded by a relative
# name (dlopen("./libplugin.so") in the directory that holds it) is named by
# its absolute path in the module map, so that its functions are named when
# the arena or the trace file is read from another directory.
#
# TARGET (relative_target.c) changes to a directory of its own, loads the
# plugin (plugin.c, built with -finstrument-functions) as ./libplugin.so and
# calls it: once with tracing started before the load, once started after
# it, back in "/" (the arena's rundown then finds the relative name where
# it means nothing).  Each run is read from its arena and from a trace file
# of `ringtrace record`, in a directory with no libplugin.so.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../e2e/lib.sh"
ringtrace=$1
target=$2
unset RINGTRACE_ARENA RINGTRACE_BUFFER RINGTRACE_MODE RINGTRACE_FUNCTIONS LD_PRELOAD
python=/usr/bin/python3
[ -x "$python" ] || python=python3

run=$(cd "$work" && pwd -P)/run
mkdir "$run" "$work/elsewhere"
cp "$3" "$run/libplugin.so"

for when in after before; do
	for input in arena trace; do
		name=$when-$input
		if [ "$input" = arena ]; then
			file=$work/$name.arena
			RINGTRACE_ARENA=$file "$target" "$run" "$when" >"$work/$name.out"
		else
			file=$work/$name.rt
			"$ringtrace" record -q -o "$file" -- "$target" "$run" "$when" >"$work/$name.out"
		fi
		cd "$work/elsewhere"
		"$ringtrace" dump --json "$file" >"$work/$name.json"
		"$ringtrace" replay "$file" >"$work/$name.replay"
		"$ringtrace" info --json "$file" >"$work/$name.info"
		cd "$work"
		if "$python" - "$work/$name" "$run/libplugin.so" <<'PY'
import json, sys
base, plugin = sys.argv[1:3]
info = json.load(open(base + ".info"))
modules = info.get("modules") or [m for p in info["processes"] for m in p["modules"]]
paths = [m["path"] for m in modules]
enters = [o for o in map(json.loads, open(base + ".json")) if o.get("kind") == "enter"]
got = [(o.get("func"), o.get("module")) for o in enters]
replay = open(base + ".replay").read()
errors = []
if plugin not in paths:
    errors.append("module map %s has no %s" % (paths, plugin))
if [p for p in paths if not p.startswith("/")]:
    errors.append("relative paths in the module map: %s" % paths)
if got != [("plugin_value", "libplugin.so"), ("plugin_a_work", "libplugin.so")]:
    errors.append("enters %s" % got)
if "plugin_value" not in replay or "plugin_a_work" not in replay:
    errors.append("replay does not name the functions:\n" + replay)
for e in errors:
    print(base.rsplit("/", 1)[1] + ": " + e)
sys.exit(1 if errors else 0)
PY
		then
			pass
		else
			fail "$name: the plugin named by its absolute path"
		fi
	done
done
finish
