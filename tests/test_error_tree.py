"""One error tree: every exception memeval defines derives from ``MemevalError``, and no module raises
a bare builtin exception (the package is walked with ``ast``; the two raises Python's own protocols
demand are named below)."""

from __future__ import annotations

import ast
import builtins
import importlib
import inspect
import pkgutil
from pathlib import Path

import memeval
from memeval.errors import MemevalError

PKG = Path(memeval.__file__).resolve().parent
BUILTIN_EXCEPTIONS = {n for n, v in vars(builtins).items() if isinstance(v, type) and issubclass(v, BaseException)}
#: (module path, builtin) -> why it must stay a builtin
ALLOWED = {
    ("__init__.py", "AttributeError"): "PEP 562: a module's __getattr__ must raise AttributeError",
    ("bench/lifelog/__init__.py", "AttributeError"): "PEP 562: its lazy names' __getattr__, as memeval's own",
    ("run/runner.py", "KeyboardInterrupt"): "the SIGTERM handler turns the signal into Ctrl-C's path",
    ("analysis/report.py", "KeyboardInterrupt"): "the render's SIGINT handler does what Python's own does",
    ("__main__.py", "SystemExit"): "the SIGINT handler exits 130 while the command line is imported",
}


def _bare_raises(tree: ast.AST) -> list[tuple[int, str]]:
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Raise) and node.exc is not None:
            exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            if isinstance(exc, ast.Name) and exc.id in BUILTIN_EXCEPTIONS:
                out.append((node.lineno, exc.id))
    return out


def test_no_module_raises_a_bare_builtin_exception():
    found = []
    for path in sorted(PKG.rglob("*.py")):
        rel = path.relative_to(PKG).as_posix()
        for line, name in _bare_raises(ast.parse(path.read_text(), str(path))):
            if (rel, name) not in ALLOWED:
                found.append(f"memeval/{rel}:{line}: raise {name}")
    assert found == []


def test_the_walk_finds_a_planted_bare_raise():
    planted = ast.parse("def f(x):\n    if x:\n        raise ValueError('bad x')\n    raise MemevalError('fine')\n")
    assert _bare_raises(planted) == [(3, "ValueError")]


def test_every_exception_class_memeval_defines_is_a_memeval_error():
    outside = []
    for mod in pkgutil.walk_packages([str(PKG)], "memeval."):
        if mod.name.endswith("__main__"):
            continue
        module = importlib.import_module(mod.name)
        for name, obj in vars(module).items():
            if (
                inspect.isclass(obj)
                and issubclass(obj, BaseException)
                and obj.__module__ == module.__name__
                and not issubclass(obj, MemevalError)
            ):
                outside.append(f"{module.__name__}.{name}")
    assert outside == []
