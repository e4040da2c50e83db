"""LongMemEval at the scale users bring: a generated LongMemEval-format file of short, realistic turns,
imported and run with bm25 (issue 31).

    .venv/bin/python benchmarks/lme_scale.py [--haystacks 400] [--sessions 50] [--turns 12] [--runs 3]

Writes (in a temporary folder, deleted afterwards) ``longmemeval_m.json`` in the published format:
``--haystacks`` instances, each with ``--sessions`` sessions of ``--turns`` turns of ~240 characters
(sentences of everyday conversational words; one turn per haystack carries the answer and is
flagged ``has_answer``). The defaults give 240k turns; ``--haystacks 2000 --sessions 50 --turns 12``
gives LongMemEval-M's 1.2M. Then, for ``--runs`` runs, fresh processes: ``memeval import
longmemeval`` and ``memeval run --system bm25 --mode dry``; prints CPU seconds (user+sys of the child)
and peak RSS (``ru_maxrss``) of each, medians over runs.
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
from pathlib import Path

WORDS = (
    "i you we they it the a an and but so because really think maybe going went got have had was were is "
    "are be been do did make made take took see saw know knew want like love need tried trying work job "
    "office home kitchen garden dog cat kids friend sister brother mom dad weekend morning evening night "
    "today yesterday tomorrow week month year trip city beach park movie book song dinner lunch coffee tea "
    "recipe class gym run yoga bike car bus train plan plans idea ideas help thanks great good nice busy "
    "tired happy excited worried sure yes no just also still already never always sometimes"
).split()
TYPES = ("single-session-user", "multi-session", "temporal-reasoning", "knowledge-update")


def sentence(rng: random.Random, chars: int) -> str:
    out: list[str] = []
    n = 0
    while n < chars:
        w = rng.choice(WORDS)
        out.append(w)
        n += len(w) + 1
    return " ".join(out).capitalize() + "."


def write_lme(path: Path, haystacks: int, sessions: int, turns: int, chars: int = 240, seed: int = 0) -> int:
    """Write a LongMemEval-format file; returns its turn count."""
    rng = random.Random(seed)
    n_turns = 0
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("[")
        for h in range(haystacks):
            fact = f"my {rng.choice(['neighbour', 'cousin', 'teacher'])} is called Zorblax{h}"
            ans_s = rng.randrange(sessions)
            ans_t = rng.randrange(turns // 2) * 2  # a user turn
            hs, ids, dates = [], [], []
            for s in range(sessions):
                sess = []
                for t in range(turns):
                    text = sentence(rng, chars)
                    has = s == ans_s and t == ans_t
                    if has:
                        text = f"By the way, {fact}. " + text
                    turn = {"role": "user" if t % 2 == 0 else "assistant", "content": text}
                    if has:
                        turn["has_answer"] = True
                    sess.append(turn)
                hs.append(sess)
                ids.append(f"s{h}_{s}")
                dates.append(f"2023/{1 + s * 11 // sessions:02d}/{1 + s % 28:02d} (Mon) 10:{s % 60:02d}")
                n_turns += turns
            inst = {
                "question_id": f"q{h:05d}",
                "question_type": TYPES[h % len(TYPES)],
                "question": "What is my neighbour called?",
                "answer": f"Zorblax{h}",
                "question_date": "2023/12/30 (Sat) 23:59",
                "haystack_session_ids": ids,
                "haystack_dates": dates,
                "haystack_sessions": hs,
                "answer_session_ids": [ids[ans_s]],
            }
            fh.write(("," if h else "") + json.dumps(inst))
        fh.write("]")
    return n_turns


def child(cmd: list[str]) -> tuple[float, float]:
    """(CPU seconds, peak RSS MiB) of one fresh process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, after.ru_maxrss / 1024  # ru_maxrss of the largest child so far: runs go small → same size


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--haystacks", type=int, default=400)
    ap.add_argument("--sessions", type=int, default=50)
    ap.add_argument("--turns", type=int, default=12)
    ap.add_argument("--chars", type=int, default=240)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--tmp", default=None)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(dir=args.tmp))
    py = [sys.executable, "-m", "memeval"]
    try:
        src = tmp / "longmemeval_m.json"
        n = write_lme(src, args.haystacks, args.sessions, args.turns, args.chars)
        mib = src.stat().st_size / 2**20
        print(f"{src.name}: {args.haystacks} haystacks, {n:,} turns, {mib:.0f} MiB")
        imp, run = [], []
        for i in range(args.runs):
            bench = tmp / f"bench{i}"
            imp.append(child([*py, "import", "longmemeval", str(src), "--out", str(bench)]))
            run.append(
                child(
                    [
                        *py,
                        "run",
                        "--bench",
                        str(bench),
                        "--system",
                        "bm25",
                        "--mode",
                        "dry",
                        "--out",
                        str(tmp / f"run{i}"),
                        "--no-progress",
                    ]
                )
            )
            shutil.rmtree(bench)
        for label, xs in (("import", imp), ("run (bm25, dry)", run)):
            cpu = statistics.median(c for c, _ in xs)
            print(
                f"{label}: {cpu:.2f} CPU-s median, peak RSS {max(r for _, r in xs):.0f} MiB "
                f"(runs: {', '.join(f'{c:.2f}s/{r:.0f}MiB' for c, r in xs)})"
            )
        print(f"import: {mib / statistics.median(c for c, _ in imp):.1f} MiB per CPU-s")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
