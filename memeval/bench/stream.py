"""A tier's turns read one haystack at a time, never held whole (issue 31).

A LongMemEval-M-sized tier is 1.2M turns in 2,000 haystacks; a run needs one haystack's sessions at a
time. :class:`TierTurns` indexes the turns file once (the byte spans of each haystack's lines, found
by parsing each line for its ``haystack`` field only) and reads a haystack's turns from its spans on
demand, so memory is bounded by the largest haystack, not the tier. A haystack whose lines are not
contiguous is still read whole: its spans are read in file order.

>>> import tempfile, pathlib
>>> from memeval.bench.io import write_turns
>>> from memeval.bench.model import Turn
>>> p = pathlib.Path(tempfile.mkdtemp()) / "turns.jsonl"
>>> _ = write_turns(p, [Turn(1, 1, "user", "hi", "2024-01-01", haystack="a"),
...                     Turn(1, 1, "user", "yo", "2024-01-01", haystack="b"),
...                     Turn(2, 1, "assistant", "hey", "2024-01-01", haystack="a")])
>>> tt = TierTurns(p)
>>> list(tt.haystacks)
['a', 'b']
>>> [t.text for s in tt.sessions("a") for t in s.turns]
['hi', 'hey']
>>> tt.sessions("missing")
[]
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Iterator

import orjson

from ..atomic import write_text
from ..errors import InputError, MemevalError
from .files import _decode_error_line, loads_json
from .io import no_gc, turn_from_dict
from .model import Session, Turn, sessions_of

__all__ = ["TierTurns", "haystack_spans", "cached_spans", "SPANS_CACHE", "iter_objects"]

#: a line's last field, ``"haystack": "<plain string>"`` then ``}`` (as ``bench.io.turn_line`` writes it);
#: the value holds no escape, quote or control character, so its bytes are its text
_HAY_TAIL = re.compile(rb'"haystack"[ \t]*:[ \t]*"([^"\\\x00-\x1f]*)"[ \t]*}[ \t\r\n]*\Z')
#: where orjson may read differently from ``json`` (``bench.files.loads_json``): a 19+ digit integer,
#: found as a run of 19 zeros once every digit is mapped to "0" (a regex search is ~100x slower)
_DIGITS = bytes(48 if 48 <= i <= 57 else 32 for i in range(256))
_RUN19 = b"0" * 19
_LINE_END = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
_BLOCK = 1 << 16  # 64 KiB of lines parsed at once: a few hundred turns held, whatever the tier


def _tail_haystack(raw: bytes) -> str | None:
    """The line's ``haystack`` when it is the object's last field, a plain string (the lines memeval
    writes); None when that cannot be told without parsing the line. Only a top-level key can be
    read so: inside a string a quote is escaped, and the key must follow ``{`` or ``,``."""
    i = raw.rfind(b'"haystack"')
    if i <= 0:
        return None
    m = _HAY_TAIL.match(raw, i)
    if m is None or raw[:i].rstrip(b" \t")[-1:] not in (b",", b"{") or not raw.lstrip().startswith(b"{"):
        return None
    try:
        return m.group(1).decode("utf-8")
    except UnicodeDecodeError:
        return None


def _plain_objects(block: bytes, first: int) -> list[tuple[int, dict]] | None:
    """(line number, object) of each non-blank line of ``block`` (lines split on ``\\n``, the first
    numbered ``first``) when every line is a flat JSON object that orjson reads as ``json`` does: no
    ``[``, one ``{`` per line, no ``\\r`` (``iter_jsonl`` splits lines on it too), no 19-digit
    number. None otherwise, or on any parse error: the caller then reads the block line by line."""
    if b"[" in block or b"\r" in block or _RUN19 in block.translate(_DIGITS):
        return None
    out: list[tuple[int, dict]] = []
    loads = orjson.loads
    try:
        for n, raw in enumerate(block.split(b"\n"), first):
            if raw.strip():
                obj = loads(raw)
                if type(obj) is not dict:
                    return None
                out.append((n, obj))
    except orjson.JSONDecodeError:
        return None
    if block.count(b"{") != len(out):
        return None
    if b"\\u" in block and (b"\\ud" in block or b"\\uD" in block):
        return None  # an escaped surrogate: loads_json checks it is paired
    return out


def _slow_objects(block: bytes, first: int, path) -> tuple[list[tuple[int, dict]], int]:
    """``bench.files.iter_jsonl`` on the lines of ``block`` (split on ``\\n``, ``\\r\\n`` and
    ``\\r`` as it splits them): the same objects, the same errors; and the number of lines read."""
    try:
        text = block.decode("utf-8")
    except UnicodeDecodeError:
        raise _decode_error_line(path) from None
    lines = _LINE_END.findall(text)
    out = []
    for n, line in enumerate(lines, first):
        if not line.strip():
            continue
        obj = loads_json(line, path, n)
        if not isinstance(obj, dict):
            raise InputError(path, n, None, f"expected a JSON object, got {type(obj).__name__}")
        out.append((n, obj))
    return out, len(lines)


def iter_objects(path, block: int = _BLOCK) -> Iterator[tuple[int, dict]]:
    """(line number, object) for each non-blank line of a JSONL file: what ``bench.files.iter_jsonl``
    yields (the same objects, the same errors), read in blocks of whole lines, each block of plain
    flat objects parsed straight from its bytes by orjson (~2x faster), any other read as
    ``iter_jsonl`` reads it."""
    path = Path(path)
    try:
        fh = path.open("rb")
    except OSError as e:
        raise InputError(path, None, None, f"cannot open: {e.strerror}") from None
    n, tail = 1, b""
    with fh:
        while True:
            try:
                data = fh.read(block)
            except OSError as e:
                raise InputError(path, None, None, f"cannot read: {e.strerror}") from None
            buf = tail + data
            if not data:
                cut = len(buf)
            else:
                cut = buf.rfind(b"\n") + 1
                if cut == 0:  # a line longer than the block: read on
                    tail = buf
                    continue
            chunk, tail = buf[:cut], buf[cut:]
            if chunk:
                objs = _plain_objects(chunk[:-1] if chunk.endswith(b"\n") else chunk, n)
                if objs is not None:
                    yield from objs
                    n += chunk.count(b"\n") + (not chunk.endswith(b"\n"))
                else:
                    objs, lines = _slow_objects(chunk, n, path)
                    yield from objs
                    n += lines
            if not data:
                return


#: (first byte, end byte, first line number) of a run of consecutive lines of one haystack
Span = tuple[int, int, int]


def _line_obj(raw: bytes, path, n: int) -> dict:
    """One JSONL line's object, read as ``bench.files.iter_jsonl`` reads it (``loads_json``)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(path, n, None, "not valid UTF-8 text") from None
    obj = loads_json(text, path, n)
    if not isinstance(obj, dict):
        raise InputError(path, n, None, f"expected a JSON object, got {type(obj).__name__}")
    return obj


def haystack_spans(path) -> dict[str | None, list[Span]]:
    """Each haystack's runs of lines in the turns file ``path``, in file order (``None``: turns with no
    ``haystack`` field). One pass; only the spans are kept."""
    path = Path(path)
    spans: dict[str | None, list[Span]] = {}
    last: str | None | object = object()
    off = 0
    try:
        fh = path.open("rb")
    except OSError as e:
        raise InputError(path, None, None, f"cannot open: {e.strerror}") from None
    with fh:
        for n, raw in enumerate(fh, 1):
            start, off = off, off + len(raw)
            if not raw.strip():
                last = object()
                continue
            hay = _tail_haystack(raw)  # the lines memeval writes: read without parsing them
            if hay is None:
                obj = _line_obj(raw, path, n)
                hay = obj.get("haystack")
                if hay is not None and type(hay) is not str:
                    turn_from_dict(obj, path, n)  # raises, naming the field
            runs = spans.get(hay)
            if hay == last and runs:
                s, _, first = runs[-1]
                runs[-1] = (s, off, first)
            elif runs is None:
                spans[hay] = [(start, off, n)]
            else:
                runs.append((start, off, n))
            last = hay
    return spans


#: each turns file's haystack spans, beside the bench (as the validity gate's cache), one file per key
SPANS_CACHE = Path(".memeval") / "spans"
_SPANS_VERSION = 1  # bump when the spans' meaning changes: older files are then not read


def cached_spans(root, turns_file: str, content_hash: str) -> dict[str | None, list[Span]]:
    """:func:`haystack_spans` of ``root/turns_file``, computed once per bench: kept under
    ``root/.memeval/spans/`` keyed on the bench's ``content_hash`` (for a caller that has checked it
    against the files, as ``memeval run`` does unless ``--no-verify``) and read back. Best effort: a
    read-only bench folder, a link where the cache should be, or an unreadable entry is computed again.

    >>> import tempfile, pathlib
    >>> from memeval.bench.io import write_turns
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> _ = write_turns(root / "t.jsonl", [Turn(1, 1, "user", "hi", "2024-01-01", haystack="a")])
    >>> cached_spans(root, "t.jsonl", "h1") == cached_spans(root, "t.jsonl", "h1") == haystack_spans(root / "t.jsonl")
    True
    >>> len(list((root / SPANS_CACHE).iterdir()))
    1
    """
    root = Path(root)
    name = hashlib.sha256(f"v{_SPANS_VERSION}|{content_hash}|{turns_file}".encode()).hexdigest()[:32]
    path = root / SPANS_CACHE / f"{name}.json"
    links = root / ".memeval", root / SPANS_CACHE, path
    try:
        if not any(p.is_symlink() for p in links) and path.is_file():
            spans = _spans_of(orjson.loads(path.read_bytes()))
            if spans is not None:
                return spans
    except (OSError, ValueError):
        pass
    spans = haystack_spans(root / turns_file)
    try:
        if not any(p.is_symlink() for p in links[:2]):
            path.parent.mkdir(parents=True, exist_ok=True)
            write_text(path, orjson.dumps([[h, runs] for h, runs in spans.items()]).decode())
    except (OSError, MemevalError):
        pass
    return spans


def _spans_of(obj) -> dict[str | None, list[Span]] | None:
    """The spans a cache file holds (``[[haystack, [[start, end, first line], ...]], ...]``), or None
    when it holds anything else."""
    if type(obj) is not list:
        return None
    out: dict[str | None, list[Span]] = {}
    for item in obj:
        if type(item) is not list or len(item) != 2 or not (item[0] is None or type(item[0]) is str):
            return None
        runs = []
        for r in item[1] if type(item[1]) is list else [None]:
            if type(r) is not list or len(r) != 3 or any(type(x) is not int or x < 0 for x in r) or r[0] > r[1]:
                return None
            runs.append((r[0], r[1], r[2]))
        out[item[0]] = runs
    return out


class TierTurns:
    """A tier's turns file, indexed by haystack; :meth:`turns` and :meth:`sessions` read one haystack."""

    def __init__(self, path, spans: dict[str | None, list[Span]] | None = None):
        self.path = Path(path)
        self.spans = haystack_spans(self.path) if spans is None else spans

    @property
    def haystacks(self) -> list[str | None]:
        """The haystack ids, in order of first appearance."""
        return list(self.spans)

    def turns(self, hay: str | None) -> list[Turn]:
        """The haystack's turns in file order (``[]`` when it has none); turn ids must be unique in it."""
        out: list[Turn] = []
        seen: set[int] = set()
        with no_gc(), self.path.open("rb") as fh:
            for start, end, first in self.spans.get(hay, ()):
                fh.seek(start)
                block = fh.read(end - start)
                objs = _plain_objects(block.rstrip(b"\n"), first)
                if objs is None:
                    objs = [
                        (n, _line_obj(raw, self.path, n))
                        for n, raw in enumerate(block.split(b"\n"), first)
                        if raw.strip()
                    ]
                for n, obj in objs:
                    t = turn_from_dict(obj, self.path, n)
                    if t.haystack != hay:  # the file changed since it was indexed
                        raise InputError(self.path, n, "haystack", "the turns file changed while it was read")
                    if t.turn_id in seen:
                        raise InputError(self.path, n, "turn_id", f"duplicate turn_id {t.turn_id}")
                    seen.add(t.turn_id)
                    out.append(t)
        return out

    def sessions(self, hay: str | None) -> list[Session]:
        """The haystack's sessions in file order (as ``bench.model.haystacks_of`` groups them)."""
        return sessions_of(self.turns(hay))
