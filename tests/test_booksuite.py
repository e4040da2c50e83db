"""The book-suite loader, its bench conversion, and reading answer sets and run records."""

import json
from collections import Counter

import pytest

from memeval.bench.io import load_bench, read_questions, read_turns
from memeval.bench.loaders.booksuite import (
    LAYER_AXES,
    answers_from_run,
    import_booksuite,
    load_booksuite,
    read_answers,
    read_case,
    read_responses,
)
from memeval.errors import InputError

from booksuite_paths import SUITE


@pytest.fixture(scope="module")
def suite():
    return load_booksuite(SUITE)


@pytest.fixture(scope="module")
def bench_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench") / "booksuite"
    import_booksuite(SUITE, out)
    return out


def test_reads_all_60_cases_with_the_published_counts(suite):
    # counts from SOURCE.md
    assert len(suite.cases) == 60
    assert Counter(c.layer for c in suite.cases) == {"layer1": 20, "layer2": 20, "layer3": 20}
    assert sum(len(c.histories) for c in suite.cases) == 140
    assert sum(len(h.messages) for c in suite.cases for h in c.histories) == 13042
    sizes = [len(h.messages) for c in suite.cases for h in c.histories]
    assert min(sizes) == 56 and max(sizes) == 153
    assert len(suite.gold) == 8


def test_test_id_comes_from_the_file_not_its_name(suite):
    c = suite.case("layer1_05_internet_service")
    assert c.source_file.endswith("05_internet_service_setup.yaml")
    assert "VEL-89923476" in c.evaluation_criteria


def test_bench_folder_shape(bench_dir):
    bench = load_bench(bench_dir)
    assert bench.name == "booksuite" and bench.license == "Apache-2.0" and "4a8df464" in bench.source
    assert dict(bench.axis_map) == {"layer1": "BASIC", "layer2": "MULTI", "layer3": "IMPLICIT"}
    (tier,) = bench.tiers
    assert (tier.n_turns, tier.n_sessions, tier.n_questions) == (13042, 140, 60)
    assert (bench_dir / "LICENSE").is_file()


def test_turns_restart_per_haystack_and_sessions_are_chronological(bench_dir, suite):
    turns = read_turns(bench_dir / "booksuite_turns.jsonl")
    by_hay = {}
    for t in turns:
        by_hay.setdefault(t.haystack, []).append(t)
    assert len(by_hay) == 60
    for c in suite.cases:
        ids = [t.turn_id for t in by_hay[c.test_id]]
        assert ids == list(range(1, sum(len(h.messages) for h in c.histories) + 1))
    # layer3_01 lists its conversations out of date order (06-15, 11-22, 10-05): ingested by date
    t01 = by_hay["layer3_01_travel_coordination"]
    order = list(dict.fromkeys((t.session_id, t.date) for t in t01))
    assert [d for _, d in order] == ["2024-06-15", "2024-10-05", "2024-11-22"]
    first = by_hay["layer1_01_bank_account"][0]
    assert (first.session_id, first.speaker, first.date) == ("bank_setup_001", "user", "2024-11-15")
    assert first.text == "Hi, I'd like to open a new checking account please."


def test_questions_carry_layer_gold_and_criteria(bench_dir):
    qs = {q.id: q for q in read_questions(bench_dir / "booksuite_questions.jsonl")}
    assert len(qs) == 60
    q = qs["layer3_01_travel_coordination"]
    assert q.axis == "IMPLICIT" and q.extra["layer"] == "layer3" and q.haystack == q.id
    assert q.question_en.startswith("I'm finalizing my trip to Tokyo in January.")
    assert q.asked_at == "2024-11-23"  # the day after the last conversation (2024-11-22)
    assert q.extra["required_facts"] == ["passport", ["February 18", "Feb 18"], "DELTA-JMK892", "Priority Pass"]
    assert q.gold_parts == ("passport", "February 18", "DELTA-JMK892", "Priority Pass")
    assert "passport expiration" in q.extra["evaluation_criteria"]
    assert q.extra["expected_behavior"].startswith("The agent should urgently flag")
    nogold = qs["layer2_02_multiple_properties"]
    assert nogold.extra["has_gold"] is False and "required_facts" not in nogold.extra
    assert nogold.gold_answer == "" and nogold.evidence_turns == () and nogold.axis == "MULTI"
    assert {q.axis for q in qs.values()} == set(LAYER_AXES.values())


def test_evidence_turns_are_the_turns_holding_a_fact(bench_dir):
    turns = {
        t.turn_id: t for t in read_turns(bench_dir / "booksuite_turns.jsonl") if t.haystack == "layer1_01_bank_account"
    }
    q = next(q for q in read_questions(bench_dir / "booksuite_questions.jsonl") if q.id == "layer1_01_bank_account")
    assert q.evidence_turns
    for i in q.evidence_turns:
        assert "4429853327" in turns[i].text or "123006800" in turns[i].text
    rest = [t for i, t in turns.items() if i not in q.evidence_turns]
    assert not any("4429853327" in t.text or "123006800" in t.text for t in rest)


def test_import_through_the_memeval_import_command(tmp_path, capsys):
    from memeval.cli import main

    assert main(["import", "booksuite", str(SUITE), "--out", str(tmp_path / "b")]) == 0
    assert "13042 turns, 140 sessions" in capsys.readouterr().out
    assert len(read_questions(tmp_path / "b" / "booksuite_questions.jsonl")) == 60


# --- malformed input ---------------------------------------------------------------------------

CASE = """\
test_id: layer1_99_x
category: layer1
title: t
description: d
conversation_histories:
- conversation_id: c1
  timestamp: '2024-01-02 10:00:00'
  messages:
  - role: user
    content: my code is AB-12
  - role: assistant
    content: noted
user_question: what is my code?
evaluation_criteria: says AB-12
"""


def _suite_with(tmp_path, text, name="99_x.yaml"):
    root = tmp_path / "suite"
    (root / "test_cases" / "layer1").mkdir(parents=True)
    (root / "test_cases" / "layer1" / name).write_text(text)
    return root


@pytest.mark.parametrize(
    "old,new,where",
    [
        ("user_question: what is my code?\n", "", "record layer1_99_x: field 'user_question': missing"),
        ("'2024-01-02 10:00:00'", "'02/01/2024'", "record layer1_99_x.conversation_histories[0]: field 'timestamp'"),
        (
            "  - role: assistant\n",
            "  - role: 7\n",
            "record layer1_99_x.conversation_histories[0].messages[1]: field 'role': expected a string",
        ),
        ("category: layer1", "category: layer4", "field 'category': expected one of layer1, layer2, layer3"),
        ("  messages:\n", "  messages: []\n  old:\n", "field 'messages': expected a non-empty list"),
        ("    content: noted\n", "    text: noted\n", "messages[1]: field 'content': missing"),
        (
            "    content: noted\n",
            "    content: 4429853327\n",
            "messages[1]: field 'content': expected a string, got int",
        ),
        ("    content: noted\n", "    content:\n", "messages[1]: field 'content': expected a string, got NoneType"),
    ],
)
def test_malformed_case_names_file_record_and_field(tmp_path, old, new, where):
    assert old in CASE
    root = _suite_with(tmp_path, CASE.replace(old, new))
    out = tmp_path / "out"
    with pytest.raises(InputError) as e:
        import_booksuite(root, out)
    assert str(e.value).startswith(str(root / "test_cases" / "layer1" / "99_x.yaml"))
    assert where in str(e.value)
    assert not out.exists()  # nothing half-written


def test_invalid_yaml_names_the_line(tmp_path):
    root = _suite_with(tmp_path, CASE.replace("title: t\n", "title: [unclosed\n"))
    with pytest.raises(InputError, match=r"99_x.yaml:\d+: not valid YAML"):
        load_booksuite(root)


def test_valid_minimal_case_and_duplicate_ids(tmp_path):
    root = _suite_with(tmp_path, CASE)
    c = read_case(root / "test_cases" / "layer1" / "99_x.yaml")
    assert (c.test_id, c.asked_at, c.histories[0].messages[0].content) == (
        "layer1_99_x",
        "2024-01-03",
        "my code is AB-12",
    )
    (root / "test_cases" / "layer1" / "98_dup.yaml").write_text(CASE)
    with pytest.raises(InputError, match="duplicate test_id"):
        load_booksuite(root)


def test_gold_for_an_unknown_case_is_an_error(tmp_path):
    root = _suite_with(tmp_path, CASE)
    (root / "fixtures").mkdir()
    (root / "fixtures" / "gold_facts.json").write_text(json.dumps({"layer9_x": {"required_facts": ["a"]}}))
    with pytest.raises(InputError, match="record layer9_x: gold facts for a test_id that is not in the suite"):
        load_booksuite(root)


def test_not_a_suite_folder(tmp_path):
    with pytest.raises(InputError, match="no test_cases/ folder"):
        load_booksuite(tmp_path)


# --- answers -----------------------------------------------------------------------------------


def test_read_responses_and_answers_validate(tmp_path):
    known = {"a", "b"}
    p = tmp_path / "r.json"
    p.write_text(json.dumps({"_comment": "x", "s1": {"a": "yes", "_note": "skip"}, "s2": {"b": "no"}}))
    assert read_responses(p, known) == {"s1": {"a": "yes"}, "s2": {"b": "no"}}
    p.write_text(json.dumps({"s1": {"a": 3}}))
    with pytest.raises(InputError, match="record s1.a: answer must be a string"):
        read_responses(p, known)
    p.write_text(json.dumps({"zz": "x"}))
    with pytest.raises(InputError, match="record zz: unknown test_id"):
        read_answers(p, known)


def test_answers_from_run_records(tmp_path):
    rows = [
        {"qid": "a", "epoch": 0, "answer": "own answer", "memories_returned": ["m"]},
        {"qid": "b", "epoch": 0, "answer": None, "memories_returned": ["m1", "m2"]},
        {"qid": "c", "epoch": 0, "error": "HTTP 500", "chars_returned": 0},
        {"qid": "a", "epoch": 1, "answer": "second epoch"},
    ]
    (tmp_path / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert answers_from_run(tmp_path) == {"a": "own answer", "b": "m1\nm2"}
    assert answers_from_run(tmp_path, epoch=1) == {"a": "second epoch"}
    with pytest.raises(InputError, match="no records.jsonl"):
        answers_from_run(tmp_path / "nope")


def test_import_refuses_a_non_empty_folder_unless_forced(tmp_path):
    from memeval.errors import MemevalError

    root = _suite_with(tmp_path, CASE)
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("x")
    with pytest.raises(MemevalError, match="not empty"):
        import_booksuite(root, out)
    assert (out / "keep.txt").is_file()
    bench = import_booksuite(root, out, force=True)
    assert bench.root == str(out) and (out / "bench.yaml").is_file() and not (out / "keep.txt").exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no staging left behind


def test_a_case_read_again_is_not_parsed_again_but_names_its_own_file(tmp_path, monkeypatch):
    """Issue 23: parsed cases are kept by the hash of their text; a copy elsewhere is the same case with its own
    ``source_file``, an edited file is parsed afresh, and an invalid file is refused every time."""
    import memeval.bench.loaders.booksuite as bs

    src = SUITE / "test_cases" / "layer1" / "01_bank_account_setup.yaml"
    a, b = tmp_path / "a.yaml", tmp_path / "b.yaml"
    a.write_bytes(src.read_bytes())
    b.write_bytes(src.read_bytes())
    first = read_case(a)
    parses = []
    real = bs._parse_case
    monkeypatch.setattr(bs, "_parse_case", lambda obj, path: parses.append(path) or real(obj, path))
    again = read_case(b)
    assert parses == [] and again.source_file == str(b) and first.source_file == str(a)
    assert again == bs.replace(first, source_file=str(b))
    b.write_text(src.read_text(encoding="utf-8").replace("Bank", "Banque"), encoding="utf-8")
    edited = read_case(b)
    assert parses == [b] and edited != again
    b.write_text("test_id: [unclosed", encoding="utf-8")
    for _ in range(2):
        with pytest.raises(InputError, match="b.yaml"):
            read_case(b)
    assert read_case(a) == first
