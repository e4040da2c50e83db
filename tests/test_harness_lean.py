"""The lean per-question path (issue 31, item 2): records built once and written in batches, a run's
summaries kept while writing (never read back), the fast readers of questions, turns and manifests
giving what the checked ones give."""

import json
import math
import os
import subprocess
import sys
import textwrap

import pytest
from minibench import make_minibench

from memeval.atomic import dumps_pretty
from memeval.bench import stream
from memeval.bench.io import _checked_question, _plain_question, question_from_dict
from memeval.errors import InputError, SchemaError
from memeval.run import read_manifest, read_records, run_system
from memeval.run import records as records_mod
from memeval.run import runner as runner_mod
from memeval.run.grading import grading_summary
from memeval.run.records import RECORD_FIELDS, Record, RecordStore, current_records
from memeval.run.writepath import causal_summary

KILLER = textwrap.dedent('''
    import os, signal
    from memeval.systems.base import Recall

    class Killer:
        """Returns at once; killed (SIGKILL) at the KILL_AT-th question when that variable is set."""
        name, version = "killer", "1"

        def __init__(self):
            self.params, self.n = {}, 0

        def reset(self):
            pass

        def ingest(self, session):
            pass

        def query(self, question, asked_at):
            self.n += 1
            if str(self.n) == os.environ.get("KILL_AT"):
                os.kill(os.getpid(), signal.SIGKILL)
            return Recall(("a memory",))
''')


def test_a_killed_run_with_batched_writes_resumes_without_loss_or_duplicates(tmp_path, monkeypatch):
    bench = make_minibench(tmp_path / "b")  # two tiers of 4 questions
    (tmp_path / "killer_sys.py").write_text(KILLER)
    run = tmp_path / "run"
    child = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(tmp_path)!r})
        import memeval.run.records as records
        records.BATCH_LINES = 3  # a batch written after 3 records: the 4th and 5th are held when killed
        from memeval.run import run_system
        run_system({bench!r}, "python:killer_sys:Killer", out={str(run)!r}, progress=False)
    """)
    env = {**os.environ, "KILL_AT": "6", "PYTHONPATH": os.pathsep.join(sys.path)}
    r = subprocess.run([sys.executable, "-c", child], capture_output=True, timeout=120, env=env)
    assert r.returncode == -9, r.stderr.decode()[-2000:]
    before = read_records(run)
    assert len(before) == 3  # the written batch; the two held records died with the process
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delenv("KILL_AT", raising=False)
    assert run_system(bench, "python:killer_sys:Killer", out=run, progress=False) == run
    after = read_records(run, history=True)  # every line: a duplicate would raise, a lost one be missing
    assert len(after) == 8 and len({(x["tier"], x["qid"], x["epoch"]) for x in after}) == 8
    assert after[:3] == before  # what was written before the kill is kept as it was
    manifest = read_manifest(run)
    assert manifest["status"] == "complete" and manifest["n_records"] == 8


def test_a_batching_store_writes_whole_lines_at_flush_and_close(tmp_path):
    store = RecordStore(tmp_path, batch_s=3600.0)
    store.append({"tier": "t", "qid": "a", "epoch": 0, "score": 1.0})
    store.append(Record(tier="t", qid="b", epoch=0, error="boom"))
    assert (tmp_path / "records.jsonl").read_text() == ""  # held: nothing written yet
    store.flush()
    assert [x["qid"] for x in read_records(tmp_path)] == ["a", "b"]
    store.append({"tier": "t", "qid": "c", "epoch": 0})
    with pytest.raises(SchemaError, match="a second record"):
        store.append({"tier": "t", "qid": "c", "epoch": 0})  # held, yet counted as done
    store.close()
    assert [x["qid"] for x in read_records(tmp_path)] == ["a", "b", "c"]
    assert (tmp_path / "records.jsonl").read_text().count("\n") == 3


def test_a_held_batch_is_written_when_due_even_if_no_record_follows(tmp_path):
    """A slow system may send its next record minutes later: the held batch is written on its own once
    due (a SIGKILL then loses nothing already answered a batch interval ago; a live view sees it)."""
    import time

    store = RecordStore(tmp_path, batch_s=0.2)
    store.append({"tier": "t", "qid": "a", "epoch": 0, "score": 1.0})
    deadline = time.monotonic() + 30  # generous: the machine may be busy; the subject is "without a flush"
    while not read_records(tmp_path) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert [x["qid"] for x in read_records(tmp_path)] == ["a"]
    store.close()
    assert (tmp_path / "records.jsonl").read_text().count("\n") == 1


def test_a_batch_is_written_once_it_is_due(tmp_path, monkeypatch):
    store = RecordStore(tmp_path, batch_s=0.0)  # due at once: each record written as it comes
    store.append({"tier": "t", "qid": "a", "epoch": 0})
    assert len(read_records(tmp_path)) == 1
    monkeypatch.setattr(records_mod, "BATCH_LINES", 2)
    store = RecordStore(tmp_path, batch_s=3600.0)
    store.append({"tier": "t", "qid": "b", "epoch": 0})
    assert len(read_records(tmp_path)) == 1
    store.append({"tier": "t", "qid": "c", "epoch": 0})  # the batch is full
    assert len(read_records(tmp_path)) == 3
    store.close()


def test_summary_rows_are_the_current_records_without_reading_them_back(tmp_path):
    rows = [
        {"tier": "t", "qid": "a", "epoch": 0, "mode": "memory", "error": "timed out"},
        {"tier": "t", "qid": "b", "epoch": 0, "mode": "memory", "score": 1.0, "future_memories": 2},
        {"tier": "t", "qid": "c", "epoch": 0, "mode": "memory", "ungraded_reason": "judge failed: x"},
    ]
    store = RecordStore(tmp_path)
    for row in rows:
        store.append(row)
    store.close()
    store = RecordStore(tmp_path, keep_errors=False, batch_s=3600.0)  # reopened: "a" is asked again
    store.append({"tier": "t", "qid": "a", "epoch": 0, "mode": "memory", "score": 0.0, "future_memories": 0})
    summary = store.summary_rows()
    store.close()
    current = current_records(read_records(tmp_path, history=True))
    assert [r["error"] for r in summary] == [r.get("error") for r in current] == [None, None, None]
    assert [r["score"] for r in summary] == [0.0, 1.0, None]  # "a" at its first place, its last value
    assert grading_summary(summary) == grading_summary(current)
    assert causal_summary(summary) == causal_summary(current)


def test_a_finished_run_summarises_what_its_records_say(tmp_path):
    bench = make_minibench(tmp_path / "b")
    run = run_system(bench, "recent:tokens=200", out=tmp_path / "r", progress=False)
    manifest, recs = read_manifest(run), read_records(run)
    assert manifest["n_records"] == len(recs) == 8
    assert manifest["causal"] == causal_summary(recs)
    assert (run / "records.jsonl").read_text().count("\n") == 8


def test_record_of_is_the_record_its_constructor_builds():
    values = {"tier": "t", "qid": "q", "epoch": 1, "score": 0.5, "memories_returned": ["m"], "error": None}
    fast, slow = Record.of(values), Record(**values)
    assert fast == slow and fast.to_json() == slow.to_json()
    assert list(fast.to_json()) == list(RECORD_FIELDS)
    assert fast.with_fields({"score": 1.0}).score == 1.0 and fast.score == 0.5  # still frozen data
    with pytest.raises(AttributeError):
        fast.score = 1.0  # type: ignore[misc]
    with pytest.raises(SchemaError, match="'scroe' does not exist"):
        Record.of({"tier": "t", "qid": "q", "epoch": 0, "scroe": 1.0})


QUESTIONS = [
    {"id": "q1", "axis": "BASIC", "question_en": "Where?", "gold_answer": "Oslo", "evidence_turns": [1, 2]},
    {"id": "q2", "axis": "BASIC", "question_en": "Where?", "gold_answer": None, "need": [], "gold_alts": ["a"]},
    {"id": "q3", "axis": "ABSTAIN", "question_en": "Who?", "expect": "no_memory", "asked_at": "2024-01-01"},
    {"id": "q4", "axis": "BASIC", "question_en": "?", "evidence_sessions": [1, "s2"], "haystack": "h", "x": [1]},
    {"id": "q5", "axis": "BASIC", "question_en": "?", "query_lang": "de", "question": "Wo?", "gold_parts": ["p"]},
    # what the fast path leaves to the checked reading: numbers read as text, a null list, an int id
    {"id": 6, "axis": "BASIC", "question_en": "?", "gold_answer": 7, "need": [3], "asked_at": 2024},
    {"id": "q7", "axis": "BASIC", "question_en": "?", "evidence_turns": None, "gold_alts": [1.5]},
]
BAD_QUESTIONS = [
    {"id": "b1", "axis": "NOPE", "question_en": "?"},
    {"id": "b2", "axis": "BASIC", "question_en": "?", "evidence_turns": [True]},
    {"id": "b3", "axis": "BASIC", "question_en": "?", "need": ""},
    {"id": "b4", "axis": "BASIC", "question_en": "?", "expect": None},
    {"id": "b5", "axis": "BASIC", "question_en": "?", "query_lang": "de"},
    {"id": "b6", "axis": "BASIC"},
]


@pytest.mark.parametrize("obj", QUESTIONS, ids=lambda o: str(o["id"]))
def test_the_fast_question_reader_reads_what_the_checked_one_reads(obj):
    plain = _plain_question(obj)
    assert question_from_dict(obj) == _checked_question(obj, "q.jsonl", 1)
    if plain is not None:
        assert plain == _checked_question(obj, "q.jsonl", 1)
    assert (plain is None) == (obj["id"] in (6, "q7"))  # the fast path takes the plainly written ones


@pytest.mark.parametrize("obj", BAD_QUESTIONS, ids=lambda o: o["id"])
def test_a_bad_question_is_refused_by_the_fast_reader_too(obj):
    with pytest.raises(InputError):
        question_from_dict(obj, "q.jsonl", 3)


def test_haystack_spans_are_found_once_per_bench_and_read_back(tmp_path, monkeypatch):
    bench = make_minibench(tmp_path / "b")
    first = run_system(bench, "no_memory", out=tmp_path / "r1", progress=False)
    cached = sorted((tmp_path / "b" / stream.SPANS_CACHE).iterdir())
    assert len(cached) == 2  # one per tier's turns file

    def never(path):
        raise AssertionError(f"{path} indexed again")

    monkeypatch.setattr(stream, "haystack_spans", never)
    second = run_system(bench, "no_memory", out=tmp_path / "r2", progress=False)
    strip = ("run_id", "started_at", "latency_ms", "latency_minus_rtt_ms", "speed_points")
    same = [{k: v for k, v in r.items() if k not in strip} for r in read_records(first)]
    assert [{k: v for k, v in r.items() if k not in strip} for r in read_records(second)] == same
    for p in cached:  # an unreadable entry is indexed again, never trusted
        p.write_text('[["h", [[5, 1, 1]]]]')
    with pytest.raises(AssertionError, match="indexed again"):
        run_system(bench, "no_memory", out=tmp_path / "r3", progress=False)
    monkeypatch.undo()
    assert stream.cached_spans(tmp_path / "b", "turns_core.jsonl", "x") == stream.haystack_spans(
        tmp_path / "b" / "turns_core.jsonl"
    )


def test_a_run_without_a_checked_hash_indexes_the_turns_itself(tmp_path, monkeypatch):
    bench = make_minibench(tmp_path / "b")
    calls = []
    monkeypatch.setattr(runner_mod, "cached_spans", lambda *a: calls.append(a))
    run_system(bench, "no_memory", out=tmp_path / "r", progress=False, verify=False)
    assert calls == [] and not (tmp_path / "b" / stream.SPANS_CACHE).exists()


def test_a_pretty_manifest_is_what_json_writes():
    obj = {"a": [1, 2.5, {"b": None, "c": True}], "d": 'é\u2028"\\', "e": [], "f": {}, "h": 1e16}
    assert dumps_pretty(obj) == json.dumps(obj, indent=2, ensure_ascii=False)
    small = {"g": 1e-05}  # spelled 0.00001 by orjson: the same number
    assert json.loads(dumps_pretty(small)) == small
    assert dumps_pretty({"i": 2**70}) == json.dumps({"i": 2**70}, indent=2)  # orjson refuses it: json writes it
    nan = dumps_pretty({"m": [{"x": math.nan}]})
    assert "NaN" in nan  # never silently null
