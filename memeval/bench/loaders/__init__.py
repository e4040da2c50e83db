"""Loaders: public benchmark files → a bench folder (``bench.yaml`` + tier files), all or nothing.

``import_bench(kind, paths, out)`` dispatches on the format name (``longmemeval``, ``longmemeval-v2``, ``locomo``,
``glasshouse``, and ``booksuite`` when its loader is installed). Every loader names its source,
license and category → axis map in the manifest, and raises :class:`memeval.errors.InputError`
naming file, record and field on malformed input, leaving nothing behind.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any, Sequence

from ...errors import MemevalError
from ..model import Bench
from ._common import staged_output

__all__ = ["FORMATS", "import_bench", "available_formats"]

FORMATS = ("longmemeval", "longmemeval-v2", "locomo", "glasshouse", "booksuite")


def _booksuite():
    from .booksuite import load_booksuite  # on use: start-up time of every command

    return load_booksuite


def available_formats() -> list[str]:
    return [f for f in FORMATS if f != "booksuite" or _booksuite() is not None]


def _one_folder(kind: str, paths: Sequence) -> Path:
    if len(paths) != 1:
        raise MemevalError(f"{kind}: give exactly one folder, got {len(paths)} paths")
    return Path(paths[0])


def import_bench(
    kind: str,
    paths: Sequence,
    out,
    *,
    force: bool = False,
    name: str | None = None,
    pairs: dict[str, list[str]] | None = None,
    tier: str | None = None,
    text_only: bool = False,
) -> Bench:
    """Convert ``paths`` (files or a folder, by format) into a bench folder at ``out``; ``tier`` and
    ``text_only``: longmemeval-v2 only."""
    if pairs and kind != "glasshouse":
        raise MemevalError("--pair applies to glasshouse only")
    if (tier is not None or text_only) and kind != "longmemeval-v2":
        raise MemevalError("--tier and --text-only apply to longmemeval-v2 only")
    kw: dict[str, Any] = {"force": force}
    if name:
        kw["name"] = name
    if kind == "longmemeval":
        from .longmemeval import import_longmemeval  # on use: start-up time of every command

        return import_longmemeval(paths, out, **kw)
    if kind == "longmemeval-v2":
        from .longmemeval_v2 import import_longmemeval_v2  # on use: start-up time of every command

        return import_longmemeval_v2(_one_folder(kind, paths), out, tier=tier or "small", text_only=text_only, **kw)
    if kind == "locomo":
        from .locomo import import_locomo  # on use: start-up time of every command

        return import_locomo(paths, out, **kw)
    if kind == "glasshouse":
        from .glasshouse import import_glasshouse  # on use: start-up time of every command

        return import_glasshouse(_one_folder(kind, paths), out, pairs=pairs, **kw)
    if kind == "booksuite":
        load = _booksuite()
        if load is None:
            raise MemevalError("booksuite: its loader (memeval.bench.loaders.booksuite) is not installed yet")
        suite = load(_one_folder(kind, paths))  # validates every case before anything is written
        with staged_output(out, force) as tmp:
            bench = suite.write_bench(tmp)
        return replace(bench, root=str(out))
    raise MemevalError(f"unknown format {kind!r} (known: {', '.join(available_formats())})")
