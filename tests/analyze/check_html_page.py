#!/usr/bin/env python3
"""check_html_page.py - what Chromium makes of a `ringtrace analyze --html` page.

  check_html_page.py source PAGE
      The file as written: strict UTF-8, every element closed in order, no
      script, nothing loaded from elsewhere (no src, href, url() or http).
  check_html_page.py dom EXPECT DOM
      DOM is the page as chromium --dump-dom printed it; EXPECT (JSON) says
      what was drawn: {"title", "histograms": [{"title", "counts": [[bucket,
      count]...]}], "series": [{"title", "lines": [names]}], "timelines":
      [{"title", "lanes": [names], "intervals": [count per lane]}]}.  Each
      plot must be there, in order, with one bar per bucket holding its
      count, one line per name, one interval per interval drawn.
  check_html_page.py png EXPECT SHOT
      SHOT is chromium's screenshot: not blank; each histogram's bars in the
      bar colour, as many as EXPECT says, their heights in pixels
      proportional to the counts within 2 pixels; the lines in their
      colours; the timeline's intervals drawn as that many bars.
  check_html_page.py spans ROWS DOM
      ROWS is `ringtrace analyze spans --json`: the page must hold one
      histogram per timed span name (the first 20), in the rows' order,
      titled with the name, its bars adding up to the row's count.
  check_html_page.py expect DOM EXPECT
      Writes EXPECT for the png check from the DOM of a page an analyzer
      wrote: its first five histograms, the first line of its first plot,
      whether its timeline has intervals.
  check_html_page.py plots DOM KIND MIN
      The page holds at least MIN plots of KIND (histogram, series,
      timeline) with something drawn, every mark titled; or, for KIND
      table, MIN tables with rows.
"""

import html.parser
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import png  # noqa: E402  (tests/lib/png.py, shared with the speedscope test)

VOID = {"meta", "br", "hr", "img", "link", "input", "area", "base", "col", "embed", "source", "track", "wbr"}
BAR = (0x4E, 0x79, 0xA7)  # the page's palette, in order
PALETTE = [(0x4E, 0x79, 0xA7), (0xF2, 0x8E, 0x2B), (0xE1, 0x57, 0x59), (0x76, 0xB7, 0xB2),
           (0x59, 0xA1, 0x4F), (0xED, 0xC9, 0x48), (0xB0, 0x7A, 0xA1), (0x9C, 0x75, 0x5F)]
INTERVAL = PALETTE[2]
AXIS = (0x99, 0x99, 0x99)
INTERVAL_HEIGHT = 14  # a lane's bar: LANE_H - 8 in html.c


def die(msg):
    print("check_html_page: " + msg, file=sys.stderr)
    sys.exit(1)


class Node:
    def __init__(self, tag, attrs, parent):
        self.tag, self.attrs, self.parent = tag, dict(attrs), parent
        self.children, self.text = [], []

    def classes(self):
        return (self.attrs.get("class") or "").split()

    def all(self):
        yield self
        for c in self.children:
            yield from c.all()

    def find(self, tag, cls=None):
        return [n for n in self.all() if n.tag == tag and (cls is None or cls in n.classes())]

    def string(self):
        return "".join(self.text) + "".join(c.string() for c in self.children)

    def title(self):
        """The text of the element's <title> child, what the mouse shows."""
        for c in self.children:
            if c.tag == "title":
                return c.string()
        return None


class Tree(html.parser.HTMLParser):
    """The page as a tree; with strict, any misnested or unclosed tag is an error."""

    def __init__(self, strict):
        super().__init__(convert_charrefs=True)
        self.strict, self.root = strict, Node("#document", [], None)
        self.at, self.errors = self.root, []

    def handle_starttag(self, tag, attrs):
        node = Node(tag, attrs, self.at)
        self.at.children.append(node)
        if tag not in VOID:
            self.at = node

    def handle_startendtag(self, tag, attrs):
        self.at.children.append(Node(tag, attrs, self.at))

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        if self.at.tag != tag:
            self.errors.append(f"</{tag}> closes <{self.at.tag}> at line {self.getpos()[0]}")
            # recover as a browser would: up to the element it closes, if open
            n = self.at
            while n is not None and n.tag != tag:
                n = n.parent
            if n is None:
                return
            self.at = n
        self.at = self.at.parent

    def handle_data(self, data):
        self.at.text.append(data)


def parse(path, strict):
    try:
        with open(path, "rb") as f:
            data = f.read()
        text = data.decode("utf-8", errors="strict" if strict else "replace")
    except (OSError, UnicodeDecodeError) as e:
        die(f"{path}: {e}")
    tree = Tree(strict)
    tree.feed(text)
    tree.close()
    if tree.at is not tree.root:
        tree.errors.append(f"<{tree.at.tag}> is not closed at the end")
    return text, tree


def check_source(page_path):
    text, tree = parse(page_path, strict=True)
    if tree.errors:
        die(f"{page_path}: not well formed: {'; '.join(tree.errors[:5])}")
    if not text.startswith("<!DOCTYPE html>"):
        die(f"{page_path}: no doctype")
    if re.search(r"[\x00-\x08\x0b-\x1f\x7f]", text):
        die(f"{page_path}: a raw control character")
    root = tree.root
    if root.find("script"):
        die(f"{page_path}: a script element")
    for n in root.all():
        for name, value in n.attrs.items():
            if name in ("src", "href", "xlink:href", "srcset", "action") or name.startswith("on"):
                die(f"{page_path}: <{n.tag} {name}=...>: the page must load and run nothing")
    lowered = text.lower()
    for word in ("http:", "https:", "url(", "@import", "<script"):
        if word in lowered:
            die(f"{page_path}: {word!r} in the page")
    svgs = root.find("svg")
    print(f"{page_path}: {len(text)} characters, well formed, {len(svgs)} plots, nothing loaded")


def plots(root, kind):
    return [s for s in root.find("svg") if kind in s.classes()]


def plot_title(svg):
    titles = [t for t in svg.find("text", "plot-title")]
    return titles[0].string() if titles else None


def bar_counts(svg):
    """(low bound text, count) of each bar, from its title "LOW to HIGH: COUNT"."""
    out = []
    for r in svg.find("rect", "bar"):
        m = re.fullmatch(r"(.+) to (.+): (\d+)", r.title() or "")
        if not m:
            die(f"histogram {plot_title(svg)!r}: a bar titled {r.title()!r}")
        out.append((m.group(1), int(m.group(3))))
    return out


def bucket_low_text(bucket):
    """The low bound of a log2 bucket as the page writes it (units.c's short form)."""
    if bucket == 0:
        return "0"
    ns = 1 << (bucket - 1)
    if ns >= 60 * 10**9:
        return None  # minutes: not checked by text
    for scale, unit in ((10**9, "s"), (10**6, "ms"), (10**3, "us"), (1, "ns")):
        if ns >= scale:
            break
    while True:
        whole = ns // scale
        decimals = 0 if scale == 1 else 1 if whole >= 100 else 2 if whole >= 10 else 3
        step = scale // 10**decimals
        fraction = (ns % scale + step // 2) // step
        if fraction >= 10**decimals:
            whole, fraction = whole + 1, fraction - 10**decimals
        if whole < 1000 or scale == 10**9:
            break
        scale, unit = scale * 1000, {"ns": "us", "us": "ms", "ms": "s"}[unit]
    digits = f"{fraction:0{decimals}d}".rstrip("0") if decimals else ""
    return f"{whole}.{digits} {unit}" if digits else f"{whole} {unit}"


def check_dom(expect_path, dom_path):
    with open(expect_path) as f:
        expect = json.load(f)
    _, tree = parse(dom_path, strict=False)
    root = tree.root
    if root.find("script"):
        die(f"{dom_path}: a script element")
    h1 = root.find("h1")
    if not h1 or h1[0].string() != expect["title"]:
        die(f"{dom_path}: heading {h1[0].string() if h1 else None!r}, not {expect['title']!r}")
    said = []
    for kind, key in (("histogram", "histograms"), ("series", "series"), ("timeline", "timelines")):
        shown = plots(root, kind)
        wanted = expect.get(key, [])
        if len(shown) != len(wanted):
            die(f"{dom_path}: {len(shown)} {kind} plots, {len(wanted)} drawn")
        for svg, want in zip(shown, wanted):
            title = plot_title(svg)
            if title != want["title"]:
                die(f"{dom_path}: a {kind} titled {title!r}, not {want['title']!r}")
            if kind == "histogram":
                bars = bar_counts(svg)
                got = [c for _, c in bars]
                counts = [c for _, c in want["counts"]]
                if got != counts:
                    die(f"{title}: bars of {got}, drawn {counts}")
                lows = [bucket_low_text(b) for b, _ in want["counts"]]
                for (low, _), expected in zip(bars, lows):
                    if expected is not None and low != expected:
                        die(f"{title}: a bar from {low!r}, its bucket starts at {expected!r}")
                if len(svg.find("line", "mark")) != 3:
                    die(f"{title}: {len(svg.find('line', 'mark'))} quantile marks, not p50, p90, p99")
                said.append(f"{title}: {len(got)} bars")
            elif kind == "series":
                lines = svg.find("path", "line")
                names = [p.title() for p in lines]
                if names != want["lines"]:
                    die(f"{title}: lines {names}, drawn {want['lines']}")
                for p in lines:
                    d = p.attrs.get("d", "")
                    if not re.fullmatch(r"M[-0-9. ML]+", d) or d.count("L") < 2:
                        die(f"{title}: line {p.title()!r} has no points: d={d[:60]!r}")
                legend = [t.string() for t in svg.find("text", "legend")]
                if legend != want["lines"]:
                    die(f"{title}: legend {legend}, drawn {want['lines']}")
                said.append(f"{title}: {len(lines)} lines")
            else:
                intervals = svg.find("rect", "interval")
                lanes = svg.find("rect", "lane")
                if len(lanes) != len(want["lanes"]):
                    die(f"{title}: {len(lanes)} lanes, drawn {len(want['lanes'])}")
                texts = [t.string() for t in svg.find("text")]
                for name in want["lanes"]:
                    if name not in texts:
                        die(f"{title}: no lane named {name!r} (texts: {texts[:12]})")
                if len(intervals) != sum(want["intervals"]):
                    die(f"{title}: {len(intervals)} intervals, drawn {sum(want['intervals'])}")
                if any(not r.title() for r in intervals):
                    die(f"{title}: an interval without a title")
                said.append(f"{title}: {len(lanes)} lanes, {len(intervals)} intervals")
    print(f"{dom_path}: " + "; ".join(said))


def near(a, b, slack):
    return abs(a[0] - b[0]) <= slack and abs(a[1] - b[1]) <= slack and abs(a[2] - b[2]) <= slack


def column_bars(rows, width, height, colour, slack=3):
    """Solid blocks of one colour: {(top, bottom): [x ranges]} from vertical runs per column."""
    runs = {}
    # the page's colours near this one, decided once per colour, not per pixel;
    # then each column's runs of them are found by re, column after column
    matching = {px for px in set().union(*rows) if near(px, colour, slack)}
    for x, column in enumerate(zip(*rows)):
        for run in re.finditer(b"\x01+", bytes(map(matching.__contains__, column))):
            runs.setdefault(run.end() - 1, []).append((x, run.end() - run.start()))
    # per bottom row: contiguous columns are one block; its height the most common run
    blocks = {}
    for bottom, cols in runs.items():
        cols.sort()
        group = [cols[0]]
        for c in cols[1:] + [None]:
            if c is not None and c[0] == group[-1][0] + 1:
                group.append(c)
                continue
            heights = sorted(h for _, h in group)
            blocks.setdefault(bottom, []).append((group[0][0], len(group), heights[len(heights) // 2]))
            if c is not None:
                group = [c]
    return blocks


def check_png(expect_path, shot_path):
    with open(expect_path) as f:
        expect = json.load(f)
    try:
        width, height, rows = png.pixels(shot_path)
    except (OSError, ValueError) as e:
        die(str(e))
    counts = {}
    for row in rows:
        for px in row:
            counts[px] = counts.get(px, 0) + 1
    top = max(counts.values())
    # a short page leaves most of a tall window white: blank is next to nothing else
    if width * height - top < 5000:
        die(f"{shot_path}: {width}x{height}, blank ({top} pixels of one colour)")
    said = [f"{width}x{height}, {len(counts)} colours"]

    # histograms: the bars stand on the grey axis; the first axes from the top
    # holding as many bars as a histogram drew are its bars, in page order
    blocks = column_bars(rows, width, height, BAR)
    baselines = sorted(b for b, groups in blocks.items() if b + 1 < height and any(
        g[1] >= 3 and near(rows[b + 1][g[0] + g[1] // 2], AXIS, 40) for g in groups))
    for want in expect.get("histograms", []):
        wanted = [c for _, c in want["counts"]]
        found = None
        while baselines:
            b = baselines.pop(0)
            bars = [g for g in blocks[b] if g[1] >= 3 and near(rows[b + 1][g[0] + g[1] // 2], AXIS, 40)]
            if len(bars) == len(wanted):
                found = (b, bars)
                break
        if not found:
            die(f"{shot_path}: no row of {len(wanted)} bars for histogram {want['title']!r}")
        base, bars = found
        heights = [h for _, _, h in bars]
        scale = max(heights) / max(wanted)
        for (x, w, h), c in zip(bars, wanted):
            if abs(h - c * scale) > 2:
                die(f"{want['title']}: the bar at x={x} is {h} px for {c}, "
                    f"{c * scale:.1f} px in proportion ({heights} for {wanted})")
        said.append(f"{want['title']}: {len(bars)} bars on row {base}, {heights} px for {wanted}")

    # lines: drawn in their palette colour, well past the 10x10 legend swatch
    for want in expect.get("series", []):
        for i, name in enumerate(want["lines"]):
            colour = PALETTE[i % len(PALETTE)]
            n = sum(c for px, c in counts.items() if near(px, colour, 12))
            if n < 300:
                die(f"{want['title']}: line {name!r}: {n} pixels of its colour {colour}")
        said.append(f"{want['title']}: {len(want['lines'])} lines in their colours")

    # intervals: blocks of the interval colour, a lane's bar tall
    for want in expect.get("timelines", []):
        blocks = column_bars(rows, width, height, INTERVAL)
        bars = [g for b, groups in blocks.items() for g in groups if abs(g[2] - INTERVAL_HEIGHT) <= 1]
        if want.get("present"):
            # an analyzer's intervals may touch, and touching bars are one block
            if not bars:
                die(f"{want['title']}: no interval bar on screen")
        elif len(bars) != sum(want["intervals"]):
            die(f"{want['title']}: {len(bars)} interval bars on screen, drawn {sum(want['intervals'])}")
        said.append(f"{want['title']}: {len(bars)} intervals")
    print(f"{shot_path}: " + "; ".join(said))


def read_rows(path):
    rows = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line:
                try:
                    rows.append(json.loads(line))
                except ValueError as e:
                    die(f"{path}: {e}: {line[:80]}")
    return rows


SPANS_HISTOGRAMS = 20  # spans.c draws the first 20 names that have a duration


def check_spans(rows_path, dom_path):
    """One histogram per span name, in the rows' order, its bars adding up to the row's count."""
    rows = [r for r in read_rows(rows_path) if "name" in r and "total_ns" in r and "tid" not in r]
    timed = [r for r in rows if r["count"] > 0][:SPANS_HISTOGRAMS]
    if not timed:
        die(f"{rows_path}: no span rows")
    _, tree = parse(dom_path, strict=False)
    shown = plots(tree.root, "histogram")
    if len(shown) != len(timed):
        die(f"{dom_path}: {len(shown)} histograms for {len(timed)} timed span names")
    for r, svg in zip(timed, shown):
        title = plot_title(svg)
        if title != r["name"]:
            die(f"{dom_path}: histogram {title!r} where the rows have {r['name']!r}")
        total = sum(c for _, c in bar_counts(svg))
        if total != r["count"]:
            die(f"{dom_path}: the bars of {r['name']!r} add up to {total}, the row counts {r['count']}")
    print(f"{dom_path}: a histogram for each of {len(timed)} span names, bars adding up to their counts")


def expect_from_dom(dom_path, expect_path):
    """The png check's EXPECT for a page an analyzer wrote, as its DOM says it was drawn:
    the first five histograms (a 2400-pixel screenshot holds them), the first line
    of the first plot, whether the timeline has intervals."""
    _, tree = parse(dom_path, strict=False)
    h1 = tree.root.find("h1")
    expect = {"title": h1[0].string() if h1 else "", "histograms": [], "series": [], "timelines": []}
    for svg in plots(tree.root, "histogram"):
        bars = bar_counts(svg)
        if bars and len(expect["histograms"]) < 5:
            expect["histograms"].append({"title": plot_title(svg), "counts": [[0, c] for _, c in bars]})
    for svg in plots(tree.root, "series")[:1]:
        lines = [p.title() for p in svg.find("path", "line")]
        if lines:
            expect["series"].append({"title": plot_title(svg), "lines": lines[:1]})
    for svg in plots(tree.root, "timeline")[:1]:
        if svg.find("rect", "interval"):
            expect["timelines"].append({"title": plot_title(svg), "present": True})
    with open(expect_path, "w") as f:
        json.dump(expect, f)


def check_plots(dom_path, kind, minimum):
    """At least MINIMUM plots of KIND with something drawn (or tables with rows)."""
    _, tree = parse(dom_path, strict=False)
    if kind == "table":
        tables = [t for t in tree.root.find("table") if len(t.find("tr")) >= 2]
        if len(tables) < minimum:
            die(f"{dom_path}: {len(tables)} tables with rows, at least {minimum} expected")
        print(f"{dom_path}: {len(tables)} tables, {sum(len(t.find('tr')) - 1 for t in tables)} rows")
        return
    shown = plots(tree.root, kind)
    mark = {"histogram": ("rect", "bar"), "series": ("path", "line"), "timeline": ("rect", "interval")}[kind]
    drawn = [s for s in shown if s.find(*mark)]
    if len(drawn) < minimum:
        die(f"{dom_path}: {len(drawn)} {kind} plots with something drawn, at least {minimum} expected "
            f"(titles: {[plot_title(s) for s in shown]})")
    for s in drawn:
        untitled = [m for m in s.find(*mark) if not m.title()]
        if untitled:
            die(f"{dom_path}: {plot_title(s)!r}: {len(untitled)} {mark[1]}s without a title")
    marks = sum(len(s.find(*mark)) for s in drawn)
    print(f"{dom_path}: {len(drawn)} {kind} plots, {marks} {mark[1]}s")


def main():
    a = sys.argv[1:]
    if len(a) == 2 and a[0] == "source":
        check_source(a[1])
    elif len(a) == 3 and a[0] == "dom":
        check_dom(a[1], a[2])
    elif len(a) == 3 and a[0] == "png":
        check_png(a[1], a[2])
    elif len(a) == 3 and a[0] == "spans":
        check_spans(a[1], a[2])
    elif len(a) == 3 and a[0] == "expect":
        expect_from_dom(a[1], a[2])
    elif len(a) == 4 and a[0] == "plots":
        check_plots(a[1], a[2], int(a[3]))
    else:
        die("usage: check_html_page.py source PAGE | dom EXPECT DOM | png EXPECT SHOT | "
            "spans ROWS DOM | expect DOM EXPECT | plots DOM KIND MIN")


if __name__ == "__main__":
    main()
