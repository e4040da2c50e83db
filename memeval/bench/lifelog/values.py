"""Story values drawn without repeats, so each planted answer is held by its own turns only.

Single-word values (towns, pet names) never equal a word of a person's name; numbers are unique
across every numeric kind (flat numbers, codes, phone endings) and stay >= 100, above the small
numbers filler talk uses.
"""

from __future__ import annotations

import random

from ...errors import MemevalError
from .data import load

__all__ = ["Values", "PoolExhausted"]


class PoolExhausted(MemevalError, RuntimeError):
    """A preset asked for more distinct values of a kind than the vocabulary can make."""


class Values:
    def __init__(self, rng: random.Random, first_names: int = 100):
        self.rng = rng
        self.v = dict(load("values")["story"])
        names = set(self.v["first"]) | set(self.v["first_more"]) | set(self.v["last"])
        more = max(0, first_names - len(self.v["first"]))
        if more:  # a larger cast draws from more first names (see Preset.first_names)
            self.v["first"] = list(self.v["first"]) + list(self.v["first_more"][:more])
        self._decks: dict[str, list[str]] = {}
        self._forbidden_words = names
        self.used: set[str] = set()
        self._wrong: dict[str, list[str]] = {}  # kind -> values drawn as false claims (never planted)

    def _deck(self, kind: str, make) -> list[str]:
        deck = self._decks.get(kind)
        if deck is None:
            deck = [x for x in make() if x not in self._forbidden_words]
            self.rng.shuffle(deck)
            self._decks[kind] = deck
        return deck

    def _pop(self, kind: str, make) -> str:
        deck = self._deck(kind, make)
        while deck:
            x = deck.pop()
            if x not in self.used:
                self.used.add(x)
                return x
        raise PoolExhausted(f"no more distinct {kind} values; shrink the preset or extend data/values.yaml")

    def _combo(self, kind: str, a: str, b: str, fmt: str) -> str:
        return self._pop(kind, lambda: [fmt.format(x, y) for x in self.v[a] for y in self.v[b]])

    # -- kinds
    def person(self) -> str:
        return self._combo("person", "first", "last", "{} {}")

    def pet(self) -> str:
        return self._pop("pet", lambda: self.v["pet"])

    def town(self) -> str:
        return self._combo("town", "town_head", "town_tail", "{}{}")

    def company(self) -> str:
        return self._combo("company", "company_head", "company_tail", "{} {}")

    def venue(self) -> str:
        return self._combo("venue", "venue_head", "venue_tail", "{} {}")

    def band(self) -> str:
        return self._combo("band", "band_adj", "band_noun", "The {} {}")

    def book(self) -> str:
        return self._combo("book", "book_adj", "book_noun", "The {} {}")

    def film(self) -> str:
        return self._combo("film", "film_noun", "film_tail", "{} {}")

    def car(self) -> str:
        return self._combo("car", "car_colour", "car_model", "{} {}")

    def street(self) -> str:
        return self._combo("street", "street_head", "street_tail", "{} {}")

    def project(self) -> str:
        return self._pop(
            "project", lambda: [f"{p} {s}" for p in self.v["project"] for s in ("Alpha", "Beta", "Gamma", "Delta")]
        )

    def number(self) -> str:
        return self._pop("number", lambda: [str(n) for n in range(101, 990) if n % 100])

    def code(self) -> str:
        return self._pop("code", lambda: [str(n) for n in range(1201, 9890) if n % 100])

    number4 = code

    def has(self, kind: str) -> bool:
        """Whether ``draw(kind)`` can still give a distinct value (asks no random numbers, so checking
        leaves every later draw unchanged)."""
        deck = self._decks.get("code" if kind == "number4" else kind)
        return deck is None or any(x not in self.used for x in deck)

    def wrong(self, kind: str) -> str:
        """A value for a false claim: never one planted as a fact. Distinct while the pool lasts (as
        ``draw``); after that an earlier false-claim value is reused, since a wrong value only has to
        differ from the planted ones, not from other wrong claims."""
        try:
            v = self.draw(kind)
        except PoolExhausted:
            if not self._wrong.get(kind):
                raise
            return self.rng.choice(self._wrong[kind])
        self._wrong.setdefault(kind, []).append(v)
        return v

    def pick(self, pool: str) -> str:
        """A value from a plain list that may repeat (professions, animals, courses, ...)."""
        return self.rng.choice(self.v[pool])

    def draw(self, kind: str) -> str:
        return getattr(self, kind)()
