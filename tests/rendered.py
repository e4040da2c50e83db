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
from typing import Any, Mapping

from built_once import built_once
from notebook_project import NOTEBOOKS, notebook_project

__all__ = ["TINY", "shipped_report"]

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
