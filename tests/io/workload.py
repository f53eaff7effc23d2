"""workload.py SOURCE OUTDIR - a Python program's file I/O for strace.sh:
buffered and unbuffered reads and writes, text and binary, positioned and
vectored calls, sendfile (shutil), copy_file_range, a rename and an
unlink, and a summary on stdout."""
import os
import shutil
import sys

source, out = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)

with open(source, "rb") as f:
    data = f.read()
with open(os.path.join(out, "chunks.bin"), "wb") as f:
    for i in range(0, len(data), 7000):
        f.write(data[i:i + 7000])
with open(source, "rb", buffering=0) as f:
    pieces = 0
    while f.read(4096):
        pieces += 1

lines = 0
with open(source, encoding="ascii") as f:
    for line in f:
        lines += 1
with open(os.path.join(out, "lines.txt"), "w", encoding="ascii") as f:
    for i in range(2000):
        print(i, "squared is", i * i, file=f)

fd = os.open(os.path.join(out, "positioned.bin"), os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
os.write(fd, b"x" * 1000)
os.pwrite(fd, b"y" * 100, 50)
got = len(os.pread(fd, 300, 20))
os.lseek(fd, 0, os.SEEK_SET)
os.writev(fd, [b"abc", b"defgh", b"ij"])
buffers = [bytearray(7), bytearray(11)]
got += os.readv(fd, buffers)
os.fsync(fd)
os.ftruncate(fd, 500)
os.close(fd)

shutil.copyfile(source, os.path.join(out, "sendfile.bin"))
src = os.open(source, os.O_RDONLY)
dst = os.open(os.path.join(out, "copied.bin"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
copied = 0
while True:
    n = os.copy_file_range(src, dst, 65536)
    if n == 0:
        break
    copied += n
os.close(src)
os.close(dst)
os.rename(os.path.join(out, "copied.bin"), os.path.join(out, "renamed.bin"))
os.unlink(os.path.join(out, "chunks.bin"))
try:
    open(os.path.join(out, "missing", "file"))
except FileNotFoundError:
    pass
print(f"{len(data)} bytes, {pieces} pieces, {lines} lines, {got} positioned, {copied} copied")
