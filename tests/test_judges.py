"""Judge agreement (``memeval judges``) and the leniency probe (``memeval leniency``), driven by two
scripted judges on loopback whose rules (memeval/testing/judge_stubs.py) are applied here by hand."""

import json
from fractions import Fraction
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

from memeval.analysis.judges import (
    agreement_table,
    cohen_kappa,
    confusion_table,
    leniency_table,
    load_judge_pair,
    paired_verdicts,
)
from memeval.bench import Question, Turn, save_bench, write_questions, write_turns
from memeval.bench.model import Bench, Tier
from memeval.cli import main
from memeval.testing.chat_stub import ScriptedChatServer
from memeval.testing.judge_stubs import judge_responder

QUESTIONS = [
    Question("Q1", "BASIC", "Which town does Ingrid Dunmore live in?", "Halstead", evidence_turns=(1,)),
    Question("Q2", "BASIC", "Which town does Niko Ibarra live in?", "Garminster", evidence_turns=(2,)),
    Question("Q3", "BASIC", "What is on Mara Lind's sofa?", "pink vase", evidence_turns=(3,)),
    Question("Q4", "BASIC", "What is on Tom Reyes's sofa?", "blue mug", evidence_turns=(4,)),
    Question(
        "Q5",
        "STALE",
        "Which company employs Elif Kohler?",
        "Palewind Publishing",
        stale_answer="Orchardley Foods",
        expect="answer_or_abstain",
        evidence_turns=(6,),
    ),
    Question(
        "Q6",
        "CONTRADICT",
        "Where did Nerys Achterberg grow up?",
        "Crommere or Alderdale: both were said and nothing settles which",
        clash_a="Crommere",
        clash_b="Alderdale",
        expect="flag_conflict",
        evidence_turns=(7, 8),
    ),
    Question(
        "Q7",
        "FALSE_MEMORY",
        "When I told you that Nadia Blackwood's favourite book is The Glass Shoreline, what did you suggest?",
        "",
        expect="no_memory",
        false_claim_en="Nadia Blackwood's favourite book is The Glass Shoreline",
    ),
    Question("Q8", "ABSTAIN", "Which town does Hamza Eriksen live in?", "", expect="no_memory"),
]
TEXTS = [
    "Ingrid Dunmore lives in Halstead.",
    "Niko Ibarra lives in Garminster.",
    "Mara Lind has a pink vase on her sofa.",
    "Tom Reyes keeps a blue mug on his sofa.",
    "Elif Kohler works at Orchardley Foods.",
    "Elif Kohler moved to Palewind Publishing.",
    "Nerys Achterberg grew up in Crommere.",
    "Nerys Achterberg grew up in Alderdale.",
]


def _bench(root: Path, texts=tuple(TEXTS), name: str = "judgebench") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    write_turns(root / "turns.jsonl", [Turn(i, i, "user", t, f"2026-01-{i:02d}") for i, t in enumerate(texts, 1)])
    write_questions(root / "questions.jsonl", QUESTIONS)
    save_bench(
        Bench(
            name=name,
            version="1",
            root=str(root),
            tiers=(
                Tier(
                    "core",
                    "turns.jsonl",
                    "questions.jsonl",
                    n_turns=len(TEXTS),
                    n_questions=len(QUESTIONS),
                    n_tokens=80,
                ),
            ),
        )
    )
    return root


# --- Cohen's kappa on hand-computed cases -------------------------------------------------------


def test_kappa_hand_computed():
    # 10 pairs: 4 (c,c), 2 (c,w), 1 (w,c), 3 (w,w): p_o = 7/10; marginals A c6 w4, B c5 w5:
    # p_e = (6*5 + 4*5) / 100 = 1/2, kappa = (0.7 - 0.5) / 0.5 = 0.4
    pairs = (
        [("correct", "correct")] * 4 + [("correct", "wrong")] * 2 + [("wrong", "correct")] + [("wrong", "wrong")] * 3
    )
    assert cohen_kappa(pairs) == pytest.approx(0.4)
    assert cohen_kappa([("correct", "correct")] * 3) is None  # p_e = 1: undefined, not 1 or 0
    assert cohen_kappa([]) is None
    assert cohen_kappa([("correct", "wrong"), ("wrong", "correct")]) == pytest.approx(-1.0)


def test_ungraded_counted_apart_not_as_disagreement():
    def frame(scores, verdicts):
        n = len(scores)
        return pl.DataFrame(
            {
                "tier": ["t"] * n,
                "qid": [f"q{i}" for i in range(n)],
                "epoch": [0] * n,
                "axis": ["BASIC"] * n,
                "answer": ["x"] * n,
                "memories_returned": [None] * n,
                "score": scores,
                "verdict": verdicts,
            },
            schema_overrides={"score": pl.Float64, "memories_returned": pl.List(pl.Utf8)},
        )

    a = frame([1.0, 0.0, None, 0.5, None], ["correct", "wrong", None, None, None])
    b = frame([1.0, 1.0, 1.0, 0.5, None], ["correct", "correct", "correct", "partial", None])
    row = agreement_table(paired_verdicts(a, b)).filter(pl.col("axis") == "ALL").row(0, named=True)
    # both graded: q0 (c,c), q1 (w,c), q3 (p from score 0.5, p): p_o = 2/3; A c1 w1 p1, B c2 p1:
    # p_e = (1*2 + 1*1) / 9 = 1/3; kappa = (2/3 - 1/3) / (2/3) = 1/2
    assert (row["n"], row["ungraded_a_only"], row["ungraded_b_only"], row["ungraded_both"]) == (3, 1, 0, 1)
    assert row["agreement"] == pytest.approx(2 / 3) and row["kappa"] == pytest.approx(0.5)
    conf = confusion_table(paired_verdicts(a, b))
    assert conf.filter(pl.col("A \\ B") == "ungraded").row(0, named=True) == {
        "A \\ B": "ungraded",
        "correct": 1,
        "partial": 0,
        "wrong": 0,
        "ungraded": 1,
    }


# --- two gradings of the same answers, from two `memeval run`s ----------------------------------

#: the reader's scripted answers, and each stub judge's verdict on them worked out from its rules
ANSWERS = {  # qid: (answer, strict, lenient)
    "Q1": ("Halstead", "correct", "correct"),  # equals gold | a capitalised value
    "Q2": ("Halstead", "wrong", "correct"),  # not gold | a value
    "Q3": ("I don't know", "partial", "wrong"),  # "don't know" for both
    "Q4": ("It might be blue mug or pink vase", "wrong", "partial"),  # not gold | "might"
    "Q5": ("palewind publishing", "correct", "wrong"),  # gold lower-cased | no capital, no digit
    "Q6": ("Crommere", "wrong", "correct"),
    "Q7": ("I'm not sure that was ever said", "partial", "wrong"),  # "not sure" | only I'm is capitalised
    "Q8": ("Nothing was ever said about that", "wrong", "correct"),  # "Nothing" counts as a value
}


def _reader(body):
    content = body["messages"][-1]["content"]
    asked = content.split("Question: ")[-1].split("\n")[0]
    qid = next(q.id for q in QUESTIONS if q.question_en == asked)
    return ANSWERS[qid][0]


def _run(bench, judge_url, reader_url, out, model):
    assert (
        main(
            [
                "run",
                "--bench",
                str(bench),
                "--system",
                "no_memory",
                "--mode",
                "answer",
                "--judge-url",
                judge_url,
                "--judge-model",
                model,
                "--reader-url",
                reader_url,
                "--reader-model",
                "reader",
                "--out",
                str(out),
                "--no-progress",
            ]
        )
        == 0
    )
    return out


@pytest.fixture(scope="module")
def two_gradings(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("judges")
    bench = _bench(tmp / "bench")
    with (
        ScriptedChatServer(_reader) as reader,
        ScriptedChatServer(judge_responder("strict")) as strict,
        ScriptedChatServer(judge_responder("lenient")) as lenient,
    ):
        a = _run(bench, strict.base_url, reader.base_url, tmp / "strict", "strict-judge")
        b = _run(bench, lenient.base_url, reader.base_url, tmp / "lenient", "lenient-judge")
    return tmp, bench, a, b


def test_agreement_and_kappa_of_strict_and_lenient_judges(two_gradings, capsys):
    _, _, a, b = two_gradings
    pairs, la, lb = load_judge_pair(a, b)
    assert "strict-judge" in la and "lenient-judge" in lb
    table = {r["axis"]: r for r in agreement_table(pairs).iter_rows(named=True)}
    # overall: 1 agreement of 8 (Q1); strict c2 p2 w4, lenient c4 p1 w3:
    # p_e = (2*4 + 2*1 + 4*3) / 64 = 22/64, kappa = (8/64 - 22/64) / (42/64) = -1/3
    assert table["ALL"]["n"] == 8 and table["ALL"]["agreement"] == pytest.approx(1 / 8)
    assert table["ALL"]["kappa"] == pytest.approx(float(Fraction(-1, 3)))
    # BASIC (Q1-Q4): (c,c) (w,c) (p,w) (w,p): p_o = 1/4; strict c1 p1 w2, lenient c2 p1 w1:
    # p_e = (1*2 + 1*1 + 2*1) / 16 = 5/16, kappa = (4/16 - 5/16) / (11/16) = -1/11
    assert table["BASIC"]["n"] == 4 and table["BASIC"]["kappa"] == pytest.approx(-1 / 11)
    # one question per other axis, each a disagreement: p_o = 0, p_e = 0, kappa = 0
    assert table["STALE"]["agreement"] == 0 and table["STALE"]["kappa"] == 0
    conf = {r["A \\ B"]: r for r in confusion_table(pairs).iter_rows(named=True)}
    assert conf["correct"] == {"A \\ B": "correct", "correct": 1, "partial": 0, "wrong": 1, "ungraded": 0}
    assert conf["partial"]["wrong"] == 2 and conf["wrong"]["correct"] == 3 and conf["wrong"]["partial"] == 1
    assert main(["judges", str(a), str(b), "--by-axis"]) == 0
    out = capsys.readouterr().out
    assert "-0.333" in out and "Confusion, BASIC" in out and "strict-judge" in out


def test_judges_refuses_other_bench_and_other_answers(two_gradings, tmp_path, capsys):
    tmp, _, a, _ = two_gradings
    other = _bench(tmp_path / "other", texts=[*TEXTS[:-1], "Nerys grew up by the sea."])  # other content
    with ScriptedChatServer(_reader) as reader, ScriptedChatServer(judge_responder("strict")) as strict:
        c = _run(other, strict.base_url, reader.base_url, tmp_path / "c", "strict-judge")
    capsys.readouterr()  # the run's own headline (stderr)
    assert main(["judges", str(a), str(c)]) == 2
    err = capsys.readouterr().err.strip()
    assert "field 'config.bench.content_hash'" in err and "refusing" in err and len(err.splitlines()) == 1
    # the same bench, another reader: not two gradings of the same answers
    with ScriptedChatServer(lambda body: "Halstead") as reader, ScriptedChatServer(judge_responder("strict")) as strict:
        d = _run(two_gradings[1], strict.base_url, reader.base_url, tmp_path / "d", "strict-judge")
    capsys.readouterr()
    assert main(["judges", str(a), str(d)]) == 2
    err = capsys.readouterr().err.strip()
    assert (
        len(err.splitlines()) == 1 and "6 of 8 shared questions hold a different answer" in err
    )  # Q1, Q2 were Halstead already


# --- the leniency probe -------------------------------------------------------------------------

#: the probes of the bench above (sibling = next gold of the same question shape), by hand
EXPECTED_PROBES = [
    ("near_miss", "Q1", "It's Garminster."),
    ("hedge", "Q1", "It might be Halstead or Garminster; I can't say which."),
    ("near_miss", "Q2", "It's Halstead."),
    ("hedge", "Q2", "It might be Garminster or Halstead; I can't say which."),
    ("near_miss", "Q3", "It's blue mug."),
    ("hedge", "Q3", "It might be pink vase or blue mug; I can't say which."),
    ("near_miss", "Q4", "It's pink vase."),
    ("hedge", "Q4", "It might be blue mug or pink vase; I can't say which."),
    ("stale", "Q5", "It's Orchardley Foods."),
    ("one_side", "Q6", "It's Crommere."),
    ("one_side", "Q6", "It's Alderdale."),
    (
        "false_premise",
        "Q7",
        "Yes, I remember: Nadia Blackwood's favourite book is The Glass Shoreline. You told me that.",
    ),
    ("invented", "Q8", "It's Halstead."),
]


def test_leniency_build_labels_every_trap(tmp_path, capsys):
    bench = _bench(tmp_path / "bench")
    out = tmp_path / "probes.jsonl"
    assert main(["leniency", "build", str(bench), "--out", str(out)]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(r["trap"], r["qid"], r["answer"]) for r in rows] == EXPECTED_PROBES
    assert all(r["question"]["id"] == r["qid"] for r in rows)


def test_leniency_grade_strict_lenient_and_mute(tmp_path, capsys):
    bench = _bench(tmp_path / "bench")
    probes = tmp_path / "probes.jsonl"
    assert main(["leniency", "build", str(bench), "--out", str(probes)]) == 0
    verdicts = tmp_path / "verdicts.jsonl"
    with (
        ScriptedChatServer(judge_responder("strict")) as s,
        ScriptedChatServer(judge_responder("lenient")) as l,
        ScriptedChatServer(judge_responder("mute")) as m,
    ):
        assert (
            main(
                [
                    "leniency",
                    "grade",
                    str(probes),
                    "--judge-url",
                    s.base_url,
                    "--judge-model",
                    "strict",
                    "--judge-url",
                    l.base_url,
                    "--judge-model",
                    "lenient",
                    "--judge-url",
                    m.base_url,
                    "--judge-model",
                    "mute",
                    "--out",
                    str(verdicts),
                ]
            )
            == 0
        )
    df = pl.read_ndjson(verdicts, schema_overrides={"score": pl.Float64}).with_columns(
        pl.col("judge").str.split(" @ ").list.first()
    )
    per_trap = {
        (r["judge"], r["trap"]): (r["n"], r["accepted"], r["full"], r["ungraded"])
        for r in leniency_table(df).iter_rows(named=True)
    }
    # strict: no trap answer equals a gold, none says "don't know"/"not sure": all 13 rejected
    for trap, n in {"near_miss": 4, "hedge": 4, "stale": 1, "one_side": 2, "false_premise": 1, "invented": 1}.items():
        assert per_trap[("strict", trap)] == (n, 0, 0, 0)
        assert per_trap[("mute", trap)] == (0, 0, 0, n)  # no verdict: ungraded, counted apart
    # lenient: a near miss is accepted when it holds a capitalised value (Garminster, Halstead), not
    # "blue mug"/"pink vase"; every hedge says "might" (partial); the others name a value (correct)
    assert per_trap[("lenient", "near_miss")] == (4, 2, 2, 0)
    assert per_trap[("lenient", "hedge")] == (4, 4, 0, 0)
    for trap, n in {"stale": 1, "one_side": 2, "false_premise": 1, "invented": 1}.items():
        assert per_trap[("lenient", trap)] == (n, n, n, 0)
    per_axis = {
        (r["judge"], r["axis"]): (r["n"], r["accepted"], r["acceptance"])
        for r in leniency_table(df, ["judge", "axis"]).iter_rows(named=True)
    }
    assert per_axis[("lenient", "BASIC")] == (8, 6, 0.75) and per_axis[("strict", "BASIC")] == (8, 0, 0.0)
    assert per_axis[("mute", "BASIC")] == (0, 0, None)
    out = capsys.readouterr().out
    assert "Per trap" in out and "Per axis" in out and "0.750" in out


def test_demo_bench_has_at_least_100_labelled_probes(tmp_path):
    from memeval.bench.lifelog import generate  # noqa: F401  (the generator the demo bench comes from)
    from memeval.scoring.leniency import TRAPS, build_probes

    assert main(["generate", "--preset", "demo", "--seed", "1", "--out", str(tmp_path / "demo")]) == 0
    probes = build_probes(tmp_path / "demo")
    assert len(probes) >= 100 and all(p.trap in TRAPS for p in probes)
    assert {p.trap for p in probes} == set(TRAPS)  # every trap is set at least once
    stale = [p for p in probes if p.trap == "stale"]
    assert stale and all(p.question.stale_answer in p.answer for p in stale)


def test_bad_probe_file_is_one_line(tmp_path, capsys):
    bad = tmp_path / "p.jsonl"
    bad.write_text('{"id": "P1", "trap": "bribe", "axis": "BASIC", "tier": "core", "answer": "x", "question": {}}\n')
    assert main(["leniency", "grade", str(bad), "--judge-url", "http://127.0.0.1:9/v1", "--judge-model", "m"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "p.jsonl:1: field 'trap'" in err and "unknown trap" in err


def test_near_field_is_the_near_miss_where_a_bench_has_one(tmp_path):
    from memeval.scoring.leniency import build_probes

    root = tmp_path / "b"
    root.mkdir()
    write_turns(root / "turns.jsonl", [Turn(1, 1, "user", "Ingrid lives in Halstead.", "2026-01-01")])
    write_questions(
        root / "questions.jsonl",
        [
            Question(
                "Q1",
                "BASIC",
                "Which town does Ingrid live in?",
                "Halstead",
                evidence_turns=(1,),
                extra={"near": "Halsworth"},
            )
        ],
    )
    save_bench(
        Bench(
            name="near",
            version="1",
            root=str(root),
            tiers=(Tier("core", "turns.jsonl", "questions.jsonl", n_turns=1, n_questions=1, n_tokens=5),),
        )
    )
    assert [(p.trap, p.answer) for p in build_probes(root)] == [
        ("near_miss", "It's Halsworth."),
        ("hedge", "It might be Halstead or Halsworth; I can't say which."),
    ]


_verdict = st.sampled_from(["correct", "partial", "wrong"])


@given(st.lists(st.tuples(_verdict, _verdict), min_size=1, max_size=40))
def test_kappa_properties(pairs):
    k = cohen_kappa(pairs)
    swapped = cohen_kappa([(b, a) for a, b in pairs])
    assert (k is None) == (swapped is None)
    if k is not None:
        assert -1 - 1e-9 <= k <= 1 + 1e-9 and k == pytest.approx(swapped)
    same = cohen_kappa([(a, a) for a, _ in pairs])
    assert same is None if len({a for a, _ in pairs}) == 1 else same == pytest.approx(1.0)
