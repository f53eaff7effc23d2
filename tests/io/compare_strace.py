#!/usr/bin/python3
"""compare_strace.py [options] DUMP STRACE_LOG - one program's file I/O as
`ringtrace record --io` saw it (DUMP, `ringtrace dump --json`) against the
same program run again under `strace -f -y` (STRACE_LOG).

Options:
  --rt-root DIR       the directory the recorded run worked in
  --strace-root DIR   the directory the strace run worked in (a copy of the
                      same inputs); both are shown as RUN
  --need FILE         FILE (RUN/...) must be read or written in both runs:
                      the comparison is not empty (repeatable)

For every file, the two must agree exactly on
  - the read calls on descriptors (read, pread, readv, preadv, and the
    input side of copy_file_range and sendfile): how many, and the bytes
    they returned;
  - the write calls (write, pwrite, writev, pwritev, the output side of
    copy_file_range and sendfile): how many, and the bytes;
  - the opens: how many succeeded, and how many failed.
A file is the path with symbolic links resolved on both sides (strace -y
prints what the kernel resolved; the interposer records the path the
program gave, made absolute), in each process by its own descriptors.

What is left out, and why, is EXCLUDED below and the stdio rule: the
interposer sees the calls the program makes into the C library, and strace
sees the system calls, including those the C library makes by itself.
Exit status 0 when the two agree, 1 with a table of the differences.
"""
import json
import os
import re
import sys

# Files whose I/O only strace can see, each with the reason.  Matched against
# the resolved path.  Nothing here is I/O the program asked for by a call of
# the C library's interposed functions: an interposer in front of those
# functions cannot see it, so leaving it out hides nothing the tool promises.
EXCLUDED = [
    (r"\.so(\.[0-9][0-9.]*)?$",
     "shared libraries: the dynamic loader opens, reads and maps them with its own system "
     "calls (at start, before any preloaded library is in place, and in dlopen), which no "
     "preloaded library can interpose"),
    (r"^/etc/ld\.so\.(cache|preload)$",
     "the dynamic loader's own files, read with its own system calls"),
    (r"^/usr/lib/locale/|^/usr/share/locale/|^/etc/locale\.alias$|^/usr/share/i18n/",
     "locale data and message catalogues: setlocale and gettext read them inside the C "
     "library, with its internal calls, which do not go through the interposed symbols "
     "(/usr/share/locale/locale.alias is a link to /etc/locale.alias)"),
    (r"^/usr/lib/[^/]*-linux-gnu/gconv/",
     "iconv's module cache: read inside the C library"),
    (r"^/etc/(nsswitch\.conf|passwd|group|shadow|host\.conf|hosts|resolv\.conf|gai\.conf)$",
     "name service lookups (getpwuid, getgrgid: tar, sqlite3 finding $HOME): read inside the "
     "C library"),
    (r"^/etc/localtime$|^/usr/share/zoneinfo/",
     "the time zone: tzset reads it inside the C library"),
    (r"^/proc/filesystems$",
     "read by libselinux's constructor (tar, Python): a library's constructor runs before "
     "the interposer's, which turns recording on"),
    (r"^/sys/devices/system/cpu/",
     "the C library's own queries of the CPUs (sysconf, malloc)"),
    (r"^/usr/lib/python3[^/]*/|^/usr/local/lib/python3[^/]*/|^/usr/lib/python3/",
     "Python's standard library and site directories: the interpreter's own modules, not "
     "the script's files; their bytecode caches can be written by one run and not the other"),
]
EXCLUDED_RE = [(re.compile(p), why) for p, why in EXCLUDED]

STDIO_REASON = ("read or written through stdio: the C library's own read and write calls "
                "behind a stream are internal to it; its opens are compared")

RT_READS = {"read", "pread", "readv", "preadv"}
RT_WRITES = {"write", "pwrite", "writev", "pwritev"}
# the stdio calls that say a file is read or written through a stream (not fclose
# nor fflush alone: coreutils close stdout with fclose at exit, whatever wrote to it)
RT_STDIO = {"fopen", "fread", "fwrite"}
ST_READS = {"read", "pread64", "readv", "preadv", "preadv2"}
ST_WRITES = {"write", "pwrite64", "writev", "pwritev", "pwritev2"}
ST_OPENS = {"open", "openat", "openat2", "creat"}
# Opens the C library makes inside its own functions, with its internal open (not
# interposed), told by their exact flags: opendir's of a directory, and fchmodat's with
# AT_SYMLINK_NOFOLLOW (tar setting the modes of the directories it extracted), which opens
# the file O_PATH to change it through /proc.  An open of the program's own with the same
# flags would show as one more open in the recording: such a test fails, it does not pass.
LIBC_OPEN_FLAGS = [
    {"O_RDONLY", "O_NONBLOCK", "O_CLOEXEC", "O_DIRECTORY"},
    {"O_RDONLY", "O_NOFOLLOW", "O_CLOEXEC", "O_PATH"},
]


class Side:
    """Per file: [read calls, read bytes, write calls, write bytes, opens, failed opens]."""

    FIELDS = ["read calls", "read bytes", "write calls", "write bytes", "opens",
              "failed opens"]

    def __init__(self, name, root):
        self.name = name
        self.root = os.path.realpath(root) if root else None
        self.files = {}
        self.excluded = {}
        self.stdio = set()
        self.unnamed = []

    def key(self, path):
        """The file as both sides name it, or None when excluded."""
        if path.endswith(" (deleted)"):
            path = path[: -len(" (deleted)")]
        m = re.match(r"^(pipe|socket|anon_inode):", path)
        if m:
            return m.group(1) + ":[*]"
        if path.startswith("/"):
            path = os.path.realpath(path)
        for rx, why in EXCLUDED_RE:
            if rx.search(path):
                self.excluded[path] = why
                return None
        if self.root and (path == self.root or path.startswith(self.root + "/")):
            path = "RUN" + path[len(self.root):]
        return path

    def add(self, path, field, value=1):
        k = self.key(path)
        if k is None:
            return
        row = self.files.setdefault(k, [0] * len(Side.FIELDS))
        row[Side.FIELDS.index(field)] += value

    def transfer(self, path, direction, result):
        self.add(path, direction + " calls")
        if result > 0:
            self.add(path, direction + " bytes", result)

    def opened(self, path, ok):
        self.add(path, "opens" if ok else "failed opens")


# ---- the ringtrace side ----------------------------------------------------


def read_dump(path, side):
    events = []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            try:
                o = json.loads(line)
            except ValueError as e:
                sys.exit(f"{path}:{number}: not JSON: {e}")
            if o.get("kind") == "io":
                events.append(o)
    if not events:
        sys.exit(f"FAIL: {path}: no io events at all: does this build decode RT_REC_IO records?")
    names = {}  # (pid, fd) -> path, from the events themselves: for the second descriptor

    def name_of(pid, fd):
        return names.get((pid, fd))

    for e in events:
        op = e.get("op")
        pid = e.get("pid", 0)
        fd = e.get("fd")
        result = e.get("result", 0)
        p = e.get("path")
        if p is not None and fd is not None and fd >= 0 and op not in ("close", "fclose"):
            names[(pid, fd)] = p
        if op in ("open", "fopen"):
            if p is None:
                continue  # fdopen: a stream over a descriptor, no open
            side.opened(p, result >= 0)
            if result >= 0:
                names[(pid, result)] = p
        elif op == "dup" and result >= 0 and p is not None:
            names[(pid, result)] = p
        elif op in ("close", "fclose") and result >= 0:
            names.pop((pid, fd), None)
        if op in RT_STDIO and p is not None and result >= 0:
            k = side.key(p)
            if k is not None:
                side.stdio.add(k)
        if op in RT_READS or op in RT_WRITES or op in ("copy_file_range", "sendfile"):
            if p is None:
                side.unnamed.append(e)
                continue
            if op in RT_READS:
                side.transfer(p, "read", result)
            elif op in RT_WRITES:
                side.transfer(p, "write", result)
            else:
                p2 = e.get("path2") or name_of(pid, e.get("fd2"))
                side.transfer(p, "read", result)
                if p2 is None:
                    side.unnamed.append(e)
                else:
                    side.transfer(p2, "write", result)
    return len(events)


# ---- the strace side -------------------------------------------------------

LINE = re.compile(r"^(\d+)\s+([a-z_0-9]+)\((.*)\)\s+=\s+(-?\d+|0x[0-9a-f]+|\?)(.*)$")
FD_ARG = re.compile(r"^(-?\d+|AT_FDCWD)<(.*)>$")


def split_args(text):
    """Top-level arguments of a strace call: commas outside quotes and brackets."""
    args, depth, quoted, escape, start = [], 0, False, False, 0
    for i, c in enumerate(text):
        if quoted:
            if escape:
                escape = False
            elif c == "\\":
                escape = True
            elif c == '"':
                quoted = False
        elif c == '"':
            quoted = True
        elif c in "[{(":
            depth += 1
        elif c in "]})":
            depth -= 1
        elif c == "," and depth == 0:
            args.append(text[start:i].strip())
            start = i + 1
    args.append(text[start:].strip())
    return args


def fd_path(arg):
    m = FD_ARG.match(arg)
    return m.group(2) if m else None


def unquote(arg):
    """A path argument as strace printed it ("..." with C escapes)."""
    if not (arg.startswith('"') and arg.endswith('"')):
        return arg
    return arg[1:-1].encode("latin-1").decode("unicode_escape").encode("latin-1").decode(
        "utf-8", "replace")


def joined_lines(path):
    """Whole calls: a call strace split (unfinished, resumed) put back together."""
    pending = {}
    with open(path, encoding="utf-8", errors="replace") as f:
        for raw in f:
            line = raw.rstrip("\n")
            m = re.match(r"^(\d+)\s+(.*)$", line)
            if not m:
                continue
            pid, rest = m.group(1), m.group(2)
            if rest.startswith("---") or rest.startswith("+++"):
                continue
            if rest.endswith("<unfinished ...>"):
                pending[pid] = rest[: -len("<unfinished ...>")].rstrip()
                continue
            r = re.match(r"^<\.\.\. [a-z_0-9]+ resumed>\s?(.*)$", rest)
            if r:
                rest = pending.pop(pid, "") + r.group(1)
            yield pid + " " + rest


def read_strace(path, side, cwd):
    calls = 0
    for line in joined_lines(path):
        m = LINE.match(line)
        if not m:
            continue
        name, args, ret, tail = m.group(2), split_args(m.group(3)), m.group(4), m.group(5)
        if ret == "?":
            continue
        result = int(ret, 0)
        calls += 1
        if name in ST_READS or name in ST_WRITES:
            p = fd_path(args[0])
            if p is None:
                sys.exit(f"FAIL: {path}: a descriptor strace did not name: {line}")
            side.transfer(p, "read" if name in ST_READS else "write", result)
        elif name in ("copy_file_range", "sendfile"):
            src, dst = (args[0], args[2]) if name == "copy_file_range" else (args[1], args[0])
            side.transfer(fd_path(src), "read", result)
            side.transfer(fd_path(dst), "write", result)
        elif name in ST_OPENS:
            if name in ("openat", "openat2"):
                base, given, flags = fd_path(args[0]) or cwd, unquote(args[1]), args[2]
            else:
                base, given = cwd, unquote(args[0])
                flags = args[1] if name == "open" else "O_WRONLY|O_CREAT|O_TRUNC"
            if set(flags.split("|")) in LIBC_OPEN_FLAGS:
                continue
            if result >= 0:
                t = re.match(r"^<(.*)>", tail.strip())
                side.opened(t.group(1) if t else os.path.join(base, given), True)
            else:
                side.opened(os.path.normpath(os.path.join(base, given)), False)
    return calls


# ---- the comparison --------------------------------------------------------


def main():
    argv = sys.argv[1:]
    roots = {"rt": None, "st": None}
    need = []
    pos = []
    while argv:
        a = argv.pop(0)
        if a == "--rt-root":
            roots["rt"] = argv.pop(0)
        elif a == "--strace-root":
            roots["st"] = argv.pop(0)
        elif a == "--need":
            need.append(argv.pop(0))
        else:
            pos.append(a)
    if len(pos) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    rt = Side("ringtrace", roots["rt"])
    st = Side("strace", roots["st"])
    n_rt = read_dump(pos[0], rt)
    n_st = read_strace(pos[1], st, roots["st"] or "/")

    problems = []
    for e in rt.unnamed:
        problems.append(f"ringtrace named no file for {json.dumps(e, sort_keys=True)}")
    stdio = rt.stdio
    rows = []
    for k in sorted(set(rt.files) | set(st.files)):
        a = rt.files.get(k, [0] * len(Side.FIELDS))
        b = st.files.get(k, [0] * len(Side.FIELDS))
        fields = range(len(Side.FIELDS))
        if k in stdio:
            fields = [Side.FIELDS.index("opens"), Side.FIELDS.index("failed opens")]
        for i in fields:
            bad = a[i] != b[i]
            rows.append((k, Side.FIELDS[i], a[i], b[i], bad))
            if bad:
                problems.append(f"{k}: {Side.FIELDS[i]}: ringtrace {a[i]}, strace {b[i]}")
    for f in need:
        a, b = rt.files.get(f), st.files.get(f)
        if not a or not b or not (a[1] or a[3]) or not (b[1] or b[3]) or f in stdio:
            problems.append(f"{f}: the comparison needs it read or written in both runs, "
                            f"through descriptors (ringtrace {a}, strace {b})")

    width = max([len(r[0]) for r in rows] + [20])
    print(f"{pos[0]}: {n_rt} io events; {pos[1]}: {n_st} system calls")
    print(f"{'file':<{width}}  {'what':<13} {'ringtrace':>10} {'strace':>10}")
    for k, what, a, b, bad in rows:
        print(f"{k:<{width}}  {what:<13} {a:>10} {b:>10}{'   <-- differs' if bad else ''}")
    for k in sorted(stdio):
        print(f"{k}: bytes not compared: {STDIO_REASON}")
    by_reason = {}
    for p, why in sorted({**st.excluded, **rt.excluded}.items()):
        by_reason.setdefault(why, []).append(p)
    for why, paths in by_reason.items():
        more = f" and {len(paths) - 3} more" if len(paths) > 3 else ""
        print(f"left out: {', '.join(paths[:3])}{more}: {why}")
    if problems:
        for p in problems:
            print("FAIL: " + p, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
