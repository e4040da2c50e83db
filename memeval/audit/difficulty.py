"""The audit's ``difficulty`` report: how hard a tier is for word matching, beside glasshouse v0.1.

Report only (it never fails). Per tier, on the answerable text axes (``ANSWERABLE_AXES`` without
IMAGE and the cross-language axes, ``expect: answer``, main question set):

- ``overlap``: the share of a question's content words (set of distinct words) found among the
  content words of its evidence turns, averaged over questions;
- ``gold_in_ev``: the share of those questions whose gold answer occurs verbatim (case-folded,
  whitespace collapsed) in their joined evidence turns;
- ``bm25_top10``: a retrieval-only probe over the whole main set: BM25 (k1 1.5, b 0.75, Lucene IDF,
  one document per turn) returns each question's 10 best turns, and the dry rules grade their text as
  returned memories; weighted by axis, over the graded questions (abstention questions stay ungraded,
  as for any memory-only system).

Content words follow glasshouse's BM25 baseline: lower-cased runs of ``[a-z0-9]``, longer than one
character, minus its 52 stop words -- so the figures compare like for like with ``GLASSHOUSE_CORE``,
the same measures taken on the published glasshouse v0.1 core files.

>>> content_words("Where does my cousin Vesna call home?")
['cousin', 'vesna', 'call', 'home']
>>> round(overlap("Where does Vesna live?", ["Vesna lives in Ivorydale."]), 2)
0.5
"""

from __future__ import annotations

import re
from typing import Iterable, Sequence

from ..bench.axes import ANSWERABLE_AXES
from ..bench.model import Question, Turn
from ..scoring.bounds import dry_grade, run_weight
from ..systems.baselines import top_k_positive

CHECK = "difficulty"
#: The published glasshouse v0.1 core, measured as this module measures (benchmarks/difficulty.py);
#: bm25_top10 is glasshouse's own baseline scored by its own ``score.py`` (dry, weighted).
GLASSHOUSE_CORE = {"overlap": 0.376, "gold_in_ev": 0.39, "bm25_top10": 0.346}
TEXT_AXES: tuple[str, ...] = tuple(a for a in ANSWERABLE_AXES if a not in {"IMAGE", "XLING_QUERY", "XLING_STORE"})

_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset(
    "the a an of in on at to for is was were are did do does and or that this with it they them their he "
    "his she her i my you your we our be been have has had there from what how when where which who why s t".split()
)

__all__ = [
    "CHECK",
    "GLASSHOUSE_CORE",
    "TEXT_AXES",
    "content_words",
    "overlap",
    "gold_in_evidence",
    "text_questions",
    "bm25_probe",
    "measure",
    "check_difficulty",
]


def content_words(text: str) -> list[str]:
    """Content words as glasshouse's BM25 baseline tokenises them (see the module docstring)."""
    return [w for w in _WORD.findall(text.lower()) if len(w) > 1 and w not in _STOP]


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


def bm25_probe(turns: Sequence[Turn], questions: Sequence[Question], k: int = 10) -> tuple[float, int]:
    """(weighted dry score, n graded) of BM25 top-``k`` retrieval over ``turns`` for ``questions``."""
    import bm25s  # on use: only the audit's difficulty probe needs it

    docs = [content_words(t.text) or ["\u2205"] for t in turns]
    index = bm25s.BM25(k1=1.5, b=0.75, method="lucene")
    index.index(docs, show_progress=False)
    total = weight = 0.0
    n = 0
    for q in questions:
        words = content_words(q.text_to_ask)  # as glasshouse asks: a non-English query in its language
        picked: list[int] = []
        if words:
            picked = top_k_positive(index.get_scores(words), k).tolist()
        g = dry_grade(q, [turns[i].text for i in picked])
        if g.score is None:
            continue
        w = run_weight(q)
        total += w * g.score
        weight += w
        n += 1
    return (total / weight if weight else 0.0), n


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
    bm, n_bm = bm25_probe(turns, questions)
    return {
        "overlap": round(sum(ov) / len(ov), 3) if ov else None,
        "gold_in_ev": round(gold / len(ov), 3) if ov else None,
        "n_text": len(ov),
        "bm25_top10": round(bm, 3),
        "n_bm25": n_bm,
    }


def check_difficulty(run, data) -> None:
    """Add the difficulty figures of one loaded tier (``audit._TierData``, main set) to ``run``."""
    nums = run.numbers.setdefault(CHECK, {})
    if "glasshouse_core" not in nums:
        nums["glasshouse_core"] = dict(GLASSHOUSE_CORE)
    if len(data.haystacks) != 1:  # one haystack per question (LongMemEval): not measured
        return
    h = next(iter(data.haystacks.values()))
    nums[data.tier.name] = measure(h.turns, data.questions, lambda q: h.evidence(q.evidence_turns))
