"""The accuracy–latency and accuracy–cost frontier: which operating points it keeps, and the report
section that draws it (rendered and loaded in Chromium)."""

import json
from pathlib import Path

import polars as pl

from browser import load_html, require_chromium
from memeval.analysis.costs import operating_points
from memeval.analysis.frontier import frontier_plot
from memeval.analysis.plot_base import CEILING_COLOUR, system_colour
from memeval.analysis.report import render_report
from memeval.llm import ChatClient
from memeval.run import run_system
from memeval.scoring.judge import Judge, Reader
from memeval.testing.chat_stub import ScriptedChatServer, completion
from minibench import make_minibench

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"


def _points():
    rows = []
    # a: accuracy 0.5, 10 ms, $1 per question; b: 0.8, 20 ms, $0.5; c: 0.6, 30 ms, $2 (b beats c on both)
    for system, scores, ms, usd in (
        ("a", [1.0, 0.0], 10.0, 1.0),
        ("b", [1.0, 0.6], 20.0, 0.5),
        ("c", [0.6, 0.6], 30.0, 2.0),
    ):
        for s in scores:
            rows.append(
                {
                    "system": system,
                    "tier_index": 0,
                    "tier": "t",
                    "score": s,
                    "error": None,
                    "latency_minus_rtt_ms": ms,
                    "prompt_tokens": 100,
                    "completion_tokens": 10,
                    "cost_usd": usd,
                }
            )
    return pl.DataFrame(rows)


def test_frontier_keeps_the_points_nothing_beats():
    pts = {r["system"]: r for r in operating_points(_points()).to_dicts()}
    assert {s: r["accuracy"] for s, r in pts.items()} == {"a": 0.5, "b": 0.8, "c": 0.6}
    assert {s: r["latency_frontier"] for s, r in pts.items()} == {"a": True, "b": True, "c": False}
    assert {s: r["cost_frontier"] for s, r in pts.items()} == {"a": False, "b": True, "c": False}
    fig = frontier_plot(_points())
    lines = [t for t in fig.data if t.mode == "lines"]
    assert [list(t.x) for t in lines] == [[10.0, 20.0]]  # one frontier line (latency); the cost one has one point
    points = [t for t in fig.data if t.mode == "markers"]
    assert all(t.name.endswith("(n=2)") and not t.text for t in points)  # named in the legend, no labels to overlap
    assert fig.layout.xaxis.type == "log" and fig.layout.xaxis2.type == "log"
    assert {t.marker.color for t in points if t.name.startswith("b ")} == {system_colour("b")}


def test_frontier_without_cost_draws_no_empty_panel_and_bounds_as_lines():
    df = _points().with_columns(pl.lit(None, pl.Float64).alias("cost_usd"))
    oracle = df.filter(pl.col("system") == "a").with_columns(
        pl.lit("oracle").alias("system"), pl.lit(1.0).alias("score")
    )
    fig = frontier_plot(pl.concat([df, oracle]))
    assert "not drawn: no cost recorded" in fig.layout.title.text
    assert "xaxis2" not in fig.layout.to_plotly_json()  # one panel: latency only
    assert [a.text for a in fig.layout.annotations][0].startswith("median latency")
    assert all(not t.name.startswith("oracle") for t in fig.data)  # the ceiling is not a point
    (ceiling,) = [s for s in fig.layout.shapes if s.y0 == 1.0]
    assert ceiling.line.dash == "dash" and ceiling.line.color == CEILING_COLOUR


def _reply(body):
    content = body["messages"][0]["content"]
    if content.startswith("You answer a question"):
        return completion("Biscuit", usage=(120, 5))
    ok = "Biscuit" in content.split("<<<")[1]
    verdict = {"verdict": "correct" if ok else "wrong", "evidence": "Biscuit" if ok else "none"}
    return completion(json.dumps(verdict), usage=(300, 20))


def test_compare_report_draws_the_frontier_in_chromium(tmp_path):
    bench = make_minibench(tmp_path / "b")
    prices = tmp_path / "prices.yaml"
    prices.write_text("m: {input: 2.0, output: 8.0}\n")
    runs = []
    with ScriptedChatServer(_reply) as srv:
        client = ChatClient(srv.base_url, "m", backoff=0.001)
        for system in ("bm25:k=1", "bm25:k=5", "context:tokens=60"):
            runs.append(
                run_system(
                    bench,
                    system,
                    mode="answer",
                    judge=Judge(client),
                    reader=Reader(client),
                    runs_root=tmp_path / "runs",
                    progress=False,
                    context_max_tokens=40,
                )
            )
    out = tmp_path / "compare.html"
    render_report(
        NOTEBOOKS / "compare.ipynb",
        out,
        {"run_dirs": [str(r) for r in runs], "prices": str(prices)},
        cwd=tmp_path,
    )
    text = out.read_text()
    assert "Accuracy against latency and cost" in text and "mean cost per question (USD, log scale)" in text
    assert "no cost recorded" not in text  # priced from the records' usage by the table
    # by hand: (120 x 2 + 5 x 8 + 300 x 2 + 20 x 8) / 1e6 = 0.00104 USD per question: 1.04 per 1,000
    assert "<td>1.04</td>" in text and "bm25:k=5 (n=" in text and "context:tokens=60 (n=" in text
    require_chromium()
    page = load_html(out, tmp_path / "compare.png")
    assert page.blocked_requests == () and page.page_errors == () and page.console_errors == ()
    assert page.plotly_divs == text.count("Plotly.newPlot(") and page.plotly_divs >= 3
    assert page.plotly_svgs >= 2 * page.plotly_divs  # every declared figure was drawn
    assert "operating points" in page.text
