"""The import graph: data flows one way, so a lower layer never imports a higher one.

Every module under ``memeval/`` is parsed (``ast``, every import statement, at module level or
inside a function) and each ``memeval`` import is checked against the layer ranks below. The ranks
are the uses-relation of the data flow bench -> systems -> run -> scoring -> analysis -> notebooks:
the runner drives the scorers and the audit, so ``run`` sits above ``scoring`` and ``audit`` (see
docs/DECISIONS.md, "Layers").
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[1] / "memeval"

#: Lowest first. A module may import its own layer and lower ones, never a higher one, and never a
#: sibling of the same rank (run and multiturn stand beside each other).
RANKS: dict[str, int] = {
    "text": 0,
    "errors": -1,  # the one error tree: imports nothing from memeval, every layer may raise its errors
    "atomic": 0,
    "_version": 0,
    "retry": 0,
    "workspace": 0,
    "testing": 0,  # loopback stubs (OpenAI-compatible judges, readers): standalone, no memeval imports
    "bench": 1,
    "models": 1,  # the local offline models (embedder, chat server): below systems, which embed with them
    "callcache": 1,  # the model-call cache: below systems (embeddings) and llm (chat), above workspace
    "systems": 2,
    "llm": 3,
    "scoring": 4,
    "audit": 5,
    "run": 6,
    "multiturn": 6,
    "analysis": 7,
    "commands": 8,
    "workbench": 8,  # what a notebook's first cells do: generate, serve, run, load (above analysis)
    "cli": 9,
    "__main__": 10,
    "__init__": 10,
}
#: Where an import inside a function is allowed: the command line imports a command's machinery
#: only when that command runs (start-up time), never to dodge a cycle. Elsewhere an import inside a
#: function must say why on its line (``# on use: ...``, start-up time); the layer rule still holds.
LAZY_OK = ("commands", "cli")


def _layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _module_name(path: Path) -> str:
    rel = path.relative_to(PKG.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _is_module(name: str) -> bool:
    path = PKG.parent.joinpath(*name.split("."))
    return path.is_dir() or path.with_suffix(".py").is_file()


def memeval_imports(source: str, module: str, is_package: bool = False) -> list[tuple[str, int, bool]]:
    """``(imported module, line, inside a function)`` for every memeval import in ``source``."""
    tree = ast.parse(source)
    lines = source.splitlines()
    top = {id(n) for n in tree.body}
    for n in tree.body:  # module-level try/if blocks are module level too
        if isinstance(n, (ast.If, ast.Try)):
            top |= {id(x) for x in ast.walk(n)}
    base = module.split(".") if is_package else module.split(".")[:-1]
    out = []
    for n in ast.walk(tree):
        if isinstance(n, ast.ImportFrom):
            if n.level:
                anchor = base[: len(base) - (n.level - 1)]
                target = ".".join(anchor + ([n.module] if n.module else []))
            else:
                target = n.module or ""
            targets = [target]
            if not n.module:  # "from . import x": x is a module of its own, or a name in the package
                targets = [f"{target}.{a.name}" if _is_module(f"{target}.{a.name}") else target for a in n.names]
        elif isinstance(n, ast.Import):
            targets = [a.name for a in n.names]
        else:
            continue
        for t in targets:
            if t == "memeval" or t.startswith("memeval."):
                on_use = "# on use:" in lines[n.lineno - 1]  # deferred for start-up time, said so
                out.append((t, n.lineno, id(n) not in top and not on_use))
    return out


def violations(source: str, module: str, is_package: bool = False) -> list[str]:
    src_layer = _layer(module)
    out = []
    for target, line, lazy in memeval_imports(source, module, is_package):
        dst_layer = _layer(target)
        where = f"{module}:{line} imports {target}"
        if src_layer == "text" and dst_layer != "text":
            out.append(f"{where}: the text layer imports nothing from memeval")
        elif dst_layer not in RANKS:
            out.append(f"{where}: layer {dst_layer!r} has no rank in tests/test_layers.py")
        elif dst_layer != src_layer and RANKS[dst_layer] >= RANKS[src_layer]:
            out.append(
                f"{where}: {src_layer} (rank {RANKS[src_layer]}) may not import {dst_layer} (rank {RANKS[dst_layer]})"
            )
        if lazy and src_layer not in LAZY_OK:
            out.append(f"{where}: a memeval import inside a function (import it at module level)")
    return out


def _modules():
    for path in sorted(PKG.rglob("*.py")):
        yield path, _module_name(path)


def test_every_layer_has_a_rank():
    layers = {_layer(m) for _, m in _modules()}
    assert layers - set(RANKS) == set()


def test_no_module_imports_a_higher_layer_or_hides_an_import_in_a_function():
    found = []
    for path, module in _modules():
        found += violations(path.read_text(encoding="utf-8"), module, path.name == "__init__.py")
    assert found == []


@pytest.mark.parametrize(
    "module, source, expected",
    [
        ("memeval.bench.x", "from ..scoring.matching import contains", "bench (rank 1) may not import scoring"),
        ("memeval.bench.x", "def f():\n    from ..scoring import dry\n", "bench (rank 1) may not import scoring"),
        ("memeval.scoring.x", "import memeval.run.runner", "scoring (rank 4) may not import run"),
        ("memeval.scoring.x", "from memeval.analysis import plots", "scoring (rank 4) may not import analysis"),
        ("memeval.run.x", "from ..multiturn import records", "run (rank 6) may not import multiturn"),
        ("memeval.text.x", "from ..errors import InputError", "the text layer imports nothing from memeval"),
        ("memeval.analysis.x", "def f():\n    from ..run import run_system\n", "inside a function"),
        ("memeval.bench.x", "from .. import audit", "bench (rank 1) may not import audit"),
        (
            "memeval.bench.x",
            "def f():\n    from ..scoring import dry  # on use: start-up time\n",
            "may not import scoring",
        ),
    ],
)
def test_the_checker_catches_each_kind_of_violation(module, source, expected):
    found = violations(source, module)
    assert any(expected in f for f in found), found


@pytest.mark.parametrize(
    "module, source",
    [
        ("memeval.scoring.x", "from ..bench.model import Question\nfrom ..text import normalize"),
        ("memeval.commands.x", "def f():\n    from ..analysis.report import render_report\n"),
        ("memeval.audit.x", "from ..scoring import dry\nfrom .report import CHECKS"),
        ("memeval.run.x", "from ..audit import validity"),
        ("memeval.bench.loaders", "def f():\n    from .locomo import import_locomo  # on use: start-up time\n"),
    ],
)
def test_the_checker_allows_downward_and_start_up_imports(module, source):
    assert violations(source, module) == []
