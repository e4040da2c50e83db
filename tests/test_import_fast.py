"""The LongMemEval import's fast path (issue 31): turn lines formatted straight from the parsed JSON,
texts escaped in one orjson pass, tokens counted per session in bulk. Its output is checked against
golden bytes written by hand and against the reference path it replaced (``convert_instance`` →
``Turn`` → ``turn_line``), on valid and broken inputs; its memory does not grow with the file."""

import hashlib
import json
import random
import tracemalloc

import pytest

import memeval.bench.loaders._common as common
import memeval.bench.loaders._jsonstream as jsonstream
from memeval.atomic import write_jsonl
from memeval.bench.io import json_strings, load_bench, turn_line
from memeval.bench.loaders._common import TierCounter
from memeval.bench.loaders._jsonstream import iter_json_array
from memeval.bench.loaders.longmemeval import convert_instance, import_longmemeval, instance_lines
from memeval.errors import InputError


def _hay(qid: str) -> str:
    return "lme-" + hashlib.sha256(qid.encode()).hexdigest()[:12]  # benchmark notes: lme- + a hash of the id


def test_golden_bytes_of_a_tiny_import(tmp_path):
    tricky = 'say "hi" \\ back\nnew\ttab\x01 nul\x00 end'
    data = [
        {
            "question_id": "q1",
            "question_type": "multi-session",
            "question": "?",
            "answer": 4,
            "question_date": "2023/06/01 (Thu) 10:00",
            "haystack_session_ids": ["late", "empty", "early"],
            "haystack_dates": ["2023/05/20 (Sat) 02:21", "2023/05/01 (Mon) 00:00", "2023/05/03 (Wed) 11:00"],
            "haystack_sessions": [
                [{"role": "user", "content": "Café 東京 😀 \\u0000"}, {"role": "assistant", "content": ""}],
                [],
                [{"role": "user", "content": tricky, "has_answer": True}, {"role": "assistant", "content": "ok"}],
            ],
            "answer_session_ids": ["early"],
        },
        {
            "question_id": "q2_abs",
            "question_type": "temporal-reasoning",
            "question": "When?",
            "answer": "never",
            "question_date": "2023/06/01",
            "haystack_session_ids": ["s"],
            "haystack_dates": ["2023/01/01"],
            "haystack_sessions": [[{"role": "assistant", "content": "x", "has_answer": False, "other": 1}]],
        },
    ]
    src = tmp_path / "longmemeval_s.json"
    src.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    import_longmemeval([src], tmp_path / "b")
    h1, h2 = _hay("q1"), _hay("q2_abs")
    want = (
        # the empty session is number 1 (earliest date) and has no turn; "early" is 2, "late" 3
        f'{{"turn_id": 1, "session_id": 2, "speaker": "user", "text": "say \\"hi\\" \\\\ back\\nnew\\ttab\\u0001 '
        f'nul\\u0000 end", "date": "2023-05-03", "haystack": "{h1}"}}\n'
        f'{{"turn_id": 2, "session_id": 2, "speaker": "assistant", "text": "ok", "date": "2023-05-03", "haystack": "{h1}"}}\n'
        f'{{"turn_id": 3, "session_id": 3, "speaker": "user", "text": "Café 東京 😀 \\\\u0000", "date": "2023-05-20", '
        f'"haystack": "{h1}"}}\n'
        f'{{"turn_id": 4, "session_id": 3, "speaker": "assistant", "text": "", "date": "2023-05-20", "haystack": "{h1}"}}\n'
        f'{{"turn_id": 1, "session_id": 1, "speaker": "assistant", "text": "x", "date": "2023-01-01", "haystack": "{h2}"}}\n'
    )
    assert (tmp_path / "b" / "turns_s.jsonl").read_bytes() == want.encode("utf-8")
    tier = load_bench(tmp_path / "b").tier("s")
    # 5 turns in 3 sessions with turns; tokens: say " hi " \ back new tab \x01 nul \x00 end = 12 (the
    # two controls are punctuation), ok 1, Café 東 京 😀 \ u000+0 = 7, "" 0, x 1
    assert (tier.n_turns, tier.n_sessions, tier.n_tokens, tier.n_questions) == (5, 3, 21, 2)
    q1, q2 = [json.loads(x) for x in (tmp_path / "b" / "questions_s.jsonl").read_text().splitlines()]
    assert q1["evidence_turns"] == [1] and q1["evidence_sessions"] == [2] and q1["gold_answer"] == "4"
    assert q2["expect"] == "no_memory" and q2["evidence_turns"] == [] and q2["haystack"] == h2


# ---- the reference path: what the import wrote before (one Turn per turn, turn_line, add_all) ----


def _reference(src, out_dir):
    counter, questions = TierCounter(), []
    with open(out_dir / "turns.jsonl", "w", encoding="utf-8", newline="\n") as fh:
        for index, obj in iter_json_array(src):
            turns, q = convert_instance(obj, src, index)
            counter.add_all(turns)
            fh.write("".join(turn_line(t) + "\n" for t in turns))
            questions.append(q)
    write_jsonl(out_dir / "questions.jsonl", (q.to_dict() for q in questions))
    t = counter.tier("s", "", "", len(questions))
    return (out_dir / "turns.jsonl").read_bytes(), (out_dir / "questions.jsonl").read_bytes(), t


_CHARS = (
    list("abcdefgh ijk  lmnop,.!?'\"\\/\n\t\r\x00\x01\x1f\x7f_-") + list("éß東京タワー😀\u00a0\u2028’—") + ["\\u0000"]
)
TYPES = ["single-session-user", "single-session-assistant", "multi-session", "temporal-reasoning", "knowledge-update"]


def _random_data(rng: random.Random, n: int = 25) -> list:
    def text(k):
        return "".join(rng.choice(_CHARS) for _ in range(rng.randint(0, k)))

    out = []
    for h in range(n):
        ns = rng.randint(0, 5)
        sids = [f"s{h}_{i}" if rng.random() < 0.8 else "shared" for i in range(ns)]
        dates = [
            f"2023/{rng.randint(1, 3):02d}/{rng.randint(1, 3):02d} (Mon) 1{rng.randint(0, 1)}:00" for _ in range(ns)
        ]
        sessions = []
        for _ in range(ns):
            sess = []
            for _ in range(rng.randint(0, 5)):
                t = {"role": rng.choice(["user", "assistant"]), "content": text(40)}
                if rng.random() < 0.3:
                    t["has_answer"] = rng.random() < 0.5
                sess.append(t)
            sessions.append(sess)
        out.append(
            {
                "question_id": f"q{h}" + ("_abs" if rng.random() < 0.2 else ""),
                "question_type": rng.choice(TYPES),
                "question": text(10),
                "answer": rng.choice([text(5), rng.randint(0, 9)]),
                "question_date": "2023/12/30 (Sat) 23:59",
                "haystack_session_ids": sids,
                "haystack_dates": dates,
                "haystack_sessions": sessions,
                "answer_session_ids": rng.sample(sids, min(len(sids), rng.randint(0, 2))),
            }
        )
    return out


@pytest.mark.parametrize("seed", range(6))
def test_fast_import_writes_the_reference_bytes(tmp_path, seed):
    data = _random_data(random.Random(seed))
    src = tmp_path / "longmemeval_s.json"
    src.write_text(json.dumps(data, ensure_ascii=seed % 2 == 0), encoding="utf-8")
    turns, questions, tier = _reference(src, tmp_path)
    import_longmemeval([src], tmp_path / "b")
    got = load_bench(tmp_path / "b").tier("s")
    assert (tmp_path / "b" / "turns_s.jsonl").read_bytes() == turns
    assert (tmp_path / "b" / "questions_s.jsonl").read_bytes() == questions
    assert (got.n_turns, got.n_sessions, got.n_tokens, got.n_questions) == (
        tier.n_turns,
        tier.n_sessions,
        tier.n_tokens,
        tier.n_questions,
    )


_BAD_TURNS = [
    lambda t: t.update(role="system"),
    lambda t: t.update(role=None),
    lambda t: t.update(role=["user"]),
    lambda t: t.pop("role"),
    lambda t: t.update(content=5),
    lambda t: t.update(content=None),
    lambda t: t.pop("content"),
    lambda t: t.update(has_answer="yes"),
    lambda t: t.update(has_answer=1),
    lambda t: t.update(has_answer=None),
]


@pytest.mark.parametrize("seed", range(12))
def test_a_broken_turn_is_named_as_the_reference_names_it(tmp_path, seed):
    rng = random.Random(seed)
    data = _random_data(rng, 6)
    spots = [
        (h, i, j) for h, inst in enumerate(data) for i, s in enumerate(inst["haystack_sessions"]) for j in range(len(s))
    ]
    h, i, j = rng.choice(spots)
    sess = data[h]["haystack_sessions"][i]
    if seed % 6 == 5:
        sess[j] = rng.choice([["user", "x"], "turn", 3, None])  # not an object at all
    else:
        _BAD_TURNS[seed % len(_BAD_TURNS)](sess[j])
    with pytest.raises(InputError) as ref:
        convert_instance(data[h], "f.json", h)
    with pytest.raises(InputError) as fast:
        instance_lines(data[h], "f.json", h)
    assert str(fast.value) == str(ref.value)
    assert f"field 'haystack_sessions[{i}][{j}]" in str(fast.value)
    src = tmp_path / "longmemeval_s.json"
    src.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(InputError) as e:
        import_longmemeval([src], tmp_path / "b")
    assert str(e.value) == str(ref.value).replace("f.json", str(src)) and not (tmp_path / "b").exists()


def test_json_strings_escape_as_json_dumps_does():
    every = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000)
    texts = [every[k : k + 4096] for k in range(0, len(every), 4096)]
    texts += ["", "\\", 'end\\"', "\\u0000", "a\x00b", "\x00", '"', "\\\\u0000x"]
    want = [json.dumps(t, ensure_ascii=False)[1:-1].encode("utf-8") for t in texts]
    assert json_strings(texts) == want
    for k in range(len(texts) - 2):  # the slow way (NUL, a literal \u0000) and the fast one, in small groups
        assert json_strings(texts[k : k + 3]) == want[k : k + 3]
    assert json_strings(["x"]) == [b"x"] and json_strings([]) == []


def _lme(path, haystacks: int, sessions: int = 10, turns: int = 10):
    rng = random.Random(0)
    words = "we went to the park and had lunch with my sister then watched a movie about dogs".split()
    data = []
    for h in range(haystacks):
        data.append(
            {
                "question_id": f"q{h}",
                "question_type": "multi-session",
                "question": "?",
                "answer": "x",
                "question_date": "2023/06/01",
                "haystack_session_ids": [f"s{h}_{s}" for s in range(sessions)],
                "haystack_dates": [f"2023/05/{1 + s:02d}" for s in range(sessions)],
                "haystack_sessions": [
                    [
                        {"role": ("user", "assistant")[t % 2], "content": " ".join(rng.choices(words, k=40))}
                        for t in range(turns)
                    ]
                    for _ in range(sessions)
                ],
            }
        )
    path.write_text(json.dumps(data))
    return path


def test_import_memory_does_not_grow_with_the_file(tmp_path, monkeypatch):
    monkeypatch.setattr(jsonstream, "_CHUNK", 1 << 16)  # a read buffer far smaller than the files
    monkeypatch.setattr(common, "PENDING_CHARS", 1 << 14)  # and the texts held for one token count
    peaks = []
    for n in (30, 90):
        src = _lme(tmp_path / f"longmemeval_{n}.json", n)  # ~0.7 and ~2 MB
        import_longmemeval([src], tmp_path / f"warm{n}")  # first use: caches, compiled patterns
        tracemalloc.start()
        try:
            import_longmemeval([src], tmp_path / f"b{n}")
            peaks.append(tracemalloc.get_traced_memory()[1])
        finally:
            tracemalloc.stop()
    # what grows is one Question per instance, not the turns: 3x the file, well under 1.5x the peak
    assert peaks[1] < 1.5 * peaks[0], peaks


def test_the_command_line_imports_only_the_command_it_runs():
    import subprocess
    import sys

    code = (
        "import sys; from memeval.cli import build_parser; "
        "p = build_parser(sys.argv[1:]); "
        "print(sorted(m for m in sys.modules if m.startswith('memeval.commands.')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, "--debug", "import", "longmemeval", "x.json"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert out.strip() == "['memeval.commands.import']"
    for argv in ([], ["--help"], ["importx"]):  # no command, or one misspelt: every command, for the choices
        out = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, check=True).stdout
        assert "'memeval.commands.run'" in out and "'memeval.commands.export_longmemeval'" in out


def test_turn_lines_are_turn_line_bytes():
    from memeval.bench.io import turn_lines
    from memeval.bench.model import Turn

    rng = random.Random(3)

    def text():
        return "".join(rng.choice(_CHARS) for _ in range(rng.randint(0, 30)))

    turns = [
        Turn(
            rng.randint(1, 10**6),
            rng.choice([rng.randint(0, 99), text(), 2.5]),  # a float: the general writer for that line
            text(),
            text(),
            text(),
            image=rng.choice([None, text()]),
            image_no=rng.choice([None, 0, 7]),
            caption=rng.choice([None, "", text()]),
            haystack=rng.choice([None, text()]),
            extra={"kind": "story"},
        )
        for _ in range(300)
    ]
    assert turn_lines(turns) == "".join(turn_line(t) + "\n" for t in turns).encode("utf-8")
    assert turn_lines([]) == b""


def test_an_escaped_lone_surrogate_after_other_escapes_is_refused(tmp_path):
    a = tmp_path / "a.json"
    a.write_text('[{"t": "caf\\u00e9 \\ud83d\\ude00"}, {"t": "caf\\u00e9 then \\uDC00 alone"}]')
    with pytest.raises(InputError, match="record 1: holds an escaped lone surrogate"):
        list(iter_json_array(a))
    a.write_text('[{"t": "caf\\u00e9 \\ud83d\\ude00"}, "\\\\ud800 is six characters"]')
    assert [x for _, x in iter_json_array(a)] == [{"t": "café 😀"}, "\\ud800 is six characters"]


def test_bulk_token_counts_of_non_ascii_texts_across_batches(monkeypatch):
    import memeval.bench.tokens as tokens

    monkeypatch.setattr(tokens, "_BULK_CHARS", 40)  # many small numpy passes, ASCII and not interleaved
    rng = random.Random(11)
    pool = [
        "ab",
        "abcde",
        "é",
        "ß",
        "東京",
        "タワー",
        "😀",
        "\u00a0",
        "\u2028",
        "’",
        "_",
        "٣",
        "\ud800",
        " ",
        "\n",
        "!",
    ]
    texts = ["".join(rng.choice(pool) for _ in range(rng.randint(0, 25))) for _ in range(400)]
    assert tokens.count_tokens_many(texts) == [tokens.count_tokens(t) for t in texts]
