import json

import pytest
from hypothesis import given, settings, strategies as st

from memeval.bench import Question, Turn, load_bench, read_questions, read_turns, write_questions, write_turns
from memeval.atomic import dumps_line
from memeval.bench.io import save_bench, turn_line
from memeval.bench.model import Bench, Tier, haystacks_of, sessions_of
from memeval.errors import InputError


def _turn(i, s, text="hi", hay=None):
    return Turn(turn_id=i, session_id=s, speaker="user", text=text, date="2026-01-0%d" % s, haystack=hay)


def test_turns_round_trip_byte_identical(tmp_path):
    turns = [
        _turn(1, 1, "caf\u00e9 <b>"),
        _turn(2, 1),
        Turn(3, 2, "user", "x", "2026-01-02", image="img/img1.png", image_no=1),
    ]
    write_turns(tmp_path / "t.jsonl", turns)
    first = (tmp_path / "t.jsonl").read_bytes()
    assert read_turns(tmp_path / "t.jsonl") == turns
    write_turns(tmp_path / "t2.jsonl", read_turns(tmp_path / "t.jsonl"))
    assert (tmp_path / "t2.jsonl").read_bytes() == first
    # optional fields are omitted, not null
    assert "image" not in json.loads(first.splitlines()[0])


def test_question_round_trip_and_ask_text(tmp_path):
    q = Question(
        id="Q1",
        axis="XLING_QUERY",
        question_en="Where?",
        gold_answer="Lyon",
        question="¿Dónde?",
        query_lang="es",
        evidence_turns=(3,),
        extra={"note": "kept"},
    )
    write_questions(tmp_path / "q.jsonl", [q])
    (back,) = read_questions(tmp_path / "q.jsonl")
    assert back == q
    assert back.text_to_ask == "¿Dónde?"
    assert Question(id="Q2", axis="BASIC", question_en="Where?").text_to_ask == "Where?"


@pytest.mark.parametrize(
    "line,field",
    [
        ('{"turn_id": "x", "session_id": 1, "speaker": "u", "text": "t", "date": "d"}', "turn_id"),
        ('{"turn_id": 1, "session_id": 1, "speaker": "u", "date": "d"}', "text"),
        ('{"turn_id": 1, "session_id": 1, "speaker": "u", "text": "t", "date": "d", "image_no": "3"}', "image_no"),
    ],
)
def test_malformed_turn_names_file_line_field(tmp_path, line, field):
    p = tmp_path / "bad.jsonl"
    good = '{"turn_id": 9, "session_id": 1, "speaker": "u", "text": "t", "date": "d"}'
    p.write_text(good + "\n" + line + "\n")
    with pytest.raises(InputError) as e:
        read_turns(p)
    msg = str(e.value)
    assert msg.startswith(f"{p}:2: field '{field}'") and "\n" not in msg


def test_malformed_json_and_unknown_axis(tmp_path):
    p = tmp_path / "q.jsonl"
    p.write_text('{"id": "Q1", "axis": "NOPE", "question_en": "?"}\n')
    with pytest.raises(InputError, match=r"q.jsonl:1: field 'axis': unknown axis 'NOPE'"):
        read_questions(p)
    p.write_text('{"id": "Q1", \n')
    with pytest.raises(InputError, match=r"q.jsonl:1: not valid JSON"):
        read_questions(p)
    p.write_text('{"id": "Q1", "axis": "XLING_QUERY", "question_en": "?", "query_lang": "fr"}\n')
    with pytest.raises(InputError, match="field 'question'"):
        read_questions(p)


def test_sessions_and_haystacks_group_in_file_order():
    turns = [_turn(1, 1, hay="a"), _turn(2, 1, hay="a"), _turn(1, 1, hay="b"), _turn(2, 2, hay="b")]
    hs = haystacks_of(turns)
    assert list(hs) == ["a", "b"]
    assert [len(s.turns) for s in hs["a"]] == [2]
    assert [s.session_id for s in hs["b"]] == [1, 2]
    assert len(sessions_of(turns)) == 3


def test_manifest_round_trip_and_missing_file(tmp_path):
    write_turns(tmp_path / "t.jsonl", [_turn(1, 1)])
    write_questions(tmp_path / "q.jsonl", [Question(id="Q1", axis="BASIC", question_en="?", gold_answer="hi")])
    b = Bench(name="b", version="1", tiers=(Tier("core", "t.jsonl", "q.jsonl", n_turns=1),), root=str(tmp_path))
    save_bench(b)
    back = load_bench(tmp_path)
    assert back.tier_names == ("core",) and back.tiers[0].n_turns == 1
    assert back.content_hash.startswith("sha256:")
    (tmp_path / "q.jsonl").unlink()
    with pytest.raises(InputError, match="field 'questions': file 'q.jsonl' not found"):
        load_bench(tmp_path)


def test_atomic_writes_make_ordinary_files_and_leave_nothing_on_failure(tmp_path):
    import os
    import stat

    from memeval.atomic import atomic_open, write_text

    write_text(tmp_path / "a.txt", "x")
    mode = stat.S_IMODE(os.stat(tmp_path / "a.txt").st_mode)
    umask = os.umask(0o022)
    os.umask(umask)
    assert mode == 0o666 & ~umask
    with pytest.raises(RuntimeError):
        with atomic_open(tmp_path / "b.txt") as fh:
            fh.write("half")
            raise RuntimeError("boom")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt"]


@settings(max_examples=300, deadline=None)
@given(
    st.builds(
        Turn,
        turn_id=st.integers(min_value=-(2**70), max_value=2**70),
        session_id=st.one_of(st.integers(), st.text()),
        speaker=st.text(),
        text=st.text(),  # any code point: quotes, controls, lone surrogates, non-ASCII
        date=st.text(max_size=12),
        image=st.one_of(st.none(), st.text(max_size=8)),
        image_no=st.one_of(st.none(), st.integers()),
        caption=st.one_of(st.none(), st.text(max_size=8)),
        haystack=st.one_of(st.none(), st.text(max_size=8)),
    )
)
def test_turn_line_writes_the_general_writers_bytes(t):
    """Turn lines written field by field are the bytes ``dumps_line(Turn.to_dict())`` writes."""
    assert turn_line(t) == dumps_line(t.to_dict())
