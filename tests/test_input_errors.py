"""The bad inputs of issue 10, one by one: each is an InputError naming file, line and field."""

import json

import pytest
import yaml
from minibench import make_minibench

from memeval.bench.io import iter_jsonl, load_bench, read_json, read_questions, read_turns, read_yaml
from memeval.bench.loaders._jsonstream import iter_json_array
from memeval.errors import InputError
from memeval.multiturn.records import read_sample_records as read_mt_records
from memeval.run.records import read_records
from memeval.run.folder import read_manifest
from memeval.scoring.keyword_recall import read_gold_facts

TURN = '{"turn_id": 1, "session_id": 1, "speaker": "user", "text": "hi", "date": "2026-01-01"}'


def _err(fn, *args) -> str:
    with pytest.raises(InputError) as e:
        fn(*args)
    text = str(e.value)
    assert "\n" not in text
    return text


def test_binary_garbage_names_the_line(tmp_path):
    p = tmp_path / "turns.jsonl"
    p.write_bytes((TURN + "\n").encode() * 2 + b'{"turn_id": 3, "text": "\xff\xfe"}\n')
    assert _err(read_turns, p) == f"{p}:3: not UTF-8 text (byte 0xff: invalid start byte)"
    y = tmp_path / "bench.yaml"
    y.write_bytes(b"name: x\nversion: 1\n\x89PNG\r\n")
    assert _err(read_yaml, y) == f"{y}:3: not UTF-8 text (byte 0x89: invalid start byte)"
    j = tmp_path / "gold.json"
    j.write_bytes(b'{\n"a":\n "\xc3"}')
    assert _err(read_gold_facts, j).startswith(f"{j}:3: not UTF-8 text")


def test_deep_nesting_and_huge_integers(tmp_path):
    p = tmp_path / "q.jsonl"
    p.write_text('{"id": "Q1", "axis": "BASIC", "question_en": "?", "x": ' + "[" * 5000 + "]" * 5000 + "}\n")
    assert _err(read_questions, p) == f"{p}:1: nested too deeply"
    p.write_text('{"id": "Q1", "axis": "BASIC", "question_en": "?", "x": ' + "[" * 70 + "]" * 70 + "}\n")
    assert _err(read_questions, p) == f"{p}:1: nested deeper than 64 levels"
    p.write_text('{"id": "Q1", "axis": "BASIC", "question_en": "?", "gold_answer": ' + "9" * 5000 + "}\n")
    assert "integer too long" in _err(read_questions, p)
    a = tmp_path / "lme.json"
    a.write_text("[{}, " + "[" * 5000 + "]" * 5000 + "]")
    assert _err(lambda: list(iter_json_array(a))) == f"{a} record 1: nested too deeply"
    a.write_text('[{"n": ' + "1" * 5000 + "}]")
    assert "record 0: integer too long" in _err(lambda: list(iter_json_array(a)))
    y = tmp_path / "case.yaml"
    y.write_text("a: " + "[" * 3000 + "]" * 3000 + "\n")
    assert _err(read_yaml, y).startswith(str(y))
    y.write_text("a: &a [*a]\n")  # an alias that contains itself
    assert "nested deeper" in _err(read_yaml, y)
    y.write_text("n: " + "7" * 5000 + "\n")
    assert "integer too long" in _err(read_yaml, y)


def test_lone_surrogate_escape_is_not_text(tmp_path):
    p = tmp_path / "t.jsonl"
    p.write_text(TURN.replace('"hi"', '"\\ud800"') + "\n")
    assert "lone surrogate" in _err(read_turns, p)
    a = tmp_path / "a.json"
    a.write_text('[{"x": "\\uDC00"}]')
    assert "lone surrogate" in _err(lambda: list(iter_json_array(a)))


@pytest.mark.parametrize(
    "edit, where",
    [
        ({"n_turns": "lots"}, "tiers[0]: field 'n_turns': expected a whole number, got str"),
        ({"n_questions": -3}, "tiers[0]: field 'n_questions': out of range (0..1000000000000)"),
    ],
)
def test_bench_yaml_wrong_types(tmp_path, edit, where):
    make_minibench(tmp_path)
    meta = yaml.safe_load((tmp_path / "bench.yaml").read_text())
    meta["tiers"][0].update(edit)
    (tmp_path / "bench.yaml").write_text(yaml.safe_dump(meta))
    assert _err(load_bench, tmp_path) == f"{tmp_path / 'bench.yaml'} record {where}"


def _run_dir(tmp_path, rec: dict | str):
    (tmp_path / "manifest.json").write_text(json.dumps({"run_id": "r"}))
    line = rec if isinstance(rec, str) else json.dumps(rec)
    (tmp_path / "records.jsonl").write_text(json.dumps({"tier": "core", "qid": "Q1", "epoch": 0}) + "\n" + line + "\n")
    return tmp_path


@pytest.mark.parametrize(
    "rec, msg",
    [
        (
            {"tier": "core", "qid": "Q2", "epoch": 0, "score": "high"},
            ":2: field 'score': expected int or float or null, got str",
        ),
        ({"qid": "Q2", "epoch": 0}, ":2: field 'tier': missing"),
        ("[1, 2]", ":2: expected a JSON object, got list"),
        (
            {"tier": "core", "qid": "Q2", "epoch": 0, "retrieved_turns": ["x"]},
            ":2: field 'retrieved_turns': expected a list of int",
        ),
        # what the records' exact-type fast passes must hand to the full checks (h25e)
        (
            {"tier": "core", "qid": "Q2", "epoch": 0, "retrieved_turns": [1, True]},
            ":2: field 'retrieved_turns': expected a list of int",
        ),
        (
            {"tier": "core", "qid": "Q2", "epoch": 0, "retrieved_turns": [2**62]},
            ":2: field 'retrieved_turns': expected a list of int",
        ),
        ({"tier": "core", "qid": "Q2", "epoch": 2**31}, ":2: field 'epoch': integer out of range"),
        (
            {"tier": "core", "qid": "Q2", "epoch": 0, "score": True},
            ":2: field 'score': expected int or float or null, got bool",
        ),
        (
            {"tier": "core", "qid": "Q2", "epoch": 0, "retrieval_metrics": {"recall@5": 1, "ndcg@5": float("nan")}},
            ":2: field 'retrieval_metrics': expected finite numbers (or null) per metric",
        ),
        (
            {"tier": "core", "qid": "Q2", "epoch": 0, "retrieval_metrics": {"recall@5": None, "hit": True}},
            ":2: field 'retrieval_metrics': expected finite numbers (or null) per metric",
        ),
    ],
)
def test_run_records_wrong_types(tmp_path, rec, msg):
    d = _run_dir(tmp_path, rec)
    assert _err(read_records, d) == f"{d / 'records.jsonl'}{msg}"


def test_run_records_torn_tail_is_skipped_not_an_error(tmp_path):
    d = _run_dir(tmp_path, {"tier": "core", "qid": "Q2", "epoch": 0})
    with open(d / "records.jsonl", "a") as fh:
        fh.write('{"tier": "co')
    assert [r["qid"] for r in read_records(d)] == ["Q1", "Q2"]
    assert [o["qid"] for _, o in iter_jsonl(d / "records.jsonl", skip_torn_tail=True)] == ["Q1", "Q2"]
    with pytest.raises(InputError):
        list(iter_jsonl(d / "records.jsonl"))


def test_manifest_must_be_an_object_with_the_summary_fields(tmp_path):
    (tmp_path / "manifest.json").write_text("[1]")
    assert _err(read_manifest, tmp_path).endswith("manifest.json: expected a JSON object, got list")
    (tmp_path / "manifest.json").write_text(json.dumps({"run_id": "r", "status": "complete", "config": {"system": 3}}))
    assert "field 'config.system': expected dict, got int" in _err(read_manifest, tmp_path)


def test_multiturn_records_wrong_types(tmp_path):
    p = tmp_path / "r.jsonl"
    good = {"sample_id": "s#g1", "agent": "a", "grader_version": "r5", "verdict": "pass", "turns": 3, "corrections": 0}
    p.write_text(json.dumps(good) + "\n" + json.dumps({**good, "turns": "many"}) + "\n")
    assert _err(read_mt_records, p) == f"{p}:2: field 'turns': expected int, got str"
    p.write_text(json.dumps(good) + "\n" + json.dumps({**good, "agent": ["x"]}) + "\n")
    assert _err(read_mt_records, p) == f"{p}:2: field 'agent': expected str, got list"


def test_read_json_locates_syntax_errors_by_line(tmp_path):
    p = tmp_path / "x.json"
    p.write_text('{\n "a": 1,\n "b": }\n')
    assert _err(read_json, p).startswith(f"{p}:3: not valid JSON")
