#!/usr/bin/env python3
"""check_docs.py SOURCE_DIR TOOL LIBRARY DEMO - the documentation says what the code does.

  1. The man pages in docs/man are what scripts/gen-man makes of their sources.
  2. Every command `ringtrace --help` lists has its page, ringtrace-COMMAND(1),
     and every long option its `--help` prints is in that page (those of its
     usage in SYNOPSIS, those it lists in OPTIONS), and the page names no
     option `--help` does not know; ringtrace(1)
     lists every command, ringtrace(3) every function of include/ringtrace.h,
     and one of the two every RINGTRACE_* variable the sources name.
  3. Every page renders without a warning (groff -man -ww -z; mandoc -Tlint
     too when it is installed).
  4. Every C and C++ example in README.md, docs/*.md and the man sources is
     compiled against this tree's header and library (gcc and g++, -Wall
     -Wextra -Werror) and run with its arena in a temporary directory;
     `ringtrace check` and `ringtrace dump` must then read that arena cleanly.
     A block is an example when its fence says c, c++ or cpp.  Words after
     the language change what is done with it:
       fragment       not a whole program: only compiled (-fsyntax-only),
                      after #include <ringtrace.h>
       c-only         not compiled as C++
       cflags=FLAGS   more compiler flags (commas for spaces)
       arg=WORD       run the program with this argument
       signal=NAME    the program must die of this signal (SEGV, ABRT...)
       norun          compiled and linked, not run
  5. Every shell example marked `sh run` (or `console run`) is run, each `$ ` line by sh in one
     directory shared by all of them, and must succeed.  That directory holds
     `app` (examples/demo.c), its arena `app.arena` and its recording
     `app.rt`, and `fib`, the README's -finstrument-functions example, with
     its recording `fib.rt`; `ringtrace` is the tool of this build, and
     RINGTRACE_DIR a directory of that directory's own.
  6. Every relative link and every path under docs/, scripts/, tests/, src/,
     include/, cmake/ or examples/ that README.md, docs/*.md and the man
     sources mention is a file or directory of the tree, and every #anchor
     of a link to a Markdown file names one of its headings.
"""
import glob
import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile

failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg, file=sys.stderr)


def run(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


def docs(src):
    files = [os.path.join(src, "README.md")]
    files += sorted(glob.glob(os.path.join(src, "docs", "*.md")))
    files += sorted(glob.glob(os.path.join(src, "docs", "man", "*.md")))
    return files


def rel(src, path):
    return os.path.relpath(path, src)


# ---- 1, 2, 3: the man pages ------------------------------------------------

def check_pages(src, tool):
    r = run([sys.executable, os.path.join(src, "scripts", "gen-man"), "--check"])
    if r.returncode != 0:
        fail("the man pages are not what their sources give (make man):\n" + r.stderr)
    man = os.path.join(src, "docs", "man")
    h = run([tool, "--help"])
    commands = re.findall(r"^  ([a-z][a-z-]*) +\S", h.stdout.split("Commands:", 1)[-1], re.M)
    if len(commands) < 10:
        fail("ringtrace --help lists %d commands" % len(commands))
    with open(os.path.join(man, "ringtrace.1.md")) as f:
        overview = f.read()
    for c in commands:
        page = os.path.join(man, "ringtrace-%s.1.md" % c)
        if not os.path.exists(page):
            fail("command %s has no page docs/man/ringtrace-%s.1.md" % (c, c))
            continue
        if "**ringtrace-%s**(1)" % c not in overview:
            fail("ringtrace(1) does not list ringtrace-%s(1)" % c)
        with open(page) as f:
            text = f.read()
        r = run([tool, "help", c])
        helptext = r.stdout + r.stderr
        for opt in sorted(set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", helptext))):
            if not re.search(r"`[^`]*%s(?![a-z0-9-])[^`]*`" % re.escape(opt), text):
                fail("ringtrace help %s prints %s, which its page does not name" % (c, opt))
        # the options --help lists, each at the start of its line, are items of OPTIONS
        terms = " ".join(re.findall(r"^\* (.*):$", text.split("## OPTIONS", 1)[-1]
                                    .split("\n## ", 1)[0], re.M))
        for opt in sorted(set(re.findall(r"^ {2,4}(?:-\w, )?(--[a-z][a-z0-9-]*)", helptext,
                                         re.M))):
            if not re.search(r"`%s`" % re.escape(opt), terms):
                fail("ringtrace help %s lists %s, which its page's OPTIONS does not"
                     % (c, opt))
        # and the other way: no option the command does not know
        for opt in sorted(set(re.findall(r"--[a-z][a-z0-9-]*", terms))):
            if opt != "--help" and opt not in helptext:
                fail("the page of %s describes %s, which ringtrace help %s does not know"
                     % (c, opt, c))
        synopsis = text.split("## SYNOPSIS", 1)[-1].split("\n## ", 1)[0]
        for opt in sorted(set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*",
                                         helptext.split("\n\n", 1)[0]))):
            if opt not in synopsis:
                fail("the usage of %s has %s, its page's SYNOPSIS not" % (c, opt))
        for opt in sorted(set(re.findall(r"--[a-z][a-z0-9-]*", synopsis))):
            if opt not in helptext:
                fail("the SYNOPSIS of %s has %s, which ringtrace help %s does not know"
                     % (c, opt, c))
    for page in glob.glob(os.path.join(man, "ringtrace-*.1.md")):
        c = os.path.basename(page)[len("ringtrace-"):-len(".1.md")]
        if c not in commands:
            fail("docs/man/%s: ringtrace has no command %s" % (os.path.basename(page), c))
    # ringtrace(3): every function the header declares
    with open(os.path.join(src, "include", "ringtrace.h")) as f:
        header = f.read()
    with open(os.path.join(man, "ringtrace.3.md")) as f:
        api = f.read()
    public = header.split("#ifndef RINGTRACE_DISABLE", 1)[1].split("#else", 1)[0]
    for fn in sorted(set(re.findall(r"\b(ringtrace_[a-z_]+)\(", public))):
        if fn not in api:
            fail("ringtrace(3) does not describe %s()" % fn)
    for macro in ["RT_TRACE", "RT_LOG", "RT_BEGIN", "RT_END", "RT_SCOPE", "RT_LOG_FATAL",
                  "RT_LOG_ERROR", "RT_LOG_WARN", "RT_LOG_NOTICE", "RT_LOG_INFO",
                  "RT_LOG_DEBUG", "RINGTRACE_DISABLE"]:
        if re.search(r"\b%s\b" % macro, header) and macro not in api:
            fail("ringtrace(3) does not describe %s" % macro)
    # every environment variable the code reads by name
    with open(os.path.join(man, "ringtrace.1.md")) as f:
        both = f.read() + api
    named = set()
    for path in glob.glob(os.path.join(src, "src", "**", "*.[ch]"), recursive=True):
        with open(path, errors="replace") as f:
            named |= set(re.findall(r'"(RINGTRACE_[A-Z_]+)', f.read()))
    for var in sorted(named):
        if "`%s`" % var not in both:
            fail("%s is read by the code but neither ringtrace(1) nor ringtrace(3) "
                 "describes it" % var)
    # render
    pages = sorted(glob.glob(os.path.join(man, "*.[13]")))
    have_groff = run(["sh", "-c", "command -v groff"]).returncode == 0
    have_mandoc = run(["sh", "-c", "command -v mandoc"]).returncode == 0
    if not have_groff and not have_mandoc:
        print("note: neither groff nor mandoc is installed: pages not rendered")
    for p in pages:
        if have_groff:
            r = run(["groff", "-man", "-ww", "-z", p])
            if r.returncode != 0 or r.stderr:
                fail("groff warns about %s:\n%s" % (rel(src, p), r.stderr))
        if have_mandoc:
            r = run(["mandoc", "-Tlint", "-Wwarning", p])
            if r.returncode != 0 or r.stdout or r.stderr:
                fail("mandoc -Tlint warns about %s:\n%s%s" % (rel(src, p), r.stdout, r.stderr))
    return len(commands), len(pages)


# ---- 4: the examples ---------------------------------------------------------

FENCE = re.compile(r"^( *)```(\S*)(.*)$")


def examples(path):
    """(line, language, words, code) of every fenced block in a file."""
    out = []
    with open(path) as f:
        lines = f.read().split("\n")
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, lang, rest = len(m.group(1)), m.group(2), m.group(3)
        start = i + 1
        body = []
        i += 1
        while i < len(lines) and lines[i].strip() != "```":
            body.append(lines[i][indent:])
            i += 1
        i += 1
        out.append((start, lang, rest.split(), "\n".join(body) + "\n"))
    return out


def check_examples(src, tool, library, work):
    include = os.path.join(src, "include")
    libdir = os.path.dirname(os.path.abspath(library))
    count = 0
    for doc in docs(src):
        for line, lang, words, code in examples(doc):
            if lang not in ("c", "c++", "cpp"):
                continue
            count += 1
            where = "%s:%d" % (rel(src, doc), line)
            opts = {}
            for w in words:
                k, _, v = w.partition("=")
                opts[k] = v
            unknown = set(opts) - {"fragment", "c-only", "cflags", "arg", "signal", "norun"}
            if unknown:
                fail("%s: unknown example words %s" % (where, " ".join(sorted(unknown))))
                continue
            extra = opts.get("cflags", "").replace(",", " ").split()
            base = os.path.join(work, "ex%d" % count)
            compilers = [("gcc", ".c", ["-std=gnu11"])] if lang == "c" else []
            if lang != "c" or "c-only" not in opts:
                compilers.append(("g++", ".cc", ["-std=gnu++17"]))
            if "fragment" in opts:
                code = "#include <ringtrace.h>\n" + code
            built = None
            for cc, ext, std in compilers:
                srcfile = base + ext
                with open(srcfile, "w") as f:
                    f.write(code)
                cmd = [cc] + std + ["-Wall", "-Wextra", "-Werror", "-g", "-O2", "-I", include]
                cmd += extra
                if "fragment" in opts:
                    cmd += ["-fsyntax-only", srcfile]
                else:
                    cmd += [srcfile, "-o", base + "-" + cc, "-L", libdir, "-lringtrace",
                            "-Wl,-rpath," + libdir]
                r = run(cmd)
                if r.returncode != 0:
                    fail("%s: %s cannot build the example:\n%s" % (where, cc, r.stderr))
                elif "fragment" not in opts:
                    built = built or base + "-" + cc
            if not built or "norun" in opts:
                continue
            for exe in sorted(glob.glob(base + "-*")):
                arena = exe + ".arena"
                env = {k: v for k, v in os.environ.items()
                       if not k.startswith("RINGTRACE_") and k != "LD_PRELOAD"}
                env.update(RINGTRACE_ARENA=arena, RINGTRACE_DIR=work,
                           RINGTRACE_CRASH_EVENTS="0")
                args = [opts["arg"]] if opts.get("arg") else []
                r = run([exe] + args, env=env, cwd=work, timeout=60)
                want = opts.get("signal")
                if want:
                    sig = -getattr(signal, "SIG" + want)
                    if r.returncode != sig:
                        fail("%s: %s exited %d, not killed by SIG%s" % (where, exe, r.returncode,
                                                                      want))
                elif r.returncode != 0:
                    fail("%s: %s exited %d:\n%s" % (where, exe, r.returncode, r.stderr))
                    continue
                if not os.path.exists(arena):
                    fail("%s: %s recorded no arena" % (where, exe))
                    continue
                c = run([tool, "check", arena])
                if c.returncode != 0:
                    fail("%s: ringtrace check of its arena: %d\n%s%s" % (where, c.returncode,
                                                                       c.stdout, c.stderr))
                d = run([tool, "dump", arena])
                if d.returncode != 0 or "recovered" not in d.stderr + d.stdout:
                    fail("%s: ringtrace dump of its arena: %d\n%s" % (where, d.returncode,
                                                                    d.stderr))
    return count


# ---- 5: the shell examples ---------------------------------------------------

def clean_env(work):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("RINGTRACE_") and k != "LD_PRELOAD"}
    arenas = os.path.join(work, "arenas")
    os.makedirs(arenas, mode=0o700, exist_ok=True)
    env["RINGTRACE_DIR"] = arenas
    return env


def shell_setup(src, tool, demo, work):
    """The files the shell examples use; False if they cannot be made."""
    env = clean_env(work)
    env["PATH"] = os.path.dirname(tool) + os.pathsep + env.get("PATH", "")
    fib = None
    for line, lang, words, code in examples(os.path.join(src, "README.md")):
        if lang == "c" and "cflags=-finstrument-functions" in words:
            fib = code
    if fib is None:
        fail("README.md has no -finstrument-functions example for the shell examples")
        return None
    with open(os.path.join(work, "fib.c"), "w") as f:
        f.write(fib)
    steps = [["cp", demo, "app"],
             ["sh", "-c", "RINGTRACE_ARENA=app.arena ./app >/dev/null"],
             ["ringtrace", "record", "-q", "-o", "app.rt", "--", "./app"],
             ["gcc", "-g", "-finstrument-functions", "fib.c", "-o", "fib"],
             ["ringtrace", "record", "-q", "-o", "fib.rt", "./fib"]]
    for cmd in steps:
        r = run(cmd, cwd=work, env=env, timeout=120)
        if r.returncode != 0:
            fail("shell examples: %s: %s" % (" ".join(cmd), r.stderr))
            return None
    return env


def check_shell(src, tool, demo, work):
    env = None
    count = 0
    for doc in docs(src):
        for line, lang, words, code in examples(doc):
            if lang not in ("sh", "console") or "run" not in words:
                continue
            if env is None:
                env = shell_setup(src, tool, demo, work)
                if env is None:
                    return count
            for n, cmdline in enumerate(code.split("\n")):
                if not cmdline.startswith("$ "):
                    continue
                count += 1
                r = run(["sh", "-c", cmdline[2:]], cwd=work, env=env, timeout=120)
                if r.returncode != 0:
                    fail("%s:%d: '%s' exited %d:\n%s" % (rel(src, doc), line + n, cmdline[2:],
                                                         r.returncode, r.stderr[-2000:]))
    return count


# ---- 6: paths and links ------------------------------------------------------

def slug(heading):
    """The anchor GitHub gives a heading."""
    h = re.sub(r"[`*_]|\[|\]\([^)]*\)", "", heading.strip().lower())
    h = re.sub(r"[^\w\- ]", "", h)
    return h.replace(" ", "-")


def anchors(path):
    with open(path) as f:
        text = re.sub(r"```.*?```", "", f.read(), flags=re.S)
    return {slug(m) for m in re.findall(r"^#+ (.+)$", text, re.M)}


PATH = re.compile(r"(?<![\w./-])((?:docs|scripts|tests|src|include|cmake|examples)/[\w./-]*[\w/])")


def check_paths(src):
    count = 0
    for doc in docs(src):
        with open(doc) as f:
            text = f.read()
        here = os.path.dirname(doc)
        for m in re.finditer(r"\]\(([^)\s]+)\)", text):
            target = m.group(1)
            if re.match(r"[a-z]+:", target):
                continue
            count += 1
            path, _, anchor = target.partition("#")
            full = os.path.normpath(os.path.join(here, path)) if path else doc
            if not os.path.exists(full):
                fail("%s links to %s, which is not in the tree" % (rel(src, doc), target))
            elif anchor and full.endswith(".md") and anchor not in anchors(full):
                fail("%s links to %s: %s has no such heading" % (rel(src, doc), target,
                                                                rel(src, full)))
        # paths in running text and inline code; a ``` block shows what a program
        # printed, whose paths are the program's
        prose = re.sub(r"^( *)```.*?^\1```", "", text, flags=re.S | re.M)
        for m in PATH.finditer(prose):
            path = m.group(1).rstrip(".")
            if prose[m.end():m.end() + 1] in ("*", "<", "{", "-"):
                continue  # a pattern: tests/abi/exports-*.txt
            count += 1
            full = os.path.join(src, path)
            # a program the build makes from a source of that name is named by its path
            if not any(os.path.exists(full + ext) for ext in ("", ".c", ".sh", ".py")):
                fail("%s mentions %s, which is not in the tree" % (rel(src, doc), path))
    return count


def main():
    if len(sys.argv) != 5:
        print(__doc__, file=sys.stderr)
        return 2
    src, tool, library, demo = (os.path.abspath(a) for a in sys.argv[1:])
    commands, pages = check_pages(src, tool)
    with tempfile.TemporaryDirectory(prefix="ringtrace-docs.") as work:
        n = check_examples(src, tool, library, work)
    with tempfile.TemporaryDirectory(prefix="ringtrace-docs-sh.") as work:
        sh = check_shell(src, tool, demo, work)
    paths = check_paths(src)
    print("%d commands, %d pages, %d C and C++ examples, %d shell commands, %d paths and "
          "links; %d failures" % (commands, pages, n, sh, paths, len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
