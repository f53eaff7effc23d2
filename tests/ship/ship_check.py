#!/usr/bin/env python3
"""ship_check.py --tool RINGTRACE --work DIR --record-prog PROG

The checks of ship_e2e.sh (which records DIR/a, DIR/b, DIR/c, DIR/u, DIR/l
and DIR/damaged): ship them as three hosts into a fresh clickhouse-server
(with a password, given in the URL) and hold each file's rows, by ordinal, to
`ringtrace dump --json` of that file alone, and their durations to `ringtrace
analyze spans`; then the command line's errors, a file without END (skipped;
shipped with --unfinished; refused once it grew), no server and no table
(status 1), the server SIGKILLed while a ship with small batches runs and
back 2 s later, ship SIGKILLed mid-way and run again (it resumes), the server
losing rows it had acknowledged (the count check ships the file again), a
damaged file (status 3, its losses as rows), the losses the library counted
outside the rings (DIR/l: threads with no ring, sites refused) as rows with
their cause and process, --follow on a recording being made, and at the end
every file once: count() FINAL, and count() and the distinct keys after
OPTIMIZE ... FINAL.
"""

import argparse
import collections
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import clickhouse  # noqa: E402

TABLE = "ringtrace_events"
PASSWORD = "pw-7Qx;2"
# what the interface says ship prints: a line per file on stdout, and on stderr when it resumes
SHIPPED = re.compile(r"^(.*): (\d+) events shipped \(file_id ([0-9a-fA-F]+), file_seq (\d+)\)$")
RESUMING = re.compile(r"ringtrace ship: (.*): resuming at event (\d+)$", re.M)
failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg, file=sys.stderr, flush=True)


def ok(cond, msg):
    if not cond:
        fail(msg)
    return cond


class Tool:
    def __init__(self, path):
        self.path = path

    def run(self, *args, timeout=120):
        r = subprocess.run([self.path] + list(args), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=timeout)
        return r.returncode, r.stdout.decode("utf-8", "replace"), \
            r.stderr.decode("utf-8", "replace")

    def items(self, path):
        """The items of one file alone, as `dump --json` prints them (no last_event), and
        dump's exit status."""
        status, out, err = self.run("dump", "--json", path)
        items = [json.loads(line) for line in out.splitlines() if line]
        return [i for i in items if i["kind"] != "last_event"], status

    def info(self, path):
        status, out, err = self.run("info", "--json", path)
        if status not in (0, 3):
            raise RuntimeError("info --json %s: status %d: %s" % (path, status, err))
        return json.loads(out)


def signed64(v):
    return v - (1 << 64) if v >= (1 << 63) else v


def clock_text(seconds):
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(seconds))


class TraceFile:
    """One input file: its items and where they must be in the table."""

    def __new__(cls, tool, path):
        # a file shipped as several hosts is read once (it does not change)
        if path not in _read:
            _read[path] = super().__new__(cls)
            _read[path].read(tool, path)
        return _read[path]

    def read(self, tool, path):
        self.path = path
        self.items, self.dump_status = tool.items(path)
        info = tool.info(path)
        f = info["files"][0]
        self.file_id = int(f["recording_id"], 16)
        self.file_seq = f["file_seq"]
        self.created = f.get("created_wall_ns")
        self.processes = {p["pid"]: p for p in info["processes"] if p.get("pid") is not None}

    def where(self, host):
        return "host = '%s' AND file_id = %d AND file_seq = %d" % (host, self.file_id,
                                                                   self.file_seq)

    def kinds(self):
        return dict(collections.Counter(i["kind"] for i in self.items))


_read = {}


def expect_row(tf, item):
    """The columns a row must have, from its dump --json object (those the object says)."""
    k = item["kind"]
    want = {"kind": k, "tid": item["tid"]}
    if "pid" in item:
        want["pid"] = item["pid"]
    elif len(tf.processes) == 1 and k != "lost":
        want["pid"] = next(iter(tf.processes))
    if "pid" in want and want["pid"] in tf.processes:
        want["program"] = tf.processes[want["pid"]]["program"]
    if k != "lost":
        want["thread"] = item.get("thread", "")
        want["cpu"] = item.get("cpu", -1)
        want["seq"] = item.get("seq", 0)
        want["metadata_lost"] = 1 if item.get("metadata") == "lost" else 0
    if k == "trace":
        want["span"] = item.get("span", "")
        if "tag" in item:
            want.update(tag=item["tag"], src_file=item["file"], line=item["line"],
                        func=item["func"])
        want["args"] = [signed64(a) for a in item.get("args", [])]
        if want["span"] != "end":
            want["dur_ns"] = -1
    elif k == "log":
        if "level" in item:
            want.update(level=item["level"], message=item["msg"], src_file=item["file"],
                        line=item["line"], func=item["func"])
        want["damaged"] = 1 if item.get("damaged") else 0
        want["dur_ns"] = -1
    elif k in ("enter", "exit"):
        want.update(function=item.get("func") or "", addr=item["addr"], depth=item["depth"])
        if k == "enter":
            want["dur_ns"] = -1
    elif k == "io":
        if "op" in item:
            want.update(io_op=item["op"], path=item.get("path", ""), path2=item.get("path2", ""),
                        size=item["size"],
                        result=item["result"], errno=item["errno"],
                        dur_ns=item.get("dur_ns", -1))
            if "fd" in item:
                want["fd"] = item["fd"]
            if "offset" in item:
                want["offset"] = item["offset"]
    elif k == "lost":
        want.update(lost_count=item["count"], lost_reason=item["reason"],
                    lost_note=item.get("note", ""), estimated=1 if item.get("estimated") else 0)
    return want


def compare_file(ch, host, tf, what, table=TABLE):
    """Every row of the file in the table once, ordinal i = item i, columns as dump says."""
    rows = ch.json("SELECT * FROM %s FINAL WHERE %s ORDER BY ordinal" % (table, tf.where(host)))
    name = "%s %s (%s)" % (host, tf.path, what)
    if not ok(len(rows) == len(tf.items),
              "%s: %d rows, dump --json has %d items" % (name, len(rows), len(tf.items))):
        return
    ok([r["ordinal"] for r in rows] == list(range(len(rows))),
       "%s: the ordinals are not 0..%d" % (name, len(rows) - 1))
    bad = 0
    offsets = collections.defaultdict(list)
    for i, (row, item) in enumerate(zip(rows, tf.items)):
        want = expect_row(tf, item)
        diff = {c: (row.get(c), v) for c, v in want.items() if row.get(c) != v}
        if diff:
            bad += 1
            if bad <= 5:
                fail("%s: ordinal %d: (got, want) %r; item %s" % (name, i, diff,
                                                                  json.dumps(item)[:300]))
        if "ts_ns" in item and row["wall_ns"] != 0:
            offsets[row["pid"]].append(row["wall_ns"] - item["ts_ns"])
            if row["time"] != clock_text(row["wall_ns"] // 10**9):
                bad += 1
                if bad <= 5:
                    fail("%s: ordinal %d: time %s, wall_ns %d" % (name, i, row["time"],
                                                                 row["wall_ns"]))
    if bad > 5:
        fail("%s: %d rows differ from dump --json in all" % (name, bad))
    timed = sum(1 for i in tf.items if "ts_ns" in i and i["kind"] != "lost")
    ok(sum(len(v) for v in offsets.values()) >= timed,
       "%s: %d events have a time, %d rows a wall clock" %
       (name, timed, sum(len(v) for v in offsets.values())))
    for pid, offs in offsets.items():
        # one clock per process: wall_ns - ts_ns the same for every row (to rounding)
        ok(max(offs) - min(offs) <= 1000,
           "%s: pid %d: wall_ns - ts_ns varies by %d ns" % (name, pid, max(offs) - min(offs)))
        if tf.created:
            ok(abs(min(offs) + tf.items[0].get("ts_ns", 0) - tf.created) < 3600 * 10**9,
               "%s: wall clock %d far from the file's creation %d" %
               (name, min(offs), tf.created))


def compare_spans(ch, tool, host, tf):
    """dur_ns of span ends and exits: what `analyze spans` times in the same file."""
    status, out, err = tool.run("analyze", "spans", "--json", tf.path)
    want = {}
    for line in out.splitlines():
        r = json.loads(line)
        if "name" in r and r.get("count", 0) > 0 and "tid" not in r:
            want[(r["kind"], r["name"])] = (r["count"], r["total_ns"], r["min_ns"], r["max_ns"])
    got = {}
    for kind, name, cond in (("function", "function", "kind = 'exit'"),
                             ("span", "tag", "kind = 'trace' AND span = 'end'")):
        for r in ch.json("SELECT %s AS name, count() AS n, sum(dur_ns) AS total, "
                         "min(dur_ns) AS lo, max(dur_ns) AS hi FROM %s FINAL "
                         "WHERE %s AND %s AND dur_ns >= 0 GROUP BY name"
                         % (name, TABLE, tf.where(host), cond)):
            got[(kind, r["name"])] = (r["n"], r["total"], r["lo"], r["hi"])
    ok(got == want, "%s %s: durations (count, total, min, max) %r, analyze spans says %r"
       % (host, tf.path, sorted(got.items())[:8], sorted(want.items())[:8]))
    return len(want)


def trace_files(paths):
    out = []
    for p in paths:
        if os.path.isdir(p):
            out.extend(os.path.join(p, n) for n in sorted(os.listdir(p)))
        else:
            out.append(p)
    return out


def shipped_lines(out):
    """{file: (events, file_id, file_seq)} of ship's stdout, and the 'already shipped' files."""
    done, already = {}, set()
    for line in out.splitlines():
        m = SHIPPED.match(line)
        if m:
            done[m.group(1)] = (int(m.group(2)), int(m.group(3), 16), int(m.group(4)))
        elif line.endswith(": already shipped") or "already shipped" in line:
            already.add(line.split(": ")[0])
    return done, already


class Run:
    def __init__(self, args):
        self.tool = Tool(args.tool)
        self.work = args.work
        self.record_prog = args.record_prog
        self.jdir = os.path.join(self.work, "journals")
        os.makedirs(self.jdir, exist_ok=True)
        self.files = {}  # (host, path) -> TraceFile: what the table must hold at the end

    def ship(self, *args, journal, to=None, timeout=120):
        to = to or self.ch.url_with_password()
        return self.tool.run("ship", "--to", to, "--journal", os.path.join(self.jdir, journal),
                             *args, timeout=timeout)

    def ship_popen(self, *args, journal):
        return subprocess.Popen([self.tool.path, "ship", "--to", self.ch.url_with_password(),
                                 "--journal", os.path.join(self.jdir, journal)] + list(args),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    def expect_shipped(self, host, paths, status, out, err, what, want_status=0, table=TABLE):
        ok(status == want_status, "%s: ship exits %d, not %d: %s" % (what, status, want_status,
                                                                     err.strip()[-800:]))
        done, _ = shipped_lines(out)
        unsaid = []
        for path in trace_files(paths):
            tf = TraceFile(self.tool, path)
            if table == TABLE:
                self.files[(host, path)] = tf
            line = done.get(path)
            if line is None:
                unsaid.append(path)
            else:
                ok(line == (len(tf.items), tf.file_id, tf.file_seq),
                   "%s: %s: stdout says %r, dump --json and info say %r" %
                   (what, path, line, (len(tf.items), tf.file_id, tf.file_seq)))
            compare_file(self.ch, host, tf, what, table)
        ok(not unsaid, "%s: no 'FILE: N events shipped (file_id HEX, file_seq S)' line for %s; "
           "stdout:\n%s" % (what, " ".join(unsaid), out))

    # ---- the command line ----
    def usage(self):
        a = os.path.join(self.work, "a", "rate.rt")
        url = "http://127.0.0.1:9"
        for args, why in (((a,), "no --to"),
                          (("--to", url), "no input"),
                          (("--to", url, "--batch", "0", a), "--batch 0"),
                          (("--to", url, "--batch", "many", a), "--batch many"),
                          (("--to", url, "--retry", "-1", a), "--retry -1"),
                          (("--to", url, "--no-such-option", a), "an unknown option"),
                          (("--to", url, os.path.join(self.work, "missing.rt")), "a missing input")):
            status, out, err = self.tool.run("ship", *args, timeout=30)
            ok(status == 2, "ship with %s exits %d, not 2 (%s)" % (why, status, err.strip()))
            ok(err.strip() != "", "ship with %s says nothing on stderr" % why)
        status, out, err = self.tool.run("ship", "--schema")
        ok(status == 0 and "CREATE TABLE" in out and TABLE in out,
           "ship --schema: status %d, %r" % (status, out[:200]))
        status, out, err = self.tool.run("ship", "--schema", "--table", "fleet_x")
        ok(status == 0 and "fleet_x" in out, "ship --schema --table fleet_x: %r" % out[:200])

    # ---- three hosts ----
    def hosts(self):
        w = self.work
        a = os.path.join(w, "a", "rate.rt")
        b = [os.path.join(w, "b", "shape.rt"), os.path.join(w, "b", "span.rt")]
        c = os.path.join(w, "c")
        r = self.ship("--create", "--host", "host-a", a, journal="a")
        self.expect_shipped("host-a", [a], *r, what="host-a")
        r = self.ship("--host", "host-b", *b, journal="b")
        self.expect_shipped("host-b", b, *r, what="host-b")
        r = self.ship("--host", "host-c", "--batch", "1000", c, journal="c")
        self.expect_shipped("host-c", [c], *r, what="host-c (rotated, a directory)")
        ok(len(trace_files([c])) >= 3, "host-c: fewer than 3 files")
        # kinds per host
        for host in ("host-a", "host-b", "host-c"):
            want = collections.Counter()
            for (h, _), tf in self.files.items():
                if h == host:
                    want.update(tf.kinds())
            got = {r["kind"]: r["n"] for r in self.ch.json(
                "SELECT kind, count() AS n FROM %s FINAL WHERE host = '%s' GROUP BY kind"
                % (TABLE, host))}
            ok(got == dict(want), "%s: rows per kind %r, dump --json %r" % (host, got, dict(want)))
        kinds = collections.Counter()
        for tf in self.files.values():
            kinds.update(tf.kinds())
        for k in ("trace", "log", "io", "enter", "exit"):
            ok(kinds[k] > 0, "the recordings have no %s event: the test tests less" % k)
        timed = sum(compare_spans(self.ch, self.tool, "host-b", self.files[("host-b", p)])
                    for p in b)
        ok(timed >= 5, "host-b: only %d span names timed" % timed)
        # the same files again: nothing new
        before = self.total_final()
        status, out, err = self.ship("--host", "host-a", a, journal="a")
        _, already = shipped_lines(out)
        ok(status == 0 and a in already, "host-a again: status %d, not 'already shipped': %r"
           % (status, out))
        ok(self.total_final() == before, "host-a again: rows changed")
        # no password in a journal
        for name in os.listdir(self.jdir):
            with open(os.path.join(self.jdir, name), "rb") as f:
                ok(PASSWORD.encode() not in f.read(), "journal %s holds the password" % name)

    def default_host(self):
        """Without --host: the host the file names (recorded here, so this machine)."""
        span = os.path.join(self.work, "b", "span.rt")
        status, out, err = self.ship("--create", "--table", "by_default", span, journal="dflt")
        ok(status == 0, "--table by_default: status %d: %s" % (status, err))
        hosts = self.ch.rows("SELECT DISTINCT host FROM by_default")
        ok(hosts == [[socket.gethostname()]],
           "without --host: hosts %r, not this machine's %r" % (hosts, socket.gethostname()))

    def total_final(self):
        return int(self.ch.value("SELECT count() FROM %s FINAL" % TABLE))

    # ---- losses the library counted, which no ring holds ----
    def counted_losses(self):
        """loss_program's events lost for want of a ring and for want of room for their
        sites: in the table as rows of kind lost with their cause, events + lost = emitted."""
        host = "host-l"
        files = [os.path.join(self.work, "l", n) for n in ("rings.rt", "sites.rt")]
        r = self.ship("--host", host, *files, journal="losses")
        self.expect_shipped(host, files, *r, what="counted losses")
        for path, note, want_lost in ((files[0], "no ring", 5000),
                                      (files[1], "trace sites refused", None)):
            tf = self.files[(host, path)]
            with open(path[:-len(".rt")] + ".out") as f:
                emitted = int(f.read().split()[1])
            where = tf.where(host)
            events = int(self.ch.value("SELECT count() FROM %s FINAL WHERE %s AND kind != 'lost'"
                                       % (TABLE, where)))
            causes = {(c["lost_reason"], c["lost_note"]): (c["n"], c["lost"])
                      for c in self.ch.json(
                          "SELECT lost_reason, lost_note, count() AS n, sum(lost_count) AS lost "
                          "FROM %s FINAL WHERE %s AND kind = 'lost' GROUP BY lost_reason, "
                          "lost_note" % (TABLE, where))}
            lost = sum(v[1] for v in causes.values())
            ok(events + lost == emitted, "%s: %d events + %d lost in the table, %d emitted"
               % (path, events, lost, emitted))
            ok(len(causes) == 1 and all(k[0] == "dropped" and k[1].startswith(note)
                                        for k in causes),
               "%s: the losses' (reason, note): (rows, events) %r, not all (dropped, %s...)"
               % (path, causes, note))
            if want_lost is not None:
                ok(lost == want_lost, "%s: %d lost in the table, not %d" % (path, lost, want_lost))
            else:
                ok(lost > 0, "%s: no site refused: the test tests less" % path)
            # the process that lost them, as for its events
            pids = self.ch.rows("SELECT DISTINCT pid, program FROM %s FINAL WHERE %s"
                                % (TABLE, where))
            ok(len(pids) == 1 and pids[0][0] != "0" and pids[0][1] != "",
               "%s: the rows' (pid, program) %r, not the one process's" % (path, pids))
        # the threads that found no ring: 5 of them, each its own row, none with an event
        tf = self.files[(host, files[0])]
        lost_tids = self.ch.rows("SELECT tid, lost_count FROM %s FINAL WHERE %s AND kind = "
                                 "'lost' ORDER BY tid" % (TABLE, tf.where(host)))
        traced = {r[0] for r in self.ch.rows("SELECT DISTINCT tid FROM %s FINAL WHERE %s AND "
                                             "kind = 'trace'" % (TABLE, tf.where(host)))}
        ok(len(lost_tids) == 5 and all(c == "1000" and t != "0" and t not in traced
                                       for t, c in lost_tids),
           "%s: the rows of lost events (tid, count) %r; threads with events %r"
           % (files[0], lost_tids, sorted(traced)))

    # ---- a file without its END block: skipped, unless --unfinished ----
    def unfinished(self):
        u = os.path.join(self.work, "u", "cut.rt")
        tf = TraceFile(self.tool, u)
        ok(len(tf.items) > 0, "the unfinished file holds no event")
        status, out, err = self.ship("--host", "host-u", u, journal="unfinished")
        rows = int(self.ch.value("SELECT count() FROM %s WHERE %s" % (TABLE, tf.where("host-u"))))
        ok(rows == 0 and u in err, "a file without END: %d rows shipped, stderr %r"
           % (rows, err.strip()))
        r = self.ship("--unfinished", "--host", "host-u", u, journal="unfinished")
        self.expect_shipped("host-u", [u], *r, what="--unfinished")
        # the file grows after it was shipped: its rows on the server are no longer its own
        with open(u, "ab") as f:
            f.write(b"\0" * 4096)
        status, out, err = self.ship("--unfinished", "--host", "host-u", u, journal="unfinished")
        ok(status == 1 and u in err, "a shipped file that grew: status %d, stderr %r"
           % (status, err.strip()))

    # ---- the server SIGKILLed mid-ship, back 2 s later ----
    def server_crash(self):
        c = os.path.join(self.work, "c")
        host = "crash-server"
        p = self.ship_popen("--host", host, "--batch", "200", "--retry", "30", c, journal="crash")
        deadline = time.monotonic() + 20
        seen = 0
        while time.monotonic() < deadline and p.poll() is None:
            seen = int(self.ch.value("SELECT count() FROM %s WHERE host = '%s'" % (TABLE, host)))
            if seen > 0:
                break
            time.sleep(0.02)
        running = p.poll() is None
        self.ch.kill()
        ok(running and seen > 0,
           "server crash: ship had %s (%d rows in) when the server was killed" %
           ("ended" if not running else "not begun", seen))
        time.sleep(2)
        t = time.monotonic()
        self.ch.start()
        print("server crash: back in %.1f s" % (time.monotonic() - t), flush=True)
        try:
            out, err = p.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            p.kill()
            out, err = p.communicate()
            fail("server crash: ship still runs 60 s after the server came back")
        self.expect_shipped(host, [c], p.returncode, out.decode(), err.decode(),
                            what="server killed mid-ship")

    def kill_ship_midway(self, *args, journal, what):
        """Run ship, SIGKILL it once the journal has 3 batches."""
        path = os.path.join(self.jdir, journal)
        p = self.ship_popen(*args, journal=journal)
        deadline = time.monotonic() + 20
        lines = 0
        while time.monotonic() < deadline and p.poll() is None:
            try:
                with open(path, "rb") as f:
                    lines = f.read().count(b"\n")
            except OSError:
                lines = 0
            if lines >= 3:
                break
            time.sleep(0.01)
        running = p.poll() is None
        p.send_signal(signal.SIGKILL)
        p.communicate()
        ok(running and lines >= 3, "%s: ship had %s with %d journal lines" %
           (what, "ended" if not running else "not begun", lines))

    # ---- ship SIGKILLed mid-way, then run again ----
    def ship_killed(self):
        a = os.path.join(self.work, "a", "rate.rt")
        host = "kill-ship"
        self.kill_ship_midway("--host", host, "--batch", "100", a, journal="kill",
                              what="ship killed")
        status, out, err = self.ship("--host", host, "--batch", "100", a, journal="kill")
        m = RESUMING.search(err)
        tf = TraceFile(self.tool, a)
        if ok(m is not None, "ship killed, run again: no 'resuming at event N' on stderr: %r"
              % err[-500:]):
            ok(m.group(1) == a and 0 < int(m.group(2)) < len(tf.items),
               "ship killed, run again: %r (the file has %d items)" % (m.group(0), len(tf.items)))
        self.expect_shipped(host, [a], status, out, err, what="ship killed, run again")
        status, out, err = self.ship("--host", host, "--batch", "100", a, journal="kill")
        ok(status == 0 and a in shipped_lines(out)[1],
           "ship killed, run twice: not 'already shipped': %r" % out)

    # ---- the server lost what it had acknowledged: the count says so, the file goes again ----
    def server_lost_rows(self):
        a = os.path.join(self.work, "a", "rate.rt")
        args = ("--table", "lost_rows", "--host", "lost", "--batch", "100", a)
        self.ch.query(self.tool.run("ship", "--schema", "--table", "lost_rows")[1])
        self.kill_ship_midway(*args, journal="lost", what="rows lost")
        self.ch.query("TRUNCATE TABLE lost_rows")
        r = self.ship(*args, journal="lost")
        self.expect_shipped("lost", [a], *r, what="rows lost by the server, then resumed",
                            table="lost_rows")

    # ---- failures: no server, no table ----
    def failures(self):
        a = os.path.join(self.work, "b", "span.rt")
        dead = "http://127.0.0.1:%d" % clickhouse.free_port()
        status, out, err = self.ship("--host", "x", "--retry", "1", a, journal="dead", to=dead,
                                     timeout=60)
        ok(status == 1 and err.strip(), "no server, --retry 1: status %d, stderr %r" % (status, err))
        status, out, err = self.ship("--table", "no_such_table", "--host", "x", a, journal="notab")
        ok(status == 1 and err.strip(), "a table that does not exist: status %d, stderr %r"
           % (status, err))

    # ---- a damaged file ----
    def damaged(self):
        d = os.path.join(self.work, "damaged", "shape.rt")
        r = self.ship("--host", "host-d", d, journal="damaged")
        self.expect_shipped("host-d", [d], *r, what="damaged file", want_status=3)
        tf = self.files[("host-d", d)]
        ok(tf.dump_status == 3, "the damaged copy: dump exits %d, not 3" % tf.dump_status)
        want = sum(1 for i in tf.items if i["kind"] == "lost" and i["reason"] == "damaged")
        got = int(self.ch.value("SELECT count() FROM %s FINAL WHERE %s AND kind = 'lost' AND "
                                "lost_reason = 'damaged'" % (TABLE, tf.where("host-d"))))
        ok(want > 0 and got == want, "damaged file: %d damaged loss rows, dump has %d"
           % (got, want))
        compare_spans(self.ch, self.tool, "host-d", tf)

    # ---- --follow while the recording is made ----
    def follow(self):
        d = os.path.join(self.work, "follow")
        p = self.ship_popen("--follow", "--host", "follow", d, journal="follow")
        time.sleep(0.3)
        status, out, err = Tool(self.tool.path).run(
            "record", "-q", "--max-size", "32K", "-o", os.path.join(d, "f.rt"), "--",
            self.record_prog, "threads", "2", "3000")
        ok(status == 0, "follow: record exits %d: %s" % (status, err))
        try:
            out, err = p.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            p.send_signal(signal.SIGTERM)
            out, err = p.communicate()
            fail("--follow: still runs 15 s after the recording finished")
        self.expect_shipped("follow", [d], p.returncode, out.decode(), err.decode(),
                            what="--follow")

    # ---- the end: every file once, no duplicate after OPTIMIZE ----
    def final(self):
        want = sum(len(tf.items) for tf in self.files.values())
        ok(self.total_final() == want, "count() FINAL %d, the files hold %d" %
           (self.total_final(), want))
        self.ch.query("OPTIMIZE TABLE %s FINAL" % TABLE)
        plain = int(self.ch.value("SELECT count() FROM %s" % TABLE))
        keys = int(self.ch.value("SELECT uniqExact(host, file_id, file_seq, ordinal) FROM %s"
                                 % TABLE))
        ok(plain == want and keys == want,
           "after OPTIMIZE FINAL: count() %d, distinct keys %d, the files hold %d"
           % (plain, keys, want))

    def main(self):
        self.usage()
        with clickhouse.ClickHouse(password=PASSWORD, parent=self.work) as self.ch:
            steps = (self.hosts, self.default_host, self.damaged, self.counted_losses,
                     self.unfinished, self.failures,
                     self.server_crash, self.ship_killed, self.server_lost_rows, self.follow,
                     self.final)
            for step in steps:
                t = time.monotonic()
                try:
                    step()
                except (clickhouse.ClickHouseError, RuntimeError, subprocess.TimeoutExpired,
                        OSError, KeyError, ValueError) as e:
                    fail("%s: %s: %s" % (step.__name__, type(e).__name__, e))
                print("%s: %.1f s" % (step.__name__, time.monotonic() - t), flush=True)
        print("%d failed" % len(failures))
        return 1 if failures else 0


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--tool", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--record-prog", required=True)
    sys.exit(Run(ap.parse_args()).main())
