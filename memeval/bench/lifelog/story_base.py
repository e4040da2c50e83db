"""The story's state and helpers (``StoryBase``): slots, fresh values, people and how they are
referred to; ``story.Story`` adds the axes and the writing of sessions on top.
"""

from __future__ import annotations

import string
from dataclasses import dataclass
from datetime import date
from typing import Any

from ...errors import BenchContractError
from .data import load
from .draft import DQuestion, Statement
from .rng import stream
from .values import Values

__all__ = ["StoryBase", "KeyedFact", "Hook"]

_FMT = string.Formatter()
# Template slots filled with fresh values (drawn once per use) or picks from a plain list.
_FRESH = {
    "P": "person",
    "A": "person",
    "G1": "person",
    "G2": "person",
    "town": "town",
    "company": "company",
    "venue": "venue",
    "band": "band",
    "book": "book",
    "film": "film",
    "car": "car",
    "street": "street",
    "proj": "project",
}
_PICK = {
    "course": "course",
    "prof": "profession",
    "animal": "animal",
    "ing": "ingredient",
    "fear": "fear",
    "kind": "place_kind",
    "dislike": "dislike",
    "thing": "thing",
}


@dataclass(frozen=True)
class KeyedFact:
    """A plain fact about a person (BASIC/PARAPHRASE): the source of XLING_QUERY and swap probes."""

    question: DQuestion
    kind: str
    person: str
    value: str
    extra: dict
    statement: Statement


@dataclass(frozen=True)
class Hook:
    """What a question is about, for near-miss filler: a story person (``person``) or a phrase beside a
    story detail (``phrase``, e.g. "the teacher of my pottery course"), and the topic asked about
    (a ``keyed`` kind, or ``clashing.<k>`` / ``conditional.<k>`` / ``parts.<k>``) with its extra slots."""

    person: str | None
    phrase: str | None
    topic: str
    extra: tuple[tuple[str, str], ...] = ()


def _fields(*templates: str) -> list[str]:
    out: list[str] = []
    for t in templates:
        for _, name, _, _ in _FMT.parse(t):
            if name and name not in out:
                out.append(name)
    return out


class StoryBase:
    """What the story knows while it is planted: statements, questions, people and the random streams."""

    def __init__(self, seed: int, values: Values, dates: list[date]):
        self.seed = seed
        self.rng = stream(seed, "story")
        self.d = load("story")
        self.values = values
        self.dates = dates
        self.statements: list[Statement] = []
        self.questions: list[DQuestion] = []
        self.keyed_facts: list[KeyedFact] = []
        self.polar: list[tuple[str, Statement]] = []  # (inverted claim, statement)
        self.stated: dict[str, set[str]] = {}  # person -> kinds of fact told about them
        self._kind_deck: list[str] = []
        self._who_used: set[str] = set()
        self._dishes: list[str] | None = None
        self._short_replies = load("filler")["short_assistant"]
        self._swap_facts: list[KeyedFact] | None = None
        self.hooks: list[Hook] = []
        self._polar_used = 0
        self._refs: dict[tuple[str, str], str] = {}

    # ------------------------------------------------------------------ helpers
    def _say(self, session: int, text: str, long: bool = False, person: str | None = None) -> Statement:
        st = Statement(f"F{len(self.statements) + 1:04d}", session, text, long, person=person)
        self.statements.append(st)
        return st

    def _person(self) -> str:
        p = self.values.person()
        self.stated.setdefault(p, set())
        return p

    def _rel(self) -> str:
        return self.rng.choice(self.d["relations"])

    def _slots(self, *templates: str, **given: Any) -> dict[str, Any]:
        slots = dict(given)
        for name in _fields(*templates):
            if name in slots:
                continue
            if name in _FRESH:
                slots[name] = self._person() if _FRESH[name] == "person" else self.values.draw(_FRESH[name])
            elif name in _PICK:
                slots[name] = self.values.pick(_PICK[name])
            elif name == "rel":
                slots[name] = self._rel()
        for name in _fields(*templates):  # {A_first}: the first name of the person in {A}
            if name.endswith("_first") and name not in slots:
                base = name[: -len("_first")]
                if base not in slots:
                    slots[base] = self._person()
                slots[name] = slots[base].split(" ")[0]
        return slots

    def _sessions(self, k: int, min_gap_days: int = 0) -> list[int]:
        """k distinct story sessions in date order, consecutive ones at least min_gap_days apart."""
        n = len(self.dates)
        if k > n:
            raise BenchContractError(f"need {k} story sessions, the preset has {n}")
        for _ in range(200):
            idx = sorted(self.rng.sample(range(n), k))
            if all((self.dates[b] - self.dates[a]).days >= min_gap_days for a, b in zip(idx, idx[1:])):
                return idx
        step = (n - 1) / max(1, k - 1)
        return [round(i * step) for i in range(k)]

    def _next_kind(self) -> str:
        if not self._kind_deck:
            kinds = list(self.d["keyed"])
            deck = kinds + [k for k in kinds if self.d["keyed"][k].get("xq")]
            self.rng.shuffle(deck)
            self._kind_deck = deck
        return self._kind_deck.pop()

    def _keyed(self, kind: str, session: int, person: str | None = None, rel: str | None = None):
        spec = self.d["keyed"][kind]
        value = self.values.draw(spec["value"])
        tmpl = self.rng.choice(spec["say"])
        slots = self._slots(tmpl, V=value, P=person or self._person(), **({"rel": rel} if rel else {}))
        if spec.get("extra") and spec["extra"] not in slots:
            slots[spec["extra"]] = self.values.pick(spec["extra"])
        st = self._say(session, tmpl.format(**slots))
        self.stated.setdefault(slots["P"], set()).add(kind)
        extra = {spec["extra"]: slots[spec["extra"]]} if spec.get("extra") else {}
        st.person = slots["P"]
        return st, value, slots["P"], extra, slots.get("rel")

    def _form(self, tmpl: str | list[str], **slots: Any) -> str:
        """A question text: one of the template's wordings (a list) or the template, filled."""
        return (self.rng.choice(tmpl) if isinstance(tmpl, list) else tmpl).format(**slots)

    def _ref(self, person: str, rel: str | None) -> str:
        """How a question names a story person: by the relation (in other words) and first name, as a
        person asking would ("my workmate Vesna"); the full name where that pair is already taken by
        another story person, so a reference never points at two people."""
        first = person.split(" ")[0]
        if rel is None:
            key = (first, "")
            ref = first
        else:
            alias = self.rng.choice(self.d["rel_alias"].get(rel, []) + [rel])  # often other words
            key = (first, rel)
            ref = f"my {alias} {first}"
        owner = self._refs.setdefault(key, person)
        if owner != person:
            return person
        return ref

    def _ask(self, q: DQuestion) -> DQuestion:
        self.questions.append(q)
        return q
