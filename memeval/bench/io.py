"""Reading and writing bench folders: ``bench.yaml`` plus glasshouse-compatible JSONL files.

Every reader validates as it goes and raises :class:`memeval.errors.InputError` naming the file,
the line and the field; writers are atomic.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Iterable, Iterator

import yaml

from ..atomic import write_jsonl, write_text
from ..errors import InputError, input_error_from
from .model import EXPECT_VALUES, QUESTION_LIST_FIELDS, Bench, Question, Tier, Turn
from .axes import AXIS_WEIGHTS

__all__ = ["loads_json", "read_json", "read_yaml", "read_text", "check_depth", "as_int", "confined", "safe_name",
           "MAX_DEPTH", "is_file", "iter_jsonl", "iter_jsonl_lines", "read_turns", "read_questions", "write_turns", "write_questions",
           "load_bench", "save_bench", "hash_files", "MANIFEST"]

MANIFEST = "bench.yaml"


#: deepest nesting of lists/objects a data file may hold (real formats need under ten levels; the
#: writers and the YAML dumper recurse, so a file nested hundreds deep would crash them later)
MAX_DEPTH = 64


def check_depth(obj, path, record=None, limit: int = MAX_DEPTH):
    """``obj`` unchanged, or :class:`InputError` when lists/objects nest deeper than ``limit``.

    >>> check_depth({"a": [1, {"b": 2}]}, "x.json")
    {'a': [1, {'b': 2}]}
    >>> check_depth([[[[1]]]], "x.json", 7, limit=3)
    Traceback (most recent call last):
    memeval.errors.InputError: x.json:7: nested deeper than 3 levels
    """
    stack, seen = [(obj, 1)], set()
    while stack:
        o, d = stack.pop()
        if d > limit:
            raise InputError(path, record, None, f"nested deeper than {limit} levels")
        if (id(o), d) in seen:  # YAML aliases share one object: once per depth (a cycle still deepens)
            continue
        seen.add((id(o), d))
        vals = o.values() if isinstance(o, dict) else o
        stack.extend((v, d + 1) for v in vals if isinstance(v, (dict, list)))
    return obj


def loads_json(text: str, path, record=None):
    """Parse one JSON document (a whole file or a JSONL line); every way it can be malformed --
    syntax, nesting, an over-long integer, an escaped lone surrogate -- is an :class:`InputError`
    naming ``path`` and ``record``.

    >>> loads_json('{"a": 1}', "x.jsonl", 2)
    {'a': 1}
    >>> loads_json('{"a": 1', "x.jsonl", 2)
    Traceback (most recent call last):
    memeval.errors.InputError: x.jsonl:2: not valid JSON (Expecting ',' delimiter at column 8)
    """
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as e:
        at = record if record is not None else e.lineno  # a whole file: the line; a JSONL line: its number
        raise InputError(path, at, None, f"not valid JSON ({e.msg} at column {e.colno})") from None
    except (RecursionError, ValueError) as e:
        err = input_error_from(e, path, record)
        if err is None:
            raise
        raise err from None
    if "\\u" in text and ("\\ud" in text or "\\uD" in text):
        try:
            json.dumps(obj, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            raise InputError(path, record, None, "holds an escaped lone surrogate (\\ud800-\\udfff), "
                                                 "which is not text") from None
    if isinstance(obj, (dict, list)) and text.count("[") + text.count("{") > MAX_DEPTH:
        check_depth(obj, path, record)
    return obj


def read_text(path) -> str:
    """A whole UTF-8 file (a byte-order mark is dropped); unreadable or non-UTF-8 bytes raise an
    :class:`InputError` naming the line."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as e:
        raise InputError(path, None, None, f"cannot read: {e.strerror}") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise input_error_from(e, path, data.count(b"\n", 0, e.start) + 1) from None


def read_json(path):
    """A whole JSON file, parsed; errors as :func:`loads_json`, syntax errors located by line."""
    return loads_json(read_text(path), path)


def read_yaml(path):
    """A whole YAML file parsed with the safe loader; syntax, nesting, over-long integers, bad UTF-8
    and non-YAML bytes are :class:`InputError` naming the line where known."""
    text = read_text(path)
    try:
        obj = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        problem = getattr(e, "problem", None)
        raise InputError(path, None if mark is None else mark.line + 1, None,
                         f"not valid YAML ({problem})" if problem else "not valid YAML") from None
    except (RecursionError, ValueError, OverflowError) as e:
        err = input_error_from(e, path)
        if err is None:
            raise InputError(path, None, None, f"not valid YAML ({e})") from None
        raise err from None
    return check_depth(obj, path) if isinstance(obj, (dict, list)) else obj


def as_int(obj: dict, key: str, path, record=None, default: int = 0, lo: int = 0, hi: int = 10**12) -> int:
    """``obj[key]`` as a whole number in ``[lo, hi]`` (missing or null: ``default``).

    >>> as_int({"n_turns": "lots"}, "n_turns", "bench.yaml", "tiers[0]")
    Traceback (most recent call last):
    memeval.errors.InputError: bench.yaml record tiers[0]: field 'n_turns': expected a whole number, got str
    """
    v = obj.get(key)
    if v is None:
        return default
    if not isinstance(v, int) or isinstance(v, bool):
        raise InputError(path, record, key, f"expected a whole number, got {type(v).__name__}")
    if not lo <= v <= hi:
        raise InputError(path, record, key, f"out of range ({lo}..{hi})")
    return v


def safe_name(name: str, path, record=None, field=None) -> str:
    """A name used inside a file name (tier, question set): no path separators, not ``.``/``..``."""
    if not name or name in (".", "..") or any(c in name for c in "/\\\0") or name != name.strip():
        raise InputError(path, record, field, f"{name!r} cannot be part of a file name "
                                              "(no '/', '\\', '..' or surrounding spaces)")
    return name


def confined(root, rel, path, record=None, field=None) -> Path:
    """``root / rel``, refused unless ``rel`` is a relative path that stays inside ``root`` (no
    absolute path, no ``..``, no symlink leading out). Checked before the file system is asked
    whether it exists, so an error never tells whether some outside path exists.

    >>> confined("/data/bench", "img/a.png", "turns.jsonl", 3, "image")
    PosixPath('/data/bench/img/a.png')
    >>> confined("/data/bench", "../../etc/passwd", "turns.jsonl", 3, "image")
    Traceback (most recent call last):
    memeval.errors.InputError: turns.jsonl:3: field 'image': '../../etc/passwd' leaves the folder (absolute paths and '..' are refused)
    """
    root = Path(root)
    rel_s = str(rel)
    parts = rel_s.replace("\\", "/").split("/")
    if (not isinstance(rel, (str, Path)) or not rel_s or "\0" in rel_s or Path(rel_s).is_absolute()
            or rel_s.startswith(("/", "\\")) or ".." in parts or (len(rel_s) > 1 and rel_s[1] == ":")):
        raise InputError(path, record, field, f"{rel_s!r} leaves the folder (absolute paths and '..' are refused)")
    full = root / rel_s
    try:
        inside = full.resolve().is_relative_to(root.resolve())
    except (OSError, RuntimeError):
        inside = False
    if not inside:
        raise InputError(path, record, field, f"{rel_s!r} leads out of the folder (a link to elsewhere)")
    return full


def is_file(p) -> bool:
    """``Path(p).is_file()``, false (not an exception) for a name the file system cannot hold."""
    try:
        return Path(p).is_file()
    except (OSError, ValueError):
        return False


def _decode_error_line(path: Path) -> InputError:
    """The first line of ``path`` that is not UTF-8, as an error (read again, in binary)."""
    with open(path, "rb") as fh:
        for n, raw in enumerate(fh, 1):
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError as e:
                return input_error_from(e, path, n)
    return InputError(path, None, None, "not UTF-8 text")


def iter_jsonl(path, *, skip_torn_tail: bool = False) -> Iterator[tuple[int, dict]]:
    """Yield (line number, object) for each non-blank line; bad JSON names the line.

    ``skip_torn_tail``: an append-only file whose last line has no newline is being written (or its
    writer was killed): that line is left out instead of being an error.
    """
    for n, obj, _ in iter_jsonl_lines(path, skip_torn_tail=skip_torn_tail):
        yield n, obj


def iter_jsonl_lines(path, *, skip_torn_tail: bool = False) -> Iterator[tuple[int, dict, str]]:
    """Like ``iter_jsonl``, with each line's exact text (newline-terminated) for byte-faithful copies."""
    path = Path(path)
    try:
        fh = path.open(encoding="utf-8", newline="")
    except OSError as e:
        raise InputError(path, None, None, f"cannot open: {e.strerror}") from None
    with fh:
        lines = enumerate(fh, 1)
        while True:
            try:
                n, line = next(lines)
            except StopIteration:
                return
            except UnicodeDecodeError:
                raise _decode_error_line(path) from None
            except OSError as e:
                raise InputError(path, None, None, f"cannot read: {e.strerror}") from None
            if not line.strip() or (skip_torn_tail and not line.endswith("\n")):
                continue
            obj = loads_json(line, path, n)
            if not isinstance(obj, dict):
                raise InputError(path, n, None, f"expected a JSON object, got {type(obj).__name__}")
            yield n, obj, line if line.endswith("\n") else line + "\n"


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


_TURN_KNOWN = frozenset({"turn_id", "session_id", "speaker", "text", "date", "image", "image_no", "caption",
                         "haystack"})


def turn_from_dict(obj: dict, path="<dict>", n: int | None = None) -> Turn:
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


def read_turns(path) -> list[Turn]:
    """Read a tier's turn file; turn ids must be unique within each haystack."""
    turns, seen = [], set()
    for n, obj in iter_jsonl(path):
        t = turn_from_dict(obj, path, n)
        key = (t.haystack, t.turn_id)
        if key in seen:
            raise InputError(path, n, "turn_id", f"duplicate turn_id {t.turn_id}")
        seen.add(key)
        turns.append(t)
    return turns


_Q_STR = ("asked_at", "stale_answer", "clash_a", "clash_b", "side_a", "side_b", "question",
          "query_lang", "store_lang", "source_id", "kind", "false_claim_en", "source_fact", "haystack")
_Q_KNOWN = {"id", "axis", "question_en", "gold_answer", "expect", *QUESTION_LIST_FIELDS, *_Q_STR}


def question_from_dict(obj: dict, path="<dict>", n: int | None = None) -> Question:
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
    q = Question(
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
        **{k: (str(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else v)
           for k in _Q_STR for v in [_opt(obj, k, (str, int, float), path, n)]},
    )
    if q.query_lang and q.query_lang != "en" and not q.question:
        raise InputError(path, n, "question", f"query_lang is {q.query_lang!r} but 'question' is missing")
    return q


def read_questions(path) -> list[Question]:
    qs, seen = [], set()
    for n, obj in iter_jsonl(path):
        q = question_from_dict(obj, path, n)
        if q.id in seen:
            raise InputError(path, n, "id", f"duplicate question id {q.id!r}")
        seen.add(q.id)
        qs.append(q)
    return qs


def write_turns(path, turns: Iterable[Turn]) -> int:
    return write_jsonl(path, (t.to_dict() for t in turns))


def write_questions(path, questions: Iterable[Question]) -> int:
    return write_jsonl(path, (q.to_dict() for q in questions))


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
    return Tier(name=obj["name"], turns_file=obj["turns"], questions_file=obj["questions"],
                n_turns=as_int(obj, "n_turns", path, rec), n_sessions=as_int(obj, "n_sessions", path, rec),
                n_tokens=as_int(obj, "n_tokens", path, rec), n_questions=as_int(obj, "n_questions", path, rec),
                question_sets=dict(sets))


def load_bench(root) -> Bench:
    """Read ``ROOT/bench.yaml`` (files are checked to exist; they are read by the caller)."""
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
    known = {"name", "version", "license", "source", "tokenizer", "generator", "axis_map",
             "content_hash", "tiers"}
    return Bench(name=str(meta["name"]), version=str(meta["version"]), tiers=tiers, root=str(root),
                 license=str(meta.get("license", "")), source=str(meta.get("source", "")),
                 tokenizer=str(meta.get("tokenizer", "")), generator=meta.get("generator") or {},
                 axis_map=meta.get("axis_map") or {}, content_hash=str(meta.get("content_hash", "")),
                 extra={k: v for k, v in meta.items() if k not in known})


def save_bench(bench: Bench, root=None) -> Path:
    """Write ``bench.yaml`` for files already in place; fills in the content hash."""
    root = Path(root or bench.root)
    files = [f for t in bench.tiers for f in t.files]
    meta: dict[str, Any] = {
        "name": bench.name, "version": bench.version, "license": bench.license, "source": bench.source,
        "tokenizer": bench.tokenizer,
        "tiers": [{"name": t.name, "turns": t.turns_file, "questions": t.questions_file,
                   "n_turns": t.n_turns, "n_sessions": t.n_sessions, "n_tokens": t.n_tokens,
                   "n_questions": t.n_questions} | ({"question_sets": dict(t.question_sets)} if t.question_sets else {})
                  for t in bench.tiers],
        "content_hash": hash_files(root, dict.fromkeys(files)),
    }
    if bench.generator:
        meta["generator"] = dict(bench.generator)
    if bench.axis_map:
        meta["axis_map"] = dict(bench.axis_map)
    meta.update(bench.extra)
    write_text(root / MANIFEST, yaml.safe_dump(meta, sort_keys=False, allow_unicode=True))
    return root / MANIFEST
