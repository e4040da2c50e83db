"""``memeval`` commands run in the test's own process: what ``python -m memeval ARGS`` would return and
print, without an interpreter start-up and the command's imports (~1.5 s of CPU each).

Use it where the process boundary is not what a test checks (exit codes, one-line errors, output);
keep a subprocess for signals, Ctrl-C, tracebacks at start-up, locks held by another process or what a
child's environment changes. Warnings a child would have printed on its stderr (Python's default filters
show all but deprecation, import and resource warnings) are appended to ``stderr`` here, so a test that
counts stderr lines still sees them::

    from incli import memeval_cli

    def test_x(capsys):
        p = memeval_cli(capsys, "summary", str(run_dir))
        assert p.returncode == 0 and "weighted" in p.stdout
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

__all__ = ["Result", "memeval_cli"]

_SILENT_BY_DEFAULT = (DeprecationWarning, PendingDeprecationWarning, ImportWarning, ResourceWarning)


@dataclass(frozen=True)
class Result:
    """The fields of ``subprocess.CompletedProcess`` a test reads."""

    returncode: int
    stdout: str
    stderr: str


def memeval_cli(capsys, *args) -> Result:
    """``memeval.cli.main(args)`` with its output captured (``capsys``: the test's fixture)."""
    from memeval.cli import main

    capsys.readouterr()  # what the test printed before is not the command's
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    shown = [w for w in caught if not issubclass(w.category, _SILENT_BY_DEFAULT)]
    err += "".join(warnings.formatwarning(w.message, w.category, w.filename, w.lineno) for w in shown)
    return Result(code, out, err)
