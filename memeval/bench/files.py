"""Reading data files safely: JSON (depth-checked), YAML, UTF-8 text and JSONL line by line, with
paths from data confined to their folder. Every reader raises :class:`memeval.errors.InputError`
naming the file, the line and the field; no bench knowledge here (``io`` reads bench folders)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Iterator

import orjson
import yaml

from ..errors import InputError, input_error_from

__all__ = [
    "loads_json",
    "read_json",
    "read_yaml",
    "loads_yaml",
    "read_text",
    "check_depth",
    "as_int",
    "confined",
    "safe_name",
    "MAX_DEPTH",
    "is_file",
    "iter_jsonl",
    "iter_jsonl_lines",
    "check_field_types",
]


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


def _deeper_than(obj, limit: int) -> bool:
    """Whether a parsed JSON document nests lists/objects deeper than ``limit`` (``check_depth``'s
    test, level by level and without its alias bookkeeping: a JSON parse shares no containers; ~5x
    faster on a long JSONL record, which ``loads_json`` checks whenever it holds over 64 brackets).

    >>> _deeper_than({"a": [1, {"b": 2}]}, 3), _deeper_than({"a": [1, {"b": 2}]}, 2)
    (False, True)
    """
    level, d = [obj], 1
    while level:
        if d > limit:
            return True
        deeper = []
        for o in level:
            for v in o.values() if type(o) is dict else o:
                if type(v) is dict or type(v) is list:
                    deeper.append(v)
        level, d = deeper, d + 1
    return False


#: where ``orjson`` reads differently from ``json``: an integer beyond 64 bits, which orjson makes a
#: float (of magnitude >= 2**63, as no smaller integer is one), written with 19 digits or more
_BIG_INT = re.compile(r"\d{19}")
_I64 = 2.0**63


def _has_big_float(obj) -> bool:
    """Whether ``obj`` holds a float of magnitude >= 2**63 (what orjson makes of an over-long integer)."""
    stack = [obj]
    while stack:
        o = stack.pop()
        for v in o.values() if type(o) is dict else o:
            t = type(v)
            if t is float:
                if not -_I64 < v < _I64:
                    return True
            elif t is dict or t is list:
                stack.append(v)
    return False


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
    try:  # orjson: ~2.5x faster; what it refuses (or may read differently) is read again by json below
        obj = orjson.loads(text)
    except ValueError:  # orjson.JSONDecodeError: json gives the error (or reads NaN, 1e400, ...)
        pass
    else:
        if not isinstance(obj, (dict, list)):
            if type(obj) is not float or -_I64 < obj < _I64 or not _BIG_INT.search(text):
                return obj
        elif not (_has_big_float(obj) and _BIG_INT.search(text)):
            if text.count("[") + text.count("{") > MAX_DEPTH and _deeper_than(obj, MAX_DEPTH):
                check_depth(obj, path, record)  # raises, naming the file and record
            return obj
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
            raise InputError(
                path, record, None, "holds an escaped lone surrogate (\\ud800-\\udfff), which is not text"
            ) from None
    if isinstance(obj, (dict, list)) and text.count("[") + text.count("{") > MAX_DEPTH and _deeper_than(obj, MAX_DEPTH):
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
    return loads_yaml(read_text(path), path)


def loads_yaml(text: str, path):
    """YAML text (read from ``path``) parsed as :func:`read_yaml` does, errors naming ``path``.

    >>> loads_yaml("a: [1, 2]", "x.yaml")
    {'a': [1, 2]}
    """
    try:
        obj = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        problem = getattr(e, "problem", None)
        raise InputError(
            path,
            None if mark is None else mark.line + 1,
            None,
            f"not valid YAML ({problem})" if problem else "not valid YAML",
        ) from None
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
        raise InputError(
            path, record, field, f"{name!r} cannot be part of a file name (no '/', '\\', '..' or surrounding spaces)"
        )
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
    if (
        not isinstance(rel, (str, Path))
        or not rel_s
        or "\0" in rel_s
        or Path(rel_s).is_absolute()
        or rel_s.startswith(("/", "\\"))
        or ".." in parts
        or (len(rel_s) > 1 and rel_s[1] == ":")
    ):
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


class _Absent:
    """A field not in the object (``check_field_types``'s fast pass)."""


_ABSENT = _Absent()
_EXACT: dict[tuple[int, int], tuple[dict, Any, tuple[tuple[str, frozenset], ...]]] = {}


def _exact_types(types: dict[str, tuple], required) -> tuple[tuple[str, frozenset], ...]:
    """Each field of ``types`` with the exact value types that pass ``check_field_types`` without a
    word (``_Absent`` where the field may be left out): a JSON value's type is exactly one of str, int,
    float, bool, NoneType, dict, list, so ``type(v) in ok`` is the ``isinstance`` test with its ``bool``
    exception. Built once per (``types``, ``required``) pair."""
    key = (id(types), id(required))
    hit = _EXACT.get(key)
    if hit is None or hit[0] is not types or hit[1] is not required:
        ok = tuple((k, frozenset(kinds) | (frozenset() if k in required else {_Absent})) for k, kinds in types.items())
        hit = _EXACT[key] = (types, required, ok)
    return hit[2]


def check_field_types(obj: dict, path, n: int, types: dict[str, tuple], required=(), int_bits: int = 63) -> dict:
    """``obj`` if each field of ``types`` that is present has one of its types (``type(None)`` for
    null; ``bool`` only where listed), every ``required`` field is present and integers fit in
    ``int_bits``; else :class:`InputError` naming the line and the field. The one field check of the
    run records and the multi-turn records.

    >>> check_field_types({"a": 1}, "f.jsonl", 3, {"a": (int,), "b": (str, type(None))}, required=("a",))
    {'a': 1}
    >>> check_field_types({"a": True}, "f.jsonl", 3, {"a": (int,)})
    Traceback (most recent call last):
    ...
    memeval.errors.InputError: f.jsonl:3: field 'a': expected int, got bool
    """
    bound = 2**int_bits
    get = obj.get
    for k, ok in _exact_types(types, required):  # the usual, well-formed object: one look-up per field
        v = get(k, _ABSENT)
        t = type(v)
        if t not in ok or (t is int and not -bound < v < bound):
            break  # something to report (or a subclass of a listed type): the checks below
    else:
        return obj
    for k, kinds in types.items():
        if k not in obj:
            if k in required:
                raise InputError(path, n, k, "missing")
            continue
        v = obj[k]
        if not isinstance(v, kinds) or (isinstance(v, bool) and bool not in kinds):
            want = " or ".join("null" if t is type(None) else t.__name__ for t in kinds)
            raise InputError(path, n, k, f"expected {want}, got {type(v).__name__}")
        if isinstance(v, int) and not isinstance(v, bool) and not -bound < v < bound:
            raise InputError(path, n, k, "integer out of range")
    return obj
