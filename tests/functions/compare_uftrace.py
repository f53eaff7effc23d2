#!/usr/bin/env python3
"""compare_uftrace.py MODE RT_REPLAY RT_REPORT UF_REPLAY UF_REPORT NAMES
[PARENT>CHILD...] - the calls `ringtrace replay` and `ringtrace report`
show against those uftrace shows for the same run of the same binary.

NAMES lists the program's own functions, one a line (`nm -C` of the
binary); calls of anything else (library functions, which uftrace also
records) are left out, their callees counted under the nearest call kept.
Names are compared up to their first '(' (so `mid(int)` is `mid`).

Both replays give each call a line indented by its depth.  Compared:
  - every function's count of calls, in ringtrace's replay, its report
    and uftrace's replay (uftrace's report counts only calls that returned:
    each of its counts must match too, or ringtrace's closed ones added);
  - MODE tree: how many times each function was called directly from each
    other (the nesting), ringtrace's replay against uftrace's;
  - MODE counts (uftrace cannot nest these calls: an exception past code
    without exit hooks, coroutines): only the counts, and each
    PARENT>CHILD given must appear in ringtrace's replay.
ringtrace's replay must show no enter or exit as not recorded.  Prints
every mismatch; exit status 1 if there is one.
"""
import re
import sys

ENTRY = re.compile(r"^([^ {}/][^(]*)\(")


def base(name):
    return name.split("(")[0].strip()


def read_replay(path, names):
    """-> (counts {name: n}, edges {(parent, child): n}, lines with 'not recorded')"""
    counts, edges, unpaired = {}, {}, []
    stack = []  # (depth, name or None) of the calls open above this line
    with open(path, errors="replace") as f:
        for line in f:
            if "|" not in line or line.startswith("#"):
                continue
            text = line.split("|", 1)[1]
            if "not recorded" in text:
                unpaired.append(line.rstrip())
            body = text[1:] if text.startswith(" ") else text
            depth = (len(body) - len(body.lstrip(" "))) // 2
            m = ENTRY.match(body.lstrip(" "))
            if not m:
                continue
            name = base(m.group(1))
            while stack and stack[-1][0] >= depth:
                stack.pop()
            if name not in names:
                stack.append((depth, None))
                continue
            parent = next((n for d, n in reversed(stack) if n is not None), "")
            counts[name] = counts.get(name, 0) + 1
            edges[(parent, name)] = edges.get((parent, name), 0) + 1
            stack.append((depth, name))
    return counts, edges, unpaired


def read_report(path, names):
    """-> {name: calls}: report lines end in the name; Calls is the last integer"""
    counts = {}
    with open(path, errors="replace") as f:
        for line in f:
            fields = line.split()
            if len(fields) < 4 or not any(c.isdigit() for c in fields[0]):
                continue
            # the name is what follows the last numeric column
            idx = max(i for i, w in enumerate(fields) if re.match(r"^[0-9.]+$", w) or w in ("us", "ms", "s", "ns"))
            name = base(" ".join(fields[idx + 1:]))
            ints = [w for w in fields[:idx + 1] if re.match(r"^[0-9]+$", w)]
            if name in names and ints:
                counts[name] = counts.get(name, 0) + int(ints[-1])
    return counts


def main():
    if len(sys.argv) < 7 or sys.argv[1] not in ("tree", "counts"):
        sys.stderr.write(__doc__)
        return 2
    mode, rt_replay, rt_report, uf_replay, uf_report, names_path = sys.argv[1:7]
    wanted = [tuple(e.split(">", 1)) for e in sys.argv[7:]]
    with open(names_path) as f:
        names = {base(line) for line in f if line.strip()}
    errors = []
    rt_counts, rt_edges, unpaired = read_replay(rt_replay, names)
    uf_counts, uf_edges, _ = read_replay(uf_replay, names)
    rt_report_counts = read_report(rt_report, names)
    uf_report_counts = read_report(uf_report, names)
    for line in unpaired[:10]:
        errors.append("ringtrace replay: " + line)
    if not uf_counts:
        errors.append("uftrace recorded no call of the program")
    for name in sorted(set(rt_counts) | set(uf_counts) | set(rt_report_counts)):
        rt, uf, rep = rt_counts.get(name, 0), uf_counts.get(name, 0), rt_report_counts.get(name, 0)
        if rt != uf or rep != uf:
            errors.append("%s: ringtrace replay %d calls, report %d, uftrace %d" % (name, rt, rep, uf))
    for name, n in sorted(uf_report_counts.items()):
        if n > rt_report_counts.get(name, 0):
            errors.append("%s: uftrace report %d calls, ringtrace report %d"
                          % (name, n, rt_report_counts.get(name, 0)))
    if mode == "tree":
        for edge in sorted(set(rt_edges) | set(uf_edges)):
            rt, uf = rt_edges.get(edge, 0), uf_edges.get(edge, 0)
            if rt != uf:
                errors.append("%s called from %s: ringtrace %d times, uftrace %d"
                              % (edge[1], edge[0] or "(top)", rt, uf))
    for edge in wanted:
        if not rt_edges.get(edge):
            errors.append("%s never called from %s in ringtrace replay" % (edge[1], edge[0]))
    for e in errors[:40]:
        print("compare_uftrace: " + e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
