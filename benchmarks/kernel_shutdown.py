"""How long a render waits for its kernel to exit: memeval's ReportKernel against ipykernel's own class.

    .venv/bin/python benchmarks/kernel_shutdown.py [--renders 20]

Renders a two-cell notebook ``--renders`` times with each kernel class, alternating, and counts the
renders whose kernel did not exit after the shutdown request and was sent SIGTERM by jupyter_client
(after half its 5 s ``shutdown_wait_time``). ipykernel 7.4's control thread can hang at shutdown on a
flush through the stopped IOPub thread (memeval/analysis/report_kernel.py); ReportKernel hands back the
process's streams while answering the request.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import jupyter_client.manager as manager
import nbformat

from memeval.analysis import report

SIGTERMS: list[int] = []
_sigterm = manager.KernelManager._async_send_kernel_sigterm


async def _counted(self, *args, **kwargs):
    SIGTERMS.append(1)
    return await _sigterm(self, *args, **kwargs)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--renders", type=int, default=20)
    args = ap.parse_args()
    manager.KernelManager._async_send_kernel_sigterm = _counted  # type: ignore[method-assign]
    ours = report._kernel_arguments

    def plain(name: str) -> list[str]:
        return [a for a in ours(name) if "kernel_class" not in a]

    with tempfile.TemporaryDirectory() as tmp:
        nb = nbformat.v4.new_notebook(
            cells=[
                nbformat.v4.new_code_cell("n = 1", metadata={"tags": ["parameters"]}),
                nbformat.v4.new_code_cell("print(n)"),
            ]
        )
        path = Path(tmp) / "two_cells.ipynb"
        nbformat.write(nb, path)
        walls: dict[str, list[float]] = {"ipykernel": [], "ReportKernel": []}
        terms = dict.fromkeys(walls, 0)
        for _ in range(args.renders):
            for label, kernel_args in (("ipykernel", plain), ("ReportKernel", ours)):
                report._kernel_arguments = kernel_args  # type: ignore[assignment]
                before = len(SIGTERMS)
                t0 = time.perf_counter()
                report.execute_notebook(path, {}, cwd=tmp)
                walls[label].append(time.perf_counter() - t0)
                terms[label] += len(SIGTERMS) - before
    print("| kernel class | renders | SIGTERM needed | median wall | max wall |")
    print("|---|---:|---:|---:|---:|")
    for label, w in walls.items():
        print(f"| {label} | {len(w)} | {terms[label]} | {statistics.median(w):.2f} s | {max(w):.2f} s |")


if __name__ == "__main__":
    main()
