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
>>> tt.close()
"""

from __future__ import annotations

import gc
from pathlib import Path
from typing import BinaryIO

import orjson

from ..errors import InputError
from .files import loads_json
from .io import _TURN_KNOWN, turn_from_dict
from .model import Session, Turn, sessions_of

__all__ = ["TierTurns", "haystack_spans"]

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


def _plain_obj(raw: bytes) -> dict | None:
    """The line's object when it is a plain turn (an object of known turn fields only, read by
    orjson), else None: the caller reads the line as :func:`_line_obj` does, with every check. A plain
    turn holds no float and no nesting, where orjson and ``loads_json`` could differ."""
    try:
        obj = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    return obj if type(obj) is dict and obj.keys() <= _TURN_KNOWN else None


def _turn(raw: bytes, path, n: int) -> Turn:
    """The line's turn: the plain turn's fast path, or every check of ``_line_obj`` and ``turn_from_dict``."""
    obj = _plain_obj(raw)
    if obj is not None:
        try:
            return turn_from_dict(obj, path, n)
        except InputError:
            pass  # read again below, as loads_json reads it, for the same error
    return turn_from_dict(_line_obj(raw, path, n), path, n)


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
            obj = _plain_obj(raw)
            if obj is None:
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


class TierTurns:
    """A tier's turns file, indexed by haystack; :meth:`turns` and :meth:`sessions` read one haystack."""

    def __init__(self, path, spans: dict[str | None, list[Span]] | None = None):
        self.path = Path(path)
        self.spans = haystack_spans(self.path) if spans is None else spans
        self._fh: BinaryIO | None = None  # the file, open from the first haystack read to close()

    def close(self) -> None:
        """Close the file (a later read opens it again)."""
        fh, self._fh = self._fh, None
        if fh is not None:
            fh.close()

    def __enter__(self) -> "TierTurns":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @property
    def haystacks(self) -> list[str | None]:
        """The haystack ids, in order of first appearance."""
        return list(self.spans)

    def turns(self, hay: str | None) -> list[Turn]:
        """The haystack's turns in file order (``[]`` when it has none); turn ids must be unique in it."""
        out: list[Turn] = []
        seen: set[int] = set()
        spans = self.spans.get(hay, ())
        if not spans:
            return out
        fh = self._fh
        if fh is None:
            try:
                fh = self._fh = self.path.open("rb")
            except OSError as e:
                raise InputError(self.path, None, None, f"cannot open: {e.strerror}") from None
        was = gc.isenabled()  # as no_gc(), without a context manager's cost per haystack
        gc.disable()
        try:
            for start, end, first in spans:
                fh.seek(start)
                for n, raw in enumerate(fh.read(end - start).split(b"\n"), first):
                    if not raw.strip():
                        continue
                    t = _turn(raw, self.path, n)
                    if t.haystack != hay:  # the file changed since it was indexed
                        raise InputError(self.path, n, "haystack", "the turns file changed while it was read")
                    if t.turn_id in seen:
                        raise InputError(self.path, n, "turn_id", f"duplicate turn_id {t.turn_id}")
                    seen.add(t.turn_id)
                    out.append(t)
        finally:
            if was:
                gc.enable()
        return out

    def sessions(self, hay: str | None) -> list[Session]:
        """The haystack's sessions in file order (as ``bench.model.haystacks_of`` groups them)."""
        return sessions_of(self.turns(hay))
