#!/usr/bin/env python3
"""first_poll.py RINGTRACE BIG_ARENA [THREADS EVENTS_PER_THREAD [LIMIT_MB]]

The first poll of `tail --from-start` and of `log -f` over an arena whose
rings hold over a million records (tests/tail/big_arena.c, four threads of
400,000 by default) holds a window of each ring, never all of them: each
command's peak resident size (its own rusage, from wait4) stays below
LIMIT_MB (64 by default), where holding the first poll whole took several
times that.  The output is checked too: tail prints every record the arena
holds, each once, in time order, no loss; `log -f` every message; both end
by themselves, status 0, since the program closed its arena.
"""
import os
import subprocess
import sys
import tempfile

ringtrace, target = sys.argv[1], sys.argv[2]
threads = int(sys.argv[3]) if len(sys.argv) > 3 else 4
per_thread = int(sys.argv[4]) if len(sys.argv) > 4 else 400000
limit_mb = int(sys.argv[5]) if len(sys.argv) > 5 else 64
failed = []


def fail(what):
    failed.append(what)
    print("FAIL: " + what, file=sys.stderr)


def run(args, check_line):
    """args' status and peak resident size in MB; each line of its stdout to
    check_line as it comes (none kept: this process stays small, since a
    child's peak counts what it shared of it before its exec)"""
    p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    for line in p.stdout:
        check_line(line)
    p.stdout.close()
    _, status, usage = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    return p.returncode, usage.ru_maxrss / 1024.0


class TailLines:
    """tail's lines: counted, in time order, each thread's records in the
    order it wrote them, each once (the first argument, or the message's
    number, is the thread's loop index: one more each record)"""

    def __init__(self):
        self.count = 0
        self.last = -1.0
        self.next = {}
        self.bad = None

    def __call__(self, line):
        self.count += 1
        if self.bad:
            return
        if line.startswith(b"--- lost"):
            self.bad = "a loss: %r" % line[:120]
            return
        stamp = float(line[1:line.index(b"]")])
        if stamp < self.last:
            self.bad = "out of time order: %r" % line[:120]
        self.last = stamp
        start = line.index(b"big-")
        thread = line[start:line.index(b"]", start)]
        fields = line.split(b" : ")
        if b" message " in line:
            index = int(line[line.index(b" message ") + 9:].split()[0])
        else:
            index = int(fields[1].split()[0], 16)
        expected = self.next.get(thread, 0)
        if index != expected:
            self.bad = "%s: record %d where %d was due: %r" % (thread, index, expected,
                                                                line[:120])
        self.next[thread] = index + 1


class LogLines:
    def __init__(self):
        self.count = 0
        self.bad = None

    def __call__(self, line):
        self.count += 1
        if not self.bad and (b" INFO [tid " not in line or b" message " not in line):
            self.bad = "not a message: %r" % line[:120]


with tempfile.TemporaryDirectory() as work:
    arena = os.path.join(work, "big.arena")
    made = subprocess.run([target, arena, str(threads), str(per_thread)], check=True,
                          capture_output=True, text=True).stdout.split()
    events, logs = int(made[1]), int(made[3])

    # each command's first poll: every line checked, its count, its own peak
    for words, lines, want, what in (
            (["tail", "--from-start"], TailLines(), events, "records"),
            (["log", "-f"], LogLines(), logs, "messages")):
        name = " ".join(words)
        status, peak = run([ringtrace] + words + [arena], lines)
        print("%s: %d lines, peak %.1f MB" % (name, lines.count, peak))
        if status != 0:
            fail("%s exited %d" % (name, status))
        if peak >= limit_mb:
            fail("%s peaked at %.1f MB, not below %d MB" % (name, peak, limit_mb))
        if lines.bad:
            fail("%s: %s" % (name, lines.bad))
        if lines.count != want:
            fail("%s printed %d lines of %d %s" % (name, lines.count, want, what))

sys.exit(1 if failed else 0)
