"""Read the elements of a top-level JSON array one at a time (no third-party streaming parser).

LongMemEval-M is a single JSON list of several gigabytes; ``json.load`` would hold all of it (and
several times its size in Python objects) at once. This reader keeps one element plus a read buffer.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterator

from ...errors import InputError, input_error_from

__all__ = ["iter_json_array"]

_CHUNK = 1 << 23  # 8 Mi characters per read
_WS = " \t\r\n"
#: an error that stays put this far before the end of the buffer is real, not a cut-off element
_GIVE_UP = 1 << 26


def _skip_ws(buf: str, i: int) -> int:
    n = len(buf)
    while i < n and buf[i] in _WS:
        i += 1
    return i


def iter_json_array(path, chunk: int | None = None) -> Iterator[tuple[int, object]]:
    """Yield (index, element) for each element of the JSON array in ``path``, reading ``chunk``
    characters at a time (default ``_CHUNK``).

    Syntax errors raise :class:`InputError` naming the record index and the character offset.
    """
    path = Path(path)
    chunk = chunk or _CHUNK
    try:
        fh = path.open(encoding="utf-8-sig")  # a byte-order mark is tolerated
    except OSError as e:
        raise InputError(path, None, None, f"cannot open: {e.strerror}") from None
    dec = json.JSONDecoder()
    with fh:
        buf, base, eof = "", 0, False  # base: file offset (characters) of buf[0]

        def more(n: int) -> bool:
            nonlocal buf, eof
            try:
                data = fh.read(n)
            except UnicodeDecodeError as e:
                raise InputError(path, None, None, f"not UTF-8 text ({e.reason})") from None
            if not data:
                eof = True
                return False
            buf += data
            return True

        more(chunk)
        i = _skip_ws(buf, 0)
        while i >= len(buf) and more(chunk):
            i = _skip_ws(buf, i)
        if i >= len(buf) or buf[i] != "[":
            raise InputError(path, None, None, "expected a JSON list (file does not start with '[')")
        i += 1
        index = 0
        expect_value = None  # None: value or ']' allowed; True: value required (after a comma)
        while True:
            i = _skip_ws(buf, i)
            if i >= len(buf):
                buf, base, i = "", base + len(buf), 0  # all consumed
                if not more(chunk):
                    raise InputError(path, f"{index}", None, "file ends inside the top-level list")
                continue
            c = buf[i]
            if c == "]" and expect_value is not True:
                rest = buf[i + 1 :].strip()
                if not rest and not eof:
                    tail = len(buf)
                    more(1 << 16)  # bytes after the list that are not UTF-8 are an InputError too
                    rest = buf[tail:].strip()
                if rest:
                    raise InputError(path, None, None, "extra data after the top-level list")
                return
            if c == "," and expect_value is False:
                expect_value = True
                i += 1
                continue
            if expect_value is False:
                raise InputError(
                    path, f"{index}", None, f"expected ',' or ']' after record {index - 1} (at character {base + i})"
                )
            # decode one element; grow the buffer while it is incomplete
            step, last_err = chunk, None
            while True:
                try:
                    obj, end = dec.raw_decode(buf, i)
                    if end < len(buf) or eof or not more(step):
                        break  # a value ending exactly at the buffer's end might continue (a number)
                    continue
                except json.JSONDecodeError as e:
                    sig = (e.pos, e.msg)
                    if eof or (sig == last_err and len(buf) - e.pos > _GIVE_UP):
                        raise InputError(
                            path, f"{index}", None, f"not valid JSON ({e.msg} at character {base + e.pos})"
                        ) from None
                    last_err = sig
                    more(step)
                    step *= 2
                except (RecursionError, ValueError) as e:  # nesting too deep, an over-long integer
                    err = input_error_from(e, path, f"{index}")
                    if err is None:
                        raise
                    raise err from None
            u = buf.find("\\u", i, end)  # one scan where no \u escape is (a second for ensure_ascii files)
            if u >= 0 and (buf.find("\\ud", u, end) >= 0 or buf.find("\\uD", u, end) >= 0):  # a lone surrogate?
                try:
                    json.dumps(obj, ensure_ascii=False).encode("utf-8")
                except UnicodeEncodeError:
                    raise InputError(
                        path, f"{index}", None, "holds an escaped lone surrogate (\\ud800-\\udfff), which is not text"
                    ) from None
            yield index, obj
            index += 1
            expect_value = False
            i = end
            if len(buf) - i < chunk // 2 and not eof:
                # drop what has been consumed (once per read, not per element: copying the rest of the
                # buffer after each element cost more than decoding it), so the buffer holds at most
                # one element plus a chunk
                buf, base, i = buf[i:], base + i, 0
                more(chunk)
