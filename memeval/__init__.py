"""memeval: a workbench for measuring long-term memory in LLM systems.

What a notebook needs is here, loaded on first use (``import memeval`` stays cheap for the command
line; the names differ from the subpackages ``memeval.run`` and ``memeval.audit``, which Python binds
on the package once imported)::

    import memeval
    bench = memeval.generate("tiny", 1, "data/lifelog-tiny-s1")
    run_dir = memeval.run_system(bench, "bm25")
    df = memeval.load_runs([run_dir])       # polars; df.to_pandas() for pandas
    memeval.plots.degradation_curve(df)

>>> import memeval
>>> sorted(memeval.__all__)[:4]
['MemorySystem', 'TraceBrowser', '__version__', 'audit_bench']
>>> memeval.make_system("bm25:k=3").params
{'k': 3}
"""

from __future__ import annotations

from importlib import import_module

from ._version import __version__

# ``typing`` is not imported here: ``python -m memeval`` imports this package before its Ctrl-C handler
# is installed (memeval/__main__.py), so this module stays as small as it can be
TYPE_CHECKING = False

#: public name -> (module, attribute or None for the module itself)
_PUBLIC = {
    "generate": ("memeval.bench.lifelog", "generate"),
    "load_bench": ("memeval.bench.io", "load_bench"),
    "audit_bench": ("memeval.audit", "audit"),
    "make_system": ("memeval.systems.registry", "make_system"),
    "MemorySystem": ("memeval.systems.base", "MemorySystem"),
    "run_system": ("memeval.run.runner", "run_system"),
    "regrade": ("memeval.run.regrade", "regrade_run"),
    "read_records": ("memeval.run.records", "read_records"),
    "load_runs": ("memeval.workbench", "load_runs"),
    "plots": ("memeval.analysis.plots", None),
    "intervals": ("memeval.analysis.intervals", None),
    "TraceBrowser": ("memeval.analysis.widgets", "TraceBrowser"),
    "render_report": ("memeval.analysis.report", "render_report"),
}

if TYPE_CHECKING:  # what a type checker sees; at run time the names load on first use (below)
    from .bench.lifelog import generate
    from .bench.io import load_bench
    from .audit import audit as audit_bench
    from .systems.registry import make_system
    from .systems.base import MemorySystem
    from .run.runner import run_system
    from .run.regrade import regrade_run as regrade
    from .run.records import read_records
    from .workbench import load_runs
    from .analysis import plots
    from .analysis import intervals
    from .analysis.widgets import TraceBrowser
    from typing import Any

    from .analysis.report import render_report

__all__ = ["__version__", *_PUBLIC]


def __getattr__(name: str) -> Any:
    """Load a public name on first use (PEP 562)."""
    try:
        module, attr = _PUBLIC[name]
    except KeyError:
        raise AttributeError(f"module 'memeval' has no attribute {name!r}") from None
    value = import_module(module) if attr is None else getattr(import_module(module), attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
