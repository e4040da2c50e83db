"""Defer ``rfc3987_syntax`` (jsonschema's IRI format checker) until an IRI is actually checked.

nbformat imports jsonschema, whose ``_format`` module imports ``rfc3987_syntax`` when installed (it is
in ``jsonschema[format-nongpl]``, which nbformat and jupyter-events require); that module builds ~40
Earley parsers at import: ~3 s of CPU in every process that touches nbformat (``memeval report``, and
each notebook kernel, through plotly's renderers), for "iri" checks no notebook schema makes
(python-jsonschema/jsonschema#1428). :func:`defer_iri_grammar` puts a stand-in under that name whose
``is_valid_syntax`` imports the real module on its first call, so a check still gives the real answer.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types

__all__ = ["defer_iri_grammar"]

NAME = "rfc3987_syntax"


def _real() -> types.ModuleType:
    """The real module: the stand-in leaves ``sys.modules`` and the package is imported for good."""
    module = sys.modules.get(NAME)
    if getattr(module, "_memeval_deferred", False):
        del sys.modules[NAME]
    return importlib.import_module(NAME)


def _is_valid_syntax(term: str, value: str) -> bool:
    return _real().is_valid_syntax(term, value)


def _getattr(name: str):
    return getattr(_real(), name)


def defer_iri_grammar() -> bool:
    """Install the stand-in unless the module is already imported or not installed; True if installed.

    >>> import sys
    >>> from memeval.analysis.lazy_iri import defer_iri_grammar
    >>> defer_iri_grammar() in (True, False)
    True
    >>> "rfc3987_syntax" in sys.modules or defer_iri_grammar() is False
    True
    """
    spec = None if NAME in sys.modules else importlib.util.find_spec(NAME)
    if spec is None:
        return False
    stand_in = types.ModuleType(NAME, "stand-in: the real rfc3987_syntax is imported on first use")
    stand_in.__spec__ = spec  # find_spec still finds the package
    stand_in.__file__ = spec.origin  # tools that scan sys.modules for files (hypothesis) must not build it
    stand_in.__path__ = list(spec.submodule_search_locations or [])  # its submodules stay importable
    stand_in.is_valid_syntax = _is_valid_syntax  # type: ignore[attr-defined]
    stand_in.__getattr__ = _getattr  # type: ignore[method-assign]
    stand_in._memeval_deferred = True  # type: ignore[attr-defined]
    sys.modules[NAME] = stand_in
    return True
