#!/usr/bin/env python3
"""ship_rate.py TOOL TRACE EVENTS - `ringtrace ship` of one trace file into a
real clickhouse-server on loopback (tests/lib/clickhouse.py), timed.

Prints, as `result NAME VALUE` lines for scripts/bench:
  cpu_rate     events per second of the shipper's own CPU time (user + system,
               from wait4): what one core of the shipping machine sustains
  wall_rate    events per second of wall-clock time, end to end: bounded here
               by the server, which runs on the same machine and parses the rows
  server_cpu   the server's CPU seconds during the ship (from /proc)
  ship_cpu     the shipper's CPU seconds
The count the server gives for the file (FINAL) must equal EVENTS, or the run
fails: a rate of rows that did not arrive would mean nothing.
"""
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "lib"))
from clickhouse import ClickHouse  # noqa: E402


def process_cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks  # utime, stime


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: ship_rate.py TOOL TRACE EVENTS")
    tool, trace, events = sys.argv[1], sys.argv[2], int(sys.argv[3])
    schema = subprocess.run([tool, "ship", "--schema"], check=True, capture_output=True,
                            text=True).stdout
    with ClickHouse() as ch, tempfile.TemporaryDirectory() as work:
        ch.query(schema)
        server_before = process_cpu_seconds(ch.pid)
        start = time.monotonic()
        proc = subprocess.Popen([tool, "ship", "--to", ch.url, "--journal",
                                 os.path.join(work, "journal"), trace],
                                stdout=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.monotonic() - start
        server_cpu = process_cpu_seconds(ch.pid) - server_before
        if os.waitstatus_to_exitcode(status) != 0:
            sys.exit("ringtrace ship failed with status %d" % os.waitstatus_to_exitcode(status))
        counted = int(ch.value("SELECT count() FROM ringtrace_events FINAL"))
        if counted != events:
            sys.exit("the server holds %d rows, the file %d events" % (counted, events))
        cpu = usage.ru_utime + usage.ru_stime
        print("result cpu_rate %.0f" % (events / cpu))
        print("result wall_rate %.0f" % (events / wall))
        print("result ship_cpu %.2f" % cpu)
        print("result server_cpu %.2f" % server_cpu)


if __name__ == "__main__":
    main()
