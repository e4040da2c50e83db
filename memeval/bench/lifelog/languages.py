"""Sessions in ten other languages (facts stored there, asked in English: XLING_STORE) and English
facts asked in those languages (XLING_QUERY). Golds are names, numbers and codes, the same in
every language, so the dry rules can grade them."""

from __future__ import annotations

import random
from datetime import date, timedelta
from typing import Sequence

from ...errors import BenchContractError
from .data import LANGUAGES, language, load
from .draft import Counter, DQuestion, DSession, DTurn
from .rng import stream
from .story import KeyedFact
from .values import Values

__all__ = ["language_sessions", "query_questions"]


def _draw(rng: random.Random, pool: list[str], decks: dict[str, list[str]], key: str) -> str:
    deck = decks.get(key)
    if not deck:
        deck = decks[key] = list(pool)
        rng.shuffle(deck)
    return deck.pop()


def language_sessions(
    seed: int,
    values: Values,
    start: date,
    days: int,
    per_lang: int,
    facts_per_session: int,
    glue_pairs: int,
    uid: Counter,
    seq: Counter,
    level: int = 1,
):
    """(sessions, XLING_STORE questions): ``per_lang`` sessions in each language."""
    rng = stream(seed, "languages")
    store = load("xling")["store"]
    kinds = list(store)
    sessions: list[DSession] = []
    questions: list[DQuestion] = []
    k = 0
    for code in LANGUAGES:
        lang = language(code)
        for _ in range(per_lang):
            day = (start + timedelta(days=rng.randrange(days))).isoformat()
            plan = ["glue"] * glue_pairs + ["fact"] * facts_per_session
            body = plan[1:]
            rng.shuffle(body)
            plan = plan[:1] + body
            turns: list[DTurn] = []
            decks: dict[str, list[str]] = {}  # no line repeats within a session while the pool lasts
            for step in plan:
                if step == "glue":
                    turns.append(DTurn(uid(), "user", _draw(rng, lang["glue_user"], decks, "u")))
                else:
                    kind = kinds[k % len(kinds)]
                    k += 1
                    person, value = values.person(), values.draw(store[kind]["value"])
                    t = DTurn(uid(), "user", lang["facts"][kind].format(P=person, V=value))
                    turns.append(t)
                    questions.append(
                        DQuestion(
                            "XLING_STORE",
                            store[kind]["ask"].format(P=person),
                            value,
                            [t],
                            [f"L{k:04d}"],
                            level,
                            fields={"query_lang": "en", "store_lang": code},
                        )
                    )
                turns.append(DTurn(uid(), "assistant", _draw(rng, lang["glue_assistant"], decks, "a")))
            sessions.append(DSession(day, seq(), level, turns))
    return sessions, questions


def query_questions(seed: int, facts: Sequence[KeyedFact], per_lang: int) -> list[DQuestion]:
    """XLING_QUERY rows: English facts (with a language-invariant value) asked in each language."""
    rng: random.Random = stream(seed, "xling-query")
    story = load("story")["keyed"]
    usable = [f for f in facts if story[f.kind].get("xq")]
    if not usable and per_lang:
        raise BenchContractError("no BASIC/PARAPHRASE fact has a kind that XLING_QUERY can ask about")
    rng.shuffle(usable)
    out, i = [], 0
    for code in LANGUAGES:
        templates = language(code)["xq"]
        for _ in range(per_lang):
            f = usable[i % len(usable)]
            i += 1
            spec = story[f.kind]
            src = f.question
            ask = spec["ask"][0] if isinstance(spec["ask"], list) else spec["ask"]  # the plain English form
            out.append(
                DQuestion(
                    "XLING_QUERY",
                    ask.format(who=f.person, **f.extra),
                    f.value,
                    list(src.evidence),
                    list(src.need),
                    0,
                    fields={
                        "question": templates[spec["xq"]].format(who=f.person.split(" ")[0]),
                        "query_lang": code,
                        "store_lang": "en",
                    },
                    source=src,
                )
            )
    return out
