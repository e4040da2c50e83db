"""Systems named on the command line: ``bm25``, ``bm25:k=10``, ``recent:tokens=4000``,
``vector:k=10,model=M``, ``hybrid:k=10,model=M`` (embedding retrieval, ``systems/vector.py``),
``mem0:llm_url=...,llm_model=...,embed_model=...`` (the optional extra),
the third-party systems of :data:`THIRD_PARTY` (hosted APIs ``zep:k=10``, ``supermemory:k=10``,
``mem0-platform:k=10``, keys from the environment; ``letta:...``, ``graphiti:...``, ``langmem:...``),
``http://host:port`` (the HTTP protocol), or ``python:package.module:factory[:k=v,...]``."""

from __future__ import annotations

import difflib
import importlib
import inspect
import types
import typing
from typing import TYPE_CHECKING, Any, Callable, Union

from ..errors import ArgumentError, MemevalError, SystemContractError
from ..models.catalog import EMBEDDER, LOCAL_NAMES
from ..text.urls import public_url
from .base import MemorySystem, declared
from .baselines import BM25, NoMemory, Oracle, Recent
from .context import LongContext

if TYPE_CHECKING:
    from .hybrid import Hybrid
    from .vector import Vector

__all__ = [
    "BUILTIN",
    "THIRD_PARTY",
    "make_system",
    "parse_spec",
    "public_spec",
    "HOUSEKEEPING",
    "param_schema",
    "check_params",
]

#: Parameters that say where or how a built-in system works, not what it returns (a cache file, a
#: batch size, the API key's variable, CPU threads; a hosted API's deadline, attempts and reply
#: cap): left out of the system's name in a run's config.
#: A hosted API's ``base_url`` stays (without user-info): ``memeval retry`` and ``attribute`` reach the
#: server the run used.
HOUSEKEEPING = frozenset({"cache", "batch", "key_env", "threads", "timeout", "attempts", "max_reply_bytes"})
_LOCAL_MODEL = frozenset(f"model={n}" for n in LOCAL_NAMES)


def _vector(**params: Any) -> Vector:
    from .vector import Vector  # on use: start-up time of every command (sqlite, the embeddings client)

    return Vector(**params)


def _hybrid(**params: Any) -> Hybrid:
    from .hybrid import Hybrid  # on use: start-up time of every command

    return Hybrid(**params)


BUILTIN: dict[str, Callable[..., MemorySystem]] = {
    "no_memory": NoMemory,
    "oracle": Oracle,
    "recent": Recent,
    "bm25": BM25,
    "vector": _vector,
    "hybrid": _hybrid,
    "context": LongContext,  # context:tokens=N, the long-context reader baseline (answer mode)
}


#: third-party systems: name -> (module, class), imported on use (a module imports its SDK only when its
#: system is built; a missing one is one line naming the extra); each class's constructor declares its
#: parameters (checked like a built-in's). Hosted REST APIs in ``systems/hosted``, open-source and
#: self-hosted systems in ``systems/thirdparty``.
THIRD_PARTY: dict[str, tuple[str, str]] = {
    "zep": ("memeval.systems.hosted.zep", "Zep"),
    "supermemory": ("memeval.systems.hosted.supermemory", "Supermemory"),
    "mem0-platform": ("memeval.systems.hosted.mem0_platform", "Mem0Platform"),
    "letta": ("memeval.systems.thirdparty.letta", "Letta"),
    "graphiti": ("memeval.systems.thirdparty.graphiti", "Graphiti"),
    "langmem": ("memeval.systems.thirdparty.langmem", "LangMem"),
}


def _value(v: str) -> Any:
    for conv in (int, float):
        try:
            return conv(v)
        except ValueError:
            pass
    return {"true": True, "false": False}.get(v.lower(), v)


def parse_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """``"bm25:k=10,x=y"`` → ``("bm25", {"k": 10, "x": "y"})``."""
    name, raw = _parse_raw(spec)
    return name, {k: _value(v) for k, v in raw.items()}


def _parse_raw(spec: str) -> tuple[str, dict[str, str]]:
    """``"bm25:k=10"`` → ``("bm25", {"k": "10"})``: the values as written."""
    name, _, rest = spec.partition(":")
    params: dict[str, str] = {}
    for part in filter(None, rest.split(",")):
        key, eq, val = part.partition("=")
        if not eq or not key.strip():
            raise MemevalError(f"system {spec!r}: parameter {part!r} is not key=value")
        params[key.strip()] = val.strip()
    return name.strip(), params


def public_spec(spec: str) -> str:
    """The system's name as a run records it: a built-in spec without its :data:`HOUSEKEEPING`
    parameters, the local embedder named by its model (URLs and ``python:`` specs unchanged).

    >>> public_spec("vector:model=local,cache=/home/me/emb.sqlite,k=5")
    'vector:model=all-MiniLM-L6-v2-onnx-int8,k=5'
    >>> public_spec("bm25")
    'bm25'
    >>> public_spec("letta:url=http://me:secret@127.0.0.1:8283,k=5")
    'letta:url=http://127.0.0.1:8283,k=5'
    """
    if spec.startswith(("http://", "https://", "python:")) or ":" not in spec:
        return spec
    name, _, rest = spec.partition(":")
    kept = [p for p in filter(None, rest.split(",")) if p.partition("=")[0].strip() not in HOUSEKEEPING]
    kept = [
        f"{k}={public_url(v.strip())}" if eq else k for k, eq, v in (p.partition("=") for p in kept)
    ]  # no user-info
    kept = [f"model={EMBEDDER.id}" if p.replace(" ", "").lower() in _LOCAL_MODEL else p for p in kept]
    return f"{name}:{','.join(kept)}" if kept else name


_KINDS: dict[Any, str] = {int: "an integer", float: "a number", bool: "true or false", str: "text"}
_SHORT: dict[Any, str] = {int: "integer", float: "number", bool: "true|false", str: "text"}


def param_schema(target: Callable[..., Any]) -> dict[str, tuple[type, ...]] | None:
    """The parameters a system's factory declares, each with the types its annotation allows (empty:
    any), or None when it takes any keyword (``**kwargs``) and declares nothing more.

    >>> param_schema(BM25)
    {'k': (<class 'int'>,)}
    """
    try:
        sig = inspect.signature(target)
    except (TypeError, ValueError):
        return None
    fn = target.__init__ if inspect.isclass(target) else target
    try:
        hints = typing.get_type_hints(fn)
    except Exception:  # an annotation that does not resolve: names are still checked
        hints = {}
    out: dict[str, tuple[type, ...]] = {}
    open_ended = False
    for n, p in sig.parameters.items():
        if p.kind is p.VAR_KEYWORD:
            open_ended = True
        elif p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
            h = hints.get(n)
            args = typing.get_args(h) if typing.get_origin(h) in (Union, types.UnionType) else (h,)
            out[n] = tuple(a for a in args if a in _KINDS)
    return None if open_ended and not out else out if not open_ended else {**out, "**": ()}


def check_params(
    spec: str, name: str, schema: dict[str, tuple[type, ...]] | None, raw: dict[str, str]
) -> dict[str, Any]:
    """The parameters of ``spec`` converted to the types ``schema`` declares, or :class:`SystemContractError`
    in one line: an unknown name (with the accepted names and a "did you mean"), or a value of the
    wrong type (naming the type).

    >>> check_params("bm25:k=ten", "bm25", {"k": (int,)}, {"k": "ten"})
    Traceback (most recent call last):
    ...
    memeval.errors.SystemContractError: system 'bm25:k=ten': parameter k must be an integer, got 'ten' (bm25 takes: k=integer)
    >>> check_params("bm25:kk=10", "bm25", {"k": (int,)}, {"kk": "10"})
    Traceback (most recent call last):
    ...
    memeval.errors.SystemContractError: system 'bm25:kk=10': unknown parameter 'kk' (did you mean 'k'?); bm25 takes: k=integer
    """
    if schema is None:
        return {k: _value(v) for k, v in raw.items()}
    declared = {k: v for k, v in schema.items() if k != "**"}
    takes = ", ".join(f"{k}={'|'.join(_SHORT[t] for t in ts) or 'value'}" for k, ts in declared.items())
    out: dict[str, Any] = {}
    for k, text in raw.items():
        if k not in declared:
            if "**" in schema:
                out[k] = _value(text)
                continue
            close = difflib.get_close_matches(k, declared, n=1, cutoff=0.5)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise SystemContractError(
                f"system {spec!r}: unknown parameter {k!r}{hint}; {name} takes: {takes or 'no parameters'}"
            )
        value = _convert(text, schema[k])
        if value is _BAD:
            want = " or ".join(_KINDS[t] for t in schema[k])
            raise SystemContractError(
                f"system {spec!r}: parameter {k} must be {want}, got {text!r} ({name} takes: {takes})"
            )
        out[k] = value
    return out


_BAD = object()


def _convert(text: str, kinds: tuple[type, ...]) -> Any:
    """``text`` as the first of ``kinds`` it reads as (no kinds: as :func:`_value` reads it)."""
    if not kinds:
        return _value(text)
    for t in kinds:
        if t is bool:
            if text.lower() in ("true", "false"):
                return text.lower() == "true"
        elif t is str:
            return text
        else:
            try:
                return t(text)
            except ValueError:
                continue
    return _BAD


def _target(name: str) -> Callable[..., Any]:
    """The class whose constructor declares a built-in system's parameters."""
    if name == "vector":
        from .vector import Vector  # on use: start-up time of every command

        return Vector
    if name == "hybrid":
        from .hybrid import Hybrid  # on use: start-up time of every command

        return Hybrid
    return BUILTIN[name]


def _schema_of(name: str) -> dict[str, tuple[type, ...]] | None:
    schema = param_schema(_target(name))
    if name == "hybrid" and schema is not None:  # the rest of its options go to its vector half
        from .vector import Vector  # on use: start-up time of every command

        schema = {k: v for k, v in schema.items() if k != "**"} | (param_schema(Vector) or {})
    return schema


def _third_party(spec: str, name: str, raw: dict[str, str]) -> MemorySystem:
    """A system of :data:`THIRD_PARTY`: its parameters checked against its class, built, its declarations
    read once (a contract error before anything is asked)."""
    mod, attr = THIRD_PARTY[name]
    cls = getattr(importlib.import_module(mod), attr)  # on use: start-up time of every command
    params = check_params(spec, name, param_schema(cls), raw)
    try:
        system: MemorySystem = cls(**params)
    except (TypeError, ArgumentError) as e:
        raise MemevalError(f"system {spec!r}: {e}") from None
    declared(system)
    return system


def make_system(spec: str, **http_options: Any) -> MemorySystem:
    """Build a system from its command-line name (see module docstring).

    >>> s = make_system("bm25:k=5")
    >>> s.name, s.params
    ('bm25', {'k': 5})
    >>> make_system("no_memory").query("Where did I park?", None).memories
    ()
    """
    if spec.startswith(("http://", "https://")):
        from .http import HttpSystem  # on use: start-up time of every command

        return HttpSystem(spec, **http_options)
    if spec.startswith("python:"):
        mod, _, rest = spec[len("python:") :].partition(":")
        attr, raw = _parse_raw(rest)
        try:
            factory = getattr(importlib.import_module(mod), attr)
        except (ImportError, AttributeError) as e:
            raise MemevalError(f"system {spec!r}: cannot load {mod}:{attr} ({e})") from None
        params = check_params(spec, f"{mod}:{attr}", param_schema(factory), raw)
        try:
            system = factory(**params)
        except Exception as e:
            raise MemevalError(
                f"system {spec!r}: {mod}:{attr} raised {type(e).__name__}: {e} (memeval --debug shows the traceback)"
            ) from e
        if not isinstance(system, MemorySystem):
            raise MemevalError(
                f"system {spec!r}: {mod}:{attr} returned a {type(system).__name__}, not a memory system "
                "(needs name, version, params, reset, ingest and query; see memeval.MemorySystem)"
            )
        declared(system)  # its optional capabilities, checked before anything is asked
        return system
    name, raw = _parse_raw(spec)
    if name == "mem0":
        params = {k: _value(v) for k, v in raw.items()}  # an optional extra: mem0ai is imported only when asked for
        from .mem0 import Mem0  # on use: the optional extra (the base install never imports mem0ai)

        try:
            return Mem0(**params)
        except TypeError as e:
            raise MemevalError(f"system {spec!r}: {e}") from None
    if name in THIRD_PARTY:
        return _third_party(spec, name, raw)
    if name not in BUILTIN:
        close = difflib.get_close_matches(name, [*BUILTIN, "mem0", *THIRD_PARTY], n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        raise SystemContractError(
            f"unknown system {name!r} ({hint}built-in: {', '.join(BUILTIN)}, mem0; third-party: {', '.join(THIRD_PARTY)}; "
            "or http://..., python:mod:factory)"
        )
    params = check_params(spec, name, _schema_of(name), raw)
    try:
        return BUILTIN[name](**params)
    except (TypeError, ArgumentError) as e:
        raise MemevalError(f"system {spec!r}: {e}") from None
