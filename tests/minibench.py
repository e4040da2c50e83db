"""A small hand-written bench (two nested tiers) for runner and system tests."""

from __future__ import annotations

from memeval.bench import Question, Turn, save_bench, write_questions, write_turns
from memeval.bench.model import Bench, Tier

STORY = [
    (1, "2026-01-05", "user", "My dentist is Dr Okafor on Pine Street."),
    (1, "2026-01-05", "assistant", "Noted, Dr Okafor on Pine Street."),
    (2, "2026-02-10", "user", "We adopted a beagle and named him Biscuit."),
    (2, "2026-02-10", "assistant", "Biscuit is a lovely name for a beagle."),
    (3, "2026-03-01", "user", "My gym membership costs 45 dollars a month."),
    (4, "2026-05-20", "user", "The gym raised the price, the membership is 52 dollars a month now."),
]
FILLER = [
    "Could you suggest a quick pasta recipe with spinach?",
    "Try garlic, olive oil, spinach and parmesan over spaghetti.",
    "What is a good stretch for the lower back after long flights?",
    "A gentle child's pose and knee-to-chest stretches help.",
    "My neighbour's cat is called Pickles and sleeps on our porch.",
    "How long should I steep green tea?",
]


def _turns(with_filler: int):
    rows, tid = [], 0
    filler_i = 0
    for sid, date, speaker, text in STORY:
        for _ in range(with_filler):
            tid += 1
            rows.append(
                Turn(
                    tid,
                    100 + filler_i,
                    "user" if filler_i % 2 == 0 else "assistant",
                    FILLER[filler_i % len(FILLER)] + f" (note {filler_i})",
                    date,
                )
            )
            filler_i += 1
        tid += 1
        rows.append(Turn(tid, sid, speaker, text, date))
    return rows


def _questions(turns):
    by_text = {t.text: t.turn_id for t in turns}

    def ev(i):
        return (by_text[STORY[i][3]],)

    return [
        Question("Q1", "BASIC", "Who is the user's dentist?", "Dr Okafor", evidence_turns=ev(0), asked_at="2026-06-01"),
        Question(
            "Q2",
            "BASIC",
            "What is the name of the user's beagle?",
            "Biscuit",
            evidence_turns=ev(2),
            asked_at="2026-06-01",
        ),
        Question(
            "Q3",
            "UPDATE",
            "How much does the user's gym membership cost per month now?",
            "52 dollars",
            gold_alts=("$52",),
            stale_answer="45 dollars",
            evidence_turns=ev(5),
            asked_at="2026-06-01",
        ),
        Question(
            "Q4",
            "ABSTAIN",
            "What is the name of the user's sister?",
            "never mentioned",
            expect="no_memory",
            asked_at="2026-06-01",
        ),
    ]


def make_minibench(root, filler=(0, 3)) -> str:
    """Tiers ``core`` (story only) and ``big`` (story with filler between turns)."""
    tiers = []
    for name, n in zip(("core", "big"), filler):
        turns = _turns(n)
        write_turns(root / f"turns_{name}.jsonl", turns)
        write_questions(root / f"questions_{name}.jsonl", _questions(turns))
        tiers.append(
            Tier(
                name,
                f"turns_{name}.jsonl",
                f"questions_{name}.jsonl",
                n_turns=len(turns),
                n_questions=4,
                n_tokens=len(turns) * 12,
            )
        )
    save_bench(Bench(name="mini", version="1", tiers=tuple(tiers), root=str(root)))
    return str(root)
