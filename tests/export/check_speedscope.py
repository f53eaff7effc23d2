#!/usr/bin/env python3
"""check_speedscope.py - what speedscope shows of an export --chrome file.

  check_speedscope.py dom EXPORT DOM
      DOM is the page chromium --dump-dom printed with the profile open in
      the sandwich view: it must name a thread of EXPORT, and its symbol
      table must list exactly the functions that thread calls in EXPORT.
  check_speedscope.py png SHOT DOM
      SHOT is a screenshot of the time-order view: it must not be blank, and
      the flame chart must be drawn in the colours the sandwich view gives
      the functions (the canvas holds the names, the colours tie it to them).

The PNG is decoded with zlib (tests/lib/png.py), so the test needs nothing beyond python3.
"""

import html
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import png  # noqa: E402  (tests/lib/png.py: the PNG decoder the page tests share)


def die(msg):
    print("check_speedscope: " + msg, file=sys.stderr)
    sys.exit(1)


def symbols(dom):
    """(name, (r, g, b)) of every row of the sandwich view's symbol table."""
    rows = re.findall(
        r'<span [^>]*style="background-color: rgb\((\d+), (\d+), (\d+)\);"[^>]*>'
        r'</span>([^<]*)</td>', dom)
    return [(html.unescape(name), (int(r), int(g), int(b))) for r, g, b, name in rows]


def check_dom(export_path, dom_path):
    with open(dom_path, encoding="utf-8", errors="replace") as f:
        dom = f.read()
    if "Something went wrong" in dom:
        die(f"{dom_path}: speedscope could not import the profile")
    if "<title>profile.json - speedscope</title>" not in dom:
        die(f"{dom_path}: the profile did not load (no title naming it)")
    # the toolbar names the profile on view, "PROCESS (pid P), THREAD (tid T)",
    # and with several threads a table lists them all the same way
    shown = re.search(r">([^<>]*) \(pid (\d+)\), ([^<>]*) \(tid (\d+)\)", dom)
    if not shown:
        die(f"{dom_path}: no profile named in the toolbar")
    pid, thread, tid = int(shown.group(2)), html.unescape(shown.group(3)), int(shown.group(4))
    listed_threads = {(int(p), html.unescape(n), int(t))
                      for p, n, t in re.findall(r'<tr title="[^"]* \(pid (\d+)\), ([^"]*) \(tid (\d+)\)"', dom)}
    # what speedscope shows is read first: a broken export must fail there
    with open(export_path) as f:
        try:
            events = json.load(f)["traceEvents"]
        except (ValueError, KeyError) as e:
            die(f"{export_path}: not a trace-event file: {e}")
    threads = {(e["pid"], e["args"]["name"], e["tid"])
               for e in events if e.get("ph") == "M" and e.get("name") == "thread_name"}
    if (pid, thread, tid) not in threads:
        die(f"{dom_path}: shows thread {thread!r} (pid {pid} tid {tid}), not one the export names")
    if len(threads) > 1 and listed_threads != threads:
        die(f"{dom_path}: lists threads {sorted(listed_threads)}, the export has {sorted(threads)}")
    # spans (B/E) and I/O calls (X); speedscope names a frame by its name and its
    # args, so each call is a row of its own, "NAME {ARGS}"
    called = {e["name"] for e in events if e.get("ph") in ("B", "X") and e.get("tid") == tid and e.get("pid") == pid}
    listed = symbols(dom)
    if not listed:
        die(f"{dom_path}: the sandwich view lists no function")
    got = {name.split(" {", 1)[0] for name, _ in listed}
    if got != called:
        die(f"{dom_path}: {thread} lists {sorted(got)}, the export has it call {sorted(called)}")
    print(f"speedscope lists {len(listed_threads) or 1} threads, shows {thread} (tid {tid}) calling "
          f"{', '.join(sorted(got))} in {len(listed)} rows")


def png_pixels(path):
    try:
        return png.pixels(path)
    except (OSError, ValueError) as e:
        die(str(e))


def check_png(shot_path, dom_path):
    with open(dom_path, encoding="utf-8", errors="replace") as f:
        listed = symbols(f.read())
    if not listed:
        die(f"{dom_path}: the sandwich view lists no function to look for")
    width, height, rows = png_pixels(shot_path)
    counts = {}
    for row in rows:
        for px in row:
            counts[px] = counts.get(px, 0) + 1
    top = max(counts.values())
    if top > width * height * 0.98:
        die(f"{shot_path}: {width}x{height}, blank ({top} pixels of one colour)")

    # a function's bars: pixels within a few steps of its swatch colour
    # (the canvas and the table blend the same colour a little differently)
    def near(colour, px, slack=10):
        return all(abs(a - b) <= slack for a, b in zip(colour, px))

    found = []
    for name, colour in listed:
        n = sum(c for px, c in counts.items() if near(colour, px))
        if n >= 50:
            found.append(name)
    # the flame chart: rows of colour (not grey) under the toolbar
    coloured_rows = sum(1 for row in rows[height // 8:] if sum(1 for r, g, b in row if max(r, g, b) - min(r, g, b) > 30) > width // 20)
    if not found:
        die(f"{shot_path}: none of the colours of {[n for n, _ in listed]} is drawn")
    # main spans its thread's whole time: its bar is always wide enough to see
    mains = [n for n, _ in listed if n.split(" {", 1)[0] == "main"]
    if mains and not any(n in found for n in mains):
        die(f"{shot_path}: main is not drawn in its colour")
    if coloured_rows < 10:
        die(f"{shot_path}: only {coloured_rows} rows hold the flame chart's colours")
    print(f"screenshot {width}x{height}: {len(counts)} colours, {coloured_rows} rows of flame chart, "
          f"bars of {len(found)}/{len(listed)} functions in their colours")


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in ("dom", "png"):
        die("usage: check_speedscope.py dom EXPORT DOM | png SHOT DOM")
    if sys.argv[1] == "dom":
        check_dom(sys.argv[2], sys.argv[3])
    else:
        check_png(sys.argv[2], sys.argv[3])


if __name__ == "__main__":
    main()
