"""The audit's ``difficulty`` report: how hard a tier is for word matching, beside glasshouse v0.1.

A report, never a pass or a failure (its status is ``report``). Per tier, on the answerable text axes
(``ANSWERABLE_AXES`` without IMAGE and the cross-language axes, ``expect: answer``, main question set):

- ``overlap``: the share of a question's content words (set of distinct words) found among the
  content words of its evidence turns, averaged over questions;
- ``gold_in_ev``: the share of those questions whose gold answer occurs verbatim (case-folded,
  whitespace collapsed) in their joined evidence turns;
- ``bm25_top10``: a retrieval-only probe over the whole main set: memeval's ``bm25`` system (the same
  tokeniser and index, k 10, one document per turn) returns each question's 10 best turns, and the dry
  rules grade them as returned memories; weighted by axis, over the graded questions (abstention
  questions stay ungraded, as for any memory-only system);
- ``bm25_ev_top10``: the share of questions with evidence turns that get at least one of them among
  those 10.

Content words are the ``bm25`` system's tokens (:func:`memeval.text.tokens.bm25_tokens`). The same
measures are taken on glasshouse v0.1's core files when they are found (``MEMEVAL_GLASSHOUSE``, else
``../shared/external/glasshouse-v0.1`` beside the checkout) and shown as ``glasshouse_core``, measured
here, never quoted: otherwise it says "not available". (glasshouse publishes its own BM25 baseline's
score, 34.6 weighted by its ``score.py``; that is another retriever under other rules, and
``benchmarks/glasshouse_parity.py`` sets it beside memeval's.)

>>> content_words("Where does my cousin Vesna call home?")
['cousin', 'vesna', 'call', 'home']
>>> round(overlap("Where does Vesna live?", ["Vesna lives in Ivorydale."]), 2)
0.5
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Iterable, Sequence

from ..bench.axes import ANSWERABLE_AXES
from ..bench.io import read_questions, read_turns  # a glasshouse core file reads as turns as it is
from ..bench.model import Question, Session, Turn
from ..scoring.bounds import dry_grade, run_weight
from ..systems.baselines import BM25
from ..text.tokens import bm25_tokens

CHECK = "difficulty"
#: where glasshouse v0.1's core files are looked for (the environment variable first)
GLASSHOUSE_ENV = "MEMEVAL_GLASSHOUSE"
GLASSHOUSE_CORE_FILES = ("glasshouse_v0.1_core.jsonl", "questions_core.jsonl")
TEXT_AXES: tuple[str, ...] = tuple(a for a in ANSWERABLE_AXES if a not in {"IMAGE", "XLING_QUERY", "XLING_STORE"})

__all__ = [
    "CHECK",
    "GLASSHOUSE_ENV",
    "TEXT_AXES",
    "content_words",
    "overlap",
    "gold_in_evidence",
    "text_questions",
    "bm25_probe",
    "measure",
    "glasshouse_folder",
    "glasshouse_core",
    "check_difficulty",
]


def content_words(text: str) -> list[str]:
    """Content words: the tokens memeval's BM25 indexes (see the module docstring)."""
    return bm25_tokens(text)


def overlap(question: str, evidence: Iterable[str]) -> float:
    """Share of the question's distinct content words found in the evidence texts (0 when it has none)."""
    q = set(content_words(question))
    if not q:
        return 0.0
    ev: set[str] = set()
    for t in evidence:
        ev.update(content_words(t))
    return len(q & ev) / len(q)


def _fold(s: str) -> str:
    return " ".join(s.lower().split())


def gold_in_evidence(gold: str, evidence: Iterable[str]) -> bool:
    """Whether ``gold`` occurs verbatim (case-folded, whitespace collapsed) in the joined evidence."""
    g = _fold(gold)
    return bool(g) and g in _fold(" ".join(evidence))


def text_questions(questions: Iterable[Question]) -> list[Question]:
    """The questions the overlap and gold figures are taken on: answerable text axes, ``expect: answer``."""
    return [q for q in questions if q.axis in TEXT_AXES and q.expect == "answer" and q.evidence_turns]


def bm25_probe(turns: Sequence[Turn], questions: Sequence[Question], k: int = 10) -> tuple[float, int, float | None]:
    """(weighted dry score, n graded, evidence-in-top-``k`` share or None) of the ``bm25`` system's
    top-``k`` retrieval over ``turns`` for ``questions``."""
    system = BM25(k=k)
    system.ingest(Session("all", "", tuple(turns)))
    total = weight = 0.0
    n = hit = with_ev = 0
    for q in questions:
        recall = system.query(q.text_to_ask, q.asked_at)  # as glasshouse asks: a non-English query in its language
        if q.evidence_turns:
            with_ev += 1
            hit += bool(set(q.evidence_turns) & set(recall.turn_ids or ()))
        g = dry_grade(q, list(recall.memories))
        if g.score is None:
            continue
        w = run_weight(q)
        total += w * g.score
        weight += w
        n += 1
    return (total / weight if weight else 0.0), n, (hit / with_ev if with_ev else None)


def measure(turns: Sequence[Turn], questions: Sequence[Question], evidence) -> dict:
    """The three figures for one haystack: ``evidence(q)`` gives a question's evidence turns (or None)."""
    ov: list[float] = []
    gold = 0
    for q in text_questions(questions):
        ev = evidence(q)
        if not ev:
            continue
        texts = [t.text for t in ev]
        ov.append(overlap(q.question_en, texts))
        gold += gold_in_evidence(q.gold_answer, texts)
    bm, n_bm, ev_top = bm25_probe(turns, questions)
    return {
        "overlap": round(sum(ov) / len(ov), 3) if ov else None,
        "gold_in_ev": round(gold / len(ov), 3) if ov else None,
        "n_text": len(ov),
        "bm25_top10": round(bm, 3),
        "n_bm25": n_bm,
        "bm25_ev_top10": round(ev_top, 3) if ev_top is not None else None,
    }


def glasshouse_folder() -> Path:
    """Where glasshouse v0.1's core files are looked for: ``$MEMEVAL_GLASSHOUSE``, else
    ``../shared/external/glasshouse-v0.1`` beside the checkout."""
    env = os.environ.get(GLASSHOUSE_ENV)
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[3] / "shared" / "external" / "glasshouse-v0.1"


def glasshouse_core(folder: Path | None = None) -> dict | str:
    """The difficulty figures measured on glasshouse v0.1's core files in ``folder`` (default
    :func:`glasshouse_folder`), or a "not available" sentence naming where they were looked for."""
    folder = Path(folder) if folder is not None else glasshouse_folder()
    paths = [folder / f for f in GLASSHOUSE_CORE_FILES]
    if not all(p.is_file() for p in paths):
        return f"not available (no glasshouse v0.1 core files in {folder}; set {GLASSHOUSE_ENV})"
    stats = tuple((p.stat().st_size, p.stat().st_mtime_ns) for p in paths)
    return dict(_glasshouse_core(str(folder.resolve()), stats))


@functools.lru_cache(maxsize=4)
def _glasshouse_core(folder: str, _stats: tuple) -> dict:
    turns = read_turns(Path(folder) / GLASSHOUSE_CORE_FILES[0])
    pos = {t.turn_id: t for t in turns}
    questions = read_questions(Path(folder) / GLASSHOUSE_CORE_FILES[1])
    m = measure(turns, questions, lambda q: [pos[i] for i in q.evidence_turns if i in pos] or None)
    return {**m, "measured_on": folder}


def check_difficulty(run, data) -> None:
    """Add the difficulty figures of one loaded tier (``audit._TierData``, main set) to ``run``."""
    nums = run.numbers.setdefault(CHECK, {})
    if "glasshouse_core" not in nums:
        nums["glasshouse_core"] = glasshouse_core()
    if len(data.haystacks) != 1:  # a haystack per conversation or question (LoCoMo, LongMemEval)
        nums[data.tier.name] = f"not measured: {len(data.haystacks)} haystacks (the probe reads one)"
        return
    h = next(iter(data.haystacks.values()))
    nums[data.tier.name] = measure(h.turns, data.questions, lambda q: h.evidence(q.evidence_turns))
