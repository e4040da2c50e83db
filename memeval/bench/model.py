"""The bench data model (benchmark.md §1-2) as frozen dataclasses.

A *haystack* is what a system ingests before it is asked. A tier file holds one haystack (glasshouse)
or many (LongMemEval, LoCoMo, the book suite): turns and questions then carry a ``haystack`` id and
turn ids restart at 1 within each haystack.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Mapping
from ..errors import BenchContractError, UnknownName

__all__ = [
    "Turn",
    "make_turn",
    "Session",
    "Question",
    "Tier",
    "Bench",
    "sessions_of",
    "haystacks_of",
    "EXPECT_VALUES",
    "EXPECT_AXIS",
    "SESSION_FIELD_KEY",
]

#: ``expect`` values as published by glasshouse v0.1 (benchmark.md §2).
EXPECT_VALUES: tuple[str, ...] = ("answer", "no_memory", "answer_or_abstain", "flag_conflict")
#: The scoring rule an ``expect`` value calls for, whatever the row's axis (benchmark.md §4 rule 1;
#: glasshouse's cross-language rows carry their original's expect under another axis name).
EXPECT_AXIS: Mapping[str, str] = {"no_memory": "ABSTAIN", "answer_or_abstain": "STALE", "flag_conflict": "CONTRADICT"}
#: A published grading function that fixes the rule a question is scored by (``Question.scored_as``).
PUBLISHED_RULE_AXIS: Mapping[str, str] = {"llm_abstention_checker": "FALSE_MEMORY"}
#: ``bench.yaml`` key naming the turn field that ``evidence_sessions`` refer to (default ``session_id``;
#: glasshouse numbers them by ``core_session``).
SESSION_FIELD_KEY = "evidence_session_field"


def _clean(d: dict) -> dict:
    """Drop optional fields that are unset, keeping key order stable (byte-identical files)."""
    return {k: v for k, v in d.items() if v is not None and v != () and v != {}}


@dataclass(frozen=True)
class Turn:
    turn_id: int
    session_id: int | str
    speaker: str
    text: str
    date: str
    image: str | None = None
    image_no: int | None = None
    caption: str | None = None  # an image caption kept apart from the text (LoCoMo's blip_caption)
    haystack: str | None = None
    #: Other published fields (glasshouse: ``kind``, ``category``, ``core_session``), kept but never
    #: sent to a system: some of them tell story from filler.
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def to_dict(self, *, with_extra: bool = False) -> dict[str, Any]:
        """The turn as a system receives it; ``with_extra`` adds the other published fields."""
        d = _clean({f.name: getattr(self, f.name) for f in fields(self) if f.name != "extra"})
        if with_extra:
            d.update(self.extra)
        return d

    def session_key(self, session_field: str = "session_id"):
        """The session number ``evidence_sessions`` refer to: ``session_field`` as the bench declares it
        (glasshouse: ``core_session``), or ``session_id`` on a turn without that field (filler turns
        of glasshouse's larger tiers carry no story session).

        >>> t = Turn(5, 40, "user", "hi", "2026-03-02", extra={"core_session": 2})
        >>> t.session_key("core_session"), Turn(6, 41, "user", "hi", "2026-03-02").session_key("core_session")
        (2, 41)
        """
        if session_field != "session_id":
            v = self.extra.get(session_field)
            if v is not None:
                return v
        return self.session_id


_new = object.__new__


def make_turn(
    turn_id: int,
    session_id: int | str,
    speaker: str,
    text: str,
    date: str,
    image: str | None = None,
    image_no: int | None = None,
    caption: str | None = None,
    haystack: str | None = None,
    extra: Mapping[str, Any] | None = None,
) -> Turn:
    """``Turn(...)`` for readers and writers that make 100,000s of turns: the same object (its fields
    set in the same order, ``extra`` a new empty dict when not given), ~4x faster than the frozen
    dataclass's ``__init__`` (which sets each field through ``object.__setattr__``). Turn has no
    ``__post_init__``; the caller has checked the field types.

    >>> make_turn(1, 2, "user", "hi", "2026-01-01") == Turn(1, 2, "user", "hi", "2026-01-01")
    True
    >>> a, b = make_turn(1, 2, "user", "hi", "2026-01-01", image="p.png"), Turn(1, 2, "user", "hi", "2026-01-01", "p.png")
    >>> list(a.__dict__.items()) == list(b.__dict__.items()) and repr(a) == repr(b) and hash(a) == hash(b)
    True
    >>> list(a.__dict__) == [f.name for f in fields(Turn)]  # a field added to Turn must be set here too
    True
    """
    t = _new(Turn)
    d = t.__dict__
    d["turn_id"] = turn_id
    d["session_id"] = session_id
    d["speaker"] = speaker
    d["text"] = text
    d["date"] = date
    d["image"] = image
    d["image_no"] = image_no
    d["caption"] = caption
    d["haystack"] = haystack
    d["extra"] = {} if extra is None else extra
    return t


@dataclass(frozen=True)
class Session:
    session_id: int | str
    date: str
    turns: tuple[Turn, ...]

    @property
    def text(self) -> str:
        return "\n".join(f"{t.speaker}: {t.text}" for t in self.turns)


# Question fields in file order; all but the first few are optional and omitted when unset.
QUESTION_LIST_FIELDS = ("need", "gold_alts", "evidence_turns", "evidence_sessions", "gold_parts")


@dataclass(frozen=True)
class Question:
    id: str
    axis: str
    question_en: str
    gold_answer: str = ""
    need: tuple[str, ...] = ()
    gold_alts: tuple[str, ...] = ()
    expect: str = "answer"  # one of EXPECT_VALUES
    evidence_turns: tuple[int, ...] = ()
    evidence_sessions: tuple[int | str, ...] = ()
    asked_at: str | None = None
    stale_answer: str | None = None
    clash_a: str | None = None
    clash_b: str | None = None
    side_a: str | None = None
    side_b: str | None = None
    gold_parts: tuple[str, ...] = ()
    question: str | None = None
    query_lang: str | None = None
    store_lang: str | None = None
    source_id: str | None = None
    kind: str | None = None
    false_claim_en: str | None = None
    source_fact: str | None = None
    haystack: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def text_to_ask(self) -> str:
        """The text to put to the system: ``question`` for a non-English query, never ``question_en``."""
        if self.query_lang and self.query_lang != "en":
            if not self.question:
                raise BenchContractError(f"{self.id}: query_lang {self.query_lang!r} without 'question'")
            return self.question
        return self.question or self.question_en

    @property
    def scored_as(self) -> str:
        """The axis whose dry rule grades this question: ``expect`` first (no_memory → ABSTAIN unless
        FALSE_MEMORY, answer_or_abstain → STALE, flag_conflict → CONTRADICT), else the axis.

        >>> Question("Q1", "XLING_QUERY", "?", expect="answer_or_abstain").scored_as
        'STALE'

        A bench that names each question's published grading function (LongMemEval-V2's
        ``eval_function``) decides first: its premise rubric (``llm_abstention_checker``) is
        FALSE_MEMORY whatever the axis.

        >>> Question("Q2", "BASIC", "?", extra={"eval_function": "llm_abstention_checker"}).scored_as
        'FALSE_MEMORY'
        """
        published = self.extra.get("eval_function")
        if isinstance(published, str) and published.split("|", 1)[0].strip() in PUBLISHED_RULE_AXIS:
            return PUBLISHED_RULE_AXIS[published.split("|", 1)[0].strip()]
        axis = (self.axis or "").upper()
        want = EXPECT_AXIS.get(self.expect)
        if want is None or (want == "ABSTAIN" and axis == "FALSE_MEMORY"):
            return axis
        return want

    @property
    def lang(self) -> str:
        return self.query_lang or "en"

    def to_dict(self) -> dict[str, Any]:
        d = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "extra"}
        for k in QUESTION_LIST_FIELDS:
            d[k] = list(d[k])
        keep = {
            "id",
            "axis",
            "question_en",
            "gold_answer",
            "need",
            "gold_alts",
            "expect",
            "evidence_turns",
            "evidence_sessions",
        }
        out = {k: v for k, v in d.items() if k in keep or (v is not None and v != [])}
        out.update(self.extra)
        return out


@dataclass(frozen=True)
class Tier:
    name: str
    turns_file: str
    questions_file: str
    n_turns: int = 0
    n_sessions: int = 0
    n_tokens: int = 0
    n_questions: int = 0
    #: Named extra question files asked against this tier's turns, run on their own
    #: (``memeval run --question-set probes``): e.g. glasshouse's false-memory probes, kept apart so
    #: that they do not swamp the main set's weighted mean.
    question_sets: Mapping[str, str] = field(default_factory=dict)

    def questions_path(self, question_set: str = "main") -> str:
        if question_set == "main":
            return self.questions_file
        try:
            return self.question_sets[question_set]
        except KeyError:
            raise UnknownName(
                f"tier {self.name!r} has no question set {question_set!r} "
                f"(sets: main{''.join(', ' + k for k in self.question_sets)})"
            ) from None

    @property
    def files(self) -> tuple[str, ...]:
        return (self.turns_file, self.questions_file, *self.question_sets.values())


@dataclass(frozen=True)
class Bench:
    """A bench folder's manifest (``bench.yaml``); files are read on demand (see ``memeval.bench.io``)."""

    name: str
    version: str
    tiers: tuple[Tier, ...]
    root: str = "."
    license: str = ""
    source: str = ""
    tokenizer: str = ""
    generator: Mapping[str, Any] = field(default_factory=dict)
    axis_map: Mapping[str, str] = field(default_factory=dict)
    content_hash: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict)

    def tier(self, name: str) -> Tier:
        for t in self.tiers:
            if t.name == name:
                return t
        raise UnknownName(f"bench {self.name!r} has no tier {name!r} (tiers: {[t.name for t in self.tiers]})")

    @property
    def tier_names(self) -> tuple[str, ...]:
        return tuple(t.name for t in self.tiers)


def sessions_of(turns) -> list[Session]:
    """Group turns into sessions, keeping file order (a session is a run of equal session ids)."""
    out: list[Session] = []
    cur: list[Turn] = []
    for t in turns:
        if cur and (t.session_id != cur[-1].session_id or t.haystack != cur[-1].haystack):
            out.append(Session(cur[0].session_id, cur[0].date, tuple(cur)))
            cur = []
        cur.append(t)
    if cur:
        out.append(Session(cur[0].session_id, cur[0].date, tuple(cur)))
    return out


def haystacks_of(turns) -> dict[str | None, list[Session]]:
    """Sessions per haystack id (``None`` for a tier-wide haystack), in file order."""
    out: dict[str | None, list[Session]] = {}
    for s in sessions_of(turns):
        out.setdefault(s.turns[0].haystack, []).append(s)
    return out
