#!/usr/bin/env python3
"""png_not_blank.py PNG - exits 0 when a screenshot is a page, not a blank: more than 3% of
its pixels not white and more than 20 colours (a PNG of 8-bit RGB or RGBA, its filters
undone here, so the check needs nothing but Python). Prints the size and the figures.
Used by the HTML pages' browser tests (report.sh, report_history.sh)."""
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
pos, idat = 8, b""
while pos < len(data):
    n, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    pos += 12 + n
    if kind == b"IHDR":
        w, h, depth, colour = struct.unpack(">IIBB", body[:10])
    elif kind == b"IDAT":
        idat += body
assert depth == 8 and colour in (2, 6), f"unexpected PNG depth {depth} colour type {colour}"
bpp = 3 if colour == 2 else 4
raw, stride, i = zlib.decompress(idat), w * bpp, 0
prev, ink, colours = bytearray(stride), 0, set()
for y in range(h):
    f, line = raw[i], bytearray(raw[i + 1:i + 1 + stride])
    i += 1 + stride
    for x in range(stride):
        a = line[x - bpp] if x >= bpp else 0
        b, c = prev[x], (prev[x - bpp] if x >= bpp else 0)
        if f == 1: line[x] = (line[x] + a) & 255
        elif f == 2: line[x] = (line[x] + b) & 255
        elif f == 3: line[x] = (line[x] + ((a + b) >> 1)) & 255
        elif f == 4:
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    for x in range(0, stride, bpp * 2):
        px = bytes(line[x:x + 3])
        colours.add(px)
        ink += px != b"\xff\xff\xff"
    prev = line
frac = ink / (h * w / 2)
print(f"{w}x{h}, {frac:.1%} not white, {len(colours)} colours")
sys.exit(0 if frac > 0.03 and len(colours) > 20 else 1)
