"""memeval's ``bm25:k=10`` on glasshouse v0.1's core tier, dry, beside glasshouse's own reference run
and beside glasshouse's ``score.py`` run (as a program, from the shared folder) on memeval's
retrieved text; and the four-way table: two retrievers by two rule sets, with each retriever's
evidence-in-top-10.

    .venv/bin/python benchmarks/glasshouse_parity.py [--glasshouse DIR (default $MEMEVAL_GLASSHOUSE, else ../shared/external/glasshouse-v0.1)]
                                                     [--out benchmarks/results/glasshouse_parity.md]

Three columns per axis (accuracy %, graded questions only):

1. glasshouse's reference run: its own ``bm25_baseline.py --tier core --k 10`` scored by
   ``score.py --mode dry --tier core`` (the figures its SOURCE.md gives; not recomputed here);
2. memeval: ``memeval run bm25:k=10 --mode dry`` on the imported core tier (memeval's BM25 and
   memeval's dry rules);
3. score.py on memeval's retrieval: the same retrieved turns written as a glasshouse run file
   (``answer`` = the retrieved turn texts joined with spaces, ``answer_generated: false``, as
   glasshouse's baseline writes it) and scored by glasshouse's ``score.py --mode dry``.

(2) vs (3) isolates the rules (same retrieved text); (1) vs (3) isolates the retriever (same rules).

The four-way table crosses the retriever (glasshouse's tokenisation -- ASCII ``[a-z0-9]+`` runs longer
than one character less its 52 stop words, as its ``bm25_baseline.py`` tokenises, on memeval's BM25
index -- or memeval's ``bm25`` system) with the rules (``score.py`` or memeval's dry rules), and gives
each retriever's evidence-in-top-10: the share of questions with evidence turns that get at least one
of them among the 10 returned. glasshouse's own run file is not shipped, so its reference run stands
beside them as its SOURCE.md gives it (score.py only).
It also lists, per axis and memeval rule, the questions where the two rule sets grade the same
retrieved text differently. score.py's code is run, never copied.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from memeval.audit.difficulty import glasshouse_folder  # noqa: E402
from memeval.bench import load_bench, read_questions, read_turns  # noqa: E402
from memeval.bench.axes import AXIS_WEIGHTS  # noqa: E402
from memeval.bench.loaders.glasshouse import import_glasshouse  # noqa: E402
from memeval.run.records import read_records  # noqa: E402
from memeval.run.runner import run_system  # noqa: E402
from memeval.scoring.bounds import dry_grade  # noqa: E402
from memeval.scoring.dry import score_answer, ungraded_without_answer  # noqa: E402
from memeval.systems.baselines import top_k_positive  # noqa: E402
from memeval.systems.bm25_index import TokenCache, build_index  # noqa: E402

DEFAULT_GH = glasshouse_folder()  # $MEMEVAL_GLASSHOUSE, else ../shared/external/glasshouse-v0.1
#: glasshouse's reference run (SOURCE.md of the shared folder): bm25_baseline.py --tier core --k 10,
#: score.py --mode dry --tier core; 605 graded questions (ABSTAIN not graded for a retrieval-only run).
REFERENCE = {
    "weighted": 34.6,
    "plain": 41.0,
    "n": 605,
    "axes": {
        "CONFLICT": 37.5,
        "CONTRADICT": 85.7,
        "IMPLICIT": 8.7,
        "MULTI": 13.6,
        "STALE": 19.4,
        "TEMPORAL": 31.1,
        "UPDATE": 58.3,
        "BASIC": 49.5,
    },
}
#: glasshouse v0.1 ``bm25_baseline.py``'s stop words (a fact of its tokenisation, for the four-way table)
GLASSHOUSE_STOP = frozenset(
    "the a an of in on at to for is was were are did do does and or that this with it they them their he "
    "his she her i my you your we our be been have has had there from what how when where which who why s t".split()
)
_GH_WORD = re.compile(r"[a-z0-9]+")


def glasshouse_tokens(text: str) -> list[str]:
    """Tokens as glasshouse's BM25 baseline makes them (lower-cased ASCII runs, > 1 char, less stop words)."""
    return [w for w in _GH_WORD.findall(text.lower()) if len(w) > 1 and w not in GLASSHOUSE_STOP]


def retrieve(turns, questions, tokenize, k: int = 10) -> dict[str, list[int]]:
    """{qid: turn ids} of memeval's BM25 index (bm25s lucene, k1 1.5, b 0.75) under ``tokenize``."""
    cache = TokenCache(tokenize)
    index = build_index(cache, [cache.add(t.text) for t in turns])
    out = {}
    for q in questions:
        words = cache.query_tokens(q.text_to_ask)
        out[q.id] = [turns[int(i)].turn_id for i in top_k_positive(index.get_scores(words), k)] if words else []
    return out


def evidence_in_top(picks: dict[str, list[int]], qs: dict) -> tuple[float, int]:
    """(share, n) of questions with evidence turns having at least one among their picks."""
    with_ev = [qid for qid, q in qs.items() if q.evidence_turns]
    hit = sum(bool(set(qs[qid].evidence_turns) & set(picks.get(qid) or ())) for qid in with_ev)
    return 100 * hit / len(with_ev), len(with_ev)


def write_run_file(path: Path, picks: dict[str, list[int]], text_of: dict[int, str]) -> None:
    """Retrieved turns as a glasshouse run file (the format its bm25_baseline.py writes)."""
    with open(path, "w", encoding="utf-8") as fh:
        for qid, ids in picks.items():
            texts = [text_of[i] for i in ids]
            answer = " ".join(texts)
            row = {
                "id": qid,
                "answer": answer,
                "answer_generated": False,
                "chars_returned": len(answer),
                "memories_returned": texts,
                "retrieved_turns": ids,
            }
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")


def score_py(gh: Path, runfile: Path, tmp: Path) -> dict[str, dict]:
    """glasshouse's score.py (as a program, dry, core) on a run file: {qid: its row}."""
    rows_path = runfile.with_suffix(".rows.jsonl")
    cmd = [sys.executable, str(gh / "score.py"), str(runfile), "--questions", str(gh / "questions_core.jsonl")]
    cmd += ["--mode", "dry", "--tier", "core", "--out", str(rows_path)]
    proc = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True, encoding="utf-8")
    if proc.returncode != 0:
        raise SystemExit(f"score.py failed on {runfile.name}:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    return {x["id"]: x for x in (json.loads(line) for line in open(rows_path, encoding="utf-8"))}


def memeval_dry(picks: dict[str, list[int]], qs: dict, text_of: dict[int, str]) -> dict:
    """{qid: (axis, score or None)}: memeval's dry rules on the picked turns as returned memories."""
    return {qid: (qs[qid].axis, dry_grade(qs[qid], [text_of[i] for i in ids]).score) for qid, ids in picks.items()}


AXIS_ORDER = ["BASIC", "TEMPORAL", "UPDATE", "MULTI", "IMPLICIT", "CONFLICT", "STALE", "CONTRADICT", "ABSTAIN"]


def summarise(scores: dict[str, tuple[str, float | None]]) -> dict:
    """{qid: (axis, score or None)} → per-axis accuracy %, n, ungraded; weighted and plain %."""
    by: dict[str, list[float]] = defaultdict(list)
    ungraded: Counter = Counter()
    for axis, s in scores.values():
        if s is None:
            ungraded[axis] += 1
        else:
            by[axis].append(s)
    num = den = tot = n = 0.0
    for axis, v in by.items():
        w = AXIS_WEIGHTS[axis]
        num += w * sum(v)
        den += w * len(v)
        tot += sum(v)
        n += len(v)
    return {
        "axes": {a: 100 * sum(v) / len(v) for a, v in by.items() if v},
        "n_axis": {a: len(v) for a, v in by.items()},
        "ungraded": dict(ungraded),
        "weighted": 100 * num / den if den else float("nan"),
        "plain": 100 * tot / n if n else float("nan"),
        "n": int(n),
    }


IDK_ANSWERS = [
    "I don't know.",
    "That was never mentioned in our conversations.",
    "I have no record of that.",
    "No lo sé.",
    "Je ne sais pas.",
    "わかりません。",
]


_MONTH_DAY = re.compile(
    r"\b(January|February|March|April|May|June|July|August|September|October|November|December) (\d{1,2})\b"
)


def _ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def constructed_answers(q, others: list[str]) -> list[tuple[str, str]]:
    """(kind, answer) pairs: right, wrong, hedged and abstaining answers to one question."""
    out = [("gold", q.gold_answer), ("gold in a sentence", f"From what you told me, {q.gold_answer}.")]
    if _MONTH_DAY.search(q.gold_answer):  # "April 12" written day first: "the 12th of April", "12 April"
        out += [
            (
                "date, day first (ordinal)",
                _MONTH_DAY.sub(lambda m: f"the {_ordinal(int(m[2]))} of {m[1]}", q.gold_answer),
            ),
            ("date, day first", _MONTH_DAY.sub(lambda m: f"{m[2]} {m[1]}", q.gold_answer)),
        ]
    out += [("alt", a) for a in q.gold_alts[:3]]
    out += [("idk", a) for a in IDK_ANSWERS]
    out += [
        ("denial", "That never happened; you never said that."),
        ("other gold", others[0]),
        ("other gold", others[1]),
    ]
    if q.stale_answer:
        out += [("stale value", q.stale_answer), ("old then new", f"It was {q.stale_answer}, now {q.gold_answer}")]
    if q.clash_a and q.clash_b:
        out += [
            ("both clash values", f"{q.clash_a} and later {q.clash_b}"),
            ("one clash value", q.clash_b),
            ("negated conflict", f"There is no conflict here: {q.clash_a}."),
        ]
    if q.axis == "CONFLICT":
        latest = q.gold_alts[0] if q.gold_alts else q.gold_answer
        out += [("nope + value", f"Nope, {latest}."), ("value + instead", f"{latest} instead."), ("value only", latest)]
    return [(k, a) for k, a in out if a]


def rules_agreement(gh: Path, qs: dict, tmp: Path) -> tuple[int, int, Counter, dict]:
    """Grade constructed answers with score.py (as a program) and with memeval's dry rules."""
    import random

    rng = random.Random(7)
    golds = [q.gold_answer for q in qs.values() if q.expect != "no_memory" and q.gold_answer]
    items = []
    for q in qs.values():
        for kind, ans in constructed_answers(q, rng.sample(golds, 2)):
            items.append((q, kind, ans))
    runfile = tmp / "constructed_answers.jsonl"
    with open(runfile, "w", encoding="utf-8") as fh:
        for q, _, ans in items:
            fh.write(
                json.dumps(
                    {
                        "id": q.id,
                        "answer": ans,
                        "answer_generated": True,
                        "chars_returned": len(ans),
                        "memories_returned": [],
                    },
                    ensure_ascii=False,
                )
                + "\n"
            )
    rows_path = tmp / "constructed_rows.jsonl"
    cmd = [
        sys.executable,
        str(gh / "score.py"),
        str(runfile),
        "--questions",
        str(gh / "questions_core.jsonl"),
        "--mode",
        "dry",
        "--tier",
        "core",
        "--out",
        str(rows_path),
    ]
    subprocess.run(cmd, cwd=tmp, capture_output=True, text=True, encoding="utf-8", check=True)
    theirs = [json.loads(line)["score"] for line in open(rows_path, encoding="utf-8")]
    assert len(theirs) == len(items)
    agree, diffs, examples = 0, Counter(), defaultdict(list)
    for (q, kind, ans), t in zip(items, theirs):
        d = score_answer(q, ans)
        if d.score == t:
            agree += 1
        else:
            key = (q.axis, kind, t, d.score)
            diffs[key] += 1
            if len(examples[key]) < 2:
                examples[key].append(f"{q.id} {ans[:50]!r}")
    return agree, len(items), diffs, examples


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--glasshouse", type=Path, default=DEFAULT_GH)
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "glasshouse_parity.md")
    a = ap.parse_args()
    gh = a.glasshouse.resolve()
    tmp = Path(tempfile.mkdtemp(prefix="gh-parity-"))
    t0 = time.perf_counter()
    import_glasshouse(gh, tmp / "bench")
    bench = load_bench(tmp / "bench")
    tier = bench.tier("core")
    run_dir = run_system(tmp / "bench", "bm25:k=10", tiers=["core"], out=tmp / "run", progress=False)
    t_run = time.perf_counter() - t0
    recs = {r["qid"]: r for r in read_records(run_dir)}
    qs = {q.id: q for q in read_questions(tmp / "bench" / tier.questions_file)}
    text_of = {t.turn_id: t.text for t in read_turns(tmp / "bench" / tier.turns_file)}
    memeval = summarise({qid: (r["axis"], r["score"]) for qid, r in recs.items()})

    # memeval's retrieval as a glasshouse run file, scored by score.py
    ours = {qid: list(r["retrieved_turns"] or []) for qid, r in recs.items()}
    write_run_file(tmp / "run_memeval_bm25_core_k10.jsonl", ours, text_of)
    gh_rows = score_py(gh, tmp / "run_memeval_bm25_core_k10.jsonl", tmp)
    scorepy = summarise({qid: (x["axis"], x["score"]) for qid, x in gh_rows.items()})
    ours_dry = memeval_dry(ours, qs, text_of)
    # the run's own grades and dry_grade on the same turns as plain texts should agree (said if not)
    off = sum(ours_dry[qid] != (r["axis"], r["score"]) for qid, r in recs.items())

    # the four-way table: glasshouse's tokenisation on memeval's index, under both rule sets
    turns = read_turns(tmp / "bench" / tier.turns_file)
    theirs = retrieve(turns, list(qs.values()), glasshouse_tokens)
    write_run_file(tmp / "run_ghtok_bm25_core_k10.jsonl", theirs, text_of)
    theirs_scorepy = summarise(
        {qid: (x["axis"], x["score"]) for qid, x in score_py(gh, tmp / "run_ghtok_bm25_core_k10.jsonl", tmp).items()}
    )
    theirs_dry = summarise(memeval_dry(theirs, qs, text_of))
    ev_ours, n_ev = evidence_in_top(ours, qs)
    ev_theirs, _ = evidence_in_top(theirs, qs)
    shared = [len(set(ours[qid]) & set(theirs[qid])) for qid in qs]

    # same retrieved text, both rule sets: where do they disagree?
    diffs: Counter = Counter()
    examples: dict[tuple, list[str]] = defaultdict(list)
    for qid, x in gh_rows.items():
        q = qs[qid]
        texts = [text_of[i] for i in (recs[qid]["retrieved_turns"] or [])]
        if ungraded_without_answer(q):
            mine, rule = None, "ungraded"
        else:
            d = score_answer(q, texts)
            mine, rule = d.score, d.rule
        if mine != x["score"]:
            key = (q.axis, rule, x["score"], mine)
            diffs[key] += 1
            if len(examples[key]) < 4:
                examples[key].append(qid)

    lines = [
        "# glasshouse v0.1 core: memeval bm25:k=10 (dry) beside glasshouse's reference run and score.py",
        "",
        f"Command: `.venv/bin/python benchmarks/glasshouse_parity.py` (bench import + run {t_run:.1f} s; "
        f"score.py: `{' '.join(['python', 'score.py', 'RUN', '--questions', 'questions_core.jsonl', '--mode', 'dry', '--tier', 'core'])}`)",
        "",
        f"memeval's retriever (`bm25:k=10`) finds an evidence turn in its top 10 for **{ev_ours:.1f}%** of the "
        f"{n_ev} questions with evidence turns.",
        "",
        "Four-way table: weighted accuracy % (n graded), plain mean %, evidence in top 10 %.",
        "",
        "| retriever | score.py (glasshouse's rules) | memeval dry rules | evidence in top 10 |",
        "|---|---|---|---|",
        f"| glasshouse's own `bm25_baseline.py` (reference run, SOURCE.md) | {REFERENCE['weighted']:.1f} "
        f"(n {REFERENCE['n']}), plain {REFERENCE['plain']:.1f} | not available (run file not shipped) | "
        "not available |",
        f"| glasshouse's tokenisation, memeval's BM25 index | {theirs_scorepy['weighted']:.1f} "
        f"(n {theirs_scorepy['n']}), plain {theirs_scorepy['plain']:.1f} | {theirs_dry['weighted']:.1f} "
        f"(n {theirs_dry['n']}), plain {theirs_dry['plain']:.1f} | {ev_theirs:.1f} |",
        f"| memeval `bm25:k=10` (`bm25_tokens`) | {scorepy['weighted']:.1f} (n {scorepy['n']}), plain "
        f"{scorepy['plain']:.1f} | {memeval['weighted']:.1f} (n {memeval['n']}), plain {memeval['plain']:.1f} "
        f"| {ev_ours:.1f} |",
        "",
        (
            "glasshouse's tokenisation on memeval's index under score.py reproduces the reference run "
            f"({theirs_scorepy['weighted']:.1f} / {theirs_scorepy['plain']:.1f}): the re-implementation stands in "
            "for glasshouse's retriever. "
            if (round(theirs_scorepy["weighted"], 1), round(theirs_scorepy["plain"], 1))
            == (REFERENCE["weighted"], REFERENCE["plain"])
            else f"glasshouse's tokenisation on memeval's index does NOT reproduce the reference run under score.py "
            f"({theirs_scorepy['weighted']:.1f} / {theirs_scorepy['plain']:.1f} against "
            f"{REFERENCE['weighted']} / {REFERENCE['plain']}). "
        )
        + f"The two retrievers share {sum(shared) / len(shared):.1f} of their (up to) 10 turns per question on "
        f"average; identical top 10 on {sum(ours[q] == theirs[q] for q in qs)} of {len(qs)} questions. "
        f"memeval dry on memeval's retrieval re-graded from the turn texts differs from the run's records on "
        f"{off} questions.",
        "",
        "Accuracy % per axis over graded questions (n graded in brackets).",
        "",
        "| axis | weight | glasshouse reference run (its BM25, score.py) | memeval bm25:k=10, memeval dry | "
        "score.py on memeval's retrieved text |",
        "|---|---|---|---|---|",
    ]

    def cell(summary, axis):
        if axis not in summary["axes"]:
            u = summary["ungraded"].get(axis, 0)
            return f"ungraded ({u})" if u else "—"
        return f"{summary['axes'][axis]:.1f} ({summary['n_axis'][axis]})"

    for axis in AXIS_ORDER:
        ref = REFERENCE["axes"].get(axis)
        ref_cell = f"{ref:.1f}" if ref is not None else ("ungraded" if axis == "ABSTAIN" else "—")
        lines.append(f"| {axis} | {AXIS_WEIGHTS[axis]} | {ref_cell} | {cell(memeval, axis)} | {cell(scorepy, axis)} |")
    lines.append(
        f"| **weighted** | | **{REFERENCE['weighted']:.1f}** (n {REFERENCE['n']}) | "
        f"**{memeval['weighted']:.1f}** (n {memeval['n']}) | **{scorepy['weighted']:.1f}** (n {scorepy['n']}) |"
    )
    lines.append(f"| plain | | {REFERENCE['plain']:.1f} | {memeval['plain']:.1f} | {scorepy['plain']:.1f} |")
    lines += [
        "",
        f"Same retrieved text, the two rule sets disagree on {sum(diffs.values())} of {len(gh_rows)} "
        "questions (axis, memeval rule: score.py score → memeval score, count, examples):",
        "",
    ]
    for (axis, rule, theirs, mine), n in sorted(diffs.items(), key=lambda kv: -kv[1]):
        lines.append(f"- {axis}, `{rule}`: {theirs} → {mine}: {n} ({', '.join(examples[(axis, rule, theirs, mine)])})")
    agree, n_items, cdiffs, cex = rules_agreement(gh, qs, tmp)
    lines += [
        "",
        f"Constructed answers (gold, alts, the gold in a sentence, IDK in 4 languages, a denial, two "
        f"other questions' golds, stale/clash/correction variants where the row has them): {n_items} answers "
        f"to the 633 questions; the two rule sets agree on {agree} ({100 * agree / n_items:.1f}%). "
        "Disagreements (axis, kind of answer: score.py → memeval, count, examples):",
        "",
    ]
    for (axis, kind, theirs, mine), n in sorted(cdiffs.items(), key=lambda kv: -kv[1]):
        lines.append(f"- {axis}, {kind}: {theirs} → {mine}: {n} ({'; '.join(cex[(axis, kind, theirs, mine)])})")
    text = "\n".join(lines) + "\n"
    print(text)
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
