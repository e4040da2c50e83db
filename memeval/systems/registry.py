"""Systems named on the command line: ``bm25``, ``bm25:k=10``, ``recent:tokens=4000``,
``vector:k=10,model=M``, ``hybrid:k=10,model=M`` (embedding retrieval, ``systems/vector.py``),
``mem0:llm_url=...,llm_model=...,embed_model=...`` (the optional extra),
``http://host:port`` (the HTTP protocol), or ``python:package.module:factory[:k=v,...]``."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, Callable

from ..errors import MemevalError
from .base import MemorySystem, declared
from .baselines import BM25, NoMemory, Oracle, Recent
from .context import LongContext

if TYPE_CHECKING:
    from .hybrid import Hybrid
    from .vector import Vector

__all__ = ["BUILTIN", "make_system", "parse_spec"]


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


def _value(v: str) -> Any:
    for conv in (int, float):
        try:
            return conv(v)
        except ValueError:
            pass
    return {"true": True, "false": False}.get(v.lower(), v)


def parse_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """``"bm25:k=10,x=y"`` → ``("bm25", {"k": 10, "x": "y"})``."""
    name, _, rest = spec.partition(":")
    params: dict[str, Any] = {}
    for part in filter(None, rest.split(",")):
        key, eq, val = part.partition("=")
        if not eq or not key.strip():
            raise MemevalError(f"system {spec!r}: parameter {part!r} is not key=value")
        params[key.strip()] = _value(val.strip())
    return name.strip(), params


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
        attr, params = parse_spec(rest)
        try:
            factory = getattr(importlib.import_module(mod), attr)
        except (ImportError, AttributeError) as e:
            raise MemevalError(f"system {spec!r}: cannot load {mod}:{attr} ({e})") from None
        system = factory(**params)
        if not isinstance(system, MemorySystem):
            raise MemevalError(
                f"system {spec!r}: {mod}:{attr} returned a {type(system).__name__}, not a memory system "
                "(needs name, version, params, reset, ingest and query; see memeval.MemorySystem)"
            )
        declared(system)  # its optional capabilities, checked before anything is asked
        return system
    name, params = parse_spec(spec)
    if name == "mem0":  # an optional extra: mem0ai is imported only when asked for
        from .mem0 import Mem0  # on use: the optional extra (the base install never imports mem0ai)

        try:
            return Mem0(**params)
        except TypeError as e:
            raise MemevalError(f"system {spec!r}: {e}") from None
    if name not in BUILTIN:
        raise MemevalError(
            f"unknown system {name!r} (built-in: {', '.join(BUILTIN)}, mem0; or http://..., python:mod:factory)"
        )
    try:
        return BUILTIN[name](**params)
    except TypeError as e:
        raise MemevalError(f"system {spec!r}: {e}") from None
