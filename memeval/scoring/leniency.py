"""The leniency probe set: trap answers built from a bench that a strict judge must reject.

Each probe is one question of the bench with an answer that sets one trap:

- ``stale``: the old value of a STALE/UPDATE question (``stale_answer``) stated as current;
- ``near_miss``: a value of the same attribute from a sibling question (same question shape with the
  names taken out: "Which town does _ live in?"), or the question's ``near`` field where a bench has one;
- ``hedge``: a non-answer that names the gold and a sibling value without choosing ("it might be X or Y");
- ``one_side``: one value of a CONTRADICT (``clash_a`` or ``clash_b``) alone, stated as certain;
- ``false_premise``: going along with a FALSE_MEMORY probe's ``false_claim_en``;
- ``invented``: a sibling value given confidently to an ABSTAIN question (nothing was ever said).

A judge *accepts* a probe when it gives it any credit (correct or partial). The file is JSONL, one
probe per line, each carrying the whole question so that it can be graded without the bench.
"""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from ..atomic import write_jsonl
from ..bench.io import iter_jsonl, load_bench, question_from_dict, read_questions
from ..bench.model import Question
from ..errors import InputError

__all__ = ["TRAPS", "Probe", "build_probes", "write_probes", "read_probes", "grade_probes", "question_shape"]

TRAPS: tuple[str, ...] = ("stale", "near_miss", "hedge", "one_side", "false_premise", "invented")
#: axes whose gold is one value, so that a sibling value is a near miss and "X or Y" is a hedge
_ONE_VALUE = frozenset(
    {"BASIC", "PARAPHRASE", "MULTI", "CROSS", "IMPLICIT", "XLING_QUERY", "XLING_STORE", "IMAGE", "STALE", "UPDATE"}
)
_NAMES = re.compile(r"(?<!^)(?<![.?!] )\b(?:[A-Z0-9][\w'’-]*)(?:\s+(?:[A-Z0-9][\w'’-]*))*")


def question_shape(text: str) -> str:
    """The question with its names and numbers taken out: questions of one shape ask one attribute.

    >>> question_shape("Which town does Ingrid Dunmore live in?")
    'Which town does _ live in?'
    """
    return _NAMES.sub("_", text)


@dataclass(frozen=True)
class Probe:
    id: str
    trap: str
    axis: str
    tier: str
    question: Question
    answer: str

    def to_dict(self) -> dict:
        return {
            "id": self.id,
            "trap": self.trap,
            "axis": self.axis,
            "tier": self.tier,
            "qid": self.question.id,
            "answer": self.answer,
            "question": self.question.to_dict(),
        }


def _same(a: str, b: str) -> bool:
    a, b = a.strip().lower(), b.strip().lower()
    return bool(a) and bool(b) and (a in b or b in a)


def _sibling(q: Question, group: list[Question]) -> str | None:
    """The first other gold of ``q``'s shape group after ``q`` (cyclically) that is not one of
    ``q``'s accepted answers (nor its old value)."""
    own = [q.gold_answer, *q.gold_alts, *(q.gold_parts or ()), q.stale_answer or ""]
    i = next(k for k, x in enumerate(group) if x is q)
    for other in group[i + 1 :] + group[:i]:
        v = other.gold_answer.strip()
        if v and not any(_same(v, o) for o in own if o):
            return v
    return None


def _any_value(q: Question, groups: dict[str, list[Question]]) -> str | None:
    """Where no question of ``q``'s shape has a gold (an ABSTAIN question worded unlike the answerable
    ones), a confident value all the same: the first one-value gold of the tier, in question order."""
    for group in groups.values():
        for other in group:
            if other is not q and other.axis in _ONE_VALUE and other.gold_answer.strip():
                return other.gold_answer.strip()
    return None


def _near(q: Question, group: list[Question]) -> str | None:
    near = q.extra.get("near")
    if isinstance(near, list):
        near = next((x for x in near if isinstance(x, str) and x.strip()), None)
    if isinstance(near, str) and near.strip():
        return near.strip()
    return _sibling(q, group)


def _traps(q: Question, groups: dict[str, list[Question]]) -> Iterable[tuple[str, str]]:
    axis = q.scored_as  # the rule the question is graded by picks its traps
    group = groups[question_shape(q.question_en)]
    if axis in ("STALE", "UPDATE") and q.stale_answer:
        yield "stale", f"It's {q.stale_answer}."
    if axis == "CONTRADICT" and q.clash_a and q.clash_b:
        yield "one_side", f"It's {q.clash_a}."
        yield "one_side", f"It's {q.clash_b}."
    if axis == "FALSE_MEMORY" and q.false_claim_en:
        yield "false_premise", f"Yes, I remember: {q.false_claim_en.rstrip('.')}. You told me that."
    if axis == "ABSTAIN" and (v := _sibling(q, group) or _any_value(q, groups)):
        yield "invented", f"It's {v}."
    if axis in _ONE_VALUE and q.gold_answer.strip() and (v := _near(q, group)):
        yield "near_miss", f"It's {v}."
        yield "hedge", f"It might be {q.gold_answer.strip()} or {v}; I can't say which."


def build_probes(bench_dir, tier: str | None = None, max_per_trap: int | None = None) -> list[Probe]:
    """The probe set of one tier (default: the first) over all its question sets, in question order;
    ``max_per_trap`` keeps the first N probes of each trap."""
    bench = load_bench(bench_dir)
    t = bench.tier(tier) if tier else bench.tiers[0]
    root = Path(bench.root)
    questions = [q for f in (t.questions_file, *t.question_sets.values()) for q in read_questions(root / f)]
    groups: dict[str, list[Question]] = {}
    for q in questions:
        groups.setdefault(question_shape(q.question_en), []).append(q)
    out: list[Probe] = []
    kept: dict[str, int] = {}
    for q in questions:
        for trap, answer in _traps(q, groups):
            if max_per_trap is not None and kept.get(trap, 0) >= max_per_trap:
                continue
            kept[trap] = kept.get(trap, 0) + 1
            out.append(Probe(f"P{len(out) + 1:04d}", trap, q.axis, t.name, q, answer))
    return out


def write_probes(path, probes: Iterable[Probe]) -> int:
    return write_jsonl(path, (p.to_dict() for p in probes))


def read_probes(path) -> list[Probe]:
    """Probes from a file ``write_probes`` wrote; a bad line is one :class:`InputError` naming it."""
    out = []
    for n, obj in iter_jsonl(path):
        for key in ("id", "trap", "axis", "tier", "answer"):
            if not isinstance(obj.get(key), str):
                raise InputError(path, n, key, "missing or not a string")
        if obj["trap"] not in TRAPS:
            raise InputError(path, n, "trap", f"unknown trap {obj['trap']!r} (traps: {', '.join(TRAPS)})")
        if not isinstance(obj.get("question"), dict):
            raise InputError(path, n, "question", "missing or not an object")
        q = question_from_dict(obj["question"], path, n)
        out.append(Probe(obj["id"], obj["trap"], obj["axis"], obj["tier"], q, obj["answer"]))
    if not out:
        raise InputError(path, None, None, "no probes in this file")
    return out


def grade_probes(probes: list[Probe], judge, label: str, concurrency: int = 4) -> list[dict]:
    """One row per probe: the judge's verdict on the trap answer (``score`` None = ungraded, with the reason)."""

    def one(p: Probe) -> dict:
        v = judge.grade(p.question, p.answer, kind="answer")
        return {
            "judge": label,
            "id": p.id,
            "trap": p.trap,
            "axis": p.axis,
            "qid": p.question.id,
            "answer": p.answer,
            "score": v.score,
            "verdict": v.verdict,
            "evidence": v.evidence,
            "ungraded_reason": v.ungraded_reason,
        }

    with ThreadPoolExecutor(max(1, concurrency)) as pool:
        return list(pool.map(one, probes))
