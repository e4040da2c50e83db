"""Reading and writing bench folders: ``bench.yaml`` plus glasshouse-compatible JSONL files (the
generic file readers are in ``files`` and re-exported here).

Every reader validates as it goes and raises :class:`memeval.errors.InputError` naming the file,
the line and the field; writers are atomic.
"""

from __future__ import annotations

import gc
import hashlib
from contextlib import contextmanager
from dataclasses import fields
from pathlib import Path
from typing import Any, Iterable, Sequence

import orjson
import yaml

from json.encoder import encode_basestring as _json_string  # json.dumps's encoder when ensure_ascii=False

from ..atomic import dumps_line, write_jsonl, write_lines, write_text
from ..errors import InputError
from .files import (
    MAX_DEPTH,
    as_int,
    check_depth,
    confined,
    is_file,
    iter_jsonl,
    iter_jsonl_lines,
    loads_json,
    read_json,
    read_text,
    read_yaml,
    safe_name,
)
from .model import EXPECT_VALUES, QUESTION_LIST_FIELDS, Bench, Question, Tier, Turn, make_turn
from .axes import AXIS_WEIGHTS

__all__ = [
    "loads_json",
    "read_json",
    "read_yaml",
    "read_text",
    "check_depth",
    "as_int",
    "confined",
    "safe_name",
    "MAX_DEPTH",
    "is_file",
    "iter_jsonl",
    "iter_jsonl_lines",
    "read_turns",
    "read_questions",
    "write_turns",
    "turn_line",
    "json_strings",
    "turn_lines",
    "write_questions",
    "load_bench",
    "save_bench",
    "hash_files",
    "file_sha256",
    "MANIFEST",
    "no_gc",
]

MANIFEST = "bench.yaml"


def _req(obj: dict, key: str, typ, path, n):
    if key not in obj:
        raise InputError(path, n, key, "missing")
    v = obj[key]
    if not isinstance(v, typ) or isinstance(v, bool):
        want = typ.__name__ if isinstance(typ, type) else " or ".join(t.__name__ for t in typ)
        raise InputError(path, n, key, f"expected {want}, got {type(v).__name__}")
    return v


def _opt(obj: dict, key: str, typ, path, n):
    v = obj.get(key)
    if v is not None and (not isinstance(v, typ) or isinstance(v, bool)):
        want = typ.__name__ if isinstance(typ, type) else " or ".join(t.__name__ for t in typ)
        raise InputError(path, n, key, f"expected {want}, got {type(v).__name__}")
    return v


def _list(obj: dict, key: str, item, path, n) -> tuple:
    v = obj.get(key, [])
    if v is None:
        return ()
    if not isinstance(v, list) or any(not isinstance(x, item) or isinstance(x, bool) for x in v):
        name = item.__name__ if isinstance(item, type) else " or ".join(t.__name__ for t in item)
        raise InputError(path, n, key, f"expected a list of {name}")
    return tuple(v)


_TURN_KNOWN = frozenset(
    {"turn_id", "session_id", "speaker", "text", "date", "image", "image_no", "caption", "haystack"}
)


def turn_from_dict(obj: dict, path="<dict>", n: int | None = None) -> Turn:
    """A turn from its JSON object; a missing or mistyped field is an :class:`InputError` naming it."""
    g = obj.get
    tid, sid, speaker, text, date = g("turn_id"), g("session_id"), g("speaker"), g("text"), g("date")
    image, image_no, caption, haystack = g("image"), g("image_no"), g("caption"), g("haystack")
    if (  # the usual, well-formed turn, checked field by field in one expression
        type(tid) is int
        and (type(sid) is int or type(sid) is str)
        and type(speaker) is str
        and type(text) is str
        and type(date) is str
        and (image is None or type(image) is str)
        and (image_no is None or type(image_no) is int)
        and (caption is None or type(caption) is str)
        and (haystack is None or type(haystack) is str)
    ):
        extra = {} if obj.keys() <= _TURN_KNOWN else {k: v for k, v in obj.items() if k not in _TURN_KNOWN}
        return make_turn(tid, sid, speaker, text, date, image, image_no, caption, haystack, extra)
    return Turn(
        turn_id=_req(obj, "turn_id", int, path, n),
        session_id=_req(obj, "session_id", (int, str), path, n),
        speaker=_req(obj, "speaker", str, path, n),
        text=_req(obj, "text", str, path, n),
        date=_req(obj, "date", str, path, n),
        image=_opt(obj, "image", str, path, n),
        image_no=_opt(obj, "image_no", int, path, n),
        caption=_opt(obj, "caption", str, path, n),
        haystack=_opt(obj, "haystack", str, path, n),
        extra={k: v for k, v in obj.items() if k not in _TURN_KNOWN},
    )


@contextmanager
def no_gc():
    """The cyclic garbage collector paused while a file's records are built: they hold no cycles, and
    collecting as 100,000s of new objects pile up costs a third of the reading time."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def read_turns(path) -> list[Turn]:
    """Read a tier's turn file; turn ids must be unique within each haystack."""
    turns, seen = [], set()
    with no_gc():
        for n, obj in iter_jsonl(path):
            t = turn_from_dict(obj, path, n)
            key = (t.haystack, t.turn_id)
            if key in seen:
                raise InputError(path, n, "turn_id", f"duplicate turn_id {t.turn_id}")
            seen.add(key)
            turns.append(t)
    return turns


_Q_STR = (
    "asked_at",
    "stale_answer",
    "clash_a",
    "clash_b",
    "side_a",
    "side_b",
    "question",
    "query_lang",
    "store_lang",
    "source_id",
    "kind",
    "false_claim_en",
    "source_fact",
    "haystack",
)
_Q_KNOWN = {"id", "axis", "question_en", "gold_answer", "expect", *QUESTION_LIST_FIELDS, *_Q_STR}


#: the list fields of a question as plainly written (items all of one JSON type; numbers in the
#: string lists, read as text, go the checked way)
_Q_PLAIN_LISTS = (
    ("need", (str,)),
    ("gold_alts", (str,)),
    ("evidence_turns", (int,)),
    ("evidence_sessions", (int, str)),
    ("gold_parts", (str,)),
)


def _plain_question(obj: dict) -> Question | None:
    """The question of the usual, well-formed object (every string field a string, every list of
    its plain item type), without the field-by-field checks; None for anything else, which
    :func:`question_from_dict` reads the checked way (the same question, or its error)."""
    g = obj.get
    qid, axis, text, expect, gold = g("id"), g("axis"), g("question_en"), g("expect", "answer"), g("gold_answer", "")
    if not (
        type(qid) is str
        and type(axis) is str
        and axis in AXIS_WEIGHTS
        and type(text) is str
        and type(expect) is str
        and expect in EXPECT_VALUES
        and (gold is None or type(gold) is str)
    ):
        return None
    kw: dict[str, Any] = {}
    for k in _Q_STR:
        v = g(k)
        if v is not None:
            if type(v) is not str:
                return None
            kw[k] = v
    for k, kinds in _Q_PLAIN_LISTS:
        v = g(k)
        if v:
            if type(v) is not list or any(type(x) not in kinds for x in v):
                return None
            kw[k] = tuple(v)
        elif v is not None and v != []:
            return None
    extra = {} if obj.keys() <= _Q_KNOWN else {k: v for k, v in obj.items() if k not in _Q_KNOWN}
    return Question(id=qid, axis=axis, question_en=text, gold_answer=gold or "", expect=expect, extra=extra, **kw)


def question_from_dict(obj: dict, path="<dict>", n: int | None = None) -> Question:
    """A question from its JSON object; a missing or mistyped field is an :class:`InputError` naming it."""
    q = _plain_question(obj) or _checked_question(obj, path, n)
    if q.query_lang and q.query_lang != "en" and not q.question:
        raise InputError(path, n, "question", f"query_lang is {q.query_lang!r} but 'question' is missing")
    return q


def _checked_question(obj: dict, path, n: int | None) -> Question:
    axis = _req(obj, "axis", str, path, n)
    if axis not in AXIS_WEIGHTS:
        raise InputError(path, n, "axis", f"unknown axis {axis!r}")
    expect = obj.get("expect", "answer")
    if expect not in EXPECT_VALUES:
        raise InputError(path, n, "expect", f"must be one of {', '.join(EXPECT_VALUES)}; got {expect!r}")
    gold = obj.get("gold_answer", "")
    if gold is None:
        gold = ""
    if not isinstance(gold, (str, int, float)) or isinstance(gold, bool):
        raise InputError(path, n, "gold_answer", f"expected str, got {type(gold).__name__}")
    alts = _list(obj, "gold_alts", (str, int, float), path, n)
    parts = _list(obj, "gold_parts", (str, int, float), path, n)
    return Question(
        id=str(_req(obj, "id", (str, int), path, n)),
        axis=axis,
        question_en=_req(obj, "question_en", str, path, n),
        gold_answer=str(gold),
        need=tuple(str(x) for x in _list(obj, "need", (str, int), path, n)),
        gold_alts=tuple(str(a) for a in alts),
        expect=expect,
        evidence_turns=_list(obj, "evidence_turns", int, path, n),
        evidence_sessions=_list(obj, "evidence_sessions", (int, str), path, n),
        gold_parts=tuple(str(p) for p in parts),
        extra={k: v for k, v in obj.items() if k not in _Q_KNOWN},
        **{
            k: (str(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else v)
            for k in _Q_STR
            for v in [_opt(obj, k, (str, int, float), path, n)]
        },
    )


def read_questions(path) -> list[Question]:
    qs, seen = [], set()
    with no_gc():
        for n, obj in iter_jsonl(path):
            q = question_from_dict(obj, path, n)
            if q.id in seen:
                raise InputError(path, n, "id", f"duplicate question id {q.id!r}")
            seen.add(q.id)
            qs.append(q)
    return qs


def write_turns(path, turns: Iterable[Turn]) -> int:
    """Write turns as ``Turn.to_dict`` gives them (unset optional fields left out), one per line."""
    return write_lines(path, (turn_line(t) for t in turns))


_TURN_FIELDS = tuple(f.name for f in fields(Turn) if f.name != "extra")


def turn_line(t: Turn) -> str:
    r"""``dumps_line(t.to_dict())`` without the line: the same bytes, written field by field with the
    string encoder ``json.dumps`` itself uses (imports write millions of turns; ~3x faster).

    >>> print(turn_line(Turn(1, 2, "user", 'Café "Zur Post"', "2026-01-01")))
    {"turn_id": 1, "session_id": 2, "speaker": "user", "text": "Café \"Zur Post\"", "date": "2026-01-01"}
    """
    parts = []
    for k in _TURN_FIELDS:
        v = getattr(t, k)
        if v is None or v == () or v == {}:
            continue
        if type(v) is str:
            parts.append(f'"{k}": {_json_string(v)}')
        elif type(v) is int:
            parts.append(f'"{k}": {v}')
        else:  # any other value (a float, a list): the general writer
            return dumps_line({k: v for k in _TURN_FIELDS if (v := getattr(t, k)) is not None and v != () and v != {}})
    return "{" + ", ".join(parts) + "}"


def json_strings(texts: Sequence[str]) -> list[bytes]:
    r"""Each text as ``json.dumps(text, ensure_ascii=False)`` writes it, in UTF-8, without its quotes:
    one orjson pass over all of them, ~5x faster than an encoder call per text (orjson's escapes are
    json's: ``\"``, ``\\``, ``\n``, ``\t``, ``\r``, ``\b``, ``\f`` and ``\u00XX`` for the other
    control characters; tests/test_import_fast.py checks every code point). The texts are joined by
    NUL and the result split at its escape: a call whose texts hold NUL or the six characters ``\u0000`` goes the slow way.

    >>> json_strings(['Café "Zur Post"', "a\\b\n", ""])
    [b'Caf\xc3\xa9 \\"Zur Post\\"', b'a\\\\b\\n', b'']
    """
    if not texts:
        return []
    try:
        parts = orjson.dumps("\0".join(texts)).split(b"\\u0000")
    except TypeError:  # a lone surrogate: the encoder below names it
        parts = []
    # each NUL joining two texts is one \u0000, and the escape cannot overlap itself: one more part
    # means a text held NUL or a backslash before "u0000" (its escape reads \\u0000)
    if len(parts) == len(texts):
        parts[0] = parts[0][1:]  # the quotes around the whole
        parts[-1] = parts[-1][:-1]
        return parts
    return [_json_string(t)[1:-1].encode("utf-8") for t in texts]


def turn_lines(turns: Iterable[Turn]) -> bytes:
    r"""``"".join(turn_line(t) + "\n" for t in turns)`` in UTF-8, every string value of every turn
    escaped in one pass (:func:`json_strings`): the same bytes, faster where texts are long.

    >>> turn_lines([Turn(1, "t-1", "agent", 'a "tree"\n', "2026-01-01", image="s/1.png")]).decode()
    '{"turn_id": 1, "session_id": "t-1", "speaker": "agent", "text": "a \\"tree\\"\\n", "date": "2026-01-01", "image": "s/1.png"}\n'
    """
    pieces: list[bytes | None] = []  # None: the next escaped string
    strs: list[str] = []
    for t in turns:
        vals = [(k, v) for k in _TURN_FIELDS if (v := getattr(t, k)) is not None and v != () and v != {}]
        if not all(type(v) is str or type(v) is int for _, v in vals):  # a float, a list: the general writer
            pieces.append(turn_line(t).encode("utf-8") + b"\n")
            continue
        lit = b"{"
        for n, (k, v) in enumerate(vals):
            lit += (b', "' if n else b'"') + k.encode() + b'": '
            if type(v) is str:
                pieces += (lit + b'"', None)
                strs.append(v)
                lit = b'"'
            else:
                lit += b"%d" % v
        pieces.append(lit + b"}\n")
    enc = iter(json_strings(strs))
    return b"".join([p if p is not None else next(enc) for p in pieces])


def write_questions(path, questions: Iterable[Question]) -> int:
    return write_jsonl(path, (q.to_dict() for q in questions))


def file_sha256(path) -> str:
    """The hex sha256 of one file's bytes (what ``sha256sum`` prints), read in 1 MiB chunks."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def hash_files(root, names: Iterable[str]) -> str:
    """sha256 over the named files' bytes (in the given order), as ``sha256:<hex>``."""
    h = hashlib.sha256()
    for name in names:
        h.update(name.encode() + b"\0")
        with open(Path(root) / name, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
    return "sha256:" + h.hexdigest()


def _tier_from(obj: Any, path, i: int) -> Tier:
    rec = f"tiers[{i}]"
    if not isinstance(obj, dict):
        raise InputError(path, rec, None, "expected a mapping")
    for k in ("name", "turns", "questions"):
        if not isinstance(obj.get(k), str):
            raise InputError(path, rec, k, "missing or not a string")
    safe_name(obj["name"], path, rec, "name")  # padded tiers put it in file names
    sets = obj.get("question_sets") or {}
    if not isinstance(sets, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in sets.items()):
        raise InputError(path, rec, "question_sets", "expected a mapping of set name to file name")
    if "main" in sets:
        raise InputError(path, rec, "question_sets", "'main' is the tier's own questions file")
    for k in sets:
        safe_name(k, path, rec, "question_sets")
    return Tier(
        name=obj["name"],
        turns_file=obj["turns"],
        questions_file=obj["questions"],
        n_turns=as_int(obj, "n_turns", path, rec),
        n_sessions=as_int(obj, "n_sessions", path, rec),
        n_tokens=as_int(obj, "n_tokens", path, rec),
        n_questions=as_int(obj, "n_questions", path, rec),
        question_sets=dict(sets),
    )


def load_bench(root) -> Bench:
    """Read ``ROOT/bench.yaml`` (files are checked to exist; they are read by the caller).

    >>> bench = load_bench(tiny_bench)
    >>> bench.name, [t.name for t in bench.tiers]
    ('lifelog', ['core', 'small', 'medium', 'full'])
    >>> load_bench(tmp)
    Traceback (most recent call last):
    memeval.errors.InputError: .../bench.yaml: no bench manifest here (is this a bench folder?)
    """
    root = Path(root)
    path = root / MANIFEST
    if not path.is_file():
        raise InputError(path, None, None, "no bench manifest here (is this a bench folder?)")
    meta = read_yaml(path)
    if not isinstance(meta, dict):
        raise InputError(path, None, None, "expected a mapping")
    for k in ("name", "version"):
        if meta.get(k) in (None, ""):
            raise InputError(path, None, k, "missing")
    tiers_raw = meta.get("tiers")
    if not isinstance(tiers_raw, list) or not tiers_raw:
        raise InputError(path, None, "tiers", "expected a non-empty list")
    tiers = tuple(_tier_from(t, path, i) for i, t in enumerate(tiers_raw))
    for i, t in enumerate(tiers):
        for f in t.files:
            fld = "turns" if f == t.turns_file else "questions" if f == t.questions_file else "question_sets"
            if not is_file(confined(root, f, path, f"tiers[{i}]", fld)):  # confined before it is looked up
                raise InputError(path, f"tiers[{i}]", fld, f"file {f!r} not found")
    for k in ("generator", "axis_map"):
        if meta.get(k) is not None and not isinstance(meta[k], dict):
            raise InputError(path, None, k, f"expected a mapping, got {type(meta[k]).__name__}")
    names = [t.name for t in tiers]
    if len(set(names)) != len(names):
        raise InputError(path, "tiers", "name", "duplicate tier name")
    known = {"name", "version", "license", "source", "tokenizer", "generator", "axis_map", "content_hash", "tiers"}
    return Bench(
        name=str(meta["name"]),
        version=str(meta["version"]),
        tiers=tiers,
        root=str(root),
        license=str(meta.get("license", "")),
        source=str(meta.get("source", "")),
        tokenizer=str(meta.get("tokenizer", "")),
        generator=meta.get("generator") or {},
        axis_map=meta.get("axis_map") or {},
        content_hash=str(meta.get("content_hash", "")),
        extra={k: v for k, v in meta.items() if k not in known},
    )


def save_bench(bench: Bench, root=None) -> Path:
    """Write ``bench.yaml`` for files already in place; fills in the content hash."""
    root = Path(root or bench.root)
    files = [f for t in bench.tiers for f in t.files]
    meta: dict[str, Any] = {
        "name": bench.name,
        "version": bench.version,
        "license": bench.license,
        "source": bench.source,
        "tokenizer": bench.tokenizer,
        "tiers": [
            {
                "name": t.name,
                "turns": t.turns_file,
                "questions": t.questions_file,
                "n_turns": t.n_turns,
                "n_sessions": t.n_sessions,
                "n_tokens": t.n_tokens,
                "n_questions": t.n_questions,
            }
            | ({"question_sets": dict(t.question_sets)} if t.question_sets else {})
            for t in bench.tiers
        ],
        "content_hash": hash_files(root, dict.fromkeys(files)),
    }
    if bench.generator:
        meta["generator"] = dict(bench.generator)
    if bench.axis_map:
        meta["axis_map"] = dict(bench.axis_map)
    meta.update(bench.extra)
    write_text(root / MANIFEST, yaml.safe_dump(meta, sort_keys=False, allow_unicode=True))
    return root / MANIFEST
