"""check_text.py - what a command printed holds nothing raw from its inputs.

    check_text.py [--json] [--want M,M...] FILE...

Each FILE (a command's stdout or stderr) must be valid UTF-8 and hold no
control character but newline and tab: no C0 byte, no DEL, no C1 character.
Every hostile string of hostile_prog starts with a marker ("Zth1", "Zlg",
...) and a newline; every line that holds a marker must hold it followed by
the newline escaped (\\x0a in text, \\n in JSON), so that no string began a
line of its own.  --want: markers FILE must mention (at least one file).
--json: each FILE is one JSON document, or one per line.  --bytes: only
the bytes are checked, not the markers (an output whose own rule shows a
control character as '?', as CTF metadata does).
Prints one line per problem; exits 1 when there is one.
"""

import json
import re
import sys

MARKERS = ["Zth1", "Zth2", "Zth3", "Zpg", "Zmo", "Zfl", "Ztg", "Zsp", "Zlg", "Zio", "Zar", "Zct",
           "Zno"]


def problems(path, data, as_json, markers):
    out = []
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        return ["%s: invalid UTF-8 at byte %d: %r" % (path, e.start, data[max(0, e.start - 20):e.start + 20])]
    for i, ch in enumerate(text):
        o = ord(ch)
        if (o < 0x20 and ch not in "\n\t") or 0x7f <= o <= 0x9f:
            out.append("%s: control character U+%04X at character %d: %r" % (path, o, i, text[max(0, i - 30):i + 30]))
            break
    escaped_newline = "\\n" if as_json else "\\x0a"
    for number, line in enumerate(text.split("\n"), 1):
        for m in markers:
            for found in re.finditer(re.escape(m), line):
                after = line[found.end():found.end() + len(escaped_newline)]
                if after != escaped_newline:
                    out.append("%s:%d: %s not followed by %s: %r" % (path, number, m, escaped_newline, line[:200]))
                    break
    if as_json and text.strip():
        try:
            json.loads(text)
        except ValueError:
            for number, line in enumerate(text.splitlines(), 1):
                if not line.strip():
                    continue
                try:
                    json.loads(line)
                except ValueError as e:
                    out.append("%s:%d: not JSON: %s" % (path, number, e))
                    break
    return out


def main():
    args = sys.argv[1:]
    as_json = False
    want = []
    markers = MARKERS
    while args and args[0].startswith("--"):
        if args[0] == "--json":
            as_json = True
            args = args[1:]
        elif args[0] == "--bytes":
            markers = []
            args = args[1:]
        elif args[0] == "--want":
            want = [w for w in args[1].split(",") if w]
            args = args[2:]
        else:
            sys.exit("check_text.py: unknown option " + args[0])
    found = []
    bad = []
    for path in args:
        with open(path, "rb") as f:
            data = f.read()
        bad += problems(path, data, as_json, markers)
        found.append(data)
    for m in want:
        if not any(m.encode() in d for d in found):
            bad.append("%s: no %s at all" % (" ".join(args), m))
    for b in bad[:10]:
        print(b)
    sys.exit(1 if bad else 0)


main()
