"""Synthetic run records with exactly the columns of ``memeval.analysis.aggregate.load_records``.

Every value is written out here by hand or by a tiny rule, so tests can compute what a plot
or table must show without calling the code under test.
"""

from __future__ import annotations

import polars as pl

from memeval.analysis.aggregate import record_schema

__all__ = ["TIERS", "record", "records_frame", "synthetic_records"]

# (name, index, turns, tokens)
TIERS = [("core", 0, 100, 4_000), ("small", 1, 1_000, 40_000), ("medium", 2, 10_000, 400_000)]

#: the schema of ``load_records`` (derived from the typed record) plus the question-set flag it adds
SCHEMA = {**record_schema(), "in_all_tiers": pl.Boolean}
COLUMNS = list(SCHEMA)

_WEIGHTS = {"BASIC": 1, "TEMPORAL": 2, "ABSTAIN": 3, "MULTI": 3}


def record(**kw) -> dict:
    """One record with defaults for every column; keyword arguments override."""
    tier = kw.get("tier", "core")
    name, idx, turns, tokens = next(t for t in TIERS if t[0] == tier)
    axis = kw.get("axis", "BASIC")
    score = kw.get("score", 1.0)
    verdict = None if score is None else ("correct" if score == 1 else "partial" if score > 0 else "wrong")
    row = {
        "run_id": kw.get("system", "bm25") + "-run",
        "system": "bm25",
        "mode": "dry",
        "tier": name,
        "tier_index": idx,
        "tier_turns": turns,
        "tier_tokens": tokens,
        "qid": "Q1",
        "axis": axis,
        "weight": _WEIGHTS.get(axis, 1),
        "epoch": 0,
        "question_asked": "Where does Ana live?",
        "query_lang": "en",
        "gold_answer": "Lyon",
        "evidence_turns": [3],
        "answer": "Lyon",
        "memories_returned": ["I live in Lyon."],
        "retrieved_turns": [3],
        "chars_returned": 15,
        "retrieval_hit": True,
        "score": score,
        "verdict": verdict,
        "grader": "dry-rules",
        "ungraded_reason": None,
        "latency_ms": 12.0,
        "network_ms": 0.0,
        "latency_minus_rtt_ms": 12.0,
        "response_bytes": 100,
        "speed_points": 1.0,
        "speed_status": "in_process",
        "speed_reason": None,
        "error": None,
        "in_all_tiers": True,
        "started_at": "2026-11-30T10:00:00Z",
    }
    row.update(kw)
    if "verdict" not in kw:
        row["verdict"] = verdict
    return row


def records_frame(rows: list[dict]) -> pl.DataFrame:
    return pl.DataFrame([{c: r.get(c) for c in COLUMNS} for r in rows], schema=SCHEMA)


def synthetic_records() -> pl.DataFrame:
    """Three systems over three tiers with hand-chosen scores.

    Core questions Q1..Q4 (axes BASIC, TEMPORAL, ABSTAIN, MULTI) are in every tier; Q9 is only in
    ``medium`` (in_all_tiers False). Scores (per tier core/small/medium):

    - no_memory: 0 everywhere except ABSTAIN = 1  -> mean 0.25 on the core set in every tier
    - oracle: 1 everywhere                        -> mean 1.0
    - bm25: Q1 1/1/0, Q2 1/0/0, Q3 1/1/1, Q4 1/0.5/None(error) -> core means 1.0, 0.625, 1/3
      and Q9 in medium scores 1 (so "all questions" medium mean = 0.5)
    """
    rows = []
    axes = {"Q1": "BASIC", "Q2": "TEMPORAL", "Q3": "ABSTAIN", "Q4": "MULTI"}
    bm25 = {"Q1": (1.0, 1.0, 0.0), "Q2": (1.0, 0.0, 0.0), "Q3": (1.0, 1.0, 1.0), "Q4": (1.0, 0.5, None)}
    for tier, ti, _, _ in TIERS:
        for qid, axis in axes.items():
            ev = [] if axis == "ABSTAIN" else [10 + int(qid[1:])]
            hit = None if axis == "ABSTAIN" else True
            rows.append(
                record(
                    system="no_memory",
                    tier=tier,
                    qid=qid,
                    axis=axis,
                    evidence_turns=ev,
                    score=1.0 if axis == "ABSTAIN" else 0.0,
                    answer="I don't know",
                    memories_returned=[],
                    retrieved_turns=[],
                    chars_returned=0,
                    retrieval_hit=None if axis == "ABSTAIN" else False,
                )
            )
            rows.append(
                record(system="oracle", tier=tier, qid=qid, axis=axis, evidence_turns=ev, score=1.0, retrieval_hit=hit)
            )
            s = bm25[qid][ti]
            bm_hit = None if axis == "ABSTAIN" else (tier != "medium")
            rows.append(
                record(
                    system="bm25",
                    tier=tier,
                    qid=qid,
                    axis=axis,
                    evidence_turns=ev,
                    score=s,
                    retrieval_hit=bm_hit,
                    error="timeout" if s is None else None,
                    latency_ms=float(10 * (ti + 1)),
                    latency_minus_rtt_ms=float(10 * (ti + 1)),
                )
            )
    rows.append(record(system="bm25", tier="medium", qid="Q9", axis="BASIC", score=1.0, in_all_tiers=False))
    rows.append(record(system="oracle", tier="medium", qid="Q9", axis="BASIC", score=1.0, in_all_tiers=False))
    rows.append(
        record(
            system="no_memory",
            tier="medium",
            qid="Q9",
            axis="BASIC",
            score=0.0,
            in_all_tiers=False,
            retrieval_hit=False,
        )
    )
    return records_frame(rows)
