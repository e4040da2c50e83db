"""The protocol stack, before and after (issue 16): reference server and HTTP adapter, side by side.

    .venv/bin/python benchmarks/protocol.py throughput --repeat 5
    .venv/bin/python benchmarks/protocol.py loadtest --rate 1000 --duration 10 --repeat 5

The "old" stack (stdlib ``ThreadingHTTPServer`` server, sync httpx adapter, thread-pool open loop)
is taken from git (``--old-rev``, default the commit before the rewrite) into a temporary folder with
its imports made absolute; it is never part of the package. Every server is ``no_memory`` in its
own process (client and server do not share an interpreter lock); the runs alternate between the
stacks within each repeat, so machine load hits both alike. ``uptime`` is printed before and after.

``throughput``: closed loop, queries/s at concurrency 1 and 16, for every (client, server) pair, and
the CPU each side spent per query (user + system, from /proc: what a loaded machine cannot hide).
Old client: N threads calling ``query`` (as the runner does); new client: the same threads through
the sync wrapper, and N coroutines calling ``aquery`` on the adapter's event loop.

``loadtest``: ``open_loop`` (what ``memeval loadtest`` runs) at a fixed rate; achieved rate, latency
p99 from the scheduled time, the client's lag (new: p99 and max, and apart from it the wait for an
in-flight slot; old: max only, all it reported, with slot waits inside),
and the CPU client and server used, as a share of one core over the run (warm-up included).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx

from memeval.bench import read_questions
from memeval.bench.lifelog import GENERATOR_VERSION, generate
from memeval.bench import load_bench

ROOT = Path(__file__).resolve().parents[1]
OLD_FILES = {
    "memeval/systems/server.py": "old_server",
    "memeval/systems/http.py": "old_http",
    "memeval/run/loadtest.py": "old_loadtest",
}


def old_stack(rev: str) -> Path:
    """The old server, adapter and load generator from git, as top-level modules in a temp folder."""
    d = Path(tempfile.mkdtemp(prefix="memeval-old-stack-"))
    for path, name in OLD_FILES.items():
        src = subprocess.run(["git", "show", f"{rev}:{path}"], cwd=ROOT, capture_output=True, text=True, check=True)
        text = src.stdout.replace("from ..systems.http import", "from old_http import")
        text = re.sub(r"from \.\.(\w)", r"from memeval.\1", text)
        text = re.sub(r"from \.(\w)", r"from memeval.systems.\1", text)
        (d / f"{name}.py").write_text(text)
    (d / "serve_old.py").write_text(
        "import sys, time\n"
        "from old_server import ReferenceServer\n"
        "from memeval.systems.registry import make_system\n"
        "srv = ReferenceServer(make_system(sys.argv[1]), port=int(sys.argv[2])).start()\n"
        "while True:\n    time.sleep(3600)\n"
    )
    return d


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(kind: str, old_dir: Path) -> tuple[subprocess.Popen, str]:
    port = free_port()
    if kind == "old":
        cmd = [sys.executable, str(old_dir / "serve_old.py"), "no_memory", str(port)]
    else:
        cmd = [sys.executable, "-m", "memeval", "serve", "no_memory", "--port", str(port)]
    proc = subprocess.Popen(cmd, stderr=subprocess.DEVNULL, cwd=old_dir)
    url = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            httpx.get(url + "/health", timeout=1)
            return proc, url
        except httpx.HTTPError:
            time.sleep(0.05)
    proc.kill()
    raise SystemExit(f"{kind} server did not start")


def questions() -> list[str]:
    d = Path(tempfile.gettempdir()) / f"memeval-bench-demo-1-g{GENERATOR_VERSION}"
    if not (d / "bench.yaml").exists():
        generate("demo", 1, d)
    bench = load_bench(d)
    return [q.text_to_ask for q in read_questions(Path(bench.root) / bench.tier("full").questions_file)]


def cpu_s(pid: int | None = None) -> float:
    """CPU seconds (user + system) of a process (default: this one), from /proc."""
    fields = Path(f"/proc/{pid or 'self'}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def load_avg() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def by_threads(h, qs: list[str], conc: int, n: int) -> float:
    with ThreadPoolExecutor(conc) as pool:
        t0 = time.perf_counter()
        list(pool.map(lambda i: h.query(qs[i % len(qs)], None), range(n)))
        return n / (time.perf_counter() - t0)


def by_coroutines(h, qs: list[str], conc: int, n: int) -> float:
    async def go() -> float:
        todo = iter(range(n))

        async def worker() -> None:
            for i in todo:
                await h.aquery(qs[i % len(qs)], None)

        t0 = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(conc)))
        return n / (time.perf_counter() - t0)

    return h.run(go())


def cmd_throughput(args, old_dir: Path, qs: list[str]) -> None:
    old_http = importlib.import_module("old_http")
    from memeval.systems.http import HttpSystem

    servers = {k: start_server(k, old_dir) for k in ("old", "new")}
    cases = [
        (c, s, how) for s in ("old", "new") for c, how in (("old", "threads"), ("new", "threads"), ("new", "async"))
    ]
    rates: dict[tuple, list[float]] = {}
    cpu: dict[tuple, list[tuple[float, float]]] = {}
    try:
        clients = {}
        for c, s, how in cases:
            if (c, s) not in clients:
                cls = old_http.HttpSystem if c == "old" else HttpSystem
                clients[c, s] = cls(servers[s][1], pool=max(args.concurrency))
                clients[c, s].warm(20)
        for r in range(args.repeat):
            for conc in args.concurrency:
                for c, s, how in cases:
                    h = clients[c, s]
                    run = by_threads if how == "threads" else by_coroutines
                    c0, s0 = cpu_s(), cpu_s(servers[s][0].pid)
                    rates.setdefault((c, s, how, conc), []).append(run(h, qs, conc, args.n))
                    per = ((cpu_s() - c0) / args.n * 1e6, (cpu_s(servers[s][0].pid) - s0) / args.n * 1e6)
                    cpu.setdefault((c, s, how, conc), []).append(per)
            print(f"repeat {r + 1}/{args.repeat} done, load average {load_avg()}", flush=True)
    finally:
        for proc, _ in servers.values():
            proc.terminate()
            proc.wait()
    print(f"{'client':<18} {'server':<8} {'conc':>4}  {'median q/s':>10}  {'CPU us/query client server':>27}  runs")
    for key, v in sorted(rates.items(), key=lambda kv: (kv[0][3], kv[0][1], kv[0][0], kv[0][2])):
        c, s, how, conc = key
        cc, sc = (statistics.median(x) for x in zip(*cpu[key]))
        print(
            f"{c + ' (' + how + ')':<18} {s:<8} {conc:>4}  {statistics.median(v):>10.0f}  {cc:>20.0f} {sc:>6.0f}  "
            f"{[round(x) for x in v]}"
        )
    for conc in args.concurrency:
        before = statistics.median(rates["old", "old", "threads", conc])
        after = statistics.median(rates["new", "new", "threads", conc])
        after_async = statistics.median(rates["new", "new", "async", conc])
        print(
            f"concurrency {conc}: old stack {before:.0f} q/s -> new stack {after:.0f} q/s threads "
            f"({after / before:.2f}x), {after_async:.0f} q/s coroutines ({after_async / before:.2f}x)"
        )


def cmd_loadtest(args, old_dir: Path, qs: list[str]) -> None:
    old_http, old_loadtest = importlib.import_module("old_http"), importlib.import_module("old_loadtest")
    from memeval.run.loadtest import open_loop
    from memeval.systems.http import HttpSystem

    rows: dict[str, list] = {"old": [], "new": []}
    for r in range(args.repeat):
        for stack in ("old", "new"):
            proc, url = start_server(stack, old_dir)
            try:
                h = (old_http.HttpSystem if stack == "old" else HttpSystem)(url, pool=args.max_in_flight)
                run = old_loadtest.open_loop if stack == "old" else open_loop
                c0, s0, t0 = cpu_s(), cpu_s(proc.pid), time.perf_counter()
                res = run(h, qs, args.rate, args.duration, args.max_in_flight)
                wall = time.perf_counter() - t0
                share = (cpu_s() - c0) / wall, (cpu_s(proc.pid) - s0) / wall
                h.close()
            finally:
                proc.terminate()
                proc.wait()
            lag, slot = getattr(res, "lag", None), getattr(res, "slot_wait", None)
            rows[stack].append(
                (
                    res.achieved_rate,
                    res.latency["p99"],
                    lag["p99"] if lag else None,
                    res.max_lag_ms,
                    *share,
                    slot["p99"] if slot else None,
                )
            )
            print(
                f"repeat {r + 1} {stack}: achieved {res.achieved_rate:.0f}/s, errors {res.errors}, latency p99 "
                f"{res.latency['p99']:.2f} ms, client lag p99 {lag['p99'] if lag else '-'} ms, max "
                f"{res.max_lag_ms:.1f} ms, slot wait p99 {slot['p99'] if slot else '-'} ms; CPU client {share[0]:.0%} server {share[1]:.0%} of a core; "
                f"load average {load_avg()}",
                flush=True,
            )
    for stack, v in rows.items():
        med = [
            statistics.median(x for x in col if x is not None) if any(x is not None for x in col) else None
            for col in zip(*v)
        ]
        print(
            f"{stack} stack at {args.rate:g}/s for {args.duration:g} s, median of {len(v)}: achieved {med[0]:.0f}/s, "
            f"latency p99 {med[1]:.2f} ms, client lag p99 {'-' if med[2] is None else f'{med[2]:.2f}'} ms, "
            f"max {med[3]:.1f} ms, slot wait p99 {'-' if med[6] is None else f'{med[6]:.2f}'} ms; "
            f"CPU client {med[4]:.0%}, server {med[5]:.0%} of a core"
        )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("what", choices=["throughput", "loadtest"])
    p.add_argument("--old-rev", default="4c648f5", help="git revision of the old stack")
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--concurrency", type=int, nargs="+", default=[1, 16])
    p.add_argument("--n", type=int, default=2000, help="queries per closed-loop run")
    p.add_argument("--rate", type=float, default=1000.0)
    p.add_argument("--duration", type=float, default=10.0)
    p.add_argument("--max-in-flight", type=int, default=64)
    args = p.parse_args()
    old_dir = old_stack(args.old_rev)
    sys.path.insert(0, str(old_dir))
    qs = questions()
    print(
        f"{len(qs)} questions (demo bench, tier full); load average {load_avg()}; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}"
    )
    (cmd_throughput if args.what == "throughput" else cmd_loadtest)(args, old_dir, qs)
    print(f"load average at the end {load_avg()}")


if __name__ == "__main__":
    main()
