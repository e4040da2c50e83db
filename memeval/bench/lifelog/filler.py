"""Filler: ordinary assistant talk on everyday topics, with near-miss distractors (other people's
dentists, other pets, other days of the month). It never names a story person or value."""

from __future__ import annotations

import random
from datetime import date
from typing import Sequence

from ..model import Session, Turn
from .data import load
from .draft import Counter, DSession, DTurn
from .rng import stream

__all__ = ["filler_sessions", "make_filler", "split_turns"]


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


class _Talk:
    def __init__(self, rng: random.Random):
        self.rng = rng
        self.extra = load("filler")
        self.topics = self.extra["topics"]
        self.names = list(self.topics)
        self.pools = load("values")["filler"]
        story = load("story")
        self.replies, self.openers, self.glue = story["replies"], story["openers"], story["glue_user"]
        self.padding = story["long_padding"]
        self.p_life = 0.10

    def _fill(self, line: str) -> str:
        if "{" not in line:
            return line
        r, p = self.rng, self.pools
        fname = r.choice(p["people"]) + (" " + r.choice(p["last"]) if r.random() < 0.4 else "")
        return line.format(fname=fname, dentist=r.choice(p["dentists"]), fpet=r.choice(p["pets"]),
                           city=r.choice(p["cities"]), film=r.choice(p["films"]), fdish=r.choice(p["dishes"]),
                           plant=r.choice(p["plants"]), plang=r.choice(p["languages"]),
                           weekday=r.choice(p["weekdays"]), ord=r.choice(p["ordinals"]),
                           n=r.randint(2, 60), hour=r.randint(5, 11))

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
                asked, life = None, False
                if i and r.random() < 0.15:
                    topic = self.topics[r.choice(self.names)]
                x = r.random()
                if i and x < 0.41:
                    out.append(("user", r.choice(extra["short_user"])))
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


def make_filler(seed: int, stream_name: str, dates: Sequence[date], n_turns: int, level: int, uid: Counter,
                seq: Counter) -> list[DSession]:
    """Filler sessions on ``dates`` (one each) holding ``n_turns`` turns in all."""
    rng = stream(seed, "filler", stream_name)
    talk = _Talk(rng)
    out = []
    for d, n in zip(dates, split_turns(n_turns, len(dates), rng)):
        turns = [DTurn(uid(), spk, text) for spk, text in talk.session(n)]
        out.append(DSession(d.isoformat(), seq(), level, turns))
    return out


def filler_sessions(n_turns: int, seed: int, dates: list[str], start_turn_id: int = 1,
                    start_session_id: int = 1) -> list[Session]:
    """Filler sessions, one per date in ``dates`` (ISO strings, any order kept), ``n_turns`` turns in
    all, numbered from ``start_turn_id`` / ``start_session_id``. Deterministic in its arguments."""
    if n_turns < len(dates):
        raise ValueError(f"{n_turns} turns cannot fill {len(dates)} sessions (at least one turn each)")
    uid, seq = Counter(start_turn_id), Counter()
    days = [date.fromisoformat(d) for d in dates]
    out = []
    for k, s in enumerate(make_filler(seed, "padding", days, n_turns, 0, uid, seq)):
        sid = start_session_id + k
        turns = tuple(Turn(t.uid, sid, t.speaker, t.text, dates[k]) for t in s.turns)
        out.append(Session(sid, dates[k], turns))
    return out
