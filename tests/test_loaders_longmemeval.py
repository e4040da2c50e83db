"""LongMemEval loader: small files in the real shape, written here (never downloaded)."""

import json

import pytest
import yaml

from memeval.bench import load_bench, read_questions, read_turns
from memeval.bench.loaders._jsonstream import iter_json_array
from memeval.bench.loaders.longmemeval import export_hypotheses, haystack_id, import_longmemeval, tier_name_for
from memeval.cli import main
from memeval.errors import InputError, MemevalError


def _instance(
    qid, qtype, sessions, dates, answer="blue", question="What colour?", qdate="2023/06/01 (Thu) 10:00", answer_ids=None
):
    sids = [f"sess_{qid}_{i}" for i in range(len(sessions))]
    return {
        "question_id": qid,
        "question_type": qtype,
        "question": question,
        "answer": answer,
        "question_date": qdate,
        "haystack_session_ids": sids,
        "haystack_dates": dates,
        "haystack_sessions": sessions,
        "answer_session_ids": answer_ids if answer_ids is not None else [sids[0]],
    }


def _u(text, has=None):
    d = {"role": "user", "content": text}
    if has is not None:
        d["has_answer"] = has
    return d


def _a(text):
    return {"role": "assistant", "content": text}


def _sample():
    return [
        # sessions given out of date order: the loader puts them in date order
        _instance(
            "q1",
            "single-session-user",
            [[_u("I painted the shed green."), _a("Nice.")], [_u("My car is blue.", True), _a("Noted!")]],
            ["2023/05/20 (Sat) 02:21", "2023/05/03 (Wed) 11:00"],
            answer_ids=["sess_q1_1"],
        ),
        _instance("q2_abs", "temporal-reasoning", [[_u("hello"), _a("hi")]], ["2023/05/01 (Mon) 09:00"]),
        _instance(
            "q3",
            "knowledge-update",
            [[_u("I live in Oslo."), _a("ok")], [_u("We moved to Bergen.", True)]],
            ["2023/01/01 (Sun) 09:00", "2023/02/01 (Wed) 09:00"],
            answer="Bergen",
        ),
        _instance(
            "q4",
            "multi-session",
            [[_u("I own 2 cats.", True)], [_u("And 1 dog.", True)]],
            ["2023/01/01 (Sun) 09:00", "2023/01/05 (Thu) 09:00"],
            answer=3,
        ),
        _instance("q5", "single-session-preference", [[_u("I love spicy food.", True)]], ["2023/01/01 (Sun) 09:00"]),
        _instance(
            "q6",
            "single-session-assistant",
            [[_u("Recipe?"), _a("Use 2 eggs.")]],
            ["2023/01/01 (Sun) 09:00"],
            answer_ids=["sess_q6_0"],
        ),
    ]


def _write(path, data):
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_mapping_haystacks_dates_and_evidence(tmp_path):
    src = _write(tmp_path / "longmemeval_s.json", _sample())
    out = tmp_path / "bench"
    import_longmemeval([src], out)
    bench = load_bench(out)
    assert bench.tier_names == ("s",)
    turns = read_turns(out / bench.tier("s").turns_file)
    qs = {q.id: q for q in read_questions(out / bench.tier("s").questions_file)}
    assert {k: q.axis for k, q in qs.items()} == {
        "q1": "BASIC",
        "q2_abs": "ABSTAIN",
        "q3": "UPDATE",
        "q4": "MULTI",
        "q5": "IMPLICIT",
        "q6": "BASIC",
    }
    assert qs["q2_abs"].expect == "no_memory" and qs["q2_abs"].evidence_turns == ()
    assert all(q.expect == "answer" for k, q in qs.items() if k != "q2_abs")
    assert qs["q4"].gold_answer == "3" and qs["q4"].asked_at == "2023-06-01"
    # one haystack per question, turn ids restart at 1
    assert len({q.haystack for q in qs.values()}) == 6
    assert qs["q2_abs"].haystack == haystack_id("q2_abs") and "abs" not in qs["q2_abs"].haystack
    assert not any("q" in t.haystack for t in turns)
    q1 = [t for t in turns if t.haystack == qs["q1"].haystack]
    assert [t.turn_id for t in q1] == [1, 2, 3, 4]
    assert [t.turn_id for t in turns if t.haystack == qs["q3"].haystack] == [1, 2, 3]
    # the May 3rd session comes first, dated as an ISO date
    assert [(t.text, t.date, t.session_id) for t in q1[:2]] == [
        ("My car is blue.", "2023-05-03", 1),
        ("Noted!", "2023-05-03", 1),
    ]
    assert q1[2].date == "2023-05-20"
    assert qs["q1"].evidence_turns == (1,) and qs["q1"].evidence_sessions == (1,)
    assert qs["q4"].evidence_turns == (1, 2)
    # no has_answer anywhere: every turn of the answer sessions
    assert qs["q6"].evidence_turns == (1, 2)
    assert qs["q1"].extra["question_type"] == "single-session-user"
    assert qs["q1"].extra["answer_session_ids"] == ["sess_q1_1"]
    meta = yaml.safe_load((out / "bench.yaml").read_text())
    assert meta["axis_map"]["single-session-preference"] == "IMPLICIT"
    assert any("approximation" in n and "GPT-4o" in n for n in meta["notes"])
    assert meta["license"] == "MIT" and "LongMemEval" in meta["source"]


def test_three_files_make_three_tiers_in_size_order(tmp_path):
    data = _sample()[:2]
    paths = [_write(tmp_path / f"longmemeval_{t}.json", data) for t in ("m", "oracle", "s_cleaned")]
    assert [tier_name_for(p) for p in paths] == ["m", "oracle", "s"]
    import_longmemeval(paths, tmp_path / "b")
    bench = load_bench(tmp_path / "b")
    assert bench.tier_names == ("oracle", "s", "m")
    assert [t.n_questions for t in bench.tiers] == [2, 2, 2]
    assert [t.n_turns for t in bench.tiers] == [6, 6, 6]
    # each source's sha256 is its bytes' hash (what sha256sum prints), not mixed with its name
    import hashlib

    files = yaml.safe_load((tmp_path / "b" / "bench.yaml").read_text())["source_files"]
    assert {t: e["sha256"] for t, e in files.items()} == {
        tier_name_for(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in paths
    }


def test_malformed_instance_names_file_record_field_and_writes_nothing(tmp_path):
    data = _sample()
    data[1]["haystack_sessions"][0][1]["role"] = "system"
    src = _write(tmp_path / "longmemeval_s.json", data)
    out = tmp_path / "bench"
    with pytest.raises(InputError) as e:
        import_longmemeval([src], out)
    assert str(e.value) == (
        f"{src} record 1 (question_id 'q2_abs'): field 'haystack_sessions[0][1].role': "
        "expected 'user' or 'assistant', got 'system'"
    )
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["longmemeval_s.json"]


@pytest.mark.parametrize(
    "mutate,field",
    [
        (lambda d: d[2].pop("question_type"), "question_type"),
        (lambda d: d[2].update(question_type="long-term"), "question_type"),
        (lambda d: d[2].update(haystack_dates=["2023-01-01", "x"]), "haystack_dates[0]"),
        (lambda d: d[2]["haystack_sessions"][1][0].update(content=None), "haystack_sessions[1][0].content"),
        (lambda d: d[2].update(question_date="tomorrow"), "question_date"),
        (lambda d: d[2]["haystack_dates"].pop(), "haystack_sessions"),
    ],
)
def test_malformed_fields(tmp_path, mutate, field):
    data = _sample()
    mutate(data)
    src = _write(tmp_path / "longmemeval_m.json", data)
    with pytest.raises(InputError) as e:
        import_longmemeval([src], tmp_path / "out")
    assert f"record 2 (question_id 'q3'): field '{field}'" in str(e.value)
    assert not (tmp_path / "out").exists()


def test_bad_json_names_record(tmp_path):
    text = json.dumps(_sample()[:2])
    src = tmp_path / "longmemeval_s.json"
    src.write_text(text[:-30] + "}}]")
    with pytest.raises(InputError, match=r"longmemeval_s.json record 1: not valid JSON"):
        import_longmemeval([src], tmp_path / "out")
    src.write_text('{"question_id": "q"}')
    with pytest.raises(InputError, match="expected a JSON list"):
        import_longmemeval([src], tmp_path / "out")


def test_stream_reader_matches_json_load_with_tiny_chunks(tmp_path):
    data = _sample() + [{"t": 'brackets ] [ and "quotes" \\ and ,commas', "n": [1, 2.5e3, None, True]}, 12345]
    p = tmp_path / "a.json"
    p.write_text(" \n" + json.dumps(data, indent=1) + "\n ")
    for chunk in (1, 3, 7, 64, 1 << 20):
        assert [obj for _, obj in iter_json_array(p, chunk=chunk)] == data
    p.write_text("[]")
    assert list(iter_json_array(p)) == []
    p.write_bytes(b"\xef\xbb\xbf[1, 2]")  # a byte-order mark
    assert list(iter_json_array(p)) == [(0, 1), (1, 2)]
    p.write_bytes(b'[{"a": "\xff"}]')
    with pytest.raises(InputError, match="not UTF-8"):
        list(iter_json_array(p))
    p.write_text('[{"a": 1},]')
    with pytest.raises(InputError, match="record 1"):
        list(iter_json_array(p, chunk=4))
    p.write_text('[{"a": 1}] x')
    with pytest.raises(InputError, match="extra data"):
        list(iter_json_array(p))


def test_existing_output_is_refused_unless_forced(tmp_path):
    src = _write(tmp_path / "longmemeval_s.json", _sample()[:1])
    out = tmp_path / "b"
    out.mkdir()
    (out / "keep.txt").write_text("x")
    with pytest.raises(MemevalError, match="not empty"):
        import_longmemeval([src], out)
    assert (out / "keep.txt").exists()
    import_longmemeval([src], out, force=True)
    assert not (out / "keep.txt").exists() and (out / "bench.yaml").exists()


def test_export_hypotheses(tmp_path):
    recs = [
        {"qid": "q1", "answer": "blue", "tier": "s", "epoch": 0},
        {"qid": "q2", "answer": None, "tier": "s", "epoch": 0, "error": "timeout"},
        {"qid": "q1", "answer": "red", "tier": "s", "epoch": 1},
        {"qid": "q1", "answer": "green", "tier": "m", "epoch": 0},
    ]
    with pytest.raises(MemevalError, match="several tiers"):
        export_hypotheses(recs, tmp_path / "h.jsonl")
    summary = export_hypotheses(recs, tmp_path / "h.jsonl", tier="s")
    assert summary == {"tier": "s", "epoch": 0, "written": 2, "without_answer": 1}
    lines = [json.loads(x) for x in (tmp_path / "h.jsonl").read_text().splitlines()]
    assert lines == [{"question_id": "q1", "hypothesis": "blue"}, {"question_id": "q2", "hypothesis": ""}]
    run = tmp_path / "run"
    run.mkdir()
    (run / "records.jsonl").write_text("\n".join(json.dumps(r) for r in recs) + "\n")
    assert main(["export-longmemeval", str(run), "--out", str(tmp_path / "h2.jsonl"), "--tier", "m"]) == 0
    assert json.loads((tmp_path / "h2.jsonl").read_text()) == {"question_id": "q1", "hypothesis": "green"}


def test_cli_import(tmp_path, capsys):
    src = _write(tmp_path / "longmemeval_oracle.json", _sample())
    assert main(["import", "longmemeval", str(src), "--out", str(tmp_path / "b")]) == 0
    assert "oracle: 14 turns, 9 sessions," in capsys.readouterr().out
    bad = _write(tmp_path / "longmemeval_s.json", [{"question_id": 5}])
    assert main(["import", "longmemeval", str(bad), "--out", str(tmp_path / "c")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith("longmemeval_s.json record 0 (question_id 5): field 'question_id': expected str, got int")
    assert "\n" not in err and not (tmp_path / "c").exists()
