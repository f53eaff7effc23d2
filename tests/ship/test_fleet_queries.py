#!/usr/bin/env python3
"""test_fleet_queries.py --tool RINGTRACE [--doc docs/SHIP.md]

The queries of docs/SHIP.md's "Fleet queries", taken from the document (each
follows a `<!-- fleet-query: NAME -->` marker), run on a real clickhouse-server
over rows made by hand whose answers are known: three hosts, a rotated
recording, a thread id reused by two processes, rows shipped twice and not yet
merged (merges are stopped), losses without a time, a damaged region and the
records it cost, and rows outside the time window.  Every query's whole result
must be the known one.

The table is the one `ringtrace ship --schema` prints; the document's CREATE
TABLE must have the same columns and types.
"""

import argparse
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import clickhouse  # noqa: E402

T0 = 1709632800  # 2024-03-05 10:00:00 UTC: the documents' window is 10:00 to 11:00
MS = 1000000

failures = []


def check(what, got, want):
    if got != want:
        failures.append("%s:\n    got  %r\n    want %r" % (what, got, want))


# ---- the schema ----

def columns(create):
    """[(name, type)] of a CREATE TABLE, comments dropped."""
    text = re.sub(r"--[^\n]*", "", create)
    body = text[text.index("(") + 1:text.rindex(") ENGINE")]
    cols, depth, cur = [], 0, ""
    for c in body:
        if c == "," and depth == 0:
            cols.append(cur)
            cur = ""
            continue
        depth += c == "("
        depth -= c == ")"
        cur += c
    cols.append(cur)
    out = []
    for col in cols:
        words = col.split(None, 1)
        if words:
            out.append((words[0], " ".join(words[1].split())))
    return out


def schema_from_tool(tool):
    r = subprocess.run([tool, "ship", "--schema"], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=30)
    text = r.stdout.decode()
    if r.returncode != 0 or "CREATE TABLE" not in text:
        raise SystemExit("FAIL: %s ship --schema exits %d: %s%s" % (
            tool, r.returncode, text, r.stderr.decode(errors="replace")))
    return text


# ---- the document ----

def doc_blocks(doc):
    """{name: sql} of the `<!-- fleet-query: NAME -->` blocks, and the schema block."""
    text = open(doc).read()
    found = {}
    for m in re.finditer(r"<!-- (fleet-query: ([\w-]+)|ship-schema) -->\s*```sql\n(.*?)```",
                         text, re.S):
        name = m.group(2) or "schema"
        if name in found:
            failures.append("%s: two blocks named %s" % (doc, name))
        found[name] = m.group(3)
    return found


def statements(sql):
    return [s.strip() for s in sql.split(";") if s.strip()]


# ---- rows made by hand ----

class File:
    """One trace file's rows: ordinals in the order they are added."""

    def __init__(self, host, file_id, file_seq, pid, program):
        self.host, self.file_id, self.file_seq = host, file_id, file_seq
        self.pid, self.program = pid, program
        self.rows = []

    def add(self, ms, kind, tid, thread, **cols):
        """A row at T0 + ms milliseconds (ms None: time not known)."""
        wall_ns = 0 if ms is None else T0 * 10**9 + int(round(ms * MS))
        row = dict(host=self.host, file_id=self.file_id, file_seq=self.file_seq,
                   ordinal=len(self.rows), batch_first=0,
                   time=clock_text(wall_ns // 10**9), wall_ns=wall_ns,
                   pid=self.pid, program=self.program, tid=tid, thread=thread, cpu=-1,
                   seq=0 if kind == "lost" else len(self.rows) + 1, kind=kind, span="", tag="",
                   src_file="", line=0, func="", args=[], level="", message="", function="",
                   addr=0, depth=0, dur_ns=-1, io_op="", fd=-1, path="", path2="", offset=-1,
                   size=0,
                   result=0, errno=0, lost_count=0, lost_reason="", lost_note="",
                   estimated=0, metadata_lost=0, damaged=0)
        for k, v in cols.items():
            if k not in row:
                raise KeyError(k)
            row[k] = v
        self.rows.append(row)
        return row


def clock_text(seconds):
    import time
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(seconds))


def make_rows():
    """The rows, and the files whose rows go in a second time (shipped twice)."""
    web1 = File("web-1", 0x5F0C2D1E9A7B3C44, 0, 100, "/usr/sbin/httpd")
    web2 = File("web-2", 0x0123456789ABCDEF, 0, 200, "/usr/bin/cachesrv")
    db0 = File("db-1", 0x3333AAAA5555CCCC, 0, 300, "/usr/lib/dbd")
    db1 = File("db-1", 0x3333AAAA5555CCCC, 1, 300, "/usr/lib/dbd")
    arch = File("db-1", 0x35350000DEADBEEF, 0, 330, "/usr/lib/dbd-archiver")

    # stalls: web-1 worker-1 1.5 s, worker-2 2.5 s (the longest), worker-3 0.5 s
    for ms in (60000, 60200, 61700, 61800):
        web1.add(ms, "trace", 101, "worker-1", tag="tick", src_file="w.c", line=10, func="work",
                 args=[ms, -1])
    for ms in (120000, 122500, 122600):
        web1.add(ms, "trace", 102, "worker-2", tag="tick", src_file="w.c", line=10, func="work")
    for ms in (130000, 130500):
        web1.add(ms, "log", 103, "worker-3", level="info", message="slow", src_file="w.c",
                 line=20, func="work")
    # losses of web-1: not events (a 61 s gap if they were), times partly unknown
    web1.add(None, "lost", 101, "worker-1", lost_count=120, lost_reason="overwritten")
    web1.add(None, "lost", 102, "worker-2", lost_count=30, lost_reason="overwritten")
    web1.add(61000, "lost", 101, "worker-1", lost_count=7, lost_reason="dropped",
             lost_note="ring full")
    # spans: 100 requests of 1..100 ms on web-1; begins, an unpaired end, another tag
    for i in range(100):
        t = 200000 + i * 100
        web1.add(t, "trace", 104, "handler", span="begin", tag="request", args=[i])
        web1.add(t + 50, "trace", 104, "handler", span="end", tag="request",
                 dur_ns=(i + 1) * MS)
    web1.add(210100, "trace", 104, "handler", span="end", tag="request", dur_ns=-1)
    web1.add(210150, "trace", 104, "handler", span="end", tag="other", dur_ns=999 * MS)
    # I/O of httpd: bytes only from reads and writes that returned some
    io = [("open", "/var/www/index.html", 7, 0), ("read", "/var/www/index.html", 4096, 0),
          ("read", "/var/www/index.html", 4096, 0), ("read", "/var/www/index.html", 4096, 0),
          ("read", "/var/www/index.html", -5, 5), ("lseek", "/var/www/index.html", 8192, 0),
          ("open", "/var/log/httpd/access.log", 8, 0)]
    io += [("write", "/var/log/httpd/access.log", 200, 0)] * 10
    io += [("read", "", 100, 0), ("close", "/var/www/index.html", 0, 0)]
    for k, (op, path, result, errno) in enumerate(io):
        web1.add(300000 + k * 10, "io", 105, "io", io_op=op, fd=7, path=path, size=4096,
                 result=result, errno=errno, dur_ns=1000)
    # calls of parse_header on web-1: 100..400 us
    for i, us in enumerate((300, 100, 400, 200)):
        web1.add(400000 + i * 10, "enter", 106, "parser", function="parse_header", depth=1)
        web1.add(400000 + i * 10 + 5, "exit", 106, "parser", function="parse_header", depth=1,
                 dur_ns=us * 1000)

    # web-2: no stall over 1 s in the window (0.9 s, exactly 1.0 s, one across its start)
    for ms in (-500, 500, 1400, 2400):
        web2.add(ms, "trace", 201, "main", tag="poll")
    for i in range(10):
        web2.add(400000 + i * 200, "trace", 202, "server", span="end", tag="request",
                 dur_ns=(i + 1) * 10 * MS)
    io = [("pread", "/var/cache/blob", 1048576), ("pwrite", "/var/cache/blob", 512),
          ("fopen", "/etc/hosts", 94558125916848), ("fread", "/etc/hosts", 300),
          ("fclose", "/etc/hosts", 0)]
    for k, (op, path, result) in enumerate(io):
        web2.add(500000 + k * 10, "io", 203, "loader", io_op=op, fd=3, path=path,
                 result=result)
    # a copy: read from the blob, written to the backup; a rename returns no bytes
    web2.add(500100, "io", 203, "loader", io_op="copy_file_range", fd=3, path="/var/cache/blob",
             path2="/var/backup/blob", result=4096)
    web2.add(500110, "io", 203, "loader", io_op="rename", path="/var/backup/blob",
             path2="/var/backup/blob.1", result=0)
    web2.add(5400000, "io", 203, "loader", io_op="read", fd=3, path="/var/cache/old",
             result=999999)  # 11:30, outside the window

    # db-1: a recording rotated into two files; thread 301 stalls 1.2 s across the rotation
    db0.add(600000, "trace", 301, "writer", tag="flush")
    db0.add(600100, "trace", 301, "writer", tag="flush")
    db1.add(601300, "trace", 301, "writer", tag="flush")
    db1.add(601400, "trace", 301, "writer", tag="flush")
    # a forked child whose thread has the same id: another thread (with it: a 3.6 s gap)
    for ms in (605000, 605050):
        db0.add(ms, "trace", 301, "child", pid=310, tag="fork")
    db0.add(None, "lost", 302, "query", lost_count=2, lost_reason="torn")
    # parse_header on db-1: 3,1,4,1,5,9,2,6,5,3 us; enters, an unpaired exit, another function
    for i, us in enumerate((3, 1, 4, 1, 5, 9, 2, 6, 5, 3)):
        db1.add(700000 + i * 10, "enter", 302, "query", function="parse_header")
        db1.add(700000 + i * 10 + 5, "exit", 302, "query", function="parse_header",
                dur_ns=us * 1000)
    db1.add(700200, "exit", 302, "query", function="parse_header", dur_ns=-1)
    db1.add(700300, "exit", 302, "query", function="other_fn", dur_ns=10**9)
    # a damaged region (124 events) and the records it cost thread 301, and 5 more lost
    db1.add(700400, "lost", 0, "", lost_count=124, lost_reason="damaged",
            lost_note="damaged bytes", offset=6160)
    db1.add(700500, "lost", 301, "writer", lost_count=124, lost_reason="damaged",
            lost_note="records missing between recovered ones")
    db1.add(700600, "lost", 302, "query", lost_count=5, lost_reason="damaged",
            lost_note="records missing between recovered ones", estimated=1)

    # another recording of db-1, all of it outside the window: its stall and loss do not count
    arch.add(5400000, "trace", 331, "archiver", tag="pass")
    arch.add(5580000, "trace", 331, "archiver", tag="pass")
    arch.add(None, "lost", 331, "archiver", lost_count=99, lost_reason="dropped")

    files = [web1, web2, db0, db1, arch]
    again = [web1.rows, [r for r in db1.rows if r["kind"] == "lost"]]
    return files, again


def nearest(values, q):
    """quantilesExact's pick: the value at floor(q * n) of the sorted values."""
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))]


def expected(files):
    rows = [r for f in files for r in f.rows]
    want = {}
    want["stalls"] = [
        dict(host="web-1", longest_stall_s=2.5, program="/usr/sbin/httpd", pid=100, tid=102,
             thread="worker-2", stall_began="2024-03-05 10:02:00", stalled_threads=2),
        dict(host="db-1", longest_stall_s=1.2, program="/usr/lib/dbd", pid=300, tid=301,
             thread="writer", stall_began="2024-03-05 10:10:00", stalled_threads=1),
    ]
    web1 = [(i + 1) * MS for i in range(100)]
    web2 = [(i + 1) * 10 * MS for i in range(10)]
    both = web1 + web2
    # by hand: 110 values, positions 55, 99 and 108 of the sorted ones
    check("the quantile rule on the fleet's spans",
          [nearest(both, q) for q in (0.5, 0.9, 0.99)], [51 * MS, 91 * MS, 100 * MS])
    want["span-fleet"] = [dict(spans=110, p50_ns=51 * MS, p90_ns=91 * MS, p99_ns=100 * MS)]
    want["span-per-host"] = [
        dict(host="web-1", spans=100, p50_ns=51 * MS, p90_ns=91 * MS, p99_ns=100 * MS),
        dict(host="web-2", spans=10, p50_ns=60 * MS, p90_ns=100 * MS, p99_ns=100 * MS),
    ]
    want["function-per-host"] = [
        dict(host="db-1", calls=10, p50_ns=4000, p90_ns=9000, p99_ns=9000),
        dict(host="web-1", calls=4, p50_ns=300000, p90_ns=400000, p99_ns=400000),
    ]
    want["io-top-files"] = [
        dict(program="/usr/bin/cachesrv", path="/var/cache/blob", read_bytes=1048576 + 4096,
             written_bytes=512, calls=3),
        dict(program="/usr/bin/cachesrv", path="/var/backup/blob", read_bytes=0,
             written_bytes=4096, calls=1),
        dict(program="/usr/bin/cachesrv", path="/etc/hosts", read_bytes=300, written_bytes=0,
             calls=2),
        dict(program="/usr/sbin/httpd", path="/var/www/index.html", read_bytes=12288,
             written_bytes=0, calls=5),
        dict(program="/usr/sbin/httpd", path="/var/log/httpd/access.log", read_bytes=0,
             written_bytes=2000, calls=11),
    ]
    want["losses"] = [
        dict(host="db-1", reason="damaged", events_lost=129, estimated=1),
        dict(host="db-1", reason="torn", events_lost=2, estimated=0),
        dict(host="web-1", reason="overwritten", events_lost=150, estimated=0),
        dict(host="web-1", reason="dropped", events_lost=7, estimated=0),
    ]
    per = {}
    for r in rows:
        per[(r["host"], r["kind"])] = per.get((r["host"], r["kind"]), 0) + 1
    want["count-final"] = [dict(host=h, kind=k, events=n) for (h, k), n in sorted(per.items())]
    want["count-optimized"] = [dict(events=len(rows))]
    want["count-keys"] = [dict(events=len(rows))]
    return want


def main():
    ap = argparse.ArgumentParser()
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--tool", required=True)
    ap.add_argument("--doc", default=os.path.join(here, "..", "..", "docs", "SHIP.md"))
    args = ap.parse_args()

    blocks = doc_blocks(args.doc)
    schema = schema_from_tool(args.tool)
    if "schema" not in blocks:
        failures.append("%s: no <!-- ship-schema --> block" % args.doc)
    else:
        check("the document's table has the columns of the schema", columns(blocks["schema"]),
              columns(schema))
    files, again = make_rows()
    # the rows have the columns of the schema: a column the queries need and the table
    # lacks fails the insert; one the rows do not set takes its default
    names = [c for c, _ in columns(schema)]
    for f in files:
        known = set(f.rows[0])
        missing = [c for c in ("host", "file_id", "file_seq", "ordinal", "time", "wall_ns", "kind",
                               "dur_ns", "path", "path2", "lost_count") if c not in names]
        if missing:
            failures.append("the schema lacks %s" % missing)
        for r in f.rows:
            for c in known - set(names):
                del r[c]
    want = expected(files)
    for name in want:
        if name not in blocks:
            failures.append("%s: no <!-- fleet-query: %s --> block" % (args.doc, name))
    for name in blocks:
        if name != "schema" and name not in want:
            failures.append("%s: fleet-query %s has no known answer here" % (args.doc, name))

    with clickhouse.ClickHouse() as ch:
        ch.query(schema)
        # no background merge: the rows sent twice stay twice until a query merges them
        ch.query("SYSTEM STOP MERGES")
        ch.insert_json("ringtrace_events", [r for f in files for r in f.rows])
        for rows in again:
            ch.insert_json("ringtrace_events", rows)
        total = sum(len(f.rows) for f in files)
        plain = int(ch.value("SELECT count() FROM ringtrace_events"))
        check("rows sent (duplicates included)", plain, total + sum(len(r) for r in again))
        # OPTIMIZE merges the copies away: that query goes last, so the others see them
        order = sorted(blocks, key=lambda n: n == "count-optimized")
        for name in order:
            sql = blocks[name]
            if name == "schema" or name not in want:
                continue
            if name == "count-optimized":
                ch.query("SYSTEM START MERGES")
            try:
                parts = statements(sql)
                for part in parts[:-1]:
                    ch.query(part)
                got = ch.json(parts[-1])
            except clickhouse.ClickHouseError as e:
                failures.append("fleet-query %s: %s" % (name, e))
                continue
            check("fleet-query %s" % name, got, want[name])
            print("fleet-query %s: %d rows%s" % (name, len(got),
                                                 "" if got == want[name] else " WRONG"))

    for f in failures:
        print("FAIL: " + f, file=sys.stderr)
    print("%d failed" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
