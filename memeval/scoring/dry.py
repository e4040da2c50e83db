"""Dry-mode scoring (benchmark.md §4): the eleven rules, in order, on the answer text.

Dry mode is a free, offline development ruler, not a published score. A system that returns
memories but writes no answer is graded on the *content* of its memories (timestamps and speakers
are fields of a ``Memory``, not text to match), **one memory at a time**: a value, a number with its
unit, a CONFLICT correction with its latest value, a named disagreement, each must be found within
one memory, never assembled across two ("two weeks" is not "the two" in one turn and "a week" in
another). Different parts (GATHER parts, RECONCILE sides, both CONTRADICT values) may come from
different memories. Such a system never earns IDK or denial credit from its memories; on abstention
questions it is ungraded (``ungraded_without_answer``), as glasshouse's score.py leaves it.

Each result names the rule that decided it (``DryScore.rule``); the prefix is the axis the
question was scored as (``Question.scored_as``: ``expect`` decides first: ``no_memory`` is scored
as ``abstain``, ``answer_or_abstain`` as ``stale``, ``flag_conflict`` as ``contradict``):

=====================================  =====  ==================================================
rule                                   score  when
=====================================  =====  ==================================================
``empty``                              0      rule 2: no text (it stays in the denominator)
``idk-net``                            0      rule 3: IDK where a value was due (gold not IDK-like)
``abstain|false_memory:idk``           1      rule 4: says it was never stated / not in memory
``false_memory:denial``                1      rule 4: rejects the premise ("that never happened");
                                              not on plain ABSTAIN, where only IDK counts
``abstain|false_memory:went-along``    0      rule 4: anything else
``gather:parts`` / ``gather:miss``     k/n    rule 5: fraction of ``gold_parts`` found
``gather:gold``                        1      rule 5: no parts listed, gold or alt found
``update:new-value|idk|miss``          1/.5/0 rule 6: new value first ("it was X, now Y" is right)
``stale:new-value|old-value|idk|miss`` 1/0/.5/0 rule 7
``reconcile:both-sides|one-side``      1/.5   rule 8: ``side_a``/``side_b`` found
``reconcile:gold|miss``                1/0    rule 8: gold/alts
``contradict:both-values``             1      rule 9: ``clash_a`` and ``clash_b`` both found
``contradict:names-disagreement``      1      rule 9: conflict/contradicts/do not match/... named
``contradict:idk|miss``                .5/0   rule 9
``conflict:corrected``                 1      rule 10: correction word and the latest value (for
                                              memories: both in one memory)
``conflict:value-only|miss``           .5/0   rule 10
``<axis>:gold`` / ``<axis>:miss``      1/0    rule 11: gold or any alt found
=====================================  =====  ==================================================

Decisions where §4 leaves room: the CONFLICT latest value is the gold with a leading "no,"/
"actually" and subject ("it's", "they're") and a trailing "now" taken off, and any alt (as written
or so stripped) counts too; RECONCILE checks sides before gold/alts, as listed; GATHER scores are
exact fractions (2 of 3 = 0.666…); "both"/"different" alone never name a disagreement, but
"first … said …, later …" does.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from dataclasses import dataclass
from functools import lru_cache
from typing import Iterable, Sequence

from memeval.bench.model import Question
from memeval.scoring.idk import denies_premise, fold_for_phrases, gold_is_idk, is_idk
from memeval.scoring.matching import contains_normal_forms, normalize
from memeval.scoring.phrases import PhraseSet
from memeval.systems.base import memory_content
from memeval.text.normal_form import normalize_each

__all__ = [
    "GRADER_VERSION",
    "DryScore",
    "score_answer",
    "score_many",
    "latest_value",
    "names_disagreement",
    "has_correction_word",
    "IDK_NET_EXEMPT_AXES",
    "ungraded_without_answer",
    "clear_caches",
]

GRADER_VERSION = "dry-v2"

#: Axes where an IDK answer is not zeroed by rule 3 (it is scored by the axis' own rule).
IDK_NET_EXEMPT_AXES = frozenset({"ABSTAIN", "FALSE_MEMORY", "STALE", "UPDATE", "CONTRADICT"})


@dataclass(frozen=True)
class DryScore:
    """One graded answer: ``score`` in [0, 1], ``verdict`` correct/partial/wrong, deciding ``rule``."""

    score: float
    verdict: str
    rule: str

    @classmethod
    def of(cls, score: float, rule: str) -> "DryScore":
        made = _MADE.get((score, rule))  # a frozen value: one instance per (score, rule) will do
        if made is None or type(made) is not cls:
            verdict = "correct" if score >= 1.0 else "wrong" if score <= 0.0 else "partial"
            made = cls(float(score), verdict, rule)
            if len(_MADE) < 4096:
                _MADE[(score, rule)] = made
        return made


_MADE: dict[tuple[float, str], DryScore] = {}


# Words that name a disagreement (rule 9). Never "both" or "different" alone.
_DISAGREEMENT = PhraseSet(
    [
        r"\bconflict",
        r"\bcontradict",
        r"\binconsisten",
        r"\bnot consistent\b",
        r"\bdisagree",
        r"\bmismatch",
        r"\bdiscrepan",
        r"\b(?:do|does|did)(?:n't| not) (?:match|agree|line up|add up)\b",
        r"\bdon't match\b",
        r"\bat odds\b",
        r"\bcontradictory\b",
        r"\bconflicting\b",
        r"\btwo (?:different|conflicting|contradictory|inconsistent) (?:values|answers|numbers|figures|dates|"
        r"times|amounts|names|versions|accounts|statements|things|places|days|prices)\b",
        r"\bat one point\b[^.!?]{0,80}\blater\b",
        r"\b(?:first|initially|originally|earlier|once)\b[^.!?]{0,80}\b(?:said|mentioned|told|stated|wrote|gave)\b"
        r"[^.!?]{0,80}\b(?:later|afterwards|another time|elsewhere|other times?|subsequently)\b",
        r"\bcontradic|\bwiderspr|\bcontraddi|\bcontradi[cç]",  # es/pt/fr/it/de stems
    ],
    [
        r"矛盾|不一致|相互冲突|相互衝突|食い違|상충|모순|일치하지 않|противореч|не совпада|расхожд|تناقض|متعارض",
    ],
)

# A disagreement word under a negation ("there is no conflict", "that doesn't contradict") names
# no disagreement: such phrases are blanked before the search.
_DISAGREEMENT_WORD = r"(?:conflict\w*|contradict\w*|inconsisten\w*|discrepan\w*|mismatch\w*|disagree\w*)"
_NEGATED_DISAGREEMENT = re.compile(
    r"\b(?:no|not|never|without|nothing|none)\s+(?:a\s+|an\s+|any\s+|really\s+|actually\s+|real\s+)*"
    + _DISAGREEMENT_WORD
    + r"|\b(?:doesn't|does not|don't|do not|didn't|did not|isn't|is not|aren't|are not|wasn't|was not|"
    r"there's no|there is no)\s+(?:a\s+|an\s+|any\s+|really\s+|actually\s+|real\s+)*" + _DISAGREEMENT_WORD
)

# Negation / correction words (rule 10).
_CORRECTION = PhraseSet(
    [
        # not any "n't": "green beans don't all ripen together" corrects nothing
        r"\bno\b",
        r"\bnope\b",
        r"\bnot\b",
        r"\b(?:is|was|are|were)n't\b",
        r"\bnever\b",
        r"\bincorrect\b",
        r"\bactually\b",
        r"\bchang(?:e|ed|es)\b",
        r"\bswitched\b",
        r"\bmoved\b",
        r"\bused to\b",
        r"\bno longer\b",
        r"\bany ?more\b",
        r"\bwrong\b",
        r"\bmistaken\b",
        r"\boutdated\b",
        r"\bout of date\b",
        r"\bcorrection\b",
        r"\binstead\b",
        r"\breplaced\b",
        r"\bupdated?\b",
        r"\bformerly\b",
        r"\bpreviously\b",
        r"\bsince then\b",
        r"\bnot anymore\b",
        r"\bya no\b|\ben realidad\b|\bcambi[oóa]",
        r"\bnon\b|\bn'est plus\b|\ben fait\b",
        r"\bnein\b|\bnicht mehr\b|\beigentlich\b|\binzwischen\b",
        r"\bn[aã]o\b|\bna verdade\b|\bmudou\b",
        r"\bin realt[aà]\b|\bcambiat",
    ],
    [
        r"不是|不再|其实|其實|改为|改為|改成|换成|換成",
        r"いいえ|ではなく|じゃなく|実は|変わり|変更",
        r"아니|더 이상|사실은|바뀌|변경",
        r"\bнет\b|\bне\b|уже не|на самом деле|изменил|теперь",
        r"(?<!\w)(?:لا|ليس|لم يعد|في الواقع)(?!\w)|تغير",
    ],
)

_LEADING_NEGATION = re.compile(
    r"^\s*(?:no(?:pe)?|not (?:any ?more|really)|actually|wrong|incorrect|that's (?:wrong|outdated|old))\b[\s,.;:!\u2014-]*",
    re.I,
)
_LEADING_SUBJECT = re.compile(
    r"^\s*(?:(?:it|they|that|he|she|this)(?:'s|'re| is| are| was| were)|it|they|that|he|she|this)"
    r"(?:\s+(?:now|actually|currently))?\s+",
    re.I,
)
_TRAILING_NOW = re.compile(r"\s+(?:now|these days|currently|at the moment|instead)\s*[.!]?\s*$", re.I)


def latest_value(gold: str) -> str:
    """The current value inside a CONFLICT gold: "No, they're metal pipe now." → "metal pipe"."""
    g = gold
    for _ in range(3):
        g2 = _LEADING_NEGATION.sub("", g)
        g2 = _LEADING_SUBJECT.sub("", g2)
        if g2 == g:
            break
        g = g2
    g = _TRAILING_NOW.sub("", g).strip().rstrip(".!")
    return g.strip() or gold


def names_disagreement(text: str) -> bool:
    """Rule 9's words: the text names a disagreement (conflict, contradicts, do not match, ...)."""
    return _names_disagreement_cached(text) if len(text) <= _MEMO_MAX_CHARS else _names_disagreement(text)


def _names_disagreement(text: str) -> bool:
    folded = fold_for_phrases(text)
    if "no" in folded or "n't" in folded or "without" in folded:
        folded = _NEGATED_DISAGREEMENT.sub(" ", folded)
    return _DISAGREEMENT.search(folded)


def has_correction_word(text: str) -> bool:
    """Rule 10's words: a negation or correction (no, not, actually, changed, no longer, ...)."""
    return _correction_cached(text) if len(text) <= _MEMO_MAX_CHARS else _has_correction_word(text)


def _has_correction_word(text: str) -> bool:
    return _CORRECTION.search(fold_for_phrases(text))


def _golds(q: Question) -> list[str]:
    return [g for g in (q.gold_answer, *q.gold_alts) if g]


class _Plan:
    """What grading one question needs, worked out once per distinct question and on first use: its
    rule (axis), its golds' normal forms, whether the IDK net applies, the CONFLICT latest values."""

    __slots__ = ("q", "axis", "prefix", "golds", "_gold_forms", "_idk_net", "_latest_forms")

    def __init__(self, q: Question):
        self.q = q
        self.axis = q.scored_as
        self.prefix = self.axis.lower()
        self.golds = _golds(q)
        self._gold_forms: dict[int, str] = {}  # by the gold's index (a dict: safe to fill from threads)
        self._idk_net: bool | None = None
        self._latest_forms: list[str] | None = None

    def has_gold(self, forms: list[str]) -> bool:
        """Does any (normalised) text hold a gold or alt? (golds normalised one by one, as needed)"""
        done = self._gold_forms
        for i, g in enumerate(self.golds):
            v = done.get(i)
            if v is None:
                v = done[i] = normalize(g)
            if v:
                for a in forms:
                    if contains_normal_forms(a, v):
                        return True
        return False

    @property
    def idk_net(self) -> bool:
        """Rule 3 applies: IDK zeroes the answer unless the axis scores it or a gold reads like IDK."""
        if self._idk_net is None:
            self._idk_net = self.axis not in IDK_NET_EXEMPT_AXES and not any(gold_is_idk(g) for g in self.golds)
        return self._idk_net

    @property
    def latest_forms(self) -> list[str]:
        """CONFLICT: the latest value taken out of each gold, then the golds as written, normalised."""
        if self._latest_forms is None:
            candidates = [c for c in dict.fromkeys([latest_value(g) for g in self.golds] + self.golds) if c]
            self._latest_forms = [normalize(c) for c in candidates]
        return self._latest_forms


def _has(forms: list[str], value: str | None) -> bool:
    """Does any (normalised) text hold the value (normalised here: memoised)?"""
    if not value:
        return False
    v = normalize(value)
    return any(contains_normal_forms(a, v) for a in forms)


def _grading_key(q: Question) -> tuple:
    """Every field ``score_answer`` reads, as a key (a non-string ``eval_function`` is ignored by
    ``Question.scored_as``, so it is left out)."""
    published = q.extra.get("eval_function") if q.extra else None
    return (
        q.axis,
        q.expect,
        published if isinstance(published, str) else None,
        q.gold_answer,
        q.gold_alts,
        q.stale_answer,
        q.clash_a,
        q.clash_b,
        q.side_a,
        q.side_b,
        q.gold_parts,
    )


#: Distinct questions' plans and graded (question, answer) pairs kept (each dropped oldest first).
_PLANS_MAX = 16384
_MEMO_MAX = 16384
#: Answers longer than this are neither memoised nor their phrase tests cached.
_MEMO_MAX_CHARS = 4096
# (ordered dicts: dropping the oldest is O(1); a plain dict's ``next(iter(d))`` scans past every
# entry deleted before it, ~13 µs per insert once full)
_PLANS: OrderedDict[tuple, _Plan] = OrderedDict()
_MEMO: OrderedDict[tuple, DryScore] = OrderedDict()


def _drop_oldest(memo: OrderedDict) -> None:
    try:
        memo.popitem(last=False)
    except KeyError:  # emptied meanwhile (another thread, clear_caches)
        pass


def _plan_for(q: Question, key: tuple) -> _Plan:
    try:
        plan = _PLANS.get(key)
    except TypeError:  # a field that cannot be a key (e.g. a list where a tuple belongs): no memo
        return _Plan(q)
    if plan is None:
        if len(_PLANS) >= _PLANS_MAX:
            _drop_oldest(_PLANS)
        plan = _PLANS[key] = _Plan(q)
    return plan


def score_answer(q: Question, answer: str | Sequence[str] | None) -> DryScore:
    """Grade one answer to one question by rules 1-11 of benchmark.md §4, in order.

    ``answer`` is the answer text, or a memory-only system's returned memories (a list of texts, read
    one memory at a time: see the module docstring). A repeated (question, answer) pair is answered
    from a bounded memo keyed by the answer and every question field the rules read.
    """
    key = _grading_key(q)
    if type(answer) is not str or len(answer) > _MEMO_MAX_CHARS:
        return _grade(_plan_for(q, key), answer)
    pair = (key, answer)
    try:
        hit = _MEMO.get(pair)
    except TypeError:  # see _plan_for
        return _grade(_Plan(q), answer)
    if hit is None:
        hit = _grade(_plan_for(q, key), answer)
        if len(_MEMO) >= _MEMO_MAX:
            _drop_oldest(_MEMO)
        _MEMO[pair] = hit
    return hit


_EMPTY = DryScore.of(0.0, "empty")
_IDK_NET = DryScore.of(0.0, "idk-net")


def _grade(plan: _Plan, answer: str | Sequence[str] | None) -> DryScore:
    memories_only = isinstance(answer, (list, tuple))
    lines: list[str] = []
    if isinstance(answer, (list, tuple)):  # content only: a date stamp or a speaker name is not an answer
        lines = [memory_content(m) for m in answer if m]
        answer = "\n".join(lines)
    elif answer is not None and not isinstance(answer, str):
        answer = str(answer)  # e.g. a bare number from a JSON answer file
    # Rule 1: the expect value picks the rule whatever the axis (no_memory → ABSTAIN,
    # answer_or_abstain → STALE, flag_conflict → CONTRADICT): ``plan.axis`` is ``scored_as``.
    q, axis, prefix = plan.q, plan.axis, plan.prefix
    # Rule 2: an empty answer scores 0 and stays in the denominator.
    if answer is None or not answer.strip():
        return _EMPTY
    # IDK and denials are the system's own words: never read out of the memories it returned.
    idk = not memories_only and is_idk(answer)
    # Rule 3: the IDK net, unless the question's own gold reads like IDK.
    if idk and plan.idk_net:
        return _IDK_NET
    # Rule 4: abstention axes.
    if axis in ("ABSTAIN", "FALSE_MEMORY"):
        if idk:
            return DryScore.of(1.0, f"{prefix}:idk")
        # a denial answers a planted premise (FALSE_MEMORY); a plain ABSTAIN question plants none,
        # so there only "I don't know" counts (glasshouse's README)
        if axis == "FALSE_MEMORY" and not memories_only and denies_premise(answer):
            return DryScore.of(1.0, f"{prefix}:denial")
        return DryScore.of(0.0, f"{prefix}:went-along")
    # once: each memory of a memory-only response normalised on its own (memoised), or the answer
    texts = lines if memories_only else [answer]
    forms = normalize_each(lines) if memories_only else [normalize(answer)]
    # Rule 5: GATHER, proportional to the parts found.
    if axis == "GATHER":
        parts = [p for p in q.gold_parts if p]
        if parts:
            hit = sum(1 for p in parts if _has(forms, p))
            return DryScore.of(hit / len(parts), "gather:parts" if hit else "gather:miss")
        return DryScore.of(1.0, "gather:gold") if plan.has_gold(forms) else DryScore.of(0.0, "gather:miss")
    # Rule 6: UPDATE, new value first ("it was X, now Y" is right).
    if axis == "UPDATE":
        if plan.has_gold(forms):
            return DryScore.of(1.0, "update:new-value")
        if idk:
            return DryScore.of(0.5, "update:idk")
        return DryScore.of(0.0, "update:miss")
    # Rule 7: STALE, new value first, then the old value served as current.
    if axis == "STALE":
        if plan.has_gold(forms):
            return DryScore.of(1.0, "stale:new-value")
        if q.stale_answer and _has(forms, q.stale_answer):
            return DryScore.of(0.0, "stale:old-value")
        if idk:
            return DryScore.of(0.5, "stale:idk")
        return DryScore.of(0.0, "stale:miss")
    # Rule 8: RECONCILE, both conditions (IDK already earned 0 in rule 3).
    if axis == "RECONCILE":
        if q.side_a and q.side_b:
            hit = _has(forms, q.side_a) + _has(forms, q.side_b)
            if hit == 2:
                return DryScore.of(1.0, "reconcile:both-sides")
            if hit == 1:
                return DryScore.of(0.5, "reconcile:one-side")
        if plan.has_gold(forms):
            return DryScore.of(1.0, "reconcile:gold")
        return DryScore.of(0.0, "reconcile:miss")
    # Rule 9: CONTRADICT, both values or words naming the disagreement.
    if axis == "CONTRADICT":
        if q.clash_a and q.clash_b and _has(forms, q.clash_a) and _has(forms, q.clash_b):
            return DryScore.of(1.0, "contradict:both-values")
        if any(names_disagreement(t) for t in texts):
            return DryScore.of(1.0, "contradict:names-disagreement")
        if idk:
            return DryScore.of(0.5, "contradict:idk")
        return DryScore.of(0.0, "contradict:miss")
    # Rule 10: CONFLICT, a correction word and the latest value.
    if axis == "CONFLICT":
        latest = plan.latest_forms
        valued = [t for t, a in zip(texts, forms) if any(contains_normal_forms(a, c) for c in latest)]
        if valued:  # the correction must sit in a text that gives the latest value (one memory)
            if any(has_correction_word(t) for t in valued):
                return DryScore.of(1.0, "conflict:corrected")
            return DryScore.of(0.5, "conflict:value-only")
        return DryScore.of(0.0, "conflict:miss")
    # Rule 11: every other axis.
    if plan.has_gold(forms):
        return DryScore.of(1.0, f"{prefix}:gold")
    return DryScore.of(0.0, f"{prefix}:miss")


def ungraded_without_answer(q: Question) -> str | None:
    """Why a system that returned memories but no answer of its own cannot be graded on ``q``
    (None when it can). Abstention questions want the system to *say* it does not know; returned
    memories say nothing (glasshouse's score.py leaves such runs ungraded there too)."""
    if q.scored_as in ("ABSTAIN", "FALSE_MEMORY"):
        return (
            "no answer of its own: a retrieval-only run is not graded on abstention questions "
            "(as glasshouse's score.py)"
        )
    return None


def score_many(pairs: Iterable[tuple[Question, str | None]]) -> list[DryScore]:
    """``score_answer`` over (question, answer) pairs, in order."""
    return [score_answer(q, a) for q, a in pairs]


_names_disagreement_cached = lru_cache(maxsize=4096)(_names_disagreement)
_correction_cached = lru_cache(maxsize=4096)(_has_correction_word)


def clear_caches() -> None:
    """Forget graded pairs, question plans and memoised phrase tests (for benchmarks and tests)."""
    _PLANS.clear()
    _MEMO.clear()
    _names_disagreement_cached.cache_clear()
    _correction_cached.cache_clear()
