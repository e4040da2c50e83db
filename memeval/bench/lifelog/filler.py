"""Filler: ordinary assistant talk on everyday topics, with near-miss distractors (other people's
dentists, other pets, other days of the month).

Given the story's ``hooks`` (who each question is about, and on what topic), some filler turns are
near misses about the story's cast: "<name>'s sister drives a Transit van", "the teacher of my
pottery course has a dog called Rex", "Bumped into <name> at the bakery". They never state or
contradict a planted fact (they are about someone else, or say nothing) and never hold a story value:
the values come from the filler pools, and a turn that would contain (dry ``contains``) a gold of a
question sharing a word with the names it mentions is dropped. Their number grows with the filler,
so a question has more competing turns in a bigger tier.
"""

from __future__ import annotations

import random
from datetime import date
from typing import Iterable, Sequence

from ...errors import BenchContractError
from ...text.containment import contains_normal_forms
from ...text.normal_form import normalize
from ...text.tokens import letter_words
from ..model import Session, Turn
from .data import load
from .draft import Counter, DSession, DTurn
from .rng import stream

__all__ = ["filler_sessions", "make_filler", "split_turns", "NearMiss", "NEAR_MISS_RATE"]

#: Share of the longer filler user turns (not the short "Thanks!" kind) that are near misses about
#: the story's cast: about 30% of all filler user turns.
NEAR_MISS_RATE = 0.50


# Session-length weights: a heavy-tailed spread (many short chats, a few long ones) in integers, so
# the split never depends on floating-point library functions (byte-identical on any machine).
_LENGTH_WEIGHTS = (3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 14, 16, 18, 21, 25, 30, 36, 45, 60)


def split_turns(total: int, k: int, rng: random.Random, minimum: int = 2) -> list[int]:
    """``total`` turns over ``k`` sessions of uneven length (each >= minimum when possible)."""
    if k <= 0:
        return []
    minimum = min(minimum, total // k)
    weights = [rng.choice(_LENGTH_WEIGHTS) for _ in range(k)]
    spare, s = total - minimum * k, sum(weights)
    lengths = [minimum + spare * w // s for w in weights]
    for _ in range(total - sum(lengths)):
        lengths[rng.randrange(k)] += 1
    return lengths


_words = letter_words


class NearMiss:
    """Near-miss lines about the story's cast, guarded against holding any question's gold.

    ``hooks``: what the questions are about (``story.Hook``); ``golds``: every gold-like value of every
    question (golds, alts, parts, sides, clash and stale values)."""

    def __init__(self, hooks: Sequence, golds: Iterable[str]):
        data, pools = load("filler"), load("values")
        self.templates = data["near_miss"]
        self.neutral = data["near_miss_neutral"]
        self.rels = data["near_miss_relations"]
        self.filler, self.animals = pools["filler"], pools["story"]["animal"]
        self.hooks = [h for h in hooks if h.topic in self.templates]
        by_word: dict[str, list[str]] = {}
        for g in dict.fromkeys(golds):
            for w in _words(g):
                by_word.setdefault(w, []).append(g)
        self._by_word = by_word
        # each gold's normal form, once (``safe`` tests every near-miss line against them)
        self._gold_forms = {g: normalize(g) for gs in by_word.values() for g in gs}

    def _guard(self, names: list[str]) -> list[str]:
        out: list[str] = []
        for n in names:
            for w in sorted(_words(n)):
                out.extend(self._by_word.get(w, ()))
        return out

    def line(self, rng: random.Random) -> tuple[str, str | None]:
        """One near-miss line and the story name it mentions (None for a phrase subject)."""
        h = rng.choice(self.hooks)
        if h.person is not None and rng.random() < 0.2:
            return rng.choice(self.neutral).format(N=h.person), h.person
        subject = f"{h.person}'s {rng.choice(self.rels)}" if h.person is not None else h.phrase
        extra = dict(h.extra)
        p = self.filler
        text = rng.choice(self.templates[h.topic]).format(
            S=subject,
            animal=extra.get("animal") or rng.choice(self.animals),
            fpet=rng.choice(p["pets"]),
            fwork=rng.choice(p["workplaces"]),
            city=rng.choice(p["cities"]),
            fband=rng.choice(p["bands"]),
            fbook=rng.choice(p["novels"]),
            fstreet=rng.choice(p["streets"]),
            fcar=rng.choice(p["cars"]),
            fvenue=rng.choice(p["venues"]),
            film=rng.choice(p["films"]),
            weekday=rng.choice(p["weekdays"]),
        )
        return text[0].upper() + text[1:], h.person

    def safe(self, text: str, names: list[str]) -> bool:
        """No gold of a question sharing a word with ``names`` is contained in ``text``."""
        golds = self._guard(names)
        if not golds or not text:
            return True
        # ``contains(text, g)`` for each gold, with the text and the golds normalised once
        form, forms = normalize(text), self._gold_forms
        return not any(contains_normal_forms(form, forms[g]) for g in golds if g)


class _Talk:
    def __init__(self, rng: random.Random, near: NearMiss | None = None):
        self.rng = rng
        self.extra = load("filler")
        self.topics = self.extra["topics"]
        self.names = list(self.topics)
        self.pools = load("values")["filler"]
        story = load("story")
        self.replies, self.openers, self.glue = story["replies"], story["openers"], story["glue_user"]
        self.padding = story["long_padding"]
        self.p_life = 0.10
        self.near = near if near is not None and near.hooks else None

    def _near_miss(self) -> str | None:
        """A user turn of one or two near-miss lines (with an opener, maybe an everyday line)."""
        r, near = self.rng, self.near
        assert near is not None  # called only when near-miss hooks exist
        lines: list[str] = []
        names: list[str] = []
        for _ in range(2 if r.random() < 0.2 else 1):
            text, name = near.line(r)
            if near.safe(" ".join([*lines, text]), [*names, *([name] if name else [])]):
                lines.append(text)
                names.extend([name] if name else [])
        if not lines:
            return None
        if r.random() < 0.35:
            lines.insert(r.randrange(len(lines) + 1), self._fill(r.choice(self.extra["life"])))
        opener = r.choice(self.openers)
        return " ".join(([opener] if opener else []) + lines)

    def _fill(self, line: str) -> str:
        if "{" not in line:
            return line
        r, p = self.rng, self.pools
        fname = r.choice(p["people"]) + (" " + r.choice(p["last"]) if r.random() < 0.4 else "")
        return line.format(
            fname=fname,
            dentist=r.choice(p["dentists"]),
            fpet=r.choice(p["pets"]),
            city=r.choice(p["cities"]),
            film=r.choice(p["films"]),
            fdish=r.choice(p["dishes"]),
            plant=r.choice(p["plants"]),
            plang=r.choice(p["languages"]),
            weekday=r.choice(p["weekdays"]),
            ord=r.choice(p["ordinals"]),
            n=r.randint(2, 60),
            hour=r.randint(5, 11),
        )

    def _life(self) -> str:
        r = self.rng
        opener = r.choice(self.openers)
        parts = ([opener] if opener else []) + [self._fill(x) for x in r.sample(self.extra["life"], r.randint(2, 4))]
        if r.random() < 0.2:
            parts.append(r.choice(self.glue))
        elif r.random() < 0.1:
            parts.insert(len(parts) - 1, r.choice(self.padding))
        return " ".join(parts)

    def session(self, n_turns: int) -> list[tuple[str, str]]:
        """Alternating turns; an assistant turn answers the user line before it (the topic lists pair
        each user line with its answer), or acknowledges a life update like a story reply does."""
        r, extra = self.rng, self.extra
        topic = self.topics[r.choice(self.names)]
        out = []
        asked: int | None = None  # index of the user line the next assistant turn answers
        life = False
        for i in range(n_turns):
            if i % 2 == 0:
                asked, life, near = None, False, False
                if i and r.random() < 0.15:
                    topic = self.topics[r.choice(self.names)]
                x = r.random()
                if i and x < 0.41:
                    out.append(("user", r.choice(extra["short_user"])))
                elif self.near is not None and r.random() < NEAR_MISS_RATE and (text := self._near_miss()):
                    out.append(("user", text))
                    near = True
                elif x > 1 - self.p_life:
                    out.append(("user", self._life()))
                    life = True
                else:
                    k = 2 if r.random() < 0.15 else 1
                    picks = r.sample(range(len(topic["user"])), k)
                    asked = picks[-1]
                    out.append(("user", " ".join(self._fill(topic["user"][j]) for j in picks)))
            else:
                if life:
                    out.append(("assistant", r.choice(self.replies)))
                    continue
                if near:
                    pool = self.replies if r.random() < 0.6 else extra["short_assistant"]
                    out.append(("assistant", r.choice(pool)))
                    continue
                if asked is None and r.random() < 0.8:
                    out.append(("assistant", r.choice(extra["short_assistant"])))
                    continue
                answers = topic["assistant"]
                j = asked if asked is not None and asked < len(answers) else r.randrange(len(answers))
                lines = [self._fill(answers[j])]
                if r.random() < 0.07:
                    lines.append(self._fill(r.choice(answers)))
                if r.random() < 0.15:
                    lines.insert(0, r.choice(self.replies))
                out.append(("assistant", " ".join(lines)))
        return out


def make_filler(
    seed: int,
    stream_name: str,
    dates: Sequence[date],
    n_turns: int,
    level: int,
    uid: Counter,
    seq: Counter,
    near: NearMiss | None = None,
) -> list[DSession]:
    """Filler sessions on ``dates`` (one each) holding ``n_turns`` turns in all; with ``near``, some
    user turns are near misses about the story's cast."""
    rng = stream(seed, "filler", stream_name)
    talk = _Talk(rng, near)
    out = []
    for d, n in zip(dates, split_turns(n_turns, len(dates), rng)):
        turns = [DTurn(uid(), spk, text) for spk, text in talk.session(n)]
        out.append(DSession(d.isoformat(), seq(), level, turns))
    return out


def filler_sessions(
    n_turns: int, seed: int, dates: list[str], start_turn_id: int = 1, start_session_id: int = 1
) -> list[Session]:
    """Filler sessions, one per date in ``dates`` (ISO strings, any order kept), ``n_turns`` turns in
    all, numbered from ``start_turn_id`` / ``start_session_id``. Deterministic in its arguments."""
    if n_turns < len(dates):
        raise BenchContractError(f"{n_turns} turns cannot fill {len(dates)} sessions (at least one turn each)")
    uid, seq = Counter(start_turn_id), Counter()
    days = [date.fromisoformat(d) for d in dates]
    out = []
    for k, s in enumerate(make_filler(seed, "padding", days, n_turns, 0, uid, seq)):
        sid = start_session_id + k
        turns = tuple(Turn(t.uid, sid, t.speaker, t.text, dates[k]) for t in s.turns)
        out.append(Session(sid, dates[k], turns))
    return out
