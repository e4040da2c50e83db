"""A tiny PNG writer whose bytes depend only on the pixels (no zlib: its output differs between
zlib builds, e.g. zlib-ng, so Pillow's encoder is not byte-stable across machines).

Rows use the PNG "Up" filter (a row equal to the one above becomes zeros); the deflate stream uses
fixed Huffman codes with literals and distance-1 runs, which suits drawn scenes of flat colour.
"""

from __future__ import annotations

import struct
import zlib

import numpy as np
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


#: each literal/length symbol's code (bits reversed: deflate writes codes LSB first) and bit length
_SYM_CODE = np.array([c for c, _ in _CODES], dtype=np.uint32)
_SYM_BITS = np.array([n for _, n in _CODES], dtype=np.uint8)
#: a copy of ``k`` bytes at distance 1 (k = 3..258): its length code, the code's extra bits, then
#: distance code 0 (5 zero bits), as one bit field
_COPY_CODE = np.zeros(259, dtype=np.uint32)
_COPY_BITS = np.zeros(259, dtype=np.uint8)
for _k in range(3, 259):
    _sym, _extra_val, _extra_bits = _LEN_TABLE[_k]
    _COPY_CODE[_k] = _CODES[_sym][0] | (_extra_val << _CODES[_sym][1])
    _COPY_BITS[_k] = _CODES[_sym][1] + _extra_bits + 5
del _k, _sym, _extra_val, _extra_bits
_BIT = np.arange(32, dtype=np.uint32)


def _deflate(data: bytes) -> bytes:
    """One final fixed-Huffman block: each run of equal bytes is a literal, then distance-1 copies of
    258 bytes while more than 258 are left, then one copy of the rest (3..258 bytes) or 1-2 literals.

    Built with numpy, a token per array row (a 480x320 scene has ~8,000 runs):

    >>> import zlib
    >>> zlib.decompress(_deflate(b"ab" + b"c" * 600), wbits=-15)[-3:]
    b'ccc'
    """
    a = np.frombuffer(data, dtype=np.uint8)
    starts = np.flatnonzero(np.concatenate(([True], a[1:] != a[:-1]))) if len(a) else np.zeros(0, np.intp)
    run = np.diff(np.append(starts, len(a))) - 1  # bytes after each run's first
    n258 = np.maximum((run - 1) // 258, 0)
    rest = run - 258 * n258
    copy = rest >= 3
    lit_code, lit_bits = _SYM_CODE[a[starts]], _SYM_BITS[a[starts]]
    rows = len(starts)
    code = np.empty((rows, 3), np.uint32)  # per run: its literal, its 258-byte copies, its tail
    bits = np.empty((rows, 3), np.uint8)
    count = np.empty((rows, 3), np.int64)
    code[:, 0], bits[:, 0], count[:, 0] = lit_code, lit_bits, 1
    code[:, 1], bits[:, 1], count[:, 1] = _COPY_CODE[258], _COPY_BITS[258], n258
    tail = np.minimum(rest, 258)
    code[:, 2] = np.where(copy, _COPY_CODE[tail], lit_code)
    bits[:, 2] = np.where(copy, _COPY_BITS[tail], lit_bits)
    count[:, 2] = np.where(copy, 1, rest)
    # BFINAL=1, BTYPE=01 (fixed Huffman) first, end of block last
    codes = np.concatenate(([0b011], np.repeat(code.ravel(), count.ravel()), [_SYM_CODE[256]])).astype(np.uint32)
    lengths = np.concatenate(([3], np.repeat(bits.ravel(), count.ravel()), [_SYM_BITS[256]]))
    width = _BIT[: int(lengths.max())]
    stream = ((codes[:, None] >> width) & 1).astype(np.uint8)[width < lengths[:, None]]  # LSB first
    return np.packbits(stream, bitorder="little").tobytes()


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
