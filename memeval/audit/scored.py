"""The audit's scored checks on one question set: ``idk-floor`` (answering "I don't know" to every
question scores at most ``IDK_FLOOR_MAX`` weighted, and the scorer recognises each phrase used) and
``evidence-ceiling`` (answering each answerable question with its evidence turns' text scores at least
``CEILING_MIN``), both graded by the dry rules (``memeval.scoring``). The bars apply to the main set;
a named set's figures are reported under ``<tier>/<set>``."""

from __future__ import annotations

from collections import defaultdict

from ..bench.axes import ANSWERABLE_AXES
from ..bench.model import Question, Turn
from ..bench.oracle import IDK_ANSWERS, abstention_answer
from ..scoring import dry, idk
from ..scoring.bounds import run_weight
from .haystack import turn_text
from .report import CEILING_MIN, IDK_FLOOR_MAX
from .structural import Structure

__all__ = ["Bars"]


class Bars:
    """The IDK floor and evidence ceiling of one question set, fed question by question."""

    def __init__(self, run, tier: str, qset: str):
        self.run, self.tier, self.qset = run, tier, qset
        self.label = tier if qset == "main" else f"{tier}/{qset}"
        self.floor_num = self.floor_den = self.floor_n = 0.0
        self.ceil_num = self.ceil_den = 0.0
        self.ceil_scores: list[float] = []
        self.ceil_low: list[tuple[float, str]] = []
        self.ceil_axes: dict[str, list[float]] = {}
        self.idk_ok: dict[str, bool] = {}
        self.idk_by_axis: defaultdict[str, float] = defaultdict(float)
        self.n = 0

    def add(self, q: Question, ev: list[Turn] | None) -> None:
        run, name = self.run, self.tier
        self.n += 1
        # idk-floor
        lang = q.lang if q.lang in IDK_ANSWERS else "en"
        phrase = abstention_answer(q)  # the oracle's abstention (a bench's official words where it has them)
        if phrase not in self.idk_ok:
            self.idk_ok[phrase] = bool(idk.is_idk(phrase))  # looked up on use: tests may stand in for it
            if not self.idk_ok[phrase]:
                run.fail("idk-floor", name, None, f"the scorer does not recognise {phrase!r} ({lang}) as IDK")
        w = run_weight(q)
        s = float(dry.score_answer(q, phrase).score)
        self.idk_by_axis[q.axis] += w * s
        self.floor_num += w * s
        self.floor_den += w
        self.floor_n += s

        # evidence-ceiling
        if q.scored_as in ANSWERABLE_AXES:  # not an abstention (Question.scored_as decides)
            if not ev:  # missing or unresolved evidence: a failure of evidence-resolves
                run.add("evidence-ceiling", "no_evidence_excluded")
                return
            if Structure.image_only(q, ev):
                run.add("evidence-ceiling", "image_only_excluded")
                return
            # as returned memories (a list): content only, an IDK phrase quoted in a turn is not IDK
            s = float(dry.score_answer(q, [turn_text(t) for t in ev]).score)
            self.ceil_num += w * s
            self.ceil_den += w
            self.ceil_scores.append(s)
            self.ceil_axes.setdefault(q.axis, []).append(s)
            if s < 1:
                self.ceil_low.append((s, q.id))

    def finish(self) -> None:
        run, name, nq, label = self.run, self.tier, self.n, self.label
        if nq:
            weighted, unweighted = self.floor_num / self.floor_den, self.floor_n / nq
            run.numbers["idk-floor"][label] = {"weighted": weighted, "unweighted": unweighted, "n": nq}
            if weighted > IDK_FLOOR_MAX and self.qset == "main":
                top = ", ".join(
                    f"{a} {v / self.floor_den:.1%}"
                    for a, v in sorted(self.idk_by_axis.items(), key=lambda kv: -kv[1])[:3]
                    if v
                )
                run.fail(
                    "idk-floor",
                    name,
                    None,
                    f"answering IDK to all {nq} questions scores {weighted:.1%} weighted "
                    f"({unweighted:.1%} unweighted), above {IDK_FLOOR_MAX:.0%}; from {top}",
                )
        if self.ceil_scores:
            weighted, unweighted = self.ceil_num / self.ceil_den, sum(self.ceil_scores) / len(self.ceil_scores)
            run.numbers["evidence-ceiling"][label] = {
                "weighted": weighted,
                "unweighted": unweighted,
                "n": len(self.ceil_scores),
            }
            if min(weighted, unweighted) < CEILING_MIN and self.qset == "main":
                self.ceil_low.sort()
                worst = ", ".join(f"{qid} ({s:g})" for s, qid in self.ceil_low[:8])
                by_axis = ", ".join(
                    f"{a} {sum(v) / len(v):.2f}" for a, v in sorted(self.ceil_axes.items()) if sum(v) < len(v)
                )
                run.fail(
                    "evidence-ceiling",
                    name,
                    None,
                    f"evidence turns as the answer score {weighted:.3f} weighted, {unweighted:.3f} "
                    f"unweighted, below {CEILING_MIN}; weak axes: {by_axis}; lowest: {worst}",
                )
