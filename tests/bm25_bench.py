"""A generated bench for pinning bm25's records: nested tiers, one tier of several haystacks, repeated
texts, CJK text, turns of stop words only, numbers, questions with unknown or no content words.

Deterministic (``random.Random`` with a fixed seed; no memeval generator involved), so the records
bm25 gives on it can be compared against a fixture written once by an earlier memeval.
"""

from __future__ import annotations

import random

from memeval.bench import Question, Turn, save_bench, write_questions, write_turns
from memeval.bench.model import Bench, Tier

WORDS = (
    "dentist okafor pine street beagle biscuit gym membership dollars price garden tomato basil "
    "violin lesson tuesday marathon training knee physio sister lena berlin flight delayed hotel "
    "pasta spinach garlic olive parmesan tea green steep porch cat pickles neighbour recipe "
    "painting watercolour museum ticket concert jazz trumpet bakery sourdough starter rye oven"
).split()
STOP = "the a an and of to is was it in on for with my me i you we".split()
CJK = ["東京タワー", "牙医", "我的猫叫米索", "北京", "コーヒー"]


def _text(rng: random.Random) -> str:
    kind = rng.random()
    if kind < 0.05:
        return " ".join(rng.choice(STOP) for _ in range(rng.randint(1, 5))) + "."  # no content word
    if kind < 0.08:
        return "?!"
    words = [rng.choice(WORDS + STOP) for _ in range(rng.randint(3, 25))]
    if rng.random() < 0.2:
        words.append(str(rng.randint(1, 300)))
    if rng.random() < 0.1:
        words.insert(rng.randint(0, len(words)), rng.choice(CJK))
    if rng.random() < 0.2:
        words = [w.capitalize() if rng.random() < 0.3 else w for w in words]
    return " ".join(words) + rng.choice([".", "!", "?", ""])


def _turns(rng: random.Random, n: int, pool: list[str], haystack: str | None = None, start_session: int = 1):
    out, sid = [], start_session
    for i in range(n):
        if i % 6 == 0:
            sid += 1
        text = rng.choice(pool) if rng.random() < 0.4 else _text(rng)  # many repeated texts
        out.append(
            Turn(
                i + 1,
                sid,
                "user" if i % 2 == 0 else "assistant",
                text,
                f"2026-{1 + i * 11 // n:02d}-01",
                haystack=haystack,
            )
        )
    return out


def _questions(rng: random.Random, turns: list[Turn], n: int, haystack: str | None = None):
    qs = []
    for i in range(n):
        ev = rng.choice(turns)
        words = [w for w in ev.text.rstrip(".!?").split() if w.lower() not in STOP]
        gold = rng.choice(words) if words else "never mentioned"
        r = rng.random()
        if r < 0.1:
            ask = "what is it?"  # stop words only
        elif r < 0.15:
            ask = "zebra quokka?"  # words no turn has
        else:
            ask = " ".join(rng.sample(words, min(len(words), rng.randint(1, 4))) + [rng.choice(WORDS)]) + "?"
        qs.append(
            Question(
                f"{haystack or 'q'}-{i}",
                "BASIC",
                ask,
                gold,
                evidence_turns=(ev.turn_id,),
                asked_at="2026-12-01",
                haystack=haystack,
            )
        )
    return qs


def make_bm25_bench(root, seed: int = 16) -> str:
    """Tiers ``core`` (120 turns) ⊂ ``big`` (900 turns), and ``hay`` (three haystacks of 200 turns)."""
    rng = random.Random(seed)
    pool = [_text(rng) for _ in range(60)]
    core = _turns(rng, 120, pool)
    big = core + [
        Turn(t.turn_id + 120, t.session_id + 40, t.speaker, t.text, t.date) for t in _turns(rng, 780, pool, None, 0)
    ]
    hay_turns, hay_qs = [], []
    for h in ("h1", "h2", "h3"):
        ts = _turns(rng, 200, pool, h)
        hay_turns += ts
        hay_qs += _questions(rng, ts, 25, h)
    files = {
        "core": (core, _questions(rng, core, 60)),
        "big": (big, _questions(rng, big, 80)),
        "hay": (hay_turns, hay_qs),
    }
    tiers = []
    for name, (turns, qs) in files.items():
        write_turns(root / f"turns_{name}.jsonl", turns)
        write_questions(root / f"questions_{name}.jsonl", qs)
        tiers.append(
            Tier(name, f"turns_{name}.jsonl", f"questions_{name}.jsonl", n_turns=len(turns), n_questions=len(qs))
        )
    save_bench(Bench(name="bm25-pin", version="1", tiers=tuple(tiers), root=str(root)))
    return str(root)
