"""``memeval attribute``: each miss attributed to one cause (write, retrieval, reader loss, reader
ceiling), planted failures recovered, and ``memories(haystack)`` on the built-in systems and over HTTP."""

from __future__ import annotations

import shutil

import httpx
import polars as pl
import pytest

from attribution_plants import contains_judge, echo_reader
from memeval.analysis.attribution import CAUSES, MISS_CAUSES, attribute_run, cause_of
from memeval.bench.model import Session, Turn
from memeval.cli import main
from memeval.errors import MemevalError, SystemContractError
from memeval.llm import ChatClient
from memeval.run import read_manifest, read_records, run_system
from memeval.run.regrade import regrade_run
from memeval.scoring.judge import Judge, Reader
from memeval.systems import make_system
from memeval.systems.base import Recall, declared
from memeval.systems.http import HttpSystem, StaleGeneration
from memeval.systems.server import OPENAPI, ReferenceServer
from memeval.testing.chat_stub import ScriptedChatServer
from minibench import make_minibench

S1 = Session(
    1,
    "2024-01-01",
    (Turn(1, 1, "user", "My dog is called Rex.", "2024-01-01"), Turn(2, 1, "assistant", "Nice name.", "2024-01-01")),
)
S2 = Session(2, "2024-02-01", (Turn(3, 2, "user", "I moved to Lyon last week.", "2024-02-01"),))


@pytest.mark.parametrize("spec", ["bm25", "context:tokens=50", "oracle"])
def test_systems_that_keep_every_turn_list_every_turn(spec):
    s = make_system(spec)
    d = declared(s)
    s.reset()
    s.ingest(S1)
    s.ingest(S2)
    assert d.lists_memories
    assert [m.content for m in d.memories("h")] == ["My dog is called Rex.", "Nice name.", "I moved to Lyon last week."]
    s.reset()
    assert list(d.memories("h")) == []


def test_recent_lists_only_what_its_budget_kept_and_no_memory_lists_nothing():
    r = make_system("recent:tokens=32")
    r.reset()
    r.ingest(S1)
    r.ingest(S2)
    held = [m.content for m in declared(r).memories("h")]
    assert held and "My dog is called Rex." not in held and held[-1] == "I moved to Lyon last week."
    n = make_system("no_memory")
    n.ingest(S1)
    assert declared(n).lists_memories and list(declared(n).memories("h")) == []


class _Plain:
    name, version, params = "plain", "1", {}

    def reset(self):
        pass

    def ingest(self, session):
        pass

    def query(self, question, asked_at):
        return Recall()


def test_get_memories_over_http_is_fenced_and_optional():
    assert "/memories" in OPENAPI["paths"] and "501" in OPENAPI["paths"]["/memories"]["get"]["responses"]
    with ReferenceServer(make_system("bm25")) as srv:
        h = HttpSystem(srv.url)
        try:
            h.reset()
            h.ingest(S1, idempotency_key="k1")
            assert [m.content for m in h.memories("core")] == ["My dog is called Rex.", "Nice name."]
            old = h.generation
            h.reset()
            h.generation = old  # a request naming a generation that is no longer current
            with pytest.raises(StaleGeneration):
                h.memories("core")
        finally:
            h.close()
    with ReferenceServer(_Plain()) as srv:  # a served system that does not list: 501, read as unsupported
        assert httpx.get(srv.url + "/memories").status_code == 501
        h = HttpSystem(srv.url)
        try:
            h.reset()
            with pytest.raises(SystemContractError, match="does not list its stored memories"):
                h.memories("core")
        finally:
            h.close()


def test_cause_of_gives_each_miss_exactly_one_cause():
    for score in (0.0, 0.5):
        for oracle in (0.0, 1.0):
            for stored in (True, False, None):
                for read in (True, False, None):
                    cause, note = cause_of(score, oracle, stored, read)
                    assert cause in MISS_CAUSES and note is None
    assert cause_of(0.0, 0.0, False, False)[0] == "reader_ceiling"  # the oracle misses too: not memory's fault


@pytest.fixture()
def stubs():
    def make(reader_responder):
        rs, js = ScriptedChatServer(reader_responder), ScriptedChatServer(contains_judge)
        rs.__enter__(), js.__enter__()
        made.append((rs, js))
        return Reader(ChatClient(rs.base_url, "echo", backoff=0.001)), Judge(ChatClient(js.base_url, "contains")), rs

    made: list = []
    yield make
    for rs, js in made:
        rs.__exit__(None, None, None)
        js.__exit__(None, None, None)


def _attributed(tmp_path, bench, spec, reader, judge, **kw):
    name = spec.rsplit(":", 1)[-1]
    rd = run_system(
        bench, spec, tiers=["core"], mode="answer", judge=judge, reader=reader, out=tmp_path / name, progress=False
    )
    out = attribute_run(rd, judge=judge, reader=reader, **kw)
    return {r["qid"]: r for r in read_records(out)}, read_manifest(out)


def test_planted_causes_are_recovered(tmp_path, stubs):
    """Q1 (dentist, session 1), Q2 (beagle, session 2), Q3 (gym price now: "52 dollars")."""
    bench = make_minibench(tmp_path / "b")
    reader, judge, _ = stubs(echo_reader(ignore="52 dollars"))  # distracted: skips that memory beside others
    control, _ = _attributed(tmp_path, bench, "bm25", reader, judge)
    assert [control[q]["attribution"] for q in ("Q1", "Q2", "Q3")] == ["correct", "correct", "reader_loss"]
    assert control["Q3"]["attribution_read"] is True and control["Q3"]["attribution_oracle_score"] == 1.0
    dropped, _ = _attributed(tmp_path, bench, "python:attribution_plants:drops_at_ingest", reader, judge)
    assert dropped["Q2"]["attribution"] == "write_loss" and dropped["Q2"]["attribution_stored"] is False
    assert dropped["Q1"]["attribution"] == "correct"
    hidden, man = _attributed(tmp_path, bench, "python:attribution_plants:hides_at_query", reader, judge)
    assert hidden["Q1"]["attribution"] == "retrieval_loss"
    assert (hidden["Q1"]["attribution_stored"], hidden["Q1"]["attribution_read"]) == (True, False)
    assert hidden["Q1"]["attribution_stored_score"] == 1.0  # the stored dump held it: a reader given it answers
    assert hidden["Q2"]["attribution"] == "correct"
    assert man["attribution"]["conditions"] == ["run", "oracle", "context", "stored"]
    # without the dump, write and retrieval loss cannot be told apart
    merged, man = _attributed(
        tmp_path / "n", bench, "python:attribution_plants:drops_at_ingest", reader, judge, reingest=False
    )
    assert merged["Q2"]["attribution"] == "memory_loss" and merged["Q2"]["attribution_stored"] is None
    assert man["attribution"]["stored_dump"].startswith("not asked")


def test_a_question_beyond_the_reader_is_a_reader_ceiling(tmp_path, stubs):
    bench = make_minibench(tmp_path / "b")
    reader, judge, _ = stubs(echo_reader(ceiling="dentist"))
    recs, _ = _attributed(tmp_path, bench, "bm25", reader, judge)
    assert recs["Q1"]["attribution"] == "reader_ceiling" and recs["Q1"]["attribution_oracle_score"] == 0.0
    assert recs["Q2"]["attribution"] == "correct"


def test_the_run_s_own_reader_and_judge_only(tmp_path, stubs):
    bench = make_minibench(tmp_path / "b")
    reader, judge, _ = stubs(echo_reader())
    rd = run_system(
        bench, "bm25", tiers=["core"], mode="answer", judge=judge, reader=reader, out=tmp_path / "r", progress=False
    )
    other = Reader(ChatClient(reader.client.base_url, "another-model"))
    with pytest.raises(MemevalError, match="is not the run's"):
        attribute_run(rd, judge=judge, reader=other)
    with pytest.raises(MemevalError, match="needs its reader"):
        attribute_run(rd, judge=judge)
    assert not (tmp_path / "r_attributed").exists()


def test_dry_run_gets_the_retrieval_part_without_a_reader(tmp_path):
    bench = make_minibench(tmp_path / "b")
    rd = run_system(
        bench, "python:attribution_plants:drops_at_ingest", tiers=["core"], out=tmp_path / "d", progress=False
    )
    recs = {r["qid"]: r for r in read_records(attribute_run(rd))}
    assert recs["Q2"]["attribution"] == "write_loss" and recs["Q2"]["attribution_oracle_score"] is None
    assert recs["Q1"]["attribution"] == "correct" and recs["Q1"]["attribution_stored"] is True


def test_regrade_drops_the_attribution(tmp_path, stubs):
    bench = make_minibench(tmp_path / "b")
    reader, judge, _ = stubs(echo_reader())
    recs, _ = _attributed(tmp_path, bench, "bm25", reader, judge)
    again = regrade_run(tmp_path / "bm25_attributed", "answer", judge=judge, out=tmp_path / "again")
    assert all(r["attribution"] is None and r["attribution_version"] is None for r in read_records(again))
    assert "attribution" not in read_manifest(again)


def test_demo_bench_bm25_every_miss_has_exactly_one_cause(tmp_path, stubs, capsys, demo1_bench):
    bench = shutil.copytree(demo1_bench, tmp_path / "demo")  # the session's demo seed-1 bench; a run writes into it
    reader, judge, srv = stubs(echo_reader())
    rd = run_system(
        bench, "bm25", tiers=["core"], mode="answer", judge=judge, reader=reader, out=tmp_path / "r", progress=False
    )
    source = read_records(rd)
    argv = ["attribute", str(rd), "--reader-url", reader.client.base_url, "--reader-model", "echo"]
    argv += [
        "--judge-url",
        judge.client.base_url,
        "--judge-model",
        "contains",
        "--budget",
        "1000",
        "--concurrency",
        "4",
    ]
    assert main(argv) == 0
    out = capsys.readouterr()
    recs = read_records(out.out.strip())
    assert [(r["qid"], r["score"], r["answer"]) for r in recs] == [(r["qid"], r["score"], r["answer"]) for r in source]
    misses = [r for r in recs if r["score"] is not None and r["score"] < 1]
    assert misses and all(r["attribution"] in MISS_CAUSES for r in misses)
    assert all(r["attribution"] == "correct" for r in recs if r["score"] == 1.0)
    summary = read_manifest(out.out.strip())["attribution"]
    assert sum(summary["counts"][c] for c in MISS_CAUSES) == len(misses) == summary["misses"]
    assert summary["counts"]["correct"] + len(misses) == summary["graded"]
    for row in summary["by_tier"]:
        assert row["lo"] <= row["share"] <= row["hi"] and row["cause"] in CAUSES
    assert f"where it broke: {len(misses)} of {len(misses)} misses attributed" in out.err


def test_where_it_broke_in_the_trace_browser_and_the_chart(tmp_path):
    from memeval.analysis.plot_attribution import attribution_split
    from memeval.analysis.widgets import TraceBrowser, render_trace_html, worst_questions_table
    from memeval.workbench import load_runs

    bench = make_minibench(tmp_path / "b")
    rd = run_system(
        bench, "python:attribution_plants:drops_at_ingest", tiers=["core"], out=tmp_path / "d", progress=False
    )
    df = load_runs([attribute_run(rd)])
    browser = TraceBrowser(df)
    assert set(browser.broke.options) == {"(all)", "correct", "write_loss"} and not browser.broke.disabled
    browser.broke.value = "write_loss"
    assert [r["qid"] for r in browser.matches] == ["Q2"]
    assert "write loss" in browser.view.value and "evidence stored: False" in browser.view.value
    assert "<th>attribution</th>" in worst_questions_table(df) and "write_loss" in worst_questions_table(df)
    plain = load_runs([rd])
    assert TraceBrowser(plain).broke.disabled and "where it broke" not in render_trace_html(plain.row(0, named=True))
    fig = attribution_split(df)
    shares = {t.name: t.y[0] for t in fig.data}
    n = df.filter(pl.col("attribution").is_not_null()).height
    assert shares["write loss"] == pytest.approx(1 / n) and shares["correct"] == pytest.approx((n - 1) / n)


def test_degradation_report_shows_where_it_broke(tmp_path):
    from browser import load_html, require_chromium
    from memeval.analysis.report import render_report
    from pathlib import Path

    notebook = Path(__file__).resolve().parents[1] / "notebooks" / "degradation.ipynb"
    out = tmp_path / "reports" / "degradation.html"
    params = {"preset": "tiny", "seed": 1, "systems": ["bm25", "recent:tokens=2000"], "attribute": True}
    render_report(notebook, out, params, cwd=tmp_path)
    text = out.read_text()
    assert "Where it broke, per tier" in text and "Where it broke, per axis" in text
    attributed = [p for p in (tmp_path / "runs").iterdir() if p.name.endswith("_attributed")]
    causes = {r["attribution"] for p in attributed for r in read_records(p)}
    assert {"correct", "write_loss"} <= causes  # recent keeps the last 2000 tokens: older evidence never kept
    require_chromium()
    titles = "() => Array.from(document.querySelectorAll('.gtitle')).map(e => e.textContent)"
    page = load_html(out, tmp_path / "degradation.png", evaluate={"titles": titles})
    assert page.blocked_requests == () and page.page_errors == () and page.console_errors == ()
    assert page.plotly_svgs >= 2 * page.plotly_divs
    drawn = [t for t in page.values["titles"] if t.startswith("Where it broke")]
    assert len(drawn) == 2, page.values["titles"]


def test_bad_input_is_one_line_and_nothing_is_written(tmp_path, capsys):
    assert main(["attribute", str(tmp_path / "no-such-run")]) != 0
    err = capsys.readouterr().err
    assert "no-such-run" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "no-such-run_attributed").exists()


def test_a_second_attribution_with_the_cache_makes_no_model_call(tmp_path):
    from memeval.callcache import ModelCache

    bench = make_minibench(tmp_path / "b")
    cache = ModelCache(tmp_path / "cache")
    with ScriptedChatServer(echo_reader(ignore="52 dollars")) as rs, ScriptedChatServer(contains_judge) as js:
        reader = Reader(ChatClient(rs.base_url, "echo", cache=cache))
        judge = Judge(ChatClient(js.base_url, "contains", cache=cache))
        rd = run_system(
            bench, "bm25", tiers=["core"], mode="answer", judge=judge, reader=reader, out=tmp_path / "r", progress=False
        )
        first = attribute_run(rd, judge=judge, reader=reader, out=tmp_path / "a1")
        asked = len(rs.requests) + len(js.requests)
        # a new command: new clients on the same cache (a client's repeat of a request is its next sample)
        reader = Reader(ChatClient(rs.base_url, "echo", cache=ModelCache(tmp_path / "cache")))
        judge = Judge(ChatClient(js.base_url, "contains", cache=reader.client.cache))
        again = attribute_run(rd, judge=judge, reader=reader, out=tmp_path / "a2")
        assert len(rs.requests) + len(js.requests) == asked  # every condition already asked: from the cache
    assert [r["attribution"] for r in read_records(again)] == [r["attribution"] for r in read_records(first)]
    assert "reader_loss" in [r["attribution"] for r in read_records(again)]
    assert read_manifest(again)["model_cache"]["hits"] > 0


def test_a_served_system_is_re_ingested_and_dumped_over_http(tmp_path):
    from attribution_plants import DropsAtIngest

    bench = make_minibench(tmp_path / "b")
    with ReferenceServer(DropsAtIngest("2")) as srv:
        rd = run_system(bench, srv.url, tiers=["core"], out=tmp_path / "served", progress=False)
        before = srv.stats()["ingested"]
        out = attribute_run(rd)  # the run's own spec: the server's URL
        assert srv.stats()["ingested"] > before  # re-ingested for its dump
    recs = {r["qid"]: r for r in read_records(out)}
    assert recs["Q2"]["attribution"] == "write_loss" and recs["Q2"]["attribution_stored"] is False
    assert recs["Q1"]["attribution_stored"] is True
    assert read_manifest(out)["attribution"]["stored_dump"] == "listed"
