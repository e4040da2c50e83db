"""The fast readers of a tier (issue 31): ``bench.stream.iter_objects`` yields what
``bench.files.iter_jsonl`` yields, line numbers and errors included; ``haystack_spans`` reads the
trailing ``haystack`` field without parsing only where that gives what parsing gives."""

from __future__ import annotations

import json

import pytest

from memeval.bench import stream
from memeval.bench.files import iter_jsonl
from memeval.bench.stream import TierTurns, _tail_haystack, haystack_spans, iter_objects
from memeval.errors import InputError

T = {"turn_id": 1, "session_id": 1, "speaker": "user", "text": "hi", "date": "2024-01-01"}

#: lines that take every path: plain flat objects, and each thing that sends a block to the slow reader
LINES = [
    json.dumps(T),
    json.dumps(dict(T, turn_id=2, haystack="h1")),
    "",
    "   ",
    json.dumps(dict(T, turn_id=3, text="with {braces} and [brackets]")),
    json.dumps(dict(T, turn_id=4, extra={"nested": [1, 2]})),
    json.dumps(dict(T, turn_id=5, big=12345678901234567890123)),
    json.dumps(dict(T, turn_id=6, text="café ☕ \u2028 line sep")),
    json.dumps(dict(T, turn_id=7, text="pair \ud83d\ude00"), ensure_ascii=True),
    '{"turn_id": 8, "f": NaN}',
    json.dumps(dict(T, turn_id=9)) + "\r",
    "\u00a0",
    json.dumps(dict(T, turn_id=10, text="a" * 300)),
]


def _write(tmp_path, lines, end="\n"):
    p = tmp_path / "t.jsonl"
    p.write_bytes(end.join(lines).encode("utf-8") + end.encode())
    return p


@pytest.mark.parametrize("block", [1 << 20, 64, 7])
@pytest.mark.parametrize("end", ["\n", "\r\n", ""])
def test_iter_objects_yields_what_iter_jsonl_yields(tmp_path, block, end):
    p = _write(tmp_path, LINES if end != "" else [json.dumps(dict(T, turn_id=i)) for i in range(20)], end or "\n")
    if end == "":  # no newline after the last line
        p.write_bytes(p.read_bytes().rstrip(b"\n"))
    assert list(iter_objects(p, block)) == list(iter_jsonl(p))


@pytest.mark.parametrize(
    "bad",
    [
        "{not json}",
        "[1, 2]",
        '{"a": "\\ud800"}',
        "{" * 80 + "}" * 80,
        '{"a": 1',
    ],
)
@pytest.mark.parametrize("block", [1 << 20, 16])
def test_iter_objects_raises_what_iter_jsonl_raises(tmp_path, bad, block):
    p = _write(tmp_path, [json.dumps(T), bad, json.dumps(T)])
    with pytest.raises(InputError) as want:
        list(iter_jsonl(p))
    with pytest.raises(InputError) as got:
        list(iter_objects(p, block))
    assert str(got.value) == str(want.value)


def test_iter_objects_names_a_line_that_is_not_utf8(tmp_path):
    p = tmp_path / "t.jsonl"
    p.write_bytes(json.dumps(T).encode() + b"\n" + b'{"text": "\xff"}\n')
    with pytest.raises(InputError) as want:
        list(iter_jsonl(p))
    with pytest.raises(InputError) as got:
        list(iter_objects(p))
    assert str(got.value) == str(want.value) and ":2:" in str(got.value)


@pytest.mark.parametrize(
    "line, hay",
    [
        (json.dumps(dict(T, haystack="lme-1a")), "lme-1a"),
        ('{"turn_id": 1,"haystack":"x y"}', "x y"),
        (json.dumps(dict(T, haystack="café")), None),  # escaped by json.dumps: parsed
        (json.dumps(dict(T, haystack="café"), ensure_ascii=False), "café"),
        (json.dumps(dict(T, haystack='q"uote')), None),
        (json.dumps({"extra": {"haystack": "inner"}}), None),  # not the object's own field
        (json.dumps({"haystack": "a", "turn_id": 1}), None),  # not last: parsed
        (json.dumps({"text": 'x", "haystack": "fake"}'}), None),  # inside a string
        ('{"t": "x\\"", "haystack": "real"}', "real"),
        (json.dumps(T), None),
    ],
)
def test_tail_haystack_reads_only_what_parsing_gives(line, hay):
    assert _tail_haystack(line.encode()) == hay
    if hay is not None:
        assert json.loads(line)["haystack"] == hay


def test_haystack_spans_fast_and_parsed_agree(tmp_path, monkeypatch):
    lines = [json.dumps(dict(T, turn_id=i, haystack=f"h{i // 3}")) for i in range(12)]
    lines[4] = json.dumps(dict(T, turn_id=4, haystack="h1", extra={"k": 1}))  # haystack not last: parsed
    lines.insert(7, "")
    p = _write(tmp_path, lines)
    fast = haystack_spans(p)
    monkeypatch.setattr(stream, "_tail_haystack", lambda raw: None)
    assert fast == haystack_spans(p)
    assert [t.turn_id for t in TierTurns(p, fast).turns("h1")] == [3, 4, 5]
