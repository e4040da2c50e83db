"""Official answer metrics in ``answer`` mode: LoCoMo's QA F1 (hand-made cases) and LongMemEval's
per-question-type judge prompts (versioned, hashed, chosen by type; scripted judge on loopback)."""

import json

import pytest
from test_loaders_locomo import _conv, _write as _write_locomo
from test_loaders_longmemeval import _sample as _lme_sample, _write as _write_lme

from memeval.bench.loaders.locomo import import_locomo
from memeval.bench.loaders.longmemeval import import_longmemeval
from memeval.llm import ChatClient
from memeval.run import read_records, run_system
from memeval.scoring.judge import Judge, Reader
from memeval.scoring.locomo_f1 import locomo_score, normalize_answer, token_f1
from memeval.testing.chat_stub import ScriptedChatServer


@pytest.mark.parametrize(
    "text,norm",
    [
        ("The cat, and a Dog!", "cat dog"),
        ("Salt AND pepper.", "salt pepper"),
        ("1,000 dollars", "1000 dollars"),  # commas go before punctuation: no split
        ("an apple-pie", "applepie"),  # hyphen is punctuation, removed without a space
        ("Theatre", "theatre"),  # "the" only as a whole word
    ],
)
def test_locomo_normalisation(text, norm):
    assert normalize_answer(text) == norm


@pytest.mark.parametrize(
    "cat,pred,gold,want",
    [
        (2, "May 7, 2023", "7 May 2023", 1.0),  # order-free token overlap
        (4, "She went hiking", "hiking", 0.5),  # she went hike / hike: P 1/3, R 1
        (4, "photos", "photo", 1.0),  # Porter stemming
        (4, "nothing alike", "mental health", 0.0),
        (3, "yes, likely", "Likely yes; she loves lakes", 1.0),  # category 3: gold up to the first ";"
        (1, "hiking, painting", "painting, swimming, hiking", 2 / 3),  # mean over gold parts of best match
        (1, "painting and swimming", "painting, swimming", 0.5 * (2 / 3) * 2),  # one answer part vs each gold part
        (5, "No information available about that.", "mental health", 1.0),
        (5, "It was not mentioned", "x", 1.0),
        (5, "mental health", "mental health", 0.0),  # adversarial: only the abstention counts
        (5, "I don't know", "x", 0.0),  # ...in LoCoMo's two phrasings
    ],
)
def test_locomo_f1_hand_made(cat, pred, gold, want):
    assert locomo_score(cat, pred, gold) == pytest.approx(want)


def test_locomo_token_f1_counts_repeats_once_each():
    # pred "cat cat dog" vs gold "cat dog": common 2 (cat once, dog once); P 2/3, R 1 -> 0.8
    assert token_f1("cat cat dog", "cat dog") == pytest.approx(0.8)


def _client(srv):
    return ChatClient(srv.base_url, "m", backoff=0.001, max_attempts=2)


def test_answer_mode_on_locomo_records_its_f1(tmp_path):
    import_locomo([_write_locomo(tmp_path, [_conv("conv-26")])], tmp_path / "locomo")
    answers = {
        "When did Caroline go to the support group?": "On 7 May 2023.",
        "What did the race raise awareness for?": "mental health",
        "What did Caroline raise awareness for in the race?": "Not mentioned in the conversation.",
    }

    def reply(body):
        content = body["messages"][0]["content"]
        if content.startswith("You answer a question"):
            q = content.split("Question:")[-1]
            return next((a for k, a in answers.items() if k in q), "no idea")
        return json.dumps({"verdict": "correct", "evidence": "x"})

    with ScriptedChatServer(reply) as srv:
        rd = run_system(
            tmp_path / "locomo",
            "bm25",
            mode="answer",
            judge=Judge(_client(srv)),
            reader=Reader(_client(srv)),
            out=tmp_path / "r",
            progress=False,
        )
    recs = {r["question_asked"]: r for r in read_records(rd)}
    assert all(r["official_metric"] == "locomo-f1" for r in recs.values())
    # on 7 may 2023 / 7 may 2023: P 3/4, R 1 -> 6/7
    assert recs["When did Caroline go to the support group?"]["official_score"] == pytest.approx(6 / 7)
    assert recs["What did the race raise awareness for?"]["official_score"] == 1.0
    assert recs["What did Caroline raise awareness for in the race?"]["official_score"] == 1.0
    assert recs["Would Caroline like lakes?"]["official_score"] == 0.0  # "no idea" vs "Likely yes"
    from memeval.analysis.aggregate import load_records, official_table

    row = official_table(load_records(rd)).row(0, named=True)
    assert row["metric"] == "locomo-f1" and row["n"] == len(recs)
    assert row["score"] == pytest.approx(sum(r["official_score"] for r in recs.values()) / len(recs))


def test_answer_mode_on_longmemeval_uses_the_prompt_of_each_question_type(tmp_path):
    import_longmemeval([_write_lme(tmp_path / "longmemeval_s.json", _lme_sample())], tmp_path / "lme")
    seen: list[str] = []

    def reply(body):
        content = body["messages"][0]["content"]
        if content.startswith("You answer a question"):
            return "Bergen, having moved from Oslo." if "Bergen" in content else "I don't have that information."
        if content.rstrip().endswith("Reply with yes or no only."):
            seen.append(content)
            return "Yes." if "Bergen" in content.split("Model response:")[1] or "unanswerable" in content else "No"
        return json.dumps({"verdict": "wrong", "evidence": "x"})

    with ScriptedChatServer(reply) as srv:
        rd = run_system(
            tmp_path / "lme",
            "oracle",
            mode="answer",
            judge=Judge(_client(srv)),
            reader=Reader(_client(srv)),
            out=tmp_path / "r",
            progress=False,
        )
    recs = {r["qid"]: r for r in read_records(rd)}
    assert len(seen) == len(recs) == 6  # one LongMemEval check per question, beside memeval's own judge
    by = {q: recs[q]["official_metric"] for q in recs}
    assert by["q2_abs"].startswith("longmemeval-judge:lme_abstention_v1:sha256:") and by["q2_abs"].endswith("@m")
    assert by["q3"].startswith("longmemeval-judge:lme_update_v1:sha256:")
    assert by["q5"].startswith("longmemeval-judge:lme_preference_v1:")
    assert by["q1"].startswith("longmemeval-judge:lme_factual_v1:") and by["q4"].split(":")[1] == "lme_factual_v1"
    assert recs["q3"]["official_score"] == 1.0 and recs["q3"]["score"] == 0.0  # official beside memeval's verdict
    assert recs["q2_abs"]["official_score"] == 1.0 and recs["q1"]["official_score"] == 0.0
    update = next(c for c in seen if "Bergen" in c.split("Correct answer:")[-1][:20])
    assert "earlier information" in update  # the knowledge-update rule reached the judge
