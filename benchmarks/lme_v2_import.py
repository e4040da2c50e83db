"""Import speed and peak memory of ``memeval import longmemeval-v2`` on a synthetic full-size release.

    .venv/bin/python benchmarks/lme_v2_import.py [--gib 1.2] [--runs 3] [--tmp DIR]

Writes, in a temporary folder (deleted afterwards), a data folder in the published format whose
``trajectories.jsonl`` has the release's size and shape: 1,870 trajectories, 48,609 states (26 per
trajectory, one in three with 25), the accessibility trees padded to reach ``--gib`` GiB, half web
and half enterprise; ``haystacks/lme_v2_small.json`` puts every web trajectory in one ordered
haystack and every enterprise one in the other (2 builds, every trajectory read and written once),
with 50 questions per domain. Screenshots are left out (``--text-only``): 48,609 PNG copies measure
the disk, not the loader.

Each run is a fresh ``python -m memeval import`` process; its peak RSS is the child's ``ru_maxrss``.
Prints the median wall time, MiB/s over the trajectories file, and the peak RSS of every run.
``--baseline`` alternates each run with a floor: a fresh process that only reads the file twice and
parses every line with orjson (what the loader's two passes cannot avoid), and gives the ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

N_TRAJ, N_STATES = 1870, 48_609
WORDS = "link button heading StaticText textbox combobox menuitem row cell img listitem region".split()


def write_data(root: Path, gib: float, seed: int = 0) -> int:
    rng = random.Random(seed)
    root.mkdir(parents=True)
    per_state = int(gib * 2**30 / N_STATES) - 400  # the rest of a state's JSON is about 400 bytes
    base = [
        " ".join(
            f"[{rng.randrange(9999)}] {rng.choice(WORDS)} 'w{rng.randrange(99999)}'" for _ in range(per_state // 20)
        )
        for _ in range(64)
    ]
    base = [b[:per_state] for b in base]
    states_left = N_STATES
    web, ent = [], []
    with open(root / "trajectories.jsonl", "w", encoding="utf-8") as fh:
        for i in range(N_TRAJ):
            n = states_left // (N_TRAJ - i)
            states_left -= n
            dom = "web" if i % 2 == 0 else "enterprise"
            tid = f"{dom}_{i:05d}"
            (web if dom == "web" else ent).append(tid)
            states = [
                {
                    "state_index": k,
                    "url": f"http://{dom}.local/p/{i}/{k}",
                    "action": f"click [{k}] item {i}",
                    "thought": f"step {k} of trajectory {i}",
                    "accessibility_tree": f"state {i}.{k} " + base[(i * 31 + k) % 64],
                    "screenshot": f"screenshots/{tid}/{k}.png",
                }
                for k in range(n)
            ]
            row = {
                "id": tid,
                "domain": dom,
                "environment": dom,
                "goal": f"goal {i}",
                "start_url": "http://x/",
                "outcome": "success",
                "states": states,
            }
            fh.write(json.dumps(row) + "\n")
    qs, hay = [], {}
    for dom, ids in (("web", web), ("enterprise", ent)):
        for j in range(50):
            qid = f"{dom}_q{j}"
            qs.append(
                {
                    "id": qid,
                    "domain": dom,
                    "environment": dom,
                    "question_type": "static-environment",
                    "question": f"what is item {j}?",
                    "image": None,
                    "answer": f"item {j}",
                    "eval_function": "norm_phrase_set_match",
                }
            )
            hay[qid] = ids
    (root / "questions.jsonl").write_text("".join(json.dumps(q) + "\n" for q in qs))
    (root / "haystacks").mkdir()
    (root / "haystacks" / "lme_v2_small.json").write_text(json.dumps(hay))
    return (root / "trajectories.jsonl").stat().st_size


def one_run(data: Path, out: Path) -> tuple[float, float]:
    """(seconds, peak RSS MiB) of one import in a fresh process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t0 = time.perf_counter()
    cmd = [
        sys.executable,
        "-m",
        "memeval",
        "import",
        "longmemeval-v2",
        str(data),
        "--tier",
        "small",
        "--text-only",
        "--out",
        str(out),
        "--force",
        "--no-progress",
    ]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    dt = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    if peak <= before:  # ru_maxrss of children is a maximum over all of them: run each measurement alone
        print("note: peak RSS not above an earlier run's; figure is the maximum so far", file=sys.stderr)
    return dt, peak / 1024


def floor_run(data: Path) -> float:
    """Seconds of a fresh process parsing every line of trajectories.jsonl twice with orjson."""
    code = (
        "import orjson, sys\n"
        "for _ in range(2):\n"
        "    with open(sys.argv[1], 'rb') as fh:\n"
        "        for raw in fh:\n"
        "            orjson.loads(raw)\n"
    )
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", code, str(data / "trajectories.jsonl")], check=True)
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gib", type=float, default=1.2)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--tmp", help="folder for the temporary data (default: the system's)")
    ap.add_argument("--baseline", action="store_true", help="alternate each run with the orjson-only floor")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="lmev2-bench-", dir=args.tmp))
    try:
        t0 = time.perf_counter()
        size = write_data(tmp / "data", args.gib)
        print(
            f"synthetic trajectories.jsonl: {size / 2**20:.0f} MiB ({N_TRAJ} trajectories, {N_STATES} states), written in {time.perf_counter() - t0:.0f} s"
        )
        results, floors = [], []
        for k in range(args.runs):
            if args.baseline:
                floors.append(floor_run(tmp / "data"))
                print(f"floor {k + 1}: {floors[-1]:.1f} s (orjson, two passes)")
            # a child per run, measured alone: a fresh interpreter as parent of each
            code = (
                "import sys, json; sys.path.insert(0, %r); import lme_v2_import as b; from pathlib import Path; "
                "print(json.dumps(b.one_run(Path(%r), Path(%r))))"
                % (str(Path(__file__).parent), str(tmp / "data"), str(tmp / f"bench{k}"))
            )
            r = subprocess.run(
                [sys.executable, "-c", code], check=True, capture_output=True, text=True, env={**os.environ}
            )
            dt, peak = json.loads(r.stdout.strip().splitlines()[-1])
            results.append((dt, peak))
            out_size = sum(p.stat().st_size for p in (tmp / f"bench{k}").rglob("*") if p.is_file())
            print(
                f"run {k + 1}: {dt:.1f} s, {size / 2**20 / dt:.1f} MiB/s, peak RSS {peak:.0f} MiB, bench folder {out_size / 2**20:.0f} MiB"
            )
            shutil.rmtree(tmp / f"bench{k}")
        med = statistics.median(d for d, _ in results)
        print(f"median: {med:.1f} s, {size / 2**20 / med:.1f} MiB/s; peak RSS max {max(p for _, p in results):.0f} MiB")
        if floors:
            fm = statistics.median(floors)
            print(f"floor median: {fm:.1f} s; import / floor = {med / fm:.1f}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
