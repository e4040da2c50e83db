"""Retrieval hit (benchmark.md §4), scored separately from answering.

* Turn ids returned: a hit when they intersect the question's ``evidence_turns``.
* Text only: a hit when one returned memory contains the gold, any alternative, any gold part, either
  CONTRADICT value (their gold names the clash, which no turn says), or a CONFLICT gold's latest
  value (its gold reads "No, X now"). RECONCILE sides are conditions ("on weekdays"), too generic
  to show that the evidence came back, so they are not targets.
* Nothing returned for a question that has evidence: a miss (False), never None.
* None when the question has no evidence to retrieve (ABSTAIN, FALSE_MEMORY, ``expect ==
  "no_memory"``) or lists no evidence turns -- for every system alike, whatever it returned.

Ranked-retrieval metrics (:func:`ranking_metrics`): evidence ``recall_any@k``, ``recall_all@k`` and
``ndcg@k`` at turn and session level for k in ``KS``, with LongMemEval's definitions
(``src/evaluation/eval_utils.py``: ``evaluate_retrieval``, ``ndcg``/``dcg`` and
``evaluate_retrieval_turn2session``), reimplemented:

* ``recall_any@k``: 1 if any gold id is among the first k ranked ids; ``recall_all@k``: 1 if all are.
* ``ndcg@k``: DCG of the first k ranked items' relevances over the DCG of the corpus's relevances
  sorted best first, with LongMemEval's DCG: ``rel_1 + sum_{i>=2} rel_i / log2(i)`` (rank 2 is not
  discounted); 0 when the corpus holds no relevant item.
* session level: each turn is labelled by its session; gold = the evidence turns' sessions;
  ``k`` grows until the first ``k`` ranked turns span ``k`` distinct sessions (or past the corpus
  size), and the turn-level formulas run on the session labels with that effective k.

The ranking is what the system returned, in order (turn ids; or, for a system that returns only
text, each memory mapped to the turn whose text it is -- :func:`map_memories` -- an unmapped memory
keeps its rank as an irrelevant item), **each turn counted once**: a repeat of an id already ranked
is dropped (the first occurrence kept) before any metric, and the record counts the repeats
(:func:`ranking_repeats`). LongMemEval ranks corpus indices and so never sees a repeat; a system
returning its best turn ten times would otherwise score ndcg above 1. The corpus is the haystack the
system ingested; a gold id returned that the corpus lacks still counts in the ideal DCG, so every
metric stays in [0, 1].
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Hashable, Iterable, Mapping, Sequence

from memeval.bench.model import Question
from memeval.bench.oracle import expects_abstention
from memeval.scoring.dry import latest_value
from memeval.scoring.matching import matches_any  # normalises each memory once (memoised)
from memeval.systems.base import memory_content

__all__ = [
    "retrieval_hit",
    "retrieval_targets",
    "has_evidence",
    "KS",
    "LEVELS",
    "METRICS",
    "metric_names",
    "dcg",
    "evaluate_ranking",
    "evaluate_turn2session",
    "Corpus",
    "map_memories",
    "ranking_metrics",
    "ranking_repeats",
    "first_occurrences",
]


def has_evidence(q: Question) -> bool:
    """False for questions whose right answer is that nothing was ever said (``expects_abstention``)."""
    return not expects_abstention(q)


def retrieval_targets(q: Question) -> list[str]:
    """Texts whose presence in returned memories counts as retrieving the evidence."""
    golds = [g for g in (q.gold_answer, *q.gold_alts) if g]
    out = list(golds)
    out += [p for p in q.gold_parts if p]
    out += [s for s in (q.clash_a, q.clash_b) if s]
    if (q.axis or "").upper() == "CONFLICT":
        out += [latest_value(g) for g in golds]
    return list(dict.fromkeys(out))


def _id_key(x) -> int | str:
    try:
        return int(x)
    except (TypeError, ValueError):
        return str(x)


def retrieval_hit(q: Question, retrieved_turns: Iterable[int] | None, memories: Iterable[str] | None) -> bool | None:
    """Did the system bring back the evidence? (see the module docstring)."""
    if not has_evidence(q) or not q.evidence_turns:
        return None
    ids = [t for t in (retrieved_turns or ()) if t is not None]
    if ids:
        wanted = {_id_key(t) for t in q.evidence_turns}
        return any(_id_key(t) in wanted for t in ids)
    texts = [memory_content(m) for m in (memories or ()) if m]  # content, not date stamps
    targets = retrieval_targets(q)
    return any(matches_any(t, targets) for t in texts)  # a target found within one memory


# ----------------------------------------------------------------------------------------------
# Ranked retrieval metrics (LongMemEval's definitions)

KS: tuple[int, ...] = (1, 3, 5, 10)
LEVELS: tuple[str, ...] = ("turn", "session")
METRICS: tuple[str, ...] = ("recall_any", "recall_all", "ndcg")


def metric_names() -> list[str]:
    """Every metric key a record carries, e.g. ``turn_recall_any@1`` ... ``session_ndcg@10``."""
    return [f"{lv}_{m}@{k}" for lv in LEVELS for m in METRICS for k in KS]


def dcg(relevances: Sequence[float], k: int) -> float:
    """LongMemEval's DCG of the first ``k`` relevances: the first undiscounted, rank i>=2 over log2(i).

    >>> dcg([1, 1, 1], 3) == 1 + 1 + 1 / math.log2(3)
    True
    >>> dcg([], 5)
    0.0
    """
    rel = list(relevances)[:k]
    if not rel:
        return 0.0
    return float(rel[0]) + sum(r / math.log2(i) for i, r in enumerate(rel[1:], start=2))


def _scores(ranked: Sequence[Hashable | None], gold: list, n_relevant: int, k: int) -> tuple[float, float, float]:
    """recall_any, recall_all, ndcg at ``k``; ``n_relevant``: relevant items in the corpus (ideal DCG)."""
    top_k = ranked[:k]
    top = set(top_k)
    wanted = set(gold)
    r_any = float(any(g in top for g in gold))
    r_all = float(all(g in top for g in gold))
    # the corpus's relevances sorted best first; a relevant item ranked that the corpus lacks counts too
    hits = sum(1 for d in top_k if d is not None and d in wanted)
    ideal = _ideal_dcg(min(max(n_relevant, hits), k))
    actual = _binary_dcg(top_k, wanted)
    return r_any, r_all, (actual / ideal if ideal else 0.0)


@lru_cache(maxsize=1024)
def _ideal_dcg(m: int) -> float:
    """``dcg`` of ``m`` relevant items."""
    return dcg([1.0] * m, m)


def _binary_dcg(top_k: Sequence[Hashable | None], wanted: set) -> float:
    """``dcg`` of the relevances of ``top_k`` (1 for an item in ``wanted``), the same terms summed in the
    same order (the zero terms, which change no sum, left out).

    >>> _binary_dcg(["a", "x", "b", None], {"a", "b"}) == dcg([1, 0, 1, 0], 4)
    True
    """
    if not top_k:
        return 0.0
    first = 1.0 if top_k[0] is not None and top_k[0] in wanted else 0.0
    rest: float = 0
    for i in range(1, len(top_k)):
        d = top_k[i]
        if d is not None and d in wanted:
            rest += 1.0 / math.log2(i + 1)
    return first + rest


def _effective_k(ranked: Sequence[Hashable | None], corpus_size: int, k: int) -> int:
    """LongMemEval's turn2session k: grown until the first k ranked items span k distinct sessions, or
    past the corpus size (a ranking that runs out never gets there: straight to ``corpus_size + 1``)."""
    seen: set = set()
    for i, s in enumerate(ranked, start=1):
        if s is not None:
            seen.add(s)
        if i >= k and len(seen) >= k:
            return i
    return max(k, corpus_size + 1) if len(seen) < k else k


def evaluate_ranking(
    ranked: Sequence[Hashable | None], gold: Iterable[Hashable], corpus: Sequence[Hashable], k: int
) -> tuple[float, float, float]:
    """(recall_any, recall_all, ndcg) at ``k`` of a ranking of corpus ids (None: an unmapped item); an
    id ranked twice counts once, where it first appears.

    >>> evaluate_ranking(["a", "x", "b"], ["a", "b"], ["a", "b", "x", "y"], 2)
    (1.0, 0.0, 0.5)
    >>> evaluate_ranking(["a", "a", "a"], ["a"], ["a", "b"], 3)
    (1.0, 1.0, 1.0)
    """
    return _evaluate(first_occurrences(ranked)[0], gold, corpus, k)


def _evaluate(ranked, gold, corpus, k) -> tuple[float, float, float]:
    gold = list(dict.fromkeys(gold))
    wanted = set(gold)
    return _scores(ranked, gold, sum(1 for c in corpus if c in wanted), k)


def first_occurrences(ranked: Sequence[Hashable | None]) -> tuple[list[Hashable | None], int]:
    """The ranking with each id kept where it first appears (an unmapped ``None`` is never a repeat),
    and how many repeats were dropped.

    >>> first_occurrences([3, 3, None, 1, 3, None])
    ([3, None, 1, None], 2)
    """
    seen: set = set()
    out: list[Hashable | None] = []
    for d in ranked:
        if d is not None:
            if d in seen:
                continue
            seen.add(d)
        out.append(d)
    return out, len(ranked) - len(out)


def evaluate_turn2session(
    ranked: Sequence[Hashable | None], gold: Iterable[Hashable], corpus: Sequence[Hashable], k: int
) -> tuple[float, float, float]:
    """:func:`evaluate_ranking` on session labels (``ranked``/``corpus`` already mapped turn -> session),
    with k grown until the ranking's first k items span k distinct sessions (LongMemEval's turn2session).

    >>> r_any, r_all, ndcg = evaluate_turn2session(["s1", "s1", "s2"], ["s2"], ["s1", "s1", "s2", "s3"], 2)
    >>> (r_any, r_all, round(ndcg, 4))  # k grew to 3; s2 at rank 3: 1/log2(3)
    (1.0, 1.0, 0.6309)
    """
    return _evaluate(ranked, gold, corpus, _effective_k(ranked, len(corpus), k))


_MEMORY_PREFIX = re.compile(r"^\[[^\]\n]{0,40}\]\s*[^:\n]{0,80}:\s*")


@dataclass(frozen=True)
class Corpus:
    """The turns a system ingested (one haystack), in order: ids, their sessions, and a text look-up."""

    turn_ids: tuple
    session_of: Mapping
    by_text: Mapping[str, Hashable]
    session_sizes: Mapping | None = None  # session -> turns in the corpus (filled by ``of``)

    @classmethod
    def of(cls, turns, shown=None) -> "Corpus":
        """From turns (``shown(turn)``: any other text a system may return for it, e.g. dated memory text)."""
        turns = list(turns)
        ids: list = []
        sess: dict = {}
        for t in turns:
            key = _id_key(t.turn_id)
            ids.append(key)
            sess[key] = str(t.session_id)
        sizes: dict = {}
        for key in ids:
            sizes[sess[key]] = sizes.get(sess[key], 0) + 1
        return cls(tuple(ids), sess, _TextIndex(turns, shown), sizes)


class _TextIndex(Mapping[str, Hashable]):
    """A corpus's text look-up (each turn's text, and what ``shown`` gives for it, stripped -> the
    turn's id; the first turn wins), built on first use: a system that returns turn ids never needs it."""

    def __init__(self, turns: list, shown=None):
        self._turns, self._shown = turns, shown
        self._texts: dict[str, Hashable] | None = None

    def _built(self) -> dict[str, Hashable]:
        if self._texts is None:
            text: dict[str, Hashable] = {}
            for t in self._turns:
                key = _id_key(t.turn_id)
                for s in (t.text, self._shown(t) if self._shown else None):
                    if s and s.strip():
                        text.setdefault(s.strip(), key)
            self._texts = text
        return self._texts

    def __getitem__(self, text: str) -> Hashable:
        return self._built()[text]

    def get(self, text, default=None):
        return self._built().get(text, default)

    def __iter__(self):
        return iter(self._built())

    def __len__(self) -> int:
        return len(self._built())


def map_memories(memories: Iterable[str], corpus: Corpus) -> list[Hashable | None]:
    """Each returned memory as the turn whose text it is (exactly, or after a ``[date] speaker:``
    prefix), else None; ranks are kept."""
    out = []
    for m in memories:
        m = (m or "").strip()
        hit = corpus.by_text.get(m)
        if hit is None:
            hit = corpus.by_text.get(_MEMORY_PREFIX.sub("", m, count=1).strip())
        out.append(hit)
    return out


def ranking_metrics(
    q: Question, turn_ids: Sequence | None, memories: Sequence[str] | None, corpus: Corpus
) -> tuple[dict[str, float] | None, str | None]:
    """(metrics, source): every ``metric_names()`` value for the system's ranking, and whether it came
    from returned ``turn_ids`` or from ``text``; (None, None) for a question without evidence turns."""
    if not has_evidence(q) or not q.evidence_turns:
        return None, None
    ranked, source, _ = _ranking(turn_ids, memories, corpus)
    gold = list(dict.fromkeys(_id_key(t) for t in q.evidence_turns))
    if not ranked:  # nothing ranked: every metric is 0 (recall_all of an empty gold 1): computed once
        empty_sess = not any(t in corpus.session_of for t in gold) and not q.evidence_sessions
        cached = _EMPTY_RANKING.get(empty_sess)
        if cached is None:
            cached = _EMPTY_RANKING[empty_sess] = _metrics([], gold, q, corpus)
        return dict(cached), source
    return _metrics(ranked, gold, q, corpus), source


_EMPTY_RANKING: dict[bool, dict[str, float]] = {}


def _metrics(ranked: list, gold: list, q: Question, corpus: Corpus) -> dict[str, float]:
    n_turns = sum(1 for g in gold if g in corpus.session_of)
    out: dict[str, float] = {}
    for k, names in zip(KS, _NAMES["turn"]):
        for name, v in zip(names, _scores(ranked, gold, n_turns, k)):
            out[name] = v
    sess_ranked = [None if t is None else corpus.session_of.get(t) for t in ranked]
    sess_gold = list(dict.fromkeys(corpus.session_of[t] for t in gold if t in corpus.session_of))
    if not sess_gold:
        sess_gold = list(dict.fromkeys(str(s) for s in q.evidence_sessions))
    sizes = corpus.session_sizes or {}
    n_sess = sum(sizes.get(s, 0) for s in sess_gold)  # every turn of a gold session is relevant
    for k, names in zip(KS, _NAMES["session"]):
        eff = _effective_k(sess_ranked, len(corpus.turn_ids), k)
        for name, v in zip(names, _scores(sess_ranked, sess_gold, n_sess, eff)):
            out[name] = v
    return {k: out[k] for k in _ALL_NAMES}


def _ranking(turn_ids: Sequence | None, memories: Sequence[str] | None, corpus: Corpus) -> tuple[list, str, int]:
    """The system's ranking as corpus ids, each once (first occurrence), how it was read, and the repeats dropped."""
    raw: list[Hashable | None]
    if turn_ids:
        raw, source = [None if t is None else _id_key(t) for t in turn_ids], "turn_ids"
    else:
        raw, source = map_memories([m for m in (memories or ()) if m], corpus), "text"
    ranked, repeats = first_occurrences(raw)
    return ranked, source, repeats


def ranking_repeats(turn_ids: Sequence | None, memories: Sequence[str] | None, corpus: Corpus) -> int:
    """How many entries of the system's ranking repeat a turn ranked before them (dropped from the metrics).

    >>> ranking_repeats([5, 5, 2, 5], None, Corpus((), {}, {}))
    2
    """
    return _ranking(turn_ids, memories, corpus)[2]


#: per level, per k: the metric names in ``METRICS`` order; and every name in record order
_NAMES = {lv: [[f"{lv}_{m}@{k}" for m in METRICS] for k in KS] for lv in LEVELS}
_ALL_NAMES = tuple(metric_names())
