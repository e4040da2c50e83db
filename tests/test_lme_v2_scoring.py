"""LongMemEval-V2's official scorers (memeval.scoring.lme_v2), its reader layout and context cap, and
an answer-mode run on the fixture against a scripted loopback reader and judge."""

from __future__ import annotations

import json

import pytest

from memeval.bench import read_questions
from memeval.bench.model import Question
from memeval.cli import main
from memeval.llm import ChatClient
from memeval.run.records import read_records
from memeval.run.runner import run_system
from memeval.scoring import lme_v2
from memeval.scoring.judge import Judge, Reader
from memeval.systems.context import fit_memories
from memeval.testing.chat_stub import ScriptedChatServer

from lme_v2_fixture import QUESTIONS, make_fixture

pytestmark = pytest.mark.xdist_group("lme_v2")
g = lme_v2.grade


def test_phrase_set_is_whole_words_in_any_order_after_normalising():
    assert g("norm_phrase_set_match", "Hold, then the INVOICE button", "invoice; hold")
    assert not g("norm_phrase_set_match", "Holding invoices", "invoice; hold")  # whole words only
    assert g("norm_phrase_set_match", "re-order now", "re order")  # '-' is a space
    assert g("norm_phrase_set_match", "costs $29.99", "$29.99")  # punctuation dropped on both sides: '2999'
    assert not g("norm_phrase_set_match", "", "a")  # empty prediction
    assert g("norm_phrase_set_match|require_non_empty=false", "", ",;")  # no phrase, nothing required
    assert not g("norm_phrase_set_match|normalize_hyphen=false", "re order", "re-order")  # 'reorder' vs 're order'


def test_phrase_sequence_searches_after_each_match():
    spec = "norm_phrase_set_match_ordered|separators=;"
    assert g(spec, "Invoice, then Hold", "Invoice; Hold")
    assert not g(spec, "Hold, then Invoice", "Invoice; Hold")
    assert not g("norm_phrase_set_match_ordered|separators=/", "abc", "ab/c")  # whole words
    assert g("norm_phrase_set_match_ordered|separators=/", "ab c", "ab/c")
    assert g("norm_phrase_set_match_ordered", "x a y a", "a, a")  # a repeated phrase needs two matches
    assert not g("norm_phrase_set_match_ordered", "x a y", "a, a")
    assert g("norm_phrase_set_match", "x a y", "a, a")  # the unordered one counts it once


def test_choice_reads_a_flat_box_lower_cased_and_strips_words():
    assert g("mc_choice_match", "Option B.", "b")
    assert g("mc_choice_match", r"I pick \boxed{Choice C}", "C")
    assert not g("mc_choice_match", "B or C", "B")
    assert g("mc_choice_match|strip_chars=.()", "(A).", "A")
    assert not g("mc_choice_match", "(A)", "A")  # '(' stays by default


def test_choice_set_counts_every_capital_run_letter_by_letter():
    assert g("mc_choice_set_match", "Answer: A and B", "B, A")
    assert g("mc_choice_set_match", "AB", "A, B")  # a run of capitals is letters
    assert not g("mc_choice_set_match", "I think A", "A")  # 'I', 'THINK' are letters too
    assert not g("mc_choice_set_match", "", "A")


def test_spec_errors():
    for bad in ("", "exact", "norm_phrase_set_match|x", "norm_phrase_set_match|=1", "mc_choice_match|a=1|a=2"):
        with pytest.raises(lme_v2.EvalSpecError):
            g(bad, "a", "a")
    with pytest.raises(lme_v2.EvalSpecError):  # an option the function does not take
        g("norm_phrase_set_match|separator=;", "a", "a")
    with pytest.raises(lme_v2.EvalSpecError):  # a number where text is needed
        g("mc_choice_match|strip_chars=1", "a", "a")
    assert lme_v2.parse_spec("mc_choice_match|a=1.5|b=none|c=TRUE|d=two|e=3")[1] == {
        "a": 1.5,
        "b": None,
        "c": True,
        "d": "two",
        "e": 3,
    }
    assert lme_v2.parse_spec('norm_phrase_set_match|separators=[";", "/"]')[1] == {"separators": [";", "/"]}
    assert lme_v2.parse_spec("norm_phrase_set_match|separators= ; / ")[1] == {"separators": [";", "/"]}


def test_boxed_extraction_and_unknown():
    assert lme_v2.extract_boxed(r"\boxed{A} then \boxed{ B {x} }") == "B {x}"
    assert lme_v2.extract_boxed("  plain  ") == "plain"
    assert lme_v2.extract_boxed(r"\boxed{  }") == r"\boxed{  }"  # an empty box: the whole text
    assert lme_v2.is_unknown(" Unknown ") and not lme_v2.is_unknown("unknown.")


def _q(spec: str, gold: str, qtype: str = "static-environment", domain: str = "web") -> Question:
    extra = {"eval_function": spec, "lme_v2": True, "question_type": qtype, "domain": domain}
    return Question("q", "BASIC", "What?", gold_answer=gold, extra=extra)


def test_official_score_extracts_and_unknown_is_wrong():
    q = _q("norm_phrase_set_match", "Unknown")
    assert lme_v2.official_score(q, r"\boxed{UNKNOWN}").score == 0.0  # the function matches; the rule wins
    q = _q("mc_choice_match", "B")
    o = lme_v2.official_score(q, r"Reasoning... \boxed{B}")
    assert o.score == 1.0 and o.extracted == "B" and not o.unknown
    assert lme_v2.official_score(q, "").score == 0.0  # a failed reader request scores 0


class _Client:
    model = "stub-judge"

    def __init__(self, reply: str):
        self.reply, self.seen = reply, []

    def chat(self, messages, max_tokens=None, **_):
        self.seen.append((messages, max_tokens))
        return type("R", (), {"text": self.reply})()


def test_rubrics_are_sent_verbatim_with_full_and_extracted_answers():
    q = _q("llm_abstention_checker", "No red kettle exists.", "static-environment-abs")
    c = _Client('```json\n{"label": 1, "reason": "flags the premise"}\n```')
    o = lme_v2.official_score(q, r"There is no red kettle. \boxed{no red kettle}", lme_v2.LmeV2Judge(c))
    assert o.score == 1.0 and o.function == "llm_abstention_checker"
    ((msgs, cap),) = c.seen
    assert cap == 4096 and [m["role"] for m in msgs] == ["system", "user"]
    assert msgs[0]["content"].startswith("You are a strict grader for flawed-premise (abstention) questions.")
    user = msgs[1]["content"]
    assert "Question:\nWhat?\n\nReference answer (the expected flaw-aware conclusion):\nNo red kettle exists." in user
    assert (
        "Model full response:\nThere is no red kettle. \\boxed{no red kettle}\n\nModel extracted final answer:\nno red kettle"
        in user
    )
    assert user.endswith('Output JSON only:\n{"label": 0 or 1, "reason": "short rationale"}')
    g2 = _q("llm_gotchas_checker", "Invoice first.", "errors-gotchas")
    c2 = _Client("label: 0")
    assert lme_v2.official_score(g2, "Restart the browser.", lme_v2.LmeV2Judge(c2)).score == 0.0
    assert c2.seen[0][0][0]["content"].startswith("You are a strict grader for gotchas-style insight questions.")
    # unreadable reply, no judge: ungraded with a reason, never 0
    o = lme_v2.official_score(g2, "x", lme_v2.LmeV2Judge(_Client("maybe")))
    assert o.score is None and "no 0/1 label" in (o.reason or "")
    assert lme_v2.official_score(g2, "x").score is None
    # bench text holding a slot name is not read as a slot
    tricky = _q("llm_gotchas_checker", "{model_final_answer}", "errors-gotchas")
    c3 = _Client('{"label": 1}')
    lme_v2.official_score(tricky, r"\boxed{X}", lme_v2.LmeV2Judge(c3))
    assert "Reference answer (insight points):\n{model_final_answer}\n" in c3.seen[0][0][1]["content"]


def test_judgement_parse():
    p = lme_v2.parse_judgement
    assert p('{"label": "0"}') == 0 and p("{'label': 1}") == 1 and p("Label = 1") == 1 and p("") is None


def test_reader_layout_prompt_and_prefix_cap():
    q = _q("mc_choice_match", "A", domain="enterprise")
    msgs = lme_v2.reader_messages(q, ["m1", "m2"], ("data:image/png;base64,AA==",), (None, "[image 1]"), "data:q")
    assert msgs[0]["role"] == "system" and "customized ServiceNow environment" in msgs[0]["content"]
    assert "output exactly \\boxed{UNKNOWN}" in msgs[0]["content"] and "\x08oxed{} explaining" in msgs[0]["content"]
    parts = msgs[1]["content"]
    assert [p["type"] for p in parts] == ["text", "text", "text", "image_url", "text", "image_url"]
    assert parts[0]["text"] == "### Memory context:\n" and parts[4]["text"] == "\n\n### Question to answer:\nWhat?"
    assert lme_v2.reader_messages(q, [])[1]["content"][0]["text"] == "### Memory context:\n(empty)"
    f = fit_memories(["a b", "c d e", "f"], 4, keep="prefix")
    assert f.memories == ("a b",) and f.dropped == 4  # 'f' would fit, but only a prefix is kept


def _responder(body: dict):
    msgs = body["messages"]
    first = msgs[0]["content"] if isinstance(msgs[0]["content"], str) else ""
    if first.startswith("You are a strict grader"):
        return '{"label": 1, "reason": "ok"}'
    if "### Memory context" in json.dumps(msgs[-1]["content"]):
        q = msgs[-1]["content"][-1]
        q = q["text"] if q["type"] == "text" else msgs[-1]["content"][-2]["text"]
        if "blue kettle" in q:
            return r"The product page says $29.99. \boxed{$29.99}"
        if "click first" in q:
            return r"\boxed{UNKNOWN}"
        return r"I recall it. \boxed{A, B}"
    return '{"verdict": "correct", "evidence": "stub"}'


def test_answer_mode_run_scores_officially_and_records_truncation(tmp_path):
    data = make_fixture(tmp_path / "d")
    bench = tmp_path / "b"
    assert main(["import", "longmemeval-v2", str(data), "--tier", "small", "--out", str(bench), "--no-progress"]) == 0
    with ScriptedChatServer(_responder) as srv:
        client = ChatClient(srv.base_url, "stub")
        run_system(
            str(bench),
            "bm25",
            mode="answer",
            judge=Judge(client),
            reader=Reader(client, images=True),
            context_max_tokens=150,
            out=tmp_path / "run",
            progress=False,
        )
        sent = srv.requests
    recs = {r["qid"]: r for r in read_records(tmp_path / "run")}
    assert len(recs) == len(QUESTIONS) and all(r["error"] is None for r in recs.values())
    k = recs["w_static_1"]
    assert k["official_score"] == 1.0 and k["official_detail"]["extracted"] == "$29.99"
    assert recs["w_proc_1"]["official_score"] == 0.0 and recs["w_proc_1"]["official_detail"]["unknown"] is True
    assert recs["e_proc_1"]["official_score"] == 1.0  # mc_choice_set_match on 'A, B'
    assert recs["e_static_1"]["official_score"] == 0.0
    assert recs["w_gotcha_1"]["official_score"] == 1.0 and recs["w_gotcha_1"]["official_metric"].startswith(
        "longmemeval-v2:llm_gotchas_checker:"
    )
    # the cap cut whole memories and said so
    assert all(r["context_limit"] == 150 for r in recs.values())
    assert all(r["context_truncated"] and 0 < r["context_tokens"] <= 150 for r in recs.values())
    # the screenshots of the kept memories only: w_static_1 kept 2 memories, one with a screenshot
    assert recs["w_static_1"]["images_sent"] == 1 and recs["w_dyn_1"]["images_sent"] is None
    reader_calls = [b for b in sent if b["messages"][0]["content"].startswith("You are an experienced colleague")]
    assert len(reader_calls) == len(QUESTIONS) and all(b["max_tokens"] == 20000 for b in reader_calls)
    dyn = next(b for b in reader_calls if "Which buttons appear" in json.dumps(b["messages"]))
    kinds = [p["type"] for p in dyn["messages"][1]["content"]]
    assert kinds[-2:] == ["text", "image_url"]  # the question block, then the question's screenshot
    kettle = next(b for b in reader_calls if "blue kettle?" in json.dumps(b["messages"]))
    assert [p["type"] for p in kettle["messages"][1]["content"]][:3] == ["text", "text", "image_url"]
    qs = read_questions(bench / "questions_small.jsonl")
    assert {q.id for q in qs} == set(recs)
    # export: the harness's folders and keys, per domain
    assert (
        main(["export", "longmemeval-v2", str(tmp_path / "run"), "--out", str(tmp_path / "x"), "--resamples", "50"])
        == 0
    )
    summary = json.loads((tmp_path / "x" / "operating_point.json").read_text())
    assert summary["official"] is False and summary["domains"] == ["enterprise", "web"]
    assert any("reader model 'stub'" in w for w in summary["official_reasons"])
    assert any("memory context cap" in w for w in summary["official_reasons"])
    scored = [recs[q]["official_score"] for q in recs]
    assert summary["accuracy"] == pytest.approx(100 * sum(scored) / len(scored))
    iv = summary["lafs_gain_interval"]
    assert iv["lo"] <= summary["lafs_gain"] <= iv["hi"]
    web = [json.loads(x) for x in (tmp_path / "x" / "web" / "per_question.jsonl").read_text().splitlines()]
    assert len(web) == 6 and set(web[0]) == set(PER_QUESTION_KEYS)
    row = next(r for r in web if r["question_id"] == "w_proc_1")
    assert row["is_unknown"] is True and row["score"] == 0.0 and row["response_parsed_boxed"] == "UNKNOWN"
    assert row["category"] == "procedure" and row["haystack_ids"] == ["web_shop_001", "web_admin_002", "web_forum_003"]
    assert 0 < row["memory_context_token_count"] <= 150 and row["memory_context_was_truncated"] is True
    assert [c["type"] for c in row["memory_context"]][:2] == ["text", "image"]
    agg = json.loads((tmp_path / "x" / "web" / "aggregated_metrics.json").read_text())
    assert agg["overall"]["count_all_questions"] == 6 and agg["overall"]["count_abstention"] == 2
    assert agg["non_abstention_by_category"]["procedure"] == {
        "count": 1,
        "pct_correct": 0.0,
        "pct_answered_wrong": 0.0,
        "pct_unknown": 1.0,
    }
    assert agg["shared_haystack"] is True and set(agg) >= {
        "tokens",
        "memory_context",
        "memory_query",
        "memory_post_query",
    }
    assert agg["overall"]["overall_full_set"] == pytest.approx(sum(r["score"] for r in web) / 6)
    args = json.loads((tmp_path / "x" / "enterprise" / "run_args.json").read_text())
    assert args["domain"] == "enterprise" and args["official"] is False and args["evaluator_model"] == "stub"
    with pytest.raises(Exception, match="no official score"):
        _dry_then_export(bench, tmp_path)


PER_QUESTION_KEYS = (
    "index",
    "stream_index",
    "question_id",
    "question_type",
    "category",
    "is_abstention_problem",
    "eval_function",
    "question_text",
    "question_image",
    "haystack_ids",
    "memory_context",
    "memory_query_duration_seconds",
    "memory_post_query_duration_seconds",
    "memory_post_query_metadata",
    "memory_context_original_token_count",
    "memory_context_token_count",
    "memory_context_was_truncated",
    "prompt_messages",
    "answer_gold",
    "response_raw",
    "response_parsed_boxed",
    "is_unknown",
    "score",
    "score_bool",
    "usage",
    "timestamp_utc",
)


def _dry_then_export(bench, tmp_path):
    from memeval.analysis.lme_v2_export import export_run

    run_system(str(bench), "bm25", out=tmp_path / "dry", progress=False)
    return export_run(tmp_path / "dry", tmp_path / "y")


def test_reader_uses_the_published_layout_with_the_default_prompt_only():
    c = _Client(r"\boxed{A}")
    r = Reader(ChatClient("http://127.0.0.1:9", "m"))
    assert r.identity()["bench_prompts"]["LongMemEval-V2"]["prompt"] == "lme_v2_reader_v1"
    r.client = c  # type: ignore[assignment]
    q = _q("mc_choice_match", "A")
    assert r.answer(q, ("m1",)) == r"\boxed{A}"
    msgs, cap = c.seen[-1]
    assert cap == 20000 and msgs[0]["content"].startswith("You are an experienced colleague in a web browsing")
    own = Reader(ChatClient("http://127.0.0.1:9", "m"), prompt="reader_locomo_v1")
    assert "LongMemEval-V2" not in own.identity().get("bench_prompts", {})
    own.client = c  # type: ignore[assignment]
    own.answer(q, ("m1",))
    assert c.seen[-1][0][0]["role"] == "user"  # its own prompt, one user message
