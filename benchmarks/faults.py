"""Memory state over a faulty network (issue 24): the stalled-/reset scenario and the fault table.

    .venv/bin/python benchmarks/faults.py scenario --preset demo --repeat 3
    .venv/bin/python benchmarks/faults.py table --preset tiny

Every run is the command line, as a user types it: ``memeval serve bm25:k=10 ...`` in its own process
and ``memeval run --system URL --http-timeout 1 --concurrency 8``. Each faulty run is compared with a
clean run (the same server without faults) question by question: what each question got (score,
memories returned, error). Outcomes:

- ``differ``: records whose answer differs from the clean run *without an error* (a silent
  difference: what issue 24 forbids);
- ``errors``: error records (a loud difference), ``status`` the manifest's, ``exit`` the run's;
- ``ingested/sessions``: sessions the server stored against sessions the run sent (the server's
  ``GET /stats``), ``stale`` requests it refused (409), ``late resets`` reset keys it saw again;
- ``reingested``/``failed``: haystacks the harness re-ingested or failed (``memory_state``).

``scenario`` repeats the issue's runs (``--stall-rate 0.5 --stall-ms 3000 --fault-routes reset``)
against the fenced server and against ``--no-fencing`` (the protocol as it was), seeds 0..repeat-1;
``table`` runs each fault at its rate on each route once against the fenced server.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from memeval.bench.lifelog import GENERATOR_VERSION, generate
from memeval.run import read_manifest, read_records

PY = [sys.executable, "-m", "memeval"]
FAULTS = {
    "error": ["--error-rate", "0.2"],
    "drop": ["--drop-rate", "0.2"],
    "drop_after": ["--drop-after-rate", "0.2"],
    "stall": ["--stall-rate", "0.5", "--stall-ms", "3000"],
}
ROUTES = ("reset", "sessions", "query")


def bench_dir(preset: str, seed: int = 1) -> Path:
    d = Path(tempfile.gettempdir()) / f"memeval-bench-{preset}-{seed}-g{GENERATOR_VERSION}"
    if not (d / "bench.yaml").exists():
        generate(preset, seed, d)
    return d


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Served:
    """``memeval serve`` in its own process, until closed."""

    def __init__(self, *args: str):
        self.port = _port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc = subprocess.Popen(
            [*PY, "serve", "bm25:k=10", "--port", str(self.port), *args],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if httpx.get(self.url + "/health", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                time.sleep(0.1)
        self.close()
        raise RuntimeError("memeval serve did not start")

    def stats(self) -> dict:
        return httpx.get(self.url + "/stats", timeout=10).json()

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(30)


def run(bench: Path, url: str, out: Path) -> tuple[int, str, float]:
    t0 = time.perf_counter()
    p = subprocess.run(
        [*PY, "run", "--bench", str(bench), "--system", url, "--http-timeout", "1", "--concurrency", "8"]
        + ["--out", str(out), "--no-progress"],
        capture_output=True,
        text=True,
    )
    last = (p.stderr.strip().splitlines() or [""])[-1] if p.returncode else ""
    return p.returncode, last, time.perf_counter() - t0


def answers(run_dir: Path) -> dict:
    return {
        (r["tier"], r["qid"], r["epoch"]): (r["score"], tuple(r["memories_returned"] or ()), r["error"])
        for r in read_records(run_dir)
    }


def outcome(bench: Path, clean: dict, n_sessions: int, serve_args: list[str], out: Path) -> dict:
    srv = Served(*serve_args)
    try:
        code, last, wall = run(bench, srv.url, out)
        stats = srv.stats()
    finally:
        srv.close()
    got = answers(out) if (out / "records.jsonl").exists() else {}
    state = read_manifest(out).get("memory_state", {}) if (out / "manifest.json").exists() else {}
    return {
        "records": len(got),
        "differ": sum(1 for k, v in got.items() if v[2] is None and v != clean.get(k)),
        "errors": sum(1 for v in got.values() if v[2] is not None),
        "status": read_manifest(out)["status"] if (out / "manifest.json").exists() else "-",
        "exit": code,
        "stopped": last,
        "ingested": stats.get("ingested"),
        "sessions_sent": n_sessions,
        "stale": stats.get("stale", "-"),
        "late_resets": stats.get("repeated_reset", "-"),
        "reingested": state.get("reingested", 0),
        "failed": state.get("failed", 0),
        "fenced": state.get("fenced", 0),
        "unfenced": state.get("unfenced", 0),
        "wall_s": round(wall, 1),
    }


def clean_run(bench: Path, work: Path) -> tuple[dict, int]:
    srv = Served()
    try:
        code, last, _ = run(bench, srv.url, work / "clean")
        n = srv.stats()["ingested"]
    finally:
        srv.close()
    if code:
        raise SystemExit(f"the clean run failed: {last}")
    return answers(work / "clean"), n


def _row(name: str, o: dict) -> str:
    stop = f" ({o['stopped'][:90]})" if o["stopped"] else ""
    return (
        f"| {name} | {o['records']} | {o['differ']} | {o['errors']} | {o['status']} / {o['exit']}{stop} | "
        f"{o['ingested']}/{o['sessions_sent']} | {o['stale']} | {o['late_resets']} | {o['reingested']} / "
        f"{o['failed']} | {o['wall_s']} |"
    )


HEAD = (
    "| run | records | differ (silent) | errors (loud) | status / exit | ingested/sessions | stale 409 | "
    "late resets | re-ingested / failed haystacks | wall s |\n|---|---|---|---|---|---|---|---|---|---|"
)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=["scenario", "table"])
    ap.add_argument("--preset", default="tiny")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", action="store_true", help="one JSON object per run instead of a Markdown table")
    a = ap.parse_args()
    bench = bench_dir(a.preset)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        clean, n = clean_run(bench, work)
        print(f"bench {bench.name}: {len(clean)} records, {n} sessions; clean run done", file=sys.stderr, flush=True)
        rows = []
        if a.what == "scenario":
            stall = ["--stall-rate", "0.5", "--stall-ms", "3000", "--fault-routes", "reset"]
            for seed in range(a.repeat):
                for label, extra in (("fenced", []), ("unfenced (--no-fencing)", ["--no-fencing"])):
                    o = outcome(bench, clean, n, [*stall, "--seed", str(seed), *extra], work / f"{label[:5]}{seed}")
                    rows.append((f"stalled /reset, seed {seed}, {label}", o))
                    print(_row(*rows[-1]), file=sys.stderr, flush=True)
        else:
            for fault, args in FAULTS.items():
                for route in ROUTES:
                    o = outcome(bench, clean, n, [*args, "--fault-routes", route], work / f"{fault}-{route}")
                    rows.append((f"{' '.join(args)} on {route}", o))
                    print(_row(*rows[-1]), file=sys.stderr, flush=True)
        if a.json:
            for name, o in rows:
                print(json.dumps({"run": name, **o}))
        else:
            print(HEAD)
            for name, o in rows:
                print(_row(name, o))


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    main()
