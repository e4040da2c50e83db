"""Official abstention wording, on a LoCoMo-format fixture: LoCoMo credits a category-5 answer only when
it says "not mentioned" or "no information available". The reader prompt for LoCoMo asks for those
words, the oracle and the always-IDK probe use them, and the audit grades the oracle's abstention by
the official metric."""

from __future__ import annotations

import json

from test_loaders_locomo import _conv, _write as _write_locomo

import memeval.bench.oracle as oracle_mod
from memeval.audit import audit
from memeval.bench import load_bench, read_questions
from memeval.bench.model import Question
from memeval.bench.loaders.locomo import import_locomo
from memeval.bench.oracle import IDK_ANSWERS, LOCOMO_ABSTENTION, abstention_answer
from memeval.llm import ChatClient
from memeval.run import read_records, run_system
from memeval.scoring.bounds import tier_bounds
from memeval.scoring.idk import is_idk
from memeval.scoring.judge import Judge, Reader
from memeval.scoring.locomo_f1 import locomo_score
from memeval.testing.chat_stub import ScriptedChatServer


def _locomo(tmp_path):
    import_locomo([_write_locomo(tmp_path, [_conv("conv-26")])], tmp_path / "locomo")
    b = load_bench(tmp_path / "locomo")
    return tmp_path / "locomo", read_questions(tmp_path / "locomo" / b.tier("all").questions_file)


def test_oracle_and_always_idk_abstain_in_locomo_words(tmp_path):
    _, qs = _locomo(tmp_path)
    cat5 = [q for q in qs if q.extra.get("locomo_category") == 5]
    assert cat5
    for q in cat5:
        a = abstention_answer(q)
        assert locomo_score(5, a, q.gold_answer) == 1.0 and is_idk(a)
    # memeval's plain abstention would score 0 there: the wording is what the metric reads
    assert locomo_score(5, IDK_ANSWERS["en"], "x") == 0.0
    # the always-IDK probe of the bounds is the same abstention: full abstention credit on category 5
    b = tier_bounds(cat5, lambda q: [])
    assert b is not None and b.idk.unweighted == 1.0 and b.ceiling.unweighted == 1.0
    # other benches keep memeval's own phrase
    assert abstention_answer(Question("x", "ABSTAIN", "?", expect="no_memory")) == IDK_ANSWERS["en"]


def test_oracle_answer_run_on_locomo_passes_the_official_check(tmp_path):
    root, _ = _locomo(tmp_path)

    def reply(body):
        return json.dumps({"verdict": "correct", "evidence": "x"})

    with ScriptedChatServer(reply) as srv:
        client = ChatClient(srv.base_url, "m", backoff=0.001, max_attempts=2)
        rd = run_system(
            root,
            "oracle",
            mode="answer",
            judge=Judge(client),
            reader=Reader(client),
            out=tmp_path / "r",
            progress=False,
        )
    recs = [r for r in read_records(rd) if r["qid"] == "conv-26-q5"]  # the category-5 question
    assert len(recs) == 1 and recs[0]["official_metric"] == "locomo-f1" and recs[0]["official_score"] == 1.0


def test_the_reader_prompt_for_locomo_asks_for_the_official_words(tmp_path):
    _, qs = _locomo(tmp_path)
    seen: list[str] = []

    def reply(body):
        seen.append(body["messages"][0]["content"])
        return "ok"

    with ScriptedChatServer(reply) as srv:
        reader = Reader(ChatClient(srv.base_url, "m", backoff=0.001, max_attempts=2))
        reader.answer(qs[0], ("a memory",))  # a LoCoMo question of any category: the reader is not told which
        reader.answer(Question("g1", "BASIC", "What colour?", "teal"), ("a memory",))
    assert LOCOMO_ABSTENTION.reader_words in seen[0] and LOCOMO_ABSTENTION.passes(LOCOMO_ABSTENTION.reader_words)
    assert LOCOMO_ABSTENTION.reader_words not in seen[1] and "never mentioned" in seen[1]
    ident = reader.identity()
    assert ident["prompt"] == "reader_v1" and ident["bench_prompts"]["LoCoMo"]["prompt"] == "reader_locomo_v1"


def test_audit_grades_the_oracles_abstention_by_the_official_metric(tmp_path, monkeypatch):
    root, _ = _locomo(tmp_path)
    bounds = audit(root).check("bounds")
    assert bounds.passed and bounds.numbers["all"]["official_abstention"] == {"n": 1, "passed": 1}
    # an abstention in memeval's own words would fail the official metric: the audit says so
    wrong = oracle_mod.OfficialAbstention(
        "LoCoMo", "locomo_category", LOCOMO_ABSTENTION.phrases, IDK_ANSWERS["en"], "It was never mentioned."
    )
    monkeypatch.setattr(oracle_mod, "OFFICIAL_ABSTENTIONS", (wrong,))
    report = audit(root)
    bounds = report.check("bounds")
    assert not bounds.passed and bounds.numbers["all"]["official_abstention"] == {"n": 1, "passed": 0}
    assert any("official metric" in f.reason and f.qid == "conv-26-q5" for f in report.findings)
