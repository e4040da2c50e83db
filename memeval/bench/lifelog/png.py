"""A tiny PNG writer whose bytes depend only on the pixels (no zlib: its output differs between
zlib builds, e.g. zlib-ng, so Pillow's encoder is not byte-stable across machines).

Rows use the PNG "Up" filter (a row equal to the one above becomes zeros); the deflate stream uses
fixed Huffman codes with literals and distance-1 runs, which suits drawn scenes of flat colour.
"""

from __future__ import annotations

import re
import struct
import zlib

from PIL import Image, ImageChops
from ...errors import BenchContractError

__all__ = ["encode_png"]

# Deflate length codes 257..285: (code, base length, extra bits).
_LENGTHS = [
    (257 + i, b, e)
    for i, (b, e) in enumerate(
        [
            (3, 0),
            (4, 0),
            (5, 0),
            (6, 0),
            (7, 0),
            (8, 0),
            (9, 0),
            (10, 0),
            (11, 1),
            (13, 1),
            (15, 1),
            (17, 1),
            (19, 2),
            (23, 2),
            (27, 2),
            (31, 2),
            (35, 3),
            (43, 3),
            (51, 3),
            (59, 3),
            (67, 4),
            (83, 4),
            (99, 4),
            (115, 4),
            (131, 5),
            (163, 5),
            (195, 5),
            (227, 5),
            (258, 0),
        ]
    )
]


def _length_code(n: int) -> tuple[int, int, int]:
    for code, base, extra in reversed(_LENGTHS):
        if n >= base:
            return code, n - base, extra
    raise BenchContractError(n)


_LEN_TABLE = [(0, 0, 0)] * 3 + [_length_code(n) for n in range(3, 259)]  # lengths 0-2 unused


def _fixed_code(sym: int) -> tuple[int, int]:
    """(code, bit length) of a literal/length symbol in the fixed Huffman table."""
    if sym < 144:
        return 0x30 + sym, 8
    if sym < 256:
        return 0x190 + sym - 144, 9
    if sym < 280:
        return sym - 256, 7
    return 0xC0 + sym - 280, 8


def _rev(code: int, n: int) -> int:
    return int(format(code, f"0{n}b")[::-1], 2)


_CODES = [(_rev(c, n), n) for c, n in map(_fixed_code, range(288))]


_RUNS = re.compile(rb"(.)\1*", re.S)


def _deflate(data: bytes) -> bytes:
    """One final fixed-Huffman block: each run of equal bytes is a literal then distance-1 copies."""
    out = bytearray()
    acc, n = 0b011, 3  # BFINAL=1, BTYPE=01 (fixed Huffman), written LSB first
    codes, lengths = _CODES, _LEN_TABLE
    for m in _RUNS.finditer(data):
        start = m.start()
        run = m.end() - start
        code, bits = codes[data[start]]
        acc |= code << n
        n += bits
        run -= 1
        while run >= 3:
            k = 258 if run > 258 else run
            sym, extra_val, extra_bits = lengths[k]
            c, cn = codes[sym]
            acc |= (c | (extra_val << cn)) << n  # length code, its extra bits, then distance code 0 (5 bits)
            n += cn + extra_bits + 5
            run -= k
        for _ in range(run):
            acc |= code << n
            n += bits
        if n >= 64:
            whole = n // 8
            out += (acc & ((1 << (whole * 8)) - 1)).to_bytes(whole, "little")
            acc >>= whole * 8
            n -= whole * 8
    c, cn = codes[256]  # end of block
    acc |= c << n
    n += cn
    out += acc.to_bytes((n + 7) // 8, "little")
    return bytes(out)


def _adler32(data: bytes) -> int:
    return zlib.adler32(data) & 0xFFFFFFFF  # a checksum: identical in every zlib build


def _chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)


def encode_png(img: Image.Image) -> bytes:
    """PNG bytes of an RGB image (any other mode is converted to RGB first)."""
    img = img if img.mode == "RGB" else img.convert("RGB")
    width, height = img.size
    stride = width * 3
    rgb = img.tobytes()
    # "Up" filter for every row but the first: the byte minus the byte above, modulo 256.
    up = ImageChops.subtract_modulo(img, ImageChops.offset(img, 0, 1)).tobytes()
    parts = [b"\x00", rgb[:stride]]
    for y in range(1, height):
        parts += (b"\x02", up[y * stride : (y + 1) * stride])
    raw = b"".join(parts)
    stream = b"\x78\x01" + _deflate(raw) + struct.pack(">I", _adler32(raw))
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", ihdr) + _chunk(b"IDAT", stream) + _chunk(b"IEND", b"")
