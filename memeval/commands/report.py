"""``memeval report NOTEBOOK -p key value ... -o reports/NAME.html``"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HELP = "execute a notebook with parameters (papermill) and write an offline HTML report"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("notebook", help="a notebook (.ipynb, or its paired py:percent .py)")
    p.add_argument(
        "-p",
        "--parameter",
        nargs=2,
        action="append",
        default=[],
        metavar=("KEY", "VALUE"),
        help="set a parameter the notebook declares (others are refused); VALUE is read as YAML (3, true, "
        "[bm25, oracle]) or else kept as text; one value where a list is expected becomes a list",
    )
    p.add_argument("-o", "--output", help="HTML file to write (default: reports/<notebook name>.html)")
    p.add_argument("--kernel", default="python3", help="Jupyter kernel name (default: python3)")
    p.add_argument("--timeout", type=float, default=None, help="seconds allowed per cell (default: no limit)")
    p.add_argument(
        "--figures",
        metavar="DIR",
        default=None,
        help="also write every figure as PNG and SVG into DIR (for papers; needs Chrome or Chromium)",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar over the notebook's cells")


def run(args: argparse.Namespace) -> int:
    from ..analysis.report import parse_parameter, render_report  # heavy (nbformat): only when used

    params = {k: parse_parameter(v) for k, v in args.parameter}
    out = Path(args.output) if args.output else Path("reports") / (Path(args.notebook).stem + ".html")
    path = render_report(
        args.notebook,
        out,
        params,
        kernel_name=args.kernel,
        timeout=args.timeout,
        progress=not args.no_progress,
        figures=args.figures,
    )
    if args.figures is not None:
        print(f"figures: {args.figures}/{out.stem}-NN-<title>.png and .svg", file=sys.stderr)
    print(path)
    return 0
