"""glasshouse v0.1's own core files, unchanged (../shared/external/glasshouse-v0.1, Apache-2.0): the
import keeps every published field and the counts equal the ones its SOURCE.md gives."""

import json
from collections import Counter

import pytest

from memeval.bench import load_bench, read_questions, read_turns
from memeval.audit import audit
from memeval.cli import main

from shared_data import GLASSHOUSE, needs_glasshouse

pytestmark = needs_glasshouse


@pytest.fixture(scope="module")
def bench_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("gh") / "bench"
    assert main(["import", "glasshouse", str(GLASSHOUSE), "--out", str(out)]) == 0
    return out


def test_published_counts(bench_dir):
    bench = load_bench(bench_dir)
    assert bench.tier_names == ("core",)  # only the core tier is in the shared copy
    tier = bench.tier("core")
    assert (tier.n_turns, tier.n_sessions, tier.n_questions) == (1882, 96, 633)
    turns = read_turns(bench_dir / tier.turns_file)
    assert [t.turn_id for t in turns] == list(range(1, 1883))
    assert len({t.session_id for t in turns}) == 96
    assert not any(t.image for t in turns)
    for t in turns:  # every published turn field is kept
        assert {"kind", "category", "core_session"} <= set(t.extra)
    qs = read_questions(bench_dir / tier.questions_file)
    assert Counter(q.axis for q in qs) == {
        "BASIC": 366,
        "MULTI": 59,
        "IMPLICIT": 46,
        "TEMPORAL": 45,
        "UPDATE": 36,
        "CONFLICT": 28,
        "ABSTAIN": 28,
        "STALE": 18,
        "CONTRADICT": 7,
    }
    assert Counter(q.expect for q in qs) == {
        "answer": 580,
        "no_memory": 28,
        "answer_or_abstain": 18,
        "flag_conflict": 7,
    }
    assert {q.expect for q in qs if q.axis == "STALE"} == {"answer_or_abstain"}
    assert {q.expect for q in qs if q.axis == "CONTRADICT"} == {"flag_conflict"}
    for q in qs:  # fields on every row
        d = q.to_dict()
        assert {
            "id",
            "axis",
            "domain",
            "need",
            "session",
            "question_en",
            "gold_answer",
            "expect",
            "evidence_turns",
            "evidence_sessions",
            "evidence_pinned",
            "required_memories",
        } <= set(d), q.id
    # 204 rows carry gold_alts; on the 18 STALE rows it is an empty list
    assert sum(1 for q in qs if q.gold_alts) == 204 - 18
    assert sum(1 for q in qs if "never" in q.extra) == sum(1 for q in qs if "near" in q.extra) == 28
    assert sum(1 for q in qs if q.stale_answer) == 18
    assert sum(1 for q in qs if q.clash_a) == sum(1 for q in qs if q.clash_b) == 7


def test_evidence_sessions_are_core_sessions_and_the_bad_row_is_an_audit_finding(bench_dir):
    bench = load_bench(bench_dir)
    assert bench.extra["evidence_session_field"] == "core_session"
    assert [m.split(":")[0] for m in bench.extra["evidence_session_mismatches"]["questions_core.jsonl"]] == ["Q366"]
    report = audit(bench_dir)
    found = [f for f in report.findings if f.check == "evidence-resolves"]
    assert [f.qid for f in found] == ["Q366"]
    assert "core_session 102" in found[0].reason and "[106]" in found[0].reason


def test_question_rows_are_the_published_bytes(bench_dir):
    # the question file is linked unchanged (nothing rewritten)
    assert (bench_dir / "questions_core.jsonl").read_bytes() == (GLASSHOUSE / "questions_core.jsonl").read_bytes()


def test_token_count_is_labelled_as_memevals_approximation(tmp_path, capsys):
    # glasshouse's README gives 78,584 tokens for core (its own count); memeval's approx-v1 is not
    # within 10% of it, so the figure memeval prints is labelled as its own approximation
    assert main(["import", "glasshouse", str(GLASSHOUSE), "--out", str(tmp_path / "b")]) == 0
    out = capsys.readouterr().out
    assert "core: 1882 turns, 96 sessions," in out
    assert "tokens (approx-v1: memeval's own approximation)" in out


def test_bm25_on_the_published_core_leaves_abstain_ungraded_as_glasshouse_does(bench_dir, tmp_path):
    from memeval.run.records import read_records
    from memeval.run.runner import run_system

    recs = read_records(run_system(bench_dir, "bm25:k=10", tiers=["core"], out=tmp_path / "run", progress=False))
    assert len(recs) == 633 and not any(r["error"] for r in recs)
    ungraded = [r for r in recs if r["score"] is None]
    assert len(ungraded) == 28 and {r["axis"] for r in ungraded} == {"ABSTAIN"}
    assert all("not graded on abstention" in r["ungraded_reason"] for r in ungraded)
    # graded answers are the retrieved turns' content: no date stamp in what the rules read
    graded = [r for r in recs if r["score"] is not None]
    assert len(graded) == 605
    assert {r["rule"].split(":")[0] for r in graded if r["axis"] == "STALE"} == {"stale"}
    assert {r["rule"].split(":")[0] for r in graded if r["axis"] == "CONTRADICT"} == {"contradict"}


def _jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def test_evidence_sessions_by_core_session_and_session_id_for_filler(tmp_path):
    from memeval.bench.loaders.glasshouse import import_glasshouse

    src = tmp_path / "gh"
    src.mkdir()
    story = [("The plot is a quarter acre.", 1), ("We planted 200 tomatoes.", 2)]
    core = [
        {
            "turn_id": i,
            "session_id": 10 + cs,
            "kind": "core",
            "category": "farming",
            "speaker": "user",
            "text": text,
            "core_session": cs,
            "date": f"2026-03-0{i}",
        }
        for i, (text, cs) in enumerate(story, 1)
    ]
    small = [
        {"turn_id": 1, "session_id": 500, "speaker": "user", "text": "My cat is called Miso.", "date": "2026-03-01"}
    ] + [dict(t, turn_id=t["turn_id"] + 1, session_id=600 + t["core_session"]) for t in core]
    _jsonl(src / "glasshouse_v0.1_core.jsonl", core)
    _jsonl(src / "glasshouse_v0.1_small.jsonl", small)
    q = {"axis": "BASIC", "question_en": "?", "expect": "answer"}
    _jsonl(
        src / "questions_core.jsonl",
        [
            dict(q, id="Q1", gold_answer="quarter acre", evidence_turns=[1], evidence_sessions=[1]),
            dict(q, id="Q2", gold_answer="200", evidence_turns=[2], evidence_sessions=[2]),
        ],
    )
    _jsonl(
        src / "questions_small.jsonl",
        [
            dict(q, id="Q1", gold_answer="quarter acre", evidence_turns=[2], evidence_sessions=[1]),
            dict(q, id="F1", gold_answer="Miso", evidence_turns=[1], evidence_sessions=[500]),
        ],
    )
    bench = import_glasshouse(src, tmp_path / "bench")
    assert bench.extra["evidence_session_field"] == "core_session"
    assert not bench.extra["evidence_session_mismatches"]
    assert [f for f in audit(tmp_path / "bench").findings if f.check == "evidence-resolves"] == []
