"""`memeval import longmemeval` against a baseline tree and `json.load`+`json.dump`, interleaved (issue 31).

    .venv/bin/python benchmarks/lme_import_pair.py --base /tmp/base [--haystacks 200] [--chars 240] [--runs 3]

Writes a LongMemEval-format file with ``benchmarks/lme_scale.py``'s generator (``--haystacks`` x
``--sessions`` x ``--turns`` turns of ~``--chars`` characters), then runs, ``--runs`` times in turn, three
fresh processes: the import with this tree on ``PYTHONPATH``, the import with ``--base`` on it, and the
reference (``json.load`` of the file, ``json.dump`` of the result). Prints each run's CPU seconds
(user+sys of the child), the medians, MiB of input per CPU-second, peak RSS, the ratios of each pair,
and whether the two imports wrote the same bench (``content_hash``).

``--v2-data FOLDER`` pairs ``memeval import longmemeval-v2 FOLDER --tier small --text-only`` instead (a
folder written by ``benchmarks/lme_v2_import.py``'s ``write_data``), with no reference process.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from lme_scale import write_lme  # noqa: E402

HERE = Path(__file__).resolve().parents[1]


def child(cmd: list[str], tree: str | None, cwd: Path) -> tuple[float, float]:
    """(CPU seconds, peak RSS MiB) of one fresh process (ru_maxrss read with wait4: this child's own),
    run in ``cwd`` with ``tree`` first on the path (``python -m`` puts the working folder before
    ``PYTHONPATH``: the working folder must not hold another memeval)."""
    env = dict(os.environ)
    if tree is not None:
        env["PYTHONPATH"] = tree
    p = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"failed: {' '.join(cmd)}")
    p.returncode = 0
    return ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024


def content_hash(bench: Path) -> str:
    for line in (bench / "bench.yaml").read_text().splitlines():
        if line.startswith("content_hash:"):
            return line.split(":", 1)[1].strip()
    return ""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", required=True, help="a checkout of the baseline commit (its root)")
    ap.add_argument("--haystacks", type=int, default=200)
    ap.add_argument("--sessions", type=int, default=50)
    ap.add_argument("--turns", type=int, default=12)
    ap.add_argument("--chars", type=int, default=240)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--tmp", default=None)
    ap.add_argument("--v2-data", default=None, help="a LongMemEval-V2 data folder: pair its import instead")
    args = ap.parse_args()
    if args.v2_data:
        return v2_pairs(Path(args.v2_data).resolve(), args)
    tmp = Path(tempfile.mkdtemp(dir=args.tmp))
    py = sys.executable
    try:
        src = tmp / "longmemeval_m.json"
        n = write_lme(src, args.haystacks, args.sessions, args.turns, args.chars)
        mib = src.stat().st_size / 2**20
        lens = f"~{args.chars} chars"
        print(f"{src.name}: {args.haystacks} haystacks, {n:,} turns of {lens}, {mib:.1f} MiB")
        rows: dict[str, list[tuple[float, float]]] = {"this tree": [], "base": [], "json.load+dump": []}
        hashes = set()
        for label, tree in (("this tree", str(HERE)), ("base", args.base)):
            where = subprocess.run(
                [py, "-c", "import memeval; print(memeval.__file__)"],
                env={**os.environ, "PYTHONPATH": tree},
                cwd=tmp,
                capture_output=True,
                text=True,
            ).stdout.strip()
            print(f"{label}: {where}")
        for i in range(args.runs):
            for label, tree in (("this tree", str(HERE)), ("base", args.base)):
                out = tmp / f"bench_{i}_{label[0]}"
                cmd = [py, "-m", "memeval", "import", "longmemeval", str(src), "--out", str(out), "--no-progress"]
                rows[label].append(child(cmd, tree, tmp))
                hashes.add(content_hash(out))
                shutil.rmtree(out)
            ref = "import json, sys; json.dump(json.load(open(sys.argv[1])), open(sys.argv[2], 'w'))"
            rows["json.load+dump"].append(child([py, "-c", ref, str(src), str(tmp / "copy.json")], None, tmp))
            print(
                f"run {i + 1}: " + ", ".join(f"{k} {v[-1][0]:.2f} CPU-s / {v[-1][1]:.0f} MiB" for k, v in rows.items()),
                flush=True,
            )
        med = {k: statistics.median(c for c, _ in v) for k, v in rows.items()}
        for k, v in rows.items():
            print(
                f"{k}: median {med[k]:.2f} CPU-s, {mib / med[k]:.1f} MiB per CPU-s, peak RSS {max(r for _, r in v):.0f} MiB"
            )
        pair = [b[0] / a[0] for a, b in zip(rows["this tree"], rows["base"])]
        ref = [a[0] / r[0] for a, r in zip(rows["this tree"], rows["json.load+dump"])]
        print(
            f"base / this tree, per pair: {', '.join(f'{x:.2f}' for x in pair)} (median {statistics.median(pair):.2f}x)"
        )
        print(
            f"this tree / json.load+dump, per run: {', '.join(f'{x:.2f}' for x in ref)} (median {statistics.median(ref):.2f}x)"
        )
        print(f"same bench (content_hash) from both trees: {len(hashes) == 1}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def v2_pairs(data: Path, args) -> None:
    tmp = Path(tempfile.mkdtemp(dir=args.tmp))
    try:
        mib = (data / "trajectories.jsonl").stat().st_size / 2**20
        print(f"{data}: trajectories.jsonl {mib:.1f} MiB")
        rows: dict[str, list[tuple[float, float]]] = {"this tree": [], "base": []}
        hashes = set()
        for i in range(args.runs):
            for label, tree in (("this tree", str(HERE)), ("base", args.base)):
                out = tmp / f"bench_{i}_{label[0]}"
                cmd = [sys.executable, "-m", "memeval", "import", "longmemeval-v2", str(data), "--tier", "small"]
                rows[label].append(child([*cmd, "--text-only", "--out", str(out), "--no-progress"], tree, tmp))
                hashes.add(content_hash(out))
                shutil.rmtree(out)
            print(
                f"run {i + 1}: " + ", ".join(f"{k} {v[-1][0]:.2f} CPU-s / {v[-1][1]:.0f} MiB" for k, v in rows.items())
            )
        for k, v in rows.items():
            med = statistics.median(c for c, _ in v)
            print(
                f"{k}: median {med:.2f} CPU-s, {mib / med:.1f} MiB per CPU-s, peak RSS {max(r for _, r in v):.0f} MiB"
            )
        pair = [b[0] / a[0] for a, b in zip(rows["this tree"], rows["base"])]
        print(
            f"base / this tree, per pair: {', '.join(f'{x:.2f}' for x in pair)} (median {statistics.median(pair):.2f}x)"
        )
        print(f"same bench (content_hash) from both trees: {len(hashes) == 1}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
