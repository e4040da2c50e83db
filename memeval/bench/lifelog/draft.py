"""Draft turns, sessions and questions: the generator's working form before tiers are cut.

A draft turn has a ``uid`` unique across the whole generation; a tier file renumbers turns from 1.
A question's evidence points at draft objects (turns, or story statements that know their turn once
the story is written), so it can be resolved to each tier's turn ids.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["DTurn", "DSession", "Statement", "DQuestion", "Counter"]


class Counter:
    def __init__(self, start: int = 1):
        self.n = start - 1

    def __call__(self) -> int:
        self.n += 1
        return self.n


@dataclass
class DTurn:
    uid: int
    speaker: str
    text: str
    image: str | None = None
    image_no: int | None = None


@dataclass
class DSession:
    date: str
    seq: int  # global creation order: ties on a date sort the same way in every tier
    level: int  # lowest tier holding it: 0 core, 1 small, 2 medium, 3 full
    turns: list[DTurn]


@dataclass
class Statement:
    """One planted sentence, placed in a story session; ``uid`` is set when the story is written."""

    fact: str
    session: int
    text: str
    long: bool = False
    uid: int | None = None
    person: str | None = None  # the story person it is about, when one (assistant replies engage with them)


@dataclass
class DQuestion:
    axis: str
    question_en: str
    gold: str = ""
    evidence: list[Any] = field(default_factory=list)  # Statement or DTurn
    need: list[str] = field(default_factory=list)
    level: int = 0
    fields: dict[str, Any] = field(default_factory=dict)
    source: "DQuestion | None" = None  # an XLING_QUERY row's English source question
    qid: str = ""
    qset: str = "main"  # the question set (file) it goes to: "main" or "probes"
