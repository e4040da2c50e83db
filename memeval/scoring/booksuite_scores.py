"""Scoring answer sets on the book suite and the layer x system table (``memeval compare``).

A :class:`CaseScore` per (system, case). ``status`` says what happened: ``scored``; ``missing`` (a case
with gold that the system has no answer for: left out of the means and counted); ``ungraded`` (the judge
gave no usable verdict: left out and counted, never 0). Layer means and the overall mean are over the
``scored`` cases (for keyword recall: the cases that have gold).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

from ..errors import ArgumentError
from ..bench.loaders.booksuite import LAYER_TITLES
from .keyword_recall import METRIC as KEYWORD_RECALL, PASS_THRESHOLD, keyword_recall

__all__ = [
    "CaseScore",
    "LayerRow",
    "keyword_scores",
    "keyword_scores_from_records",
    "judge_scores",
    "score_answer_sets",
    "layer_table",
    "format_table",
    "format_cases",
    "KEYWORD_RECALL",
    "JUDGE",
]

JUDGE = "judge"


@dataclass(frozen=True)
class CaseScore:
    system: str
    test_id: str
    layer: str
    metric: str
    status: str  # scored | missing | ungraded
    reward: float | None = None
    passed: bool | None = None
    reason: str | None = None
    detail: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "system": self.system,
            "test_id": self.test_id,
            "layer": self.layer,
            "metric": self.metric,
            "status": self.status,
            "reward": self.reward,
            "passed": self.passed,
            "reason": self.reason,
            **dict(self.detail),
        }


def keyword_scores(suite, answers: Mapping[str, str], system: str = "answers") -> list[CaseScore]:
    """Keyword recall of ``answers`` on every case of ``suite`` that has gold facts, in suite order."""
    out = []
    for c in suite.cases:
        facts = suite.gold.get(c.test_id)
        if not facts:
            continue
        if c.test_id not in answers:
            out.append(CaseScore(system, c.test_id, c.layer, KEYWORD_RECALL, "missing", reason="no answer"))
            continue
        r = keyword_recall(answers[c.test_id], facts)
        out.append(
            CaseScore(
                system,
                c.test_id,
                c.layer,
                KEYWORD_RECALL,
                "scored",
                r.reward,
                r.passed,
                detail={"matched": list(r.matched), "missing_facts": list(r.missing), "n_facts": r.total},
            )
        )
    return out


def keyword_scores_from_records(
    suite, records: Iterable[Mapping[str, Any]], system: str = "run", epoch: int = 0
) -> list[CaseScore] | None:
    """Keyword recall as a dry run's records already hold it (the dry scorer wrote ``score`` with rule
    ``keyword-recall``): no re-scoring. A case with gold and no record (or an error record) is
    ``missing``; a record left ungraded is ``ungraded``. None when the records hold no keyword-recall
    grades (a run in another mode, or hand-written answers), so the caller scores the answers."""
    recs = [r for r in records if r.get("epoch", 0) == epoch]
    if not any(r.get("rule") == KEYWORD_RECALL for r in recs):
        return None
    by_id = {r.get("qid"): r for r in recs}
    out = []
    for c in suite.cases:
        facts = suite.gold.get(c.test_id)
        if not facts:
            continue
        r = by_id.get(c.test_id)
        if r is None or r.get("error"):
            why = "no answer" if r is None else f"error record: {r['error']}"
            out.append(CaseScore(system, c.test_id, c.layer, KEYWORD_RECALL, "missing", reason=why))
        elif r.get("score") is None or r.get("rule") != KEYWORD_RECALL:
            out.append(
                CaseScore(
                    system,
                    c.test_id,
                    c.layer,
                    KEYWORD_RECALL,
                    "ungraded",
                    reason=r.get("ungraded_reason") or "no keyword-recall grade in the record",
                )
            )
        else:
            reward = float(r["score"])
            out.append(
                CaseScore(
                    system,
                    c.test_id,
                    c.layer,
                    KEYWORD_RECALL,
                    "scored",
                    reward,
                    reward >= PASS_THRESHOLD,
                    detail={"n_facts": len(facts), "from_run": r.get("run_id")},
                )
            )
    return out


def judge_scores(suite, answers: Mapping[str, str], judge, system: str = "answers", progress=None) -> list[CaseScore]:
    """Rubric-judge every case that has an answer (gold is not needed); ``judge`` is a ``rubric.Judge``."""
    out = []
    for c in suite.cases:
        if c.test_id not in answers:
            continue
        res = judge.grade(c, answers[c.test_id], suite.gold.get(c.test_id))
        status = "scored" if res.graded else "ungraded"
        out.append(
            CaseScore(
                system,
                c.test_id,
                c.layer,
                JUDGE,
                status,
                res.reward,
                res.success,
                res.ungraded_reason,
                detail={
                    k: v
                    for k, v in res.to_dict().items()
                    if k not in ("test_id", "reward", "success", "ungraded_reason")
                },
            )
        )
        if progress:
            progress(out[-1])
    return out


def score_answer_sets(
    suite, answer_sets: Mapping[str, Mapping[str, str]], metric: str = KEYWORD_RECALL, judge=None, progress=None
) -> list[CaseScore]:
    """Score ``{system: {test_id: answer}}`` with keyword recall or the rubric ``judge``."""
    if metric not in (KEYWORD_RECALL, JUDGE):
        raise ArgumentError(f"metric must be {KEYWORD_RECALL!r} or {JUDGE!r}, got {metric!r}")
    if metric == JUDGE and judge is None:
        raise ArgumentError("the judge metric needs a judge")
    scores: list[CaseScore] = []
    for system, answers in answer_sets.items():
        if metric == KEYWORD_RECALL:
            scores += keyword_scores(suite, answers, system)
        else:
            scores += judge_scores(suite, answers, judge, system, progress=progress)
    return scores


@dataclass(frozen=True)
class LayerRow:
    key: str  # layer id or "overall"
    title: str
    means: Mapping[str, float | None]  # system -> mean reward over scored cases
    counts: Mapping[str, int]  # system -> n scored


def _mean(xs: Sequence[float]) -> float | None:
    return sum(xs) / len(xs) if xs else None


def layer_table(scores: Iterable[CaseScore], systems: Sequence[str] | None = None) -> list[LayerRow]:
    """One row per layer present (in layer order) plus ``overall`` = mean over all scored cases."""
    scores = list(scores)
    systems = list(systems) if systems else list(dict.fromkeys(s.system for s in scores))
    layers = sorted({s.layer for s in scores})
    rows = []
    for key in [*layers, "overall"]:
        means, counts = {}, {}
        for sysname in systems:
            xs = [
                s.reward
                for s in scores
                if s.system == sysname
                and s.status == "scored"
                and s.reward is not None
                and (key == "overall" or s.layer == key)
            ]
            means[sysname], counts[sysname] = _mean(xs), len(xs)
        rows.append(LayerRow(key, "Overall" if key == "overall" else LAYER_TITLES.get(key, key), means, counts))
    return rows


def format_table(rows: Sequence[LayerRow], metric: str, scores: Iterable[CaseScore] = ()) -> str:
    """The comparison as text: a header, one line per layer and overall, then counts and exclusions."""
    systems = list(rows[0].means) if rows else []
    first = max([len("Layer"), *(len(r.title) for r in rows)])
    widths = [max(len(s), 5) for s in systems]
    head = f"Memory system comparison ({metric}, 0.000-1.000; mean over scored cases)"
    lines = [head, "  ".join(["Layer".ljust(first), *(s.rjust(w) for s, w in zip(systems, widths))])]
    lines.append("-" * len(lines[1]))
    for r in rows:
        cells = ["—" if r.means[s] is None else f"{r.means[s]:.3f}" for s in systems]
        lines.append("  ".join([r.title.ljust(first), *(c.rjust(w) for c, w in zip(cells, widths))]))
    if rows:
        total = rows[-1]
        lines.append(
            "  ".join(["n scored".ljust(first), *(str(total.counts[s]).rjust(w) for s, w in zip(systems, widths))])
        )
    scores = list(scores)
    for status in ("missing", "ungraded"):
        n = {s: sum(1 for x in scores if x.system == s and x.status == status) for s in systems}
        if any(n.values()):
            lines.append(
                "  ".join([f"n {status}".ljust(first), *(str(n[s]).rjust(w) for s, w in zip(systems, widths))])
            )
    passed = {s: [bool(x.passed) for x in scores if x.system == s and x.status == "scored"] for s in systems}
    if any(passed.values()):
        label = "pass rate" if metric == KEYWORD_RECALL else "success rate"
        lines.append(
            "  ".join(
                [
                    label.ljust(first),
                    *(("—" if not p else f"{sum(p) / len(p):.3f}").rjust(w) for p, w in zip(passed.values(), widths)),
                ]
            )
        )
    return "\n".join(lines)


def format_cases(scores: Sequence[CaseScore]) -> str:
    """A per-case table: test id, layer, reward, pass, and what is missing (or why it is unscored)."""
    tid_w = max([len("test_id"), *(len(s.test_id) for s in scores)])
    lines = [f"{'test_id'.ljust(tid_w)}  layer   reward  pass  notes"]
    for s in scores:
        reward = "—" if s.reward is None else f"{s.reward:.3f}"
        ok = "—" if s.passed is None else ("yes" if s.passed else "no")
        if s.status != "scored":
            note = f"{s.status}: {s.reason or ''}".rstrip(": ")
        elif s.metric == KEYWORD_RECALL:
            n = s.detail.get("n_facts", 0)
            miss = s.detail.get("missing_facts", [])
            note = f"{n - len(miss)}/{n} facts" + (f"; missing: {', '.join(miss)}" if miss else "")
        else:
            g = s.detail.get("grades") or {}
            note = " ".join(f"{d[:4]}={v['grade']}" for d, v in g.items())
            if (s.detail.get("hallucination") or {}).get("veto"):
                note += " VETO"
        lines.append(f"{s.test_id.ljust(tid_w)}  {s.layer:<6}  {reward:>6}  {ok:>4}  {note}")
    return "\n".join(lines)
