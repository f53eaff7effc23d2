"""png.py - the pixels of a screenshot, for the tests that look at one.

Chromium writes 8-bit RGB or RGBA PNGs; this reads those with zlib alone,
so a test needs nothing beyond python3.  Anything else raises ValueError.
"""

import itertools
import struct
import zlib

# every byte's high bit, and the other seven, across a row read as one integer
_HIGH = {}


def add_bytes(x, y):
    """x + y byte by byte, each mod 256 (the Up filter), on whole rows at once:
    the low seven bits of each byte added without a carry out of the byte, the
    high bits put back by xor."""
    n = len(x)
    if n not in _HIGH:
        high = int.from_bytes(b"\x80" * n, "little")
        _HIGH[n] = (high, high ^ ((1 << (8 * n)) - 1))
    high, low = _HIGH[n]
    a, b = int.from_bytes(x, "little"), int.from_bytes(y, "little")
    return bytearray((((a & low) + (b & low)) ^ ((a ^ b) & high)).to_bytes(n, "little"))


def pixels(path):
    """Width, height and rows of (r, g, b) of an 8-bit RGB or RGBA PNG."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError(f"{path}: not a PNG")
    pos, idat, ihdr = 8, [], None
    while pos + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
        pos += 12 + length
    if not ihdr:
        raise ValueError(f"{path}: no IHDR")
    width, height, depth, colour, _, _, interlace = ihdr
    if depth != 8 or colour not in (2, 6) or interlace:
        raise ValueError(f"{path}: depth {depth} colour type {colour} interlace {interlace}: not decoded here")
    bpp = 3 if colour == 2 else 4
    try:
        raw = zlib.decompress(b"".join(idat))
    except zlib.error as e:
        raise ValueError(f"{path}: {e}") from e
    stride = width * bpp
    if len(raw) < height * (stride + 1):
        raise ValueError(f"{path}: {len(raw)} bytes of pixels, {height * (stride + 1)} expected")
    rows, prev = [], bytearray(stride)
    for y in range(height):
        ftype = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if ftype == 2:
            line = add_bytes(line, prev)
        elif ftype == 1:
            # each byte plus the one bpp before it, as decoded: a running sum per channel
            for k in range(bpp):
                line[k::bpp] = bytes(itertools.accumulate(line[k::bpp], lambda a, b: (a + b) & 255))
        elif ftype == 4:
            # Paeth: the neighbour (left a, up b, up-left c) nearest a + b - c
            for i in range(stride):
                b = prev[i]
                if i >= bpp:
                    a, c = line[i - bpp], prev[i - bpp]
                else:
                    a = c = 0
                pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - c - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        elif ftype == 3:
            # Average: the mean of the left and the upper byte
            for i in range(stride):
                a = line[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + ((a + prev[i]) >> 1)) & 255
        elif ftype != 0:
            raise ValueError(f"{path}: row {y}: filter type {ftype}")
        rows.append(list(zip(line[0::bpp], line[1::bpp], line[2::bpp])))
        prev = line
    return width, height, rows
