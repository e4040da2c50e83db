"""Dry scoring throughput: ``score_answer`` on N synthetic (question, answer) pairs covering all 17 axes.

    .venv/bin/python benchmarks/scoring_throughput.py [--n 20000] [--runs 5] [--seed 1] [--out FILE]

Answers come in three shapes, in equal shares per axis: a short answer (the gold, an old value, an
IDK phrase in one of 11 languages, a wrong value), a one-sentence answer around the gold, and a
system's returned memories joined as one text (~1.5 KB, graded as one long answer; a memory-only
response itself is read one memory at a time, each memory normalised once and memoised).
Every answer carries a unique number, so the memo caches never serve a pair twice; the caches are
also cleared before each run. Prints questions/second (median of ``--runs``) per answer shape and
overall, in CPU time of this process (stable on a shared machine) and in wall-clock time, plus
microseconds per ``normalize`` call on typical texts, and writes a Markdown fragment (default
``benchmarks/results/scoring.md``) unless ``--out -``.

Beside glasshouse's ``score.py`` (issue 31)::

    .venv/bin/python benchmarks/scoring_throughput.py --vs-score-py [--glasshouse DIR] [--n 2000] [--runs 5]

grades the same (question, answer) pairs with memeval's ``score_answer`` and with score.py's own
``grade_exact`` (imported from the glasshouse folder, ``$MEMEVAL_GLASSHOUSE`` or
``../shared/external/glasshouse-v0.1``; its code is run, never copied) and prints "memeval dry vs
score.py, CPU ratio, on N pairs": per pair set, ``--runs`` interleaved runs (memeval with its caches
and memo cleared, then score.py), the median of the per-run ratios. Pair sets: glasshouse core's 633
questions with the constructed answers of ``glasshouse_parity.py`` (7,573: gold, alts, IDK in 4
languages, denial, other questions' golds, stale/clash/correction variants), the same answers graded
a second time (a regrade: memeval's memo serves them), and the three shapes above (``--n`` each).
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib.util
import os
import platform
import random
import statistics
import sys
import time
from pathlib import Path

from memeval.atomic import write_text
from memeval.bench.axes import AXES
from memeval.bench.model import Question
from memeval.scoring import dry, idk, matching
from memeval.text import normal_form
from memeval.scoring.dry import score_answer

ROOT = Path(__file__).resolve().parent.parent

IDK_BY_LANG = [
    "I don't know.",
    "That was never mentioned.",
    "No lo sé.",
    "Je ne sais pas.",
    "Ich weiß nicht.",
    "Não sei.",
    "Non lo so.",
    "不知道",
    "わかりません",
    "모르겠습니다",
    "Не знаю.",
    "لا أعرف",
]
NAMES = [
    "Dr Lee",
    "Lyon",
    "oat milk",
    "metal pipe",
    "Bluebell",
    "March 13",
    "$150",
    "25%",
    "two and a half hours",
    "Hauptstraße",
    "東京",
    "Алена",
    "salad",
    "soup",
    "weekdays",
    "weekends",
    "4417",
    "Zürich",
]
FILLER = (
    "We talked about the garden, the new recipe for lentil soup, a film about a lighthouse keeper, "
    "the train times to the coast, a budget spreadsheet and the cat's vet appointment. "
)


def make_question(rng: random.Random, axis: str, i: int) -> Question:
    gold, old, a, b = rng.sample(NAMES, 4)
    kw: dict = {}
    if axis in ("UPDATE", "STALE"):
        kw["stale_answer"] = old
    if axis == "CONTRADICT":
        kw.update(clash_a=a, clash_b=b)
    if axis == "RECONCILE":
        kw.update(side_a=a, side_b=b)
    if axis == "GATHER":
        kw["gold_parts"] = (a, b)
    if axis == "CONFLICT":
        gold = f"No, it's {gold} now."
    if axis in ("ABSTAIN", "FALSE_MEMORY"):
        gold, kw["expect"], kw["evidence_turns"] = "Never stated", "no_memory", ()
    return Question(id=f"Q{i:06d}", axis=axis, question_en="?", gold_answer=gold, gold_alts=(f"{gold} ({i})",), **kw)


def make_answer(rng: random.Random, q: Question, shape: str, i: int) -> str:
    core = rng.choice(
        [
            q.gold_answer,
            q.stale_answer or "Paris",
            rng.choice(IDK_BY_LANG),
            "something else",
            " and ".join(q.gold_parts) or q.gold_answer,
        ]
    )
    if shape == "short":
        return f"{core} (#{i})"
    if shape == "sentence":
        return f"From what you told me on day {i}, it's {core}; let me know if that changed."
    memories = [f"user: {FILLER}{rng.randint(0, 10**6)}" for _ in range(6)]
    memories.insert(rng.randrange(len(memories)), f"user: by the way, {core} (noted {i})")
    return "\n".join(memories)


def clear_caches() -> None:
    matching.clear_caches()
    idk.clear_caches()
    getattr(dry, "clear_caches", lambda: None)()  # the memo of graded pairs (absent before issue 31)


def time_pairs(pairs) -> tuple[float, float]:
    """(questions per wall-clock second, questions per CPU second of this process)."""
    clear_caches()
    w0, c0 = time.perf_counter(), time.process_time()
    for q, a in pairs:
        score_answer(q, a)
    return len(pairs) / (time.perf_counter() - w0), len(pairs) / (time.process_time() - c0)


def time_normalize(texts, repeat: int = 200) -> float:
    """CPU microseconds per uncached ``normalize`` call."""
    f = normal_form._normalize  # uncached
    c0 = time.process_time()
    for _ in range(repeat):
        for t in texts:
            f(t)
    return (time.process_time() - c0) / (repeat * len(texts)) * 1e6


def median_rates(pairs, runs: int) -> tuple[float, float]:
    rates = [time_pairs(pairs) for _ in range(runs)]
    return statistics.median(r[0] for r in rates), statistics.median(r[1] for r in rates)


# ---------------------------------------------------------------------------------------------
# Beside glasshouse's score.py


def load_score_py(folder: Path):
    """glasshouse's ``score.py`` as a module, from its folder (run, never copied)."""
    spec = importlib.util.spec_from_file_location("glasshouse_score", folder / "score.py")
    if spec is None or spec.loader is None:
        raise SystemExit(f"{folder / 'score.py'}: not found")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def score_py_row(q: Question) -> dict:
    """A question as score.py reads it (the fields of a glasshouse questions file)."""
    row: dict = {"id": q.id, "axis": q.axis, "gold_answer": q.gold_answer, "gold_alts": list(q.gold_alts)}
    row["expect"] = q.expect
    for k in ("stale_answer", "clash_a", "clash_b", "side_a", "side_b"):
        if getattr(q, k):
            row[k] = getattr(q, k)
    if q.gold_parts:
        row["gold_parts"] = list(q.gold_parts)
    return row


def glasshouse_pairs(folder: Path) -> list[tuple[Question, str]]:
    """glasshouse core's questions with ``glasshouse_parity.py``'s constructed answers (7,573)."""
    import tempfile

    sys.path.insert(0, str(ROOT / "benchmarks"))
    from glasshouse_parity import constructed_answers  # noqa: E402

    from memeval.bench import load_bench, read_questions
    from memeval.bench.loaders.glasshouse import import_glasshouse

    with tempfile.TemporaryDirectory(prefix="gh-speed-") as tmp:
        import_glasshouse(folder, Path(tmp) / "bench")
        tier = load_bench(Path(tmp) / "bench").tier("core")
        qs = read_questions(Path(tmp) / "bench" / tier.questions_file)
    rng = random.Random(7)
    golds = [q.gold_answer for q in qs if q.expect != "no_memory" and q.gold_answer]
    return [(q, a) for q in qs for _, a in constructed_answers(q, rng.sample(golds, 2))]


def vs_score_py(sets: dict[str, list], score_py, runs: int) -> list[tuple[str, int, float, float, float]]:
    """Per pair set: (name, pairs, memeval µs/pair, score.py µs/pair, median ratio of interleaved runs)."""
    out = []
    for name, pairs in sets.items():
        rows = {id(q): score_py_row(q) for q, _ in pairs}
        theirs = [(rows[id(q)], a) for q, a in pairs]
        repeat = name.startswith("regrade")
        ratios, ours_t, theirs_t = [], [], []
        for _ in range(runs):
            clear_caches()
            if repeat:  # the memo holds the set once graded: the timed pass is the regrade
                for q, a in pairs:
                    score_answer(q, a)
            c0 = time.process_time()
            for q, a in pairs:
                score_answer(q, a)
            ours = time.process_time() - c0
            c0 = time.process_time()
            for row, a in theirs:
                score_py.grade_exact(row, a)
            ref = time.process_time() - c0
            ratios.append(ref / ours)
            ours_t.append(ours)
            theirs_t.append(ref)
        n = len(pairs)
        out.append(
            (
                name,
                n,
                statistics.median(ours_t) / n * 1e6,
                statistics.median(theirs_t) / n * 1e6,
                statistics.median(ratios),
            )
        )
    return out


def main_vs_score_py(args) -> int:
    from memeval.audit.difficulty import glasshouse_folder

    folder = Path(args.glasshouse) if args.glasshouse else glasshouse_folder()
    score_py = load_score_py(folder)
    gh = glasshouse_pairs(folder)
    rng = random.Random(args.seed)
    sets: dict[str, list] = {"glasshouse core, constructed answers": gh, "regrade of the same": gh}
    for shape in ("short", "sentence", "memories"):
        sets[f"generated, {shape}"] = [
            (q, make_answer(rng, q, shape, i))
            for i in range(args.n)
            for q in [make_question(rng, AXES[i % len(AXES)], i)]
        ]
    results = vs_score_py(sets, score_py, args.runs)
    first_pass = [r for r in results if not r[0].startswith("regrade")]
    total_ours = sum(r[1] * r[2] for r in first_pass)
    total_theirs = sum(r[1] * r[3] for r in first_pass)
    import memeval

    print(f"memeval from {Path(memeval.__file__).parent}; score.py from {folder}")
    print(f"memeval dry vs score.py, CPU time, {args.runs} interleaved runs, median of the per-run ratios:")
    print("| pairs | N | memeval µs/pair | score.py µs/pair | ratio |")
    print("|---|---:|---:|---:|---:|")
    for name, n, ours, theirs, ratio in results:
        print(f"| {name} | {n:,} | {ours:.1f} | {theirs:.1f} | {ratio:.1f}x |")
    n_all = sum(r[1] for r in first_pass)
    print(
        f"| all but the regrade (sum of medians) | {n_all:,} | {total_ours / n_all:.1f} | {total_theirs / n_all:.1f} | "
        f"{total_theirs / total_ours:.1f}x |"
    )
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=20000, help="pairs per answer shape")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default=str(ROOT / "benchmarks/results/scoring.md"), help="'-' to skip writing")
    ap.add_argument("--vs-score-py", action="store_true", help="grade the same pairs with glasshouse's score.py")
    ap.add_argument("--glasshouse", default=None, help="glasshouse v0.1 folder (holds score.py)")
    args = ap.parse_args(argv)
    if args.vs_score_py:
        return main_vs_score_py(args)

    rng = random.Random(args.seed)
    shapes = ("short", "sentence", "memories")
    pairs = {s: [] for s in shapes}
    for s in shapes:
        for i in range(args.n):
            q = make_question(rng, AXES[i % len(AXES)], i)
            pairs[s].append((q, make_answer(rng, q, s, i)))
    allpairs = [p for s in shapes for p in pairs[s]]
    rng.shuffle(allpairs)

    qps = {s: median_rates(pairs[s], args.runs) for s in shapes}
    qps["all"] = median_rates(allpairs, args.runs)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    typical = [
        make_answer(random.Random(k), make_question(random.Random(k), "BASIC", k), "sentence", k) for k in range(50)
    ]
    chars = statistics.mean(len(t) for t in typical)
    norm_us = statistics.median(time_normalize(typical) for _ in range(args.runs))
    long_texts = [a for _, a in pairs["memories"][:50]]
    long_chars = statistics.mean(len(t) for t in long_texts)
    norm_long_us = statistics.median(time_normalize(long_texts, repeat=20) for _ in range(args.runs))

    cmd = f".venv/bin/python benchmarks/scoring_throughput.py --n {args.n} --runs {args.runs} --seed {args.seed}"
    machine = f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
    lines = [
        "## Dry scoring throughput (`memeval.scoring.dry.score_answer`, grader dry-v1)",
        "",
        f"Command: `{cmd}`  ",
        f"Machine: {machine} (2 cores, 24 GiB); date: {dt.date.today().isoformat()}; single process, "
        f"median of {args.runs} runs, caches cleared before each run; 1-minute load average at the end "
        f"{load:.1f} (the machine is shared: CPU-time rates are the stable figure, wall-clock rates "
        f"drop when other jobs run).",
        "",
        "| answers | pairs | questions/s (CPU time) | questions/s (wall clock) |",
        "|---|---:|---:|---:|",
        f"| short (gold / old value / IDK in 11 languages / wrong) | {args.n} | {qps['short'][1]:,.0f} | {qps['short'][0]:,.0f} |",
        f"| one sentence (~80 chars) | {args.n} | {qps['sentence'][1]:,.0f} | {qps['sentence'][0]:,.0f} |",
        f"| memories joined as one text (~{long_chars:,.0f} chars) | {args.n} | {qps['memories'][1]:,.0f} | {qps['memories'][0]:,.0f} |",
        f"| all three shuffled | {3 * args.n} | {qps['all'][1]:,.0f} | {qps['all'][0]:,.0f} |",
        "",
        f"`normalize` (uncached, CPU time): {norm_us:.1f} µs per typical answer (~{chars:.0f} chars), "
        f"{norm_long_us:.0f} µs per joined-memories text (~{long_chars:,.0f} chars).",
        "",
    ]
    text = "\n".join(lines)
    print(text)
    if args.out != "-":
        write_text(args.out, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
