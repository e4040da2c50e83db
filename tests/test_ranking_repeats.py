"""Ranked metrics are robust to what systems return: each turn counts once (first occurrence kept; the
repeats are counted in the record) and every ranked metric stays in [0, 1]."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from memeval.bench.model import Question, Session, Turn
from memeval.run import read_records, run_system
from memeval.scoring.retrieval import Corpus, first_occurrences, ranking_metrics, ranking_repeats
from memeval.systems.base import Recall
from minibench import make_minibench

_TURNS = [Turn(i, (i - 1) // 3 + 1, "user", f"turn {i} text", "2026-01-01") for i in range(1, 13)]
CORPUS = Corpus.of(_TURNS)
Q = Question("q", "BASIC", "?", "x", evidence_turns=(2, 7))


def test_a_repeated_best_turn_scores_as_once():
    once, _ = ranking_metrics(Q, [2], [], CORPUS)
    ten, _ = ranking_metrics(Q, [2] * 10, [], CORPUS)
    assert ten == once
    assert ten["turn_ndcg@10"] <= 1.0 and ten["session_ndcg@10"] <= 1.0
    # before: the ten copies each counted as relevant; LongMemEval's DCG over 10 relevant ranks / ideal of 2
    assert ranking_repeats([2] * 10, None, CORPUS) == 9


def test_text_memories_mapping_to_one_turn_count_once():
    mems = ["turn 7 text", "[2026-01-01] user: turn 7 text", "unrelated", "turn 2 text"]
    got, source = ranking_metrics(Q, None, mems, CORPUS)
    want, _ = ranking_metrics(Q, [7, None, 2], [], CORPUS)
    assert source == "text" and got == want
    assert ranking_repeats(None, mems, CORPUS) == 1


def test_a_gold_id_missing_from_the_corpus_keeps_ndcg_at_most_one():
    q = Question("q", "BASIC", "?", "x", evidence_turns=(2, 99))  # 99 is not in the corpus
    got, _ = ranking_metrics(q, [99, 2], [], CORPUS)
    assert got["turn_ndcg@3"] == 1.0


ids = st.one_of(st.none(), st.integers(min_value=0, max_value=20))


@settings(max_examples=300, deadline=None)
@given(
    ranking=st.lists(ids, max_size=30),
    gold=st.lists(st.integers(min_value=0, max_value=20), min_size=1, max_size=5),
    n_turns=st.integers(min_value=0, max_value=15),
    per_session=st.integers(min_value=1, max_value=4),
    text=st.booleans(),
)
def test_every_ranked_metric_is_in_0_1(ranking, gold, n_turns, per_session, text):
    turns = [Turn(i, (i - 1) // per_session + 1, "user", f"t{i}", "2026-01-01") for i in range(1, n_turns + 1)]
    corpus = Corpus.of(turns)
    q = Question("q", "BASIC", "?", "x", evidence_turns=tuple(gold), evidence_sessions=(1,))
    if text:
        got, _ = ranking_metrics(q, None, [f"t{i}" if i is not None else "zzz" for i in ranking], corpus)
    else:
        got, _ = ranking_metrics(q, ranking, [], corpus)
    assert got is not None
    for name, v in got.items():
        assert 0.0 <= v <= 1.0 + 1e-12, (name, v)
    if not text and any(i is not None for i in ranking):
        deduped, dropped = first_occurrences(ranking)
        assert ranking_metrics(q, deduped, [], corpus)[0] == got
        assert ranking_repeats(ranking, None, corpus) == dropped


class Repeater:
    """Returns the first ingested turn ten times."""

    name, version, params = "repeater", "1", {}

    def reset(self) -> None:
        self.first: Turn | None = None

    def ingest(self, session: Session) -> None:
        self.first = self.first or session.turns[0]

    def query(self, question: str, asked_at: str | None) -> Recall:
        if self.first is None:
            return Recall()
        return Recall((self.first.text,) * 10, (self.first.turn_id,) * 10)


def test_a_duplicate_id_system_records_repeats_and_ndcg_at_most_one(tmp_path):
    bench = make_minibench(tmp_path / "b")
    rd = run_system(bench, "python:test_ranking_repeats:Repeater", runs_root=tmp_path / "runs", progress=False)
    recs = read_records(rd)
    assert recs and all(r["retrieval_repeats"] == 9 for r in recs if r.get("error") is None)
    values = [v for r in recs for v in (r.get("retrieval_metrics") or {}).values()]
    assert values and all(0.0 <= v <= 1.0 for v in values)
