"""Load time and peak memory of the LongMemEval loader on a synthetic LongMemEval-M-shaped file.

The file has the real shape (a JSON list of instances with ``haystack_sessions`` etc.) and M's
proportions per question (~500 sessions of ~10 turns, ~1,200 characters per turn, ≈6 MB per
instance); ``--questions`` sets how many instances (the real M has 500). Each import runs in a fresh
subprocess; its wall time and peak RSS (``ru_maxrss``) are reported, median over ``--runs``. For
contrast, the peak RSS of a plain ``json.load`` of the same file is measured once.

    .venv/bin/python benchmarks/loaders.py --questions 50 --runs 3
"""

from __future__ import annotations

import argparse
import filecmp
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

WORDS = (
    "the of and to in is you that it he was for on are as with his they at be this have from or one "
    "had by word but not what all were we when your can said there use an each which she do how their "
    "if will up other about out many then them these so some her would make like him into time has look "
    "two more write go see number no way could people my than first water been call who oil its now find "
    "long down day did get come made may part garden recipe budget travel ticket doctor meeting python "
    "function river mountain salary holiday cousin dentist apartment bicycle"
).split()

CHILD = """
import json, resource, sys, time
t0 = time.perf_counter()
mode, src, out = sys.argv[1:4]
if mode == "pad":
    from memeval.bench.padding import pad
    sizes = [int(x) for x in sys.argv[4].split(",")]
    b = pad(src, sizes, "haystacks", 1, out)
    info = {"tiers": {t.name: t.n_turns for t in b.tiers}}
elif mode == "load":
    from memeval.bench.loaders.longmemeval import import_longmemeval
    b = import_longmemeval([src], out)
    info = {"turns": b.tiers[0].n_turns, "tokens": b.tiers[0].n_tokens, "questions": b.tiers[0].n_questions}
else:
    with open(src, encoding="utf-8") as fh:
        data = json.load(fh)
    info = {"instances": len(data)}
info["seconds"] = time.perf_counter() - t0
ru = resource.getrusage(resource.RUSAGE_SELF)
info["cpu_seconds"] = ru.ru_utime + ru.ru_stime  # with interpreter start-up and imports
info["peak_rss_mib"] = ru.ru_maxrss / 1024
print(json.dumps(info))
"""


def _turn_text(rng: random.Random, chars: int) -> str:
    out, n = [], 0
    while n < chars:
        w = rng.choice(WORDS)
        out.append(w)
        n += len(w) + 1
    return " ".join(out).capitalize() + "."


def make_file(
    path: Path, questions: int, sessions: int, turns: int, chars: int, seed: int = 0, unique: bool = False
) -> None:
    """``unique``: every turn's text differs (a pool text plus a serial number), the worst case for
    counting each distinct text once; else texts repeat from a pool of 2,000."""
    rng = random.Random(seed)
    pool = [_turn_text(rng, chars) for _ in range(2000)]  # reused texts keep generation fast
    types = [
        "single-session-user",
        "multi-session",
        "temporal-reasoning",
        "knowledge-update",
        "single-session-assistant",
        "single-session-preference",
    ]
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("[")
        for q in range(questions):
            sids = [f"s{q}_{i}" for i in range(sessions)]
            dates = [
                f"2023/{1 + i * 12 // sessions:02d}/{1 + i % 28:02d} (Mon) {i % 24:02d}:{i % 60:02d}"
                for i in range(sessions)
            ]
            dates.sort()
            hay = []
            for i in range(sessions):
                sess = []
                for j in range(turns):
                    text = rng.choice(pool) + (f" Note {q}.{i}.{j}." if unique else "")
                    t = {"role": "user" if j % 2 == 0 else "assistant", "content": text}
                    if i == sessions // 2 and j == 0:
                        t["has_answer"] = True
                    sess.append(t)
                hay.append(sess)
            inst = {
                "question_id": f"q{q:04d}" + ("_abs" if q % 30 == 29 else ""),
                "question_type": types[q % len(types)],
                "question": "What did I say?",
                "answer": "something",
                "question_date": "2023/12/31 (Sun) 23:59",
                "haystack_session_ids": sids,
                "haystack_dates": dates,
                "haystack_sessions": hay,
                "answer_session_ids": [sids[sessions // 2]],
            }
            fh.write(("" if q == 0 else ", ") + json.dumps(inst))
        fh.write("]")


def child(mode: str, src: Path, out: Path, *extra: str, tree: str | None = None) -> dict:
    """Run one measurement in a fresh process on the memeval of ``tree`` (default: this checkout)."""
    env = dict(os.environ, PYTHONPATH=tree or str(Path(__file__).resolve().parents[1]))
    res = subprocess.run(
        [sys.executable, "-c", CHILD, mode, str(src), str(out), *extra],
        capture_output=True,
        text=True,
        env=env,
        check=True,
        cwd=src.parent,  # not the checkout: `python -c` puts the working folder first on sys.path
    )
    return json.loads(res.stdout.strip().splitlines()[-1])


def _same_files(a: Path, b: Path) -> bool:
    """Whether two bench folders hold the same files with the same bytes (compared in chunks: a child
    forked from a large parent would report the parent's peak RSS as its own)."""
    fa = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    fb = sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file())
    return fa == fb and all(filecmp.cmp(a / f, b / f, shallow=False) for f in fa)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--questions", type=int, default=50)
    ap.add_argument("--sessions", type=int, default=500)
    ap.add_argument("--turns", type=int, default=10, help="turns per session")
    ap.add_argument("--chars", type=int, default=1200, help="characters per turn")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--no-json-load", action="store_true", help="skip the json.load comparison")
    ap.add_argument(
        "--pad",
        metavar="SIZES",
        help="instead: import the file, then time `pad` (source haystacks) to these turns per "
        "haystack, e.g. 1000,2000,4000 (use an S-shaped file: --sessions 50)",
    )
    ap.add_argument("--workdir", help="where to put the files (default: a temp folder, removed)")
    ap.add_argument("--unique", action="store_true", help="every turn's text distinct (no repeats to reuse)")
    ap.add_argument(
        "--old-tree",
        metavar="DIR",
        help="also time the memeval in DIR (e.g. `git archive` of an older commit), alternating run by run",
    )
    args = ap.parse_args()
    work = Path(args.workdir or tempfile.mkdtemp(prefix="memeval-bench-loaders-"))
    work.mkdir(parents=True, exist_ok=True)
    src = work / "longmemeval_m.json"
    try:
        t0 = time.perf_counter()
        make_file(src, args.questions, args.sessions, args.turns, args.chars, unique=args.unique)
        gen = time.perf_counter() - t0
        size_mib = src.stat().st_size / 2**20
        print(
            f"generated {src.name}: {args.questions} questions x {args.sessions} sessions x {args.turns} turns, "
            f"{size_mib:.0f} MiB in {gen:.1f} s" + (" (every turn text distinct)" if args.unique else ""),
            flush=True,
        )
        print(f"load average before: {os.getloadavg()[0]:.1f}", flush=True)
        trees = {"current": None} | ({"old": args.old_tree} if args.old_tree else {})
        if args.pad:
            child("load", src, work / "base")
            runs: dict[str, list[dict]] = {k: [] for k in trees}
            for r in range(args.runs):
                for label, tree in trees.items():  # alternating, so load changes hit both alike
                    out = work / f"pad{r}-{label}"
                    runs[label].append(child("pad", work / "base", out, args.pad, tree=tree))
                    if r == 0 and label == "old":
                        same = _same_files(work / "pad0-current", out)
                    elif r > 0 or not args.old_tree:
                        shutil.rmtree(out)
                    print(f"  run {r + 1} {label}: {runs[label][-1]}", flush=True)
            for label, rs in runs.items():
                print(
                    f"pad ({label}) to {args.pad} turns per haystack: median "
                    f"{statistics.median(x['seconds'] for x in rs):.1f} s wall, "
                    f"{statistics.median(x['cpu_seconds'] for x in rs):.1f} s CPU, "
                    f"median peak RSS {statistics.median(x['peak_rss_mib'] for x in rs):.0f} MiB, tiers {rs[0]['tiers']}"
                )
            if args.old_tree:
                new, old = (statistics.median(x["seconds"] for x in runs[k]) for k in ("current", "old"))
                newc, oldc = (statistics.median(x["cpu_seconds"] for x in runs[k]) for k in ("current", "old"))
                print(f"speed-up {old / new:.2f}x wall, {oldc / newc:.2f}x CPU; padded files byte-identical: {same}")
            print(f"load average after: {os.getloadavg()[0]:.1f}")
            print(f"machine: {platform.platform()}, {os.cpu_count()} cores, python {platform.python_version()}")
            return
        runs = {k: [] for k in trees}
        for r in range(args.runs):
            for label, tree in trees.items():  # alternating, so load changes hit both alike
                out = work / f"bench{r}-{label}"
                runs[label].append(child("load", src, out, tree=tree))
                shutil.rmtree(out)
                print(f"  run {r + 1} {label}: {runs[label][-1]}", flush=True)
        for label, rs in runs.items():
            secs = statistics.median(x["seconds"] for x in rs)
            cpu = statistics.median(x["cpu_seconds"] for x in rs)
            rss = statistics.median(x["peak_rss_mib"] for x in rs)
            print(
                f"import_longmemeval ({label}): median {secs:.1f} s wall ({size_mib / secs:.1f} MiB/s), "
                f"{cpu:.1f} s CPU ({size_mib / cpu:.1f} MiB per CPU-second), "
                f"median peak RSS {rss:.0f} MiB, {rs[0]['turns']} turns, {rs[0]['tokens']} tokens"
            )
        if args.old_tree:
            new, old = (statistics.median(x["seconds"] for x in runs[k]) for k in ("current", "old"))
            newc, oldc = (statistics.median(x["cpu_seconds"] for x in runs[k]) for k in ("current", "old"))
            same = runs["current"][0]["tokens"] == runs["old"][0]["tokens"]
            print(
                f"speed-up {old / new:.2f}x wall, {oldc / newc:.2f}x CPU; token totals {'equal' if same else 'DIFFER'}"
            )
        print(f"load average after: {os.getloadavg()[0]:.1f}")
        if not args.no_json_load:
            j = child("json", src, work / "unused")
            print(f"json.load of the same file: {j['seconds']:.1f} s, peak RSS {j['peak_rss_mib']:.0f} MiB")
        print(f"machine: {platform.platform()}, {os.cpu_count()} cores, python {platform.python_version()}")
    finally:
        if not args.workdir:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
