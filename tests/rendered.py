"""Shipped notebooks rendered once per test session, shared by every test (and xdist worker) that asserts on
the same render.

A render is a kernel start, the notebook's own work and an HTML export: seconds of CPU each. Tests that
render one shipped notebook with the same parameters on the same input read one report, built under
:func:`built_once.built_once` in a fresh project of its own (:func:`notebook_project.notebook_project`,
the kernel started in its ``notebooks/`` as JupyterLab does). Each test still makes its own assertions,
``assert_clean(root)`` included; tests whose subject is another parameter set render their own. The
project folder is read-only to tests (screenshots and edits go to ``tmp_path``).

    root, report = shipped_report(tmp_path_factory, "traces", TINY)
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Callable, Mapping

from built_once import built_once
from notebook_project import NOTEBOOKS, notebook_project

__all__ = ["TINY", "shipped_report", "render_each", "report_of"]

#: The parameters the notebook tests render with: the lifelog bench's ``tiny`` preset, seed 1.
TINY: dict[str, Any] = {"preset": "tiny", "seed": 1}


def shipped_report(tmp_path_factory, notebook: str, parameters: Mapping[str, Any]) -> tuple[Path, Path]:
    """``notebooks/<notebook>.ipynb`` rendered with ``parameters`` once per session: (project root, report).

    The same notebook and parameters give the same render, whichever test asks first; a render that
    failed raises in that test and is tried again by the next one."""
    params = dict(parameters)
    digest = hashlib.sha256(json.dumps(params, sort_keys=True).encode()).hexdigest()[:12]

    def build(root: Path) -> None:
        from memeval.analysis.report import render_report

        render_report(
            NOTEBOOKS / f"{notebook}.ipynb", root / "reports" / f"{notebook}.html", params, cwd=notebook_project(root)
        )

    root, _ = built_once(tmp_path_factory, f"report-{notebook}-{digest}", build)
    return root, root / "reports" / f"{notebook}.html"


def render_each(renders: Mapping[str, Callable[[], Path]]) -> dict[str, Path | BaseException]:
    """Each render of a module run once (a module fixture), in order: its report's path, or the exception it
    raised, kept for :func:`report_of` to raise again in that report's own test only."""
    made: dict[str, Path | BaseException] = {}
    for name, render in renders.items():
        try:
            made[name] = render()
        except Exception as e:  # noqa: BLE001 - raised again in that report's own test
            made[name] = e
    return made


def report_of(made: Mapping[str, Path | BaseException], name: str) -> Path:
    """The report ``render_each`` made for ``name``, or the exception its render raised."""
    out = made[name]
    if isinstance(out, BaseException):
        raise out
    return out
