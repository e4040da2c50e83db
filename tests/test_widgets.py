import html

import polars as pl

from analysis_fixtures import record, records_frame, synthetic_records
from memeval.analysis.widgets import TraceBrowser, evidence_flags, render_trace_html, worst_questions_table

PAYLOAD = "<script>window.__pwned=1</script>"


def test_render_escapes_all_bench_text():
    row = record(
        question_asked=f"Q {PAYLOAD}?",
        gold_answer="<b>Lyon</b>",
        answer=f"x {PAYLOAD}",
        memories_returned=[f"turn text {PAYLOAD}"],
        retrieved_turns=[3],
        error="<i>boom</i>",
    )
    out = render_trace_html(row)
    assert "<script>" not in out and "<b>Lyon</b>" not in out and "<i>boom</i>" not in out
    assert html.escape(PAYLOAD) in out
    assert "&lt;b&gt;Lyon&lt;/b&gt;" in out and "&lt;i&gt;boom&lt;/i&gt;" in out


def test_render_marks_evidence_by_turn_id():
    row = record(
        memories_returned=["I moved to Lyon.", "Weather chat.", "Lyon again"],
        retrieved_turns=[7, 3, 9],
        evidence_turns=[3, 9],
    )
    assert evidence_flags(row) == ([False, True, True], "turn id in evidence_turns")
    out = render_trace_html(row)
    assert out.count('class="memory evidence"') == 2
    assert "turn 3: Weather chat. <b" in out  # the evidence badge follows the evidence memory
    assert 'class="memory" style' in out and "turn 7: I moved to Lyon.</li>" in out


def test_render_marks_evidence_by_gold_text_without_ids():
    row = record(memories_returned=["we met in LYON", "nothing"], retrieved_turns=None, gold_answer="Lyon")
    flags, rule = evidence_flags(row)
    assert flags == [True, False] and "gold" in rule
    assert ">we met in LYON <b" in render_trace_html(row)  # no "turn N:" prefix without ids


def test_render_shows_score_verdict_latency_and_ungraded():
    out = render_trace_html(record(score=0.5, latency_ms=123.456, latency_minus_rtt_ms=100.0, speed_status="measured"))
    assert "0.5 — verdict <b>partial</b>" in out
    assert "123.5 ms total, 100.0 ms minus round trip" in out
    out = render_trace_html(record(score=None, verdict=None, ungraded_reason="judge failed after 3 retries"))
    assert "ungraded — verdict <b>ungraded</b>" in out and "judge failed after 3 retries" in out


def test_worst_questions_table_orders_and_escapes():
    rows = [
        record(system="bm25", qid="Q1", axis="BASIC", score=0.0, memories_returned=[PAYLOAD + " " + "x" * 500]),
        record(system="bm25", qid="Q2", axis="MULTI", score=0.0),
        record(system="bm25", qid="Q3", axis="BASIC", score=0.5),
        record(system="bm25", qid="Q4", axis="BASIC", score=1.0),
        record(system="bm25", qid="Q5", axis="BASIC", score=None, error="timeout"),
    ]
    out = worst_questions_table(records_frame(rows), n=3)
    assert "<script>" not in out and html.escape(PAYLOAD) in out
    order = [out.index(f'<td style="vertical-align:top;text-align:left">{q}</td>') for q in ("Q2", "Q1", "Q3")]
    assert order == sorted(order)  # weight 3 before weight 1 at equal score; then the 0.5
    assert "Q4" not in out and "Q5" not in out
    assert "3 lowest-scoring of 4 graded records (1 ungraded or errored, not ranked)" in out
    assert "x" * 300 not in out and "…" in out


def test_browser_filters_and_steps():
    b = TraceBrowser(synthetic_records())
    assert b.position.value == f"1 / {synthetic_records().height}"
    b.system.value = "bm25"
    b.tier.value = "medium"
    assert [r["qid"] for r in b.matches] == ["Q1", "Q2", "Q3", "Q4", "Q9"]
    assert b.position.value == "1 / 5" and b.previous.disabled
    b.next.click()
    b.next.click()
    assert b.position.value == "3 / 5"
    assert b.current["qid"] == "Q3" and "Q3 · bm25 · tier medium · ABSTAIN" in b.view.value
    b.previous.click()
    assert b.current["qid"] == "Q2"
    b.verdict.value = "ungraded"
    assert [r["qid"] for r in b.matches] == ["Q4"]
    assert "timeout" in b.view.value and b.next.disabled
    b.next.click()  # stays on the last record
    assert b.position.value == "1 / 1"
    b.axis.value = "BASIC"
    assert b.matches == [] and "no record matches" in b.view.value and b.position.value == "0 / 0"


def test_browser_tier_options_follow_tier_order():
    df = synthetic_records().sort("tier", descending=True)
    b = TraceBrowser(df)
    assert list(b.tier.options) == ["(all)", "core", "small", "medium"]
    assert b.verdict.options[-1] == "ungraded"


def test_html_table_escapes_and_formats():
    from memeval.analysis.tables import html_table, side_by_side

    df = pl.DataFrame({"system": ["<b>x</b>", "bm25"], "score": [0.12345, None], "turns": [[1, 2], []]})
    out = html_table(df, caption="a & b", digits=2)
    assert "<caption>a &amp; b</caption>" in out
    assert "<td>&lt;b&gt;x&lt;/b&gt;</td><td>0.12</td><td>1, 2</td>" in out
    assert "<td>bm25</td><td>–</td><td></td>" in out
    assert side_by_side("<p>1</p>", "<p>2</p>").count('<div style="flex:0 1 auto">') == 2


def test_label_systems_renames_by_run_folder(tmp_path):
    from memeval.workbench import label_systems

    df = records_frame([record(system="http://127.0.0.1:5", run_id="r1"), record(system="bm25", run_id="r2")])
    out = label_systems(df, {"bm25 over HTTP": tmp_path / "r1"})
    assert out["system"].to_list() == ["bm25 over HTTP", "bm25"]


def test_render_shows_evidence_not_returned_greyed_with_its_text():
    row = record(memories_returned=["chat"], retrieved_turns=[7], evidence_turns=[3, 7, 9], haystack=None)
    out = render_trace_html(row, {("core", None, 3): "I moved to <Lyon>.", ("core", None, 9): "Lyon, still."})
    assert "evidence not returned</b> (2)" in out
    assert (
        'class="memory missed"' in out and "turn 3: I moved to &lt;Lyon&gt;." in out and "turn 9: Lyon, still." in out
    )
    assert "turn 7: chat" in out and out.count('class="memory missed"') == 2
    assert "text not loaded" in render_trace_html(row)  # without the bench: ids only, said so


def test_render_abstention_shows_what_was_expected():
    out = render_trace_html(record(axis="ABSTAIN", gold_answer="", evidence_turns=[], retrieval_hit=None))
    assert "an abstention: this was never stated" in out and "hit: ;" not in out and "hit: None" not in out
    assert "nothing to retrieve" in out


def test_worst_table_is_varied_across_systems_and_axes():
    rows = [record(system="bm25", qid=f"Q{i}", axis="MULTI", score=0.0) for i in range(10)]
    rows += [
        record(system="recent", qid="R1", axis="BASIC", score=0.0),
        record(system="bm25", qid="B1", axis="BASIC", score=0.0),
    ]
    out = worst_questions_table(records_frame(rows), n=3)
    cells = [f'<td style="vertical-align:top;text-align:left">{q}</td>' for q in ("Q0", "B1", "R1")]
    assert all(c in out for c in cells)  # one per system × axis before a second of any
    one_group = worst_questions_table(records_frame(rows), n=3, varied=False)
    assert cells[1] not in one_group and cells[2] not in one_group


def test_browser_search_jump_and_flip_filters():
    rows = [
        record(system="bm25", tier="core", qid="Q1", score=1.0, question_asked="Where is the taproom?"),
        record(system="bm25", tier="small", qid="Q1", score=0.0, question_asked="Where is the taproom?"),
        record(system="bm25", tier="core", qid="Q2", score=1.0, question_asked="Who is Vesna?"),
        record(system="bm25", tier="small", qid="Q2", score=1.0, question_asked="Who is Vesna?"),
        record(system="recent", tier="core", qid="Q2", score=0.0, question_asked="Who is Vesna?"),
    ]
    b = TraceBrowser(records_frame(rows))
    b.flips.value = "flipped between tiers"
    assert {(r["system"], r["tier"], r["qid"]) for r in b.matches} == {("bm25", "core", "Q1"), ("bm25", "small", "Q1")}
    b.flips.value = "flipped between systems"
    assert {(r["system"], r["qid"]) for r in b.matches} == {("bm25", "Q2"), ("recent", "Q2")}
    assert all(r["tier"] == "core" for r in b.matches)
    b.flips.value = "(all)"
    b.search.value = "VESNA"
    assert {r["qid"] for r in b.matches} == {"Q2"} and len(b.matches) == 3
    b.search.value = ""
    b.jump.value = "q2"
    assert b.current["qid"] == "Q2" and "Q2 · bm25 · tier core" in b.view.value
    assert not b.go_to("Q404") and b.current["qid"] == "Q2"


def test_trace_reads_memory_objects_date_and_speaker_apart_from_content():
    """Records keep memories as {text, timestamp, speaker}: the trace shows the date and speaker as
    metadata, and without turn ids a memory is evidence only when its content holds the gold."""
    row = record(
        memories_returned=["[2022-04-15] Ana: We moved last spring.", "[2022-05-01] Ana: 2022-04-15 it was"],
        memories=[
            {"text": "We moved last spring.", "timestamp": "2022-04-15", "speaker": "Ana"},
            {"text": "2022-04-15 it was", "timestamp": "2022-05-01", "speaker": "Ana"},
        ],
        retrieved_turns=None,
        gold_answer="2022-04-15",
        evidence_turns=[1],
    )
    assert evidence_flags(row)[0] == [False, True]
    html_out = render_trace_html(row)
    assert '<small class="memory-meta" style="color:#666">[2022-04-15] Ana:</small> We moved last spring.' in html_out
    old = {**row, "memories": None}  # a record written before the field: its strings, as they were shown
    assert evidence_flags(old)[0] == [True, True]
    assert "[2022-04-15] Ana: We moved last spring." in render_trace_html(old)
