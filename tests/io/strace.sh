#!/bin/sh
# strace.sh RINGTRACE - `ringtrace record --io` agrees with strace on real
# programs: cat (copy_file_range, and read/write with -n), tar creating and
# extracting an archive of a small tree, gzip and gunzip (a shell script that
# execs gzip), sqlite3 (a table, rows inserted in a transaction, a query:
# journal, pread/pwrite, fdatasync, unlink), a Python script (Debian's
# /usr/bin/python3) and sh writing to its descriptors 3 to 9 from a subshell.
#
# Each command runs twice on copies of the same inputs, in directories of
# their own: once recorded, once under `strace -f -y`.  compare_strace.py
# then wants, file by file, the same read and write calls with the same
# bytes, and the same opens; it says what it leaves out and why.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../e2e/lib.sh"
ringtrace=$1
unset RINGTRACE_ARENA RINGTRACE_BUFFER RINGTRACE_MODE RINGTRACE_RINGS RINGTRACE_SYNC \
	RINGTRACE_PRELOAD RINGTRACE_PRELOAD_IO LD_PRELOAD
python=/usr/bin/python3
for tool in strace sqlite3 tar gzip gunzip cat "$python"; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		fail "$tool is not installed (make test-plain installs strace and sqlite3)"
		finish
		exit 1
	fi
done
if ! strace -o /dev/null true 2>"$work/ptrace.err"; then
	echo "SKIP: strace cannot trace here: $(cat "$work/ptrace.err")"
	exit 77
fi
calls=read,write,pread64,pwrite64,readv,writev,preadv,pwritev,preadv2,pwritev2
calls=$calls,open,openat,openat2,creat,copy_file_range,sendfile

# no symbolic link in the paths: the two sides resolve them the same way, but the report is plainer
real=$(cd "$work" && pwd -P)
inputs=$real/inputs
mkdir "$inputs"
"$python" - "$inputs" <<'EOF'
import hashlib, os, sys
root = sys.argv[1]
def blob(seed, n):
    out = bytearray()
    i = 0
    while len(out) < n:
        out += hashlib.sha256(f"{seed}-{i}".encode()).digest()
        i += 1
    return bytes(out[:n])
def put(name, data):
    path = os.path.join(root, name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)
put("in.txt", "".join(f"line {i}: {blob(i, 20).hex()}\n" for i in range(5000)).encode())
put("data.txt", "".join(f"{i} {i * i} {i % 7}\n" for i in range(12000)).encode())
put("tree/a.bin", blob("a", 70000))
put("tree/c", b"hi\n")
put("tree/empty", b"")
put("tree/sub/b.txt", "".join(f"{i}\n" for i in range(20000)).encode())
put("tree/sub/deeper/d.txt", blob("d", 3000).hex().encode())
os.makedirs(os.path.join(root, "extracted"))
EOF
cp "$here/workload.py" "$inputs/"
sql="CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT);
BEGIN;
INSERT INTO t(b) SELECT printf('row %d', value) FROM generate_series(1, 500);
INSERT INTO t(b) VALUES (hex(zeroblob(20000)));
COMMIT;
SELECT count(*), sum(length(b)) FROM t;"

for side in rt st; do
	cp -R "$inputs" "$real/$side"
done

# step NAME IN OUT [NEEDED...] -- COMMAND...: COMMAND in both copies, stdin from IN,
# stdout to OUT (both relative to the copy); NEEDED files (RUN/...) must be read or
# written in both runs
step() {
	name=$1
	in=$2
	out=$3
	shift 3
	needs=""
	while [ "$1" != "--" ]; do
		needs="$needs --need $1"
		shift
	done
	shift
	status=0
	(cd "$real/rt" && env -i PATH=/usr/bin:/bin HOME="$real/rt" LC_ALL=C.UTF-8 \
		PYTHONDONTWRITEBYTECODE=1 "$ringtrace" record --io -q -o "$work/$name.rt" -- "$@" \
		<"$in" >"$out" 2>>"$real/rt/stderr.txt") || status=$?
	check "$name: recorded, exit 0 ($status)" test "$status" -eq 0
	status=0
	(cd "$real/st" && env -i PATH=/usr/bin:/bin HOME="$real/st" LC_ALL=C.UTF-8 \
		PYTHONDONTWRITEBYTECODE=1 strace -f -y -qq -e signal=none -e trace="$calls" \
		-o "$work/$name.strace" -- "$@" <"$in" >"$out" 2>>"$real/st/stderr.txt") || status=$?
	check "$name: under strace, exit 0 ($status)" test "$status" -eq 0
	status=0
	"$ringtrace" dump --json "$work/$name.rt" >"$work/$name.json" 2>"$work/$name.dump.err" ||
		status=$?
	check "$name: dump --json exits 0 ($status)" test "$status" -eq 0
	[ "$status" -eq 0 ] || head -5 "$work/$name.dump.err" >&2
	# shellcheck disable=SC2086 # needs is a list of words
	if "$python" "$here/compare_strace.py" --rt-root "$real/rt" --strace-root "$real/st" \
		$needs "$work/$name.json" "$work/$name.strace" >"$work/$name.compare" 2>&1; then
		pass
		echo "$name: ringtrace and strace agree"
	else
		fail "$name: ringtrace and strace disagree:"
		cat "$work/$name.compare" >&2
	fi
}

step cat in.txt out.txt RUN/in.txt RUN/out.txt -- cat
step cat_n in.txt numbered.txt RUN/in.txt RUN/numbered.txt -- cat -n
step tar_create /dev/null tar.out RUN/tree.tar RUN/tree/a.bin RUN/tree/sub/b.txt -- \
	tar -cf tree.tar tree
step tar_extract /dev/null tar.out RUN/tree.tar RUN/extracted/tree/a.bin -- \
	tar -xf tree.tar -C extracted
step gzip /dev/null gzip.out RUN/data.txt RUN/data.txt.gz -- gzip -k -9 data.txt
step gunzip /dev/null back.txt RUN/data.txt.gz RUN/back.txt -- gunzip -c data.txt.gz
step sqlite3 /dev/null sqlite.out RUN/db.sqlite RUN/db.sqlite-journal -- sqlite3 db.sqlite "$sql"
step python /dev/null python.out RUN/in.txt RUN/pyout/lines.txt RUN/pyout/positioned.bin \
	RUN/pyout/sendfile.bin RUN/python.out -- "$python" workload.py in.txt pyout
# a shell script's descriptors 3 to 9, each written by a subshell (a fork) and by the shell
# shellcheck disable=SC2016 # the shell under test expands them
script='for n in 3 4 5 6 7 8 9; do eval "exec $n>fd$n.out"; done
(for n in 3 4 5 6 7 8 9; do eval "echo child $n >&$n"; done)
for n in 3 4 5 6 7 8 9; do eval "echo parent $n >&$n"; done'
step sh /dev/null sh.out RUN/fd3.out RUN/fd9.out -- sh -c "$script"
for n in 3 4 5 6 7 8 9; do
	check "the two runs of the shell wrote the same to its descriptor $n" \
		cmp "$real/rt/fd$n.out" "$real/st/fd$n.out"
done
check "the two runs of gunzip gave back the input" cmp -s "$real/rt/back.txt" "$real/rt/data.txt"
check "the two sqlite3 runs printed the same" cmp -s "$real/rt/sqlite.out" "$real/st/sqlite.out"
check "the two Python runs printed the same" cmp -s "$real/rt/python.out" "$real/st/python.out"
finish
