"""One typed record: the writer, the read checks and the polars schema all come from ``Record``."""

import json

import polars as pl
import pytest

from memeval.analysis.aggregate import load_records
from memeval.errors import InputError
from memeval.run import read_records, run_system
from memeval.run.records import RECORD_FIELDS, Record, check_record
from minibench import make_minibench


def test_a_run_writes_every_record_field_and_load_records_keeps_them(tmp_path):
    bench = make_minibench(tmp_path / "b")
    rd = run_system(bench, "bm25:k=2", tiers=["core"], out=tmp_path / "r", progress=False)
    lines = (rd / "records.jsonl").read_text().splitlines()
    assert all(list(json.loads(x)) == list(RECORD_FIELDS) for x in lines)
    assert Record.from_json(json.loads(lines[0])).to_json() == json.loads(lines[0])
    df = load_records(rd).sort("qid")
    q2 = df.filter(pl.col("qid") == "Q2").row(0, named=True)
    # fields the old schema dropped: the rule that fired, attempts, the retrieval metrics spread out
    assert q2["rule"] is not None and q2["attempts"] == 1
    assert q2["turn_recall_any@5"] == 1.0 and "judge_evidence" in df.columns and "official_score" in df.columns
    assert any(
        "Biscuit" in m["text"] and m["speaker"] == "user" and m["timestamp"] == "2026-02-10" for m in q2["memories"]
    )
    assert df.schema["epoch"] == pl.Int32 and df.schema["weight"] == pl.Int32


@pytest.mark.parametrize(
    "field,value,why",
    [
        ("memories", [{"text": 3}], "objects {text, timestamp, speaker}"),
        ("memories", [{"text": "x", "speaker": ["a"]}], "objects {text, timestamp, speaker}"),
        ("memories", "x", "expected list or null"),
        ("attempts", 1.5, "expected int or null"),
        ("judge_evidence", 3, "expected str or null"),
        ("epoch", None, "expected int"),
    ],
)
def test_read_checks_come_from_the_record_type(field, value, why):
    rec = {"tier": "core", "qid": "Q1", "epoch": 0, field: value}
    with pytest.raises(InputError) as e:
        check_record(rec, "records.jsonl", 7)
    assert field in str(e.value) and why in str(e.value) and ":7" in str(e.value)


def test_a_bad_memory_in_a_run_folder_is_one_clear_error(tmp_path):
    bench = make_minibench(tmp_path / "b")
    rd = run_system(bench, "bm25:k=2", tiers=["core"], out=tmp_path / "r", progress=False)
    lines = (rd / "records.jsonl").read_text().splitlines()
    bad = json.loads(lines[1]) | {"memories": [{"timestamp": "2026-01-01"}]}
    (rd / "records.jsonl").write_text("\n".join([lines[0], json.dumps(bad), *lines[2:]]) + "\n")
    with pytest.raises(InputError) as e:
        read_records(rd)
    assert "records.jsonl" in str(e.value) and "memories" in str(e.value)


def test_the_store_writes_a_record_object_as_its_fields(tmp_path):
    from memeval.run.records import RecordStore

    store = RecordStore(tmp_path)
    store.append(
        Record(tier="core", qid="Q1", epoch=0, score=0.5, memories=[{"text": "a", "timestamp": None, "speaker": "Ana"}])
    )
    store.close()
    (rec,) = read_records(tmp_path)
    assert list(rec) == list(RECORD_FIELDS) and rec["score"] == 0.5 and rec["memories"][0]["speaker"] == "Ana"


def test_the_store_refuses_an_unknown_field_rather_than_dropping_it(tmp_path):
    from memeval.errors import SchemaError
    from memeval.run.records import RecordStore

    store = RecordStore(tmp_path)
    with pytest.raises(SchemaError, match="record field 'scroe' does not exist; did you mean 'score'"):
        store.append({"tier": "core", "qid": "Q1", "epoch": 0, "scroe": 1.0})
    with pytest.raises(SchemaError, match="'flavour' does not exist"):
        Record(tier="core", qid="Q1", epoch=0).with_fields({"flavour": "x"})
    store.append({"tier": "core", "qid": "Q1", "epoch": 0, "score": 1.0})
    with pytest.raises(SchemaError, match="a second record"):
        store.append(Record(tier="core", qid="Q1", epoch=0))
    store.close()
    assert [r["score"] for r in read_records(tmp_path)] == [1.0]  # nothing of the refused ones written


def test_the_runner_hands_the_store_record_objects(tmp_path, monkeypatch):
    from memeval.run.records import RecordStore

    seen = []
    real = RecordStore.append

    def append(self, rec):
        seen.append(type(rec))
        real(self, rec)

    monkeypatch.setattr(RecordStore, "append", append)
    run_system(make_minibench(tmp_path / "b"), "bm25", tiers=["core"], out=tmp_path / "r", progress=False)
    assert seen and set(seen) == {Record}


def test_a_run_config_is_built_by_keyword_and_run_as_its_keyword_twin(tmp_path):
    from memeval.run.runner import RunConfig

    bench = make_minibench(tmp_path / "b")
    with pytest.raises(TypeError):
        RunConfig(str(bench), "bm25")  # type: ignore[misc]
    cfg = RunConfig(bench_dir=str(bench), system="bm25:k=2", tiers=["core"], runs_root=str(tmp_path), progress=False)
    a = run_system(cfg)
    b = run_system(bench, "bm25:k=2", tiers=["core"], runs_root=tmp_path, progress=False)
    assert a == b and len(read_records(a)) == 4  # the same config id: the keyword call resumed the same run
