"""Every output of a shipped notebook, recorded as data, to compare two source trees byte for byte.

    cd PROJECT && PYTHONPATH=TREE python TREE/benchmarks/notebook_outputs.py TREE/notebooks/degradation.py \
        out.json preset='"tiny"' seed=1 [--profile out.prof]

Runs the jupytext ``.py`` form's code cells in order as one script (the ``parameters`` cell, then the
given ``NAME=LITERAL`` overrides, as papermill injects them), from the current folder (a project with
``memeval.toml``). Recorded in order: each figure's ``fig.to_json()`` (``.show()`` and a cell's last
expression), each ``display(HTML(...))`` payload (every table, caption and number) and each cell's printed
text. Two trees give byte-identical files when every figure, table and number of the report is the same.
``TIMES=1`` prints each cell's CPU seconds on stderr.
"""

from __future__ import annotations

import ast
import contextlib
import io
import json
import os
import re
import sys
import time
from typing import Any

captured: list[list[str]] = []


def record(obj: Any) -> None:
    if hasattr(obj, "to_json") and hasattr(obj, "layout"):
        captured.append(["figure", obj.to_json()])
    elif type(obj).__name__ == "HTML" and hasattr(obj, "data"):
        captured.append(["html", obj.data])
    else:
        captured.append(["other", type(obj).__name__])


def cells(path: str) -> list[tuple[str, str]]:
    out = []
    for block in re.split(r"^# %%", open(path, encoding="utf-8").read(), flags=re.M)[1:]:
        head, _, body = block.partition("\n")
        if "[markdown]" not in head:
            out.append((head, body))
    return out


def run(path: str, params: dict[str, Any]) -> None:
    import IPython.display
    import plotly.basedatatypes

    IPython.display.display = lambda *objs, **kw: [record(o) for o in objs]  # the cells import it after this
    plotly.basedatatypes.BaseFigure.show = lambda self, *a, **k: record(self)
    ns: dict[str, Any] = {"__name__": "__main__"}
    for i, (head, body) in enumerate(cells(path)):
        tree = ast.parse(body)
        last = ast.Expression(tree.body.pop().value) if tree.body and isinstance(tree.body[-1], ast.Expr) else None
        buf = io.StringIO()
        t0 = time.process_time()
        with contextlib.redirect_stdout(buf):
            exec(compile(tree, f"cell{i}", "exec"), ns)
            if "parameters" in head:
                ns.update(params)
            if last is not None:
                value = eval(compile(last, f"cell{i}", "eval"), ns)
                if value is not None:
                    record(value)
        if os.environ.get("TIMES"):
            print(f"cell{i} {time.process_time() - t0:.3f} {body.strip().splitlines()[0][:60]}", file=sys.stderr)
        if buf.getvalue():
            captured.append(["stdout", buf.getvalue()])


def main() -> None:
    path, out, rest = sys.argv[1], sys.argv[2], sys.argv[3:]
    params: dict[str, Any] = {}
    profile = None
    while rest:
        arg = rest.pop(0)
        if arg == "--profile":
            profile = rest.pop(0)
        else:
            name, _, literal = arg.partition("=")
            params[name] = ast.literal_eval(literal)
    if profile:
        import cProfile

        cProfile.runctx("run(path, params)", globals(), {"run": run, "path": path, "params": params}, profile)
    else:
        run(path, params)
    with open(out, "w", encoding="utf-8") as fh:
        json.dump(captured, fh)
    figures = sum(1 for kind, _ in captured if kind == "figure")
    print(f"{len(captured)} outputs, {figures} figures", file=sys.stderr)


if __name__ == "__main__":
    main()
