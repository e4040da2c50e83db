"""``memeval view [RUNS_DIR] [--out SITE_DIR] [--bench DIR] [--serve --port N]``: the run browser, a static
site (index with leaderboards, sortable and filterable runs, sweeps grouped; a page per run; comparison
pages of two runs). ``--serve`` serves it on loopback, rebuilds it when runs change and builds the
comparison of any two runs on demand."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HELP = "write a static, offline HTML browser over every run (leaderboards, sortable index, run and comparison pages)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "runs",
        nargs="?",
        default=None,
        metavar="RUNS_DIR",
        help="folder of run folders (searched at any depth, sweeps included), or one run folder "
        "(default: runs/ under the project root)",
    )
    p.add_argument("--out", metavar="SITE_DIR", help="folder to write (default: reports/runs under the project root)")
    p.add_argument(
        "--bench",
        metavar="DIR",
        help="bench folder (or a folder of them) for the text of evidence a system missed, when a run's own "
        "bench folder (recorded in its manifest) is gone",
    )
    p.add_argument(
        "--pairs",
        type=int,
        default=None,
        metavar="N",
        help="comparison pages written with the site, newest comparable pairs first (default 40; --serve "
        "builds any other pair on demand)",
    )
    p.add_argument(
        "--serve",
        action="store_true",
        help="then serve the site on 127.0.0.1 until Ctrl-C, rebuilding it when runs change",
    )
    p.add_argument("--port", type=int, default=8000, help="port for --serve (default 8000; 0 = any free port)")
    p.add_argument(
        "--poll", type=float, default=2.0, metavar="SECONDS", help="--serve: how often to look for changed runs"
    )
    p.add_argument("--no-progress", action="store_true")


def run(args) -> int:
    from ..analysis.site import MAX_PAIRS, SiteBuilder
    from ..errors import InputError
    from ..workspace import anchored

    runs = anchored(args.runs or "runs")
    if not runs.is_dir():
        raise InputError(runs, None, None, "no such folder of runs")
    bench = None
    if args.bench:
        bench = anchored(args.bench)
        if not bench.is_dir():
            raise InputError(bench, None, None, "no such bench folder (--bench)")
    out = anchored("reports/runs") if not args.out else Path(args.out)

    def progress(i, n, info):
        if not args.no_progress:
            print(f"\r[{i + 1}/{n}] {info.path.name[:70]:70}", end="", file=sys.stderr, flush=True)

    builder = SiteBuilder(
        runs, out, bench_dir=bench, pairs=MAX_PAIRS if args.pairs is None else max(args.pairs, 0), progress=progress
    )
    res = builder.build()
    if not args.no_progress and res.pages:
        print(file=sys.stderr)
    for s in res.skipped:
        print(f"memeval view: skipped {s}", file=sys.stderr)
    if not res.pages and not res.skipped and not args.serve:
        raise InputError(runs, None, None, "no run folders here (none holds a manifest.json)")
    print(f"{len(res.pages)} runs, {len(res.compares)} comparison pages → {res.index}")
    if args.serve:
        builder.progress = None
        _serve(builder, args.port, args.poll)
    return 0


def _serve(builder, port: int, poll: float) -> None:
    import functools
    import threading
    import urllib.parse
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

    from ..analysis.site import watch_signature
    from ..errors import MemevalError

    lock = threading.Lock()  # one build at a time: the watcher's and a comparison asked for

    class Handler(SimpleHTTPRequestHandler):
        def do_GET(self):
            url = urllib.parse.urlsplit(self.path)
            if url.path == "/compare":  # any two runs, built on demand
                q = urllib.parse.parse_qs(url.query)
                try:
                    with lock:
                        page = builder.compare(q.get("a", [""])[0], q.get("b", [""])[0])
                except (MemevalError, OSError) as e:  # not a run of this site, or its files just went away
                    self.send_error(404, " ".join(str(e).splitlines())[:200])
                    return
                self.send_response(303)
                self.send_header("Location", f"/compare/{urllib.parse.quote(page.name)}")
                self.end_headers()
                return
            super().do_GET()

        def log_message(self, format, *args):  # quiet: the console shows rebuilds only
            pass

    stop = threading.Event()

    def watch():
        seen, last_error = watch_signature(builder.runs_dir), ""
        while not stop.wait(poll):
            now = watch_signature(builder.runs_dir)
            if now == seen:
                continue
            try:
                with lock:
                    res = builder.build()
                seen, last_error = now, ""
                print(f"runs changed: rebuilt {len(res.pages)} runs, updated {res.updated[11:19]} UTC", flush=True)
            except Exception as e:  # noqa: BLE001 -- a run half-written or removed mid-build: retried, server kept
                line = f"{type(e).__name__}: {' '.join(str(e).splitlines())}"
                if line != last_error:  # said once, retried at every poll until a build succeeds
                    print(f"memeval view: rebuild failed, retrying ({line})", file=sys.stderr, flush=True)
                last_error = line

    handler = functools.partial(Handler, directory=str(builder.out))
    with ThreadingHTTPServer(("127.0.0.1", port), handler) as srv:
        watcher = threading.Thread(target=watch, name="memeval-view-watch", daemon=True)
        watcher.start()
        print(f"serving http://127.0.0.1:{srv.server_address[1]}/ (rebuilt when runs change; Ctrl-C stops)", flush=True)
        try:
            srv.serve_forever()
        except KeyboardInterrupt:
            pass
        finally:
            stop.set()
            watcher.join(timeout=poll + 60)
