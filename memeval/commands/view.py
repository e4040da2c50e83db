"""``memeval view [RUNS_DIR] [--out SITE_DIR] [--serve --port N]``: the run browser, a static site."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HELP = "write a static, offline HTML browser over every run (index with filters, a page per run)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "runs",
        nargs="?",
        default=None,
        metavar="RUNS_DIR",
        help="folder of run folders, or one run folder (default: runs/ under the project root)",
    )
    p.add_argument("--out", metavar="SITE_DIR", help="folder to write (default: reports/runs under the project root)")
    p.add_argument("--serve", action="store_true", help="then serve the site on 127.0.0.1 until Ctrl-C")
    p.add_argument("--port", type=int, default=8000, help="port for --serve (default 8000; 0 = any free port)")
    p.add_argument("--no-progress", action="store_true")


def run(args) -> int:
    from ..analysis.site import build_site
    from ..workspace import anchored
    from ..errors import InputError

    runs = anchored(args.runs or "runs")
    if not runs.is_dir():
        raise InputError(runs, None, None, "no such folder of runs")
    out = anchored("reports/runs") if not args.out else Path(args.out)

    def progress(i, n, info):
        if not args.no_progress:
            print(f"\r[{i + 1}/{n}] {info.path.name[:70]:70}", end="", file=sys.stderr, flush=True)

    res = build_site(runs, out, progress)
    if not args.no_progress and res.pages:
        print(file=sys.stderr)
    for s in res.skipped:
        print(f"memeval view: skipped {s}", file=sys.stderr)
    if not res.pages and not res.skipped:
        raise InputError(runs, None, None, "no run folders here (none holds a manifest.json)")
    print(f"{len(res.pages)} runs → {res.index}")
    if args.serve:
        _serve(out, args.port)
    return 0


def _serve(root, port: int) -> None:
    import functools
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

    handler = functools.partial(SimpleHTTPRequestHandler, directory=str(root))
    with ThreadingHTTPServer(("127.0.0.1", port), handler) as srv:
        print(f"serving http://127.0.0.1:{srv.server_address[1]}/ (Ctrl-C stops)", flush=True)
        try:
            srv.serve_forever()
        except KeyboardInterrupt:
            pass
