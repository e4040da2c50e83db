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
from pathlib import Path

import orjson

from ..atomic import write_text
from ..errors import InputError, MemevalError
from .files import loads_json
from .io import no_gc, turn_from_dict
from .model import Session, Turn, sessions_of

__all__ = ["TierTurns", "haystack_spans", "cached_spans", "SPANS_CACHE"]

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
                for n, raw in enumerate(fh.read(end - start).split(b"\n"), first):
                    if not raw.strip():
                        continue
                    t = turn_from_dict(_line_obj(raw, self.path, n), self.path, n)
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
