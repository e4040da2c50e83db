"""A tier is read one haystack at a time (issue 31): a dry run's memory does not grow with the tier,
the validity gate is graded once per bench, and a haystack read from its byte spans is the turns
``read_turns`` gives for it."""

import json
import random
import tracemalloc

import pytest

from memeval.audit import validity
from memeval.bench.io import read_turns
from memeval.bench.loaders.longmemeval import import_longmemeval
from memeval.bench.model import haystacks_of
from memeval.bench.stream import TierTurns
from memeval.errors import InputError
from memeval.run.runner import run_system

WORDS = "we went to the park and had lunch with my sister then watched a movie about dogs at home".split()


def _lme(path, haystacks: int, sessions: int = 10, turns: int = 10, seed: int = 0):
    rng = random.Random(seed)
    out = []
    for h in range(haystacks):
        hs, ids, dates = [], [], []
        for s in range(sessions):
            sess = []
            for t in range(turns):
                text = " ".join(rng.choice(WORDS) for _ in range(40))
                turn = {"role": "user" if t % 2 == 0 else "assistant", "content": text}
                if s == min(3, sessions - 1) and t == 2:
                    turn["content"] = f"my cousin is called Zorb{h}. " + text
                    turn["has_answer"] = True
                sess.append(turn)
            hs.append(sess)
            ids.append(f"s{h}_{s}")
            dates.append(f"2023/05/{1 + s:02d} (Mon) 10:00")
        out.append(
            {
                "question_id": f"q{h}",
                "question_type": "single-session-user",
                "question": "What is my cousin called?",
                "answer": f"Zorb{h}",
                "question_date": "2023/06/01 (Thu) 10:00",
                "haystack_session_ids": ids,
                "haystack_dates": dates,
                "haystack_sessions": hs,
                "answer_session_ids": [ids[min(3, sessions - 1)]],
            }
        )
    path.write_text(json.dumps(out))
    return path


def _peak_of_dry_run(tmp_path, name: str, haystacks: int) -> int:
    src = _lme(tmp_path / f"{name}_m.json", haystacks)
    bench = tmp_path / name
    import_longmemeval([src], bench)
    tracemalloc.start()
    try:
        run_system(bench, "recent:tokens=500", out=tmp_path / f"run_{name}", progress=False)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_dry_run_peak_memory_does_not_grow_with_the_tier(tmp_path):
    small = _peak_of_dry_run(tmp_path, "small", 30)
    large = _peak_of_dry_run(tmp_path, "large", 90)  # 3x the turns: a tier held whole would need ~3x
    assert large < 1.6 * small, (small, large)


def test_tier_turns_reads_each_haystack_as_read_turns_does(tmp_path):
    import_longmemeval([_lme(tmp_path / "longmemeval_s.json", 4, sessions=3, turns=4)], tmp_path / "b")
    path = tmp_path / "b" / "turns_s.jsonl"
    whole = haystacks_of(read_turns(path))
    tt = TierTurns(path)
    assert tt.haystacks == list(whole)
    for hay, sessions in whole.items():
        assert tt.sessions(hay) == sessions


def test_tier_turns_non_contiguous_haystack_and_duplicate_ids(tmp_path):
    lines = [
        {"turn_id": 1, "session_id": 1, "speaker": "user", "text": "a1", "date": "2024-01-01", "haystack": "a"},
        {"turn_id": 1, "session_id": 1, "speaker": "user", "text": "b1", "date": "2024-01-01", "haystack": "b"},
        {"turn_id": 2, "session_id": 2, "speaker": "user", "text": "a2", "date": "2024-01-02", "haystack": "a"},
    ]
    path = tmp_path / "turns.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    assert [t.text for t in TierTurns(path).turns("a")] == ["a1", "a2"]
    lines.append(dict(lines[0], text="again"))
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    with pytest.raises(InputError, match=r"turns.jsonl:4: field 'turn_id': duplicate turn_id 1"):
        TierTurns(path).turns("a")


def test_gate_is_graded_once_per_bench_hash(tmp_path, monkeypatch):
    import_longmemeval([_lme(tmp_path / "longmemeval_s.json", 3, sessions=3, turns=4)], tmp_path / "b")
    first = validity.dry_validity(tmp_path / "b", cache=True)
    assert (tmp_path / "b" / validity.CACHE_FILE).is_file()
    graded = []
    monkeypatch.setattr(validity, "_grade", lambda *a: graded.append(a) or {"valid": None, "reason": "x"})
    assert validity.dry_validity(tmp_path / "b", cache=True) == first and not graded  # read back
    validity.dry_validity(tmp_path / "b")  # not asked to cache: graded again
    assert len(graded) == 1


def test_an_empty_ranking_has_the_metrics_an_unmatched_ranking_has():
    """The memoised metrics of an empty ranking are those of a ranking holding no corpus turn (both rank
    nothing relevant), with session gold from the corpus or from ``evidence_sessions``, or none."""
    from memeval.bench.model import Question, Turn
    from memeval.scoring.retrieval import Corpus, ranking_metrics

    corpus = Corpus.of([Turn(i, 1 + i // 3, "user", f"t{i}", "2024-01-01") for i in range(1, 7)])
    for q in (
        Question("a", "BASIC", "?", "x", evidence_turns=(2, 5)),  # gold in the corpus
        Question("b", "BASIC", "?", "x", evidence_turns=(99,)),  # gold missing, no sessions: recall_all 1
        Question("c", "BASIC", "?", "x", evidence_turns=(99,), evidence_sessions=(7,)),
    ):
        empty, _ = ranking_metrics(q, [], [], corpus)
        unmatched, _ = ranking_metrics(q, [1000, 1001], [], corpus)
        assert empty == unmatched, q.id
