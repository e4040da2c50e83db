import math

import polars as pl
import pytest

from memeval.analysis import plots
from analysis_fixtures import record, records_frame, synthetic_records


def _trace(fig, name):
    (t,) = [t for t in fig.data if t.name == name]
    return t


def test_degradation_curve_core_set_by_system():
    fig = plots.degradation_curve(synthetic_records())
    bm25 = _trace(fig, "bm25")
    assert list(bm25.x) == [100, 1_000, 10_000]
    # hand-computed in analysis_fixtures: Q4 medium is an error (None), left out of the mean
    assert bm25.y[0] == pytest.approx(1.0)
    assert bm25.y[1] == pytest.approx(0.625)
    assert bm25.y[2] == pytest.approx(1 / 3)
    assert fig.layout.xaxis.type == "log"
    assert "core set: 4 questions present in every tier" in fig.layout.title.text
    assert "unweighted" in fig.layout.title.text
    # floor and ceiling are bands, not lines: filled to the next trace, named by role
    floor, ceiling = _trace(fig, "floor: no_memory"), _trace(fig, "ceiling: oracle")
    assert floor.fill == "tonexty" and list(floor.y) == pytest.approx([0.25, 0.25, 0.25])
    assert ceiling.fill == "tonexty" and list(ceiling.y) == pytest.approx([1.0, 1.0, 1.0])
    names = [t.name for t in fig.data]
    assert "no_memory" not in names and "oracle" not in names
    # the band edges: floor fills up from 0, ceiling from 1
    edges = [t for t in fig.data if t.name in ("floor edge", "ceiling edge")]
    assert sorted(tuple(e.y) for e in edges) == [(0.0, 0.0, 0.0), (1.0, 1.0, 1.0)]


def test_degradation_curve_all_questions_and_tokens():
    fig = plots.degradation_curve(synthetic_records(), x="tokens", core=False, floor=False, ceiling=False)
    bm25 = _trace(fig, "bm25")
    assert list(bm25.x) == [4_000, 40_000, 400_000]
    # medium now includes Q9 (score 1): (0 + 0 + 1 + 1) / 4 graded
    assert bm25.y[2] == pytest.approx(0.5)
    assert "all questions per tier" in fig.layout.title.text
    assert {t.name for t in fig.data} == {"no_memory", "oracle", "bm25"}


def test_degradation_curve_weighted():
    fig = plots.degradation_curve(synthetic_records(), weighted=True)
    bm25 = _trace(fig, "bm25")
    # small tier: Q1 w1 s1, Q2 w2 s0, Q3 w3 s1, Q4 w3 s0.5 -> (1 + 0 + 3 + 1.5) / 9
    assert bm25.y[1] == pytest.approx(5.5 / 9)
    assert "weighted mean" in fig.layout.title.text


def _panel(fig, axis, name):
    """The trace ``name`` drawn in the small-multiple panel of ``axis``."""
    (t,) = [t for t in fig.data if t.name == name and (t.meta or {}).get("axis") == axis]
    return t


def test_degradation_curve_by_axis_is_small_multiples_of_one_system():
    df = synthetic_records()
    fig = plots.degradation_curve(df, by="axis", floor=False, ceiling=False)  # only bm25 is not a baseline
    assert [t.meta["axis"] for t in fig.data] == ["BASIC", "TEMPORAL", "MULTI", "ABSTAIN"]  # weight-table order
    assert {t.name for t in fig.data} == {"bm25"} and len({t.xaxis for t in fig.data}) == 4  # one panel each
    titles = [a.text for a in fig.layout.annotations]
    assert titles[:4] == ["BASIC (weight 1)", "TEMPORAL (weight 2)", "MULTI (weight 3)", "ABSTAIN (weight 3)"]
    assert list(_panel(fig, "TEMPORAL", "bm25").y) == pytest.approx([1.0, 0.0, 0.0])
    two = pl.concat([df, df.filter(pl.col("system") == "bm25").with_columns(pl.lit("mem0").alias("system"))])
    with pytest.raises(ValueError, match="needs one system"):
        plots.degradation_curve(two, by="axis")
    assert _panel(plots.degradation_curve(two, by="axis", system="mem0"), "BASIC", "mem0").y[2] == pytest.approx(0.0)
    # each panel holds that axis's own floor and ceiling, dashed in the bounds' colours
    banded = plots.degradation_curve(df, by="axis")
    floor = _panel(banded, "BASIC", "floor: no_memory")
    assert floor.line.dash == "dash" and floor.line.color == plots.FLOOR_COLOUR
    assert _panel(banded, "BASIC", "ceiling: oracle").line.color == plots.CEILING_COLOUR
    # the bm25 curve is in its panel with its bounds (same x and y axes)
    assert {floor.xaxis, _panel(banded, "BASIC", "bm25").xaxis} == {floor.xaxis}


def test_axis_tier_heatmap_cells():
    fig = plots.axis_tier_heatmap(synthetic_records())
    scores = [t for t in fig.data if not t.name.endswith(": ungraded")]
    assert [t.name for t in scores] == ["bm25", "no_memory", "oracle"]  # systems first, then the bounds
    assert [a.text for a in fig.layout.annotations][:3] == ["bm25", "floor: no_memory", "ceiling: oracle"]
    bm25 = scores[0]
    assert bm25.textfont.size == 11  # a fixed size: plotly never shrinks a long label
    assert list(bm25.x) == ["core", "small", "medium"]
    rows = list(bm25.y)
    assert rows == ["BASIC", "TEMPORAL", "MULTI", "ABSTAIN"]
    basic = bm25.z[rows.index("BASIC")]
    assert basic[2] == pytest.approx(0.5)  # medium: Q1 0 and Q9 1
    multi = bm25.z[rows.index("MULTI")]
    assert multi[2] is None and bm25.text[rows.index("MULTI")][2] == "–"
    assert "1 ungraded" in bm25.customdata[rows.index("MULTI")][2]
    grey = next(t for t in fig.data if t.name == "bm25: ungraded")  # drawn grey beneath the empty cell
    assert grey.z[rows.index("MULTI")][2] == 1 and grey.z[rows.index("BASIC")][2] is None
    # two questions, one right: resampling gives 0, 0.5 or 1, so the 95% interval is 0-1: marked wide
    assert bm25.text[rows.index("BASIC")][2] == "0.50±<br>n=2"
    assert bm25.customdata[rows.index("BASIC")][2] == "0.00–1.00"


def test_latency_histogram_percentiles_and_exclusions():
    rows = [
        record(system="http", qid=f"Q{i}", latency_minus_rtt_ms=float(i), speed_status="measured")
        for i in range(1, 101)
    ]
    rows += [
        record(
            system="http",
            qid="QX",
            latency_minus_rtt_ms=1.0,
            speed_status="unmeasurable",
            speed_reason="round trip >= 90% of total",
        )
    ] * 3
    rows += [record(system="http", qid="QE", latency_minus_rtt_ms=5000.0, speed_status="measured", error="HTTP 500")]
    rows += [record(system="bm25", qid="Q1", latency_minus_rtt_ms=5.0)]
    fig = plots.latency_histogram(records_frame(rows))
    titles = [a.text for a in fig.layout.annotations if a.text.startswith(("http", "bm25"))]
    assert titles[0] == "http — n=100, unmeasurable excluded: 3, errors excluded: 1"
    assert titles[1].startswith("bm25 [in-process") and "n=1" in titles[1]
    assert len(fig.data[0].x) == 100
    xs = sorted(10**s.x0 for s in fig.layout.shapes if s.xref == "x")  # the first panel's lines (log10 ms)
    # 1..100 with linear interpolation: p50 = 50.5, p95 = 95.05, p99 = 99.01; then the 500 ms target
    assert xs == pytest.approx([50.5, 95.05, 99.01, 500.0])
    labels = {a.text for a in fig.layout.annotations}
    assert "p95: 95.0 ms" in labels and "target 500: 500.0 ms" in labels
    shifts = sorted(a.yshift for a in fig.layout.annotations if a.text.startswith(("p", "target")) and a.xref == "x")
    assert len(set(shifts)) == len(shifts)  # close lines: labels at different heights, never on top of each other
    assert fig.layout.xaxis.ticktext[:3] == ("0.1", "1", "10")  # a log scale, labelled in ms


def test_latency_below_resolution_is_a_count_not_a_bar_at_1_ms():
    """Over HTTP the figure is max(1, latency - round trip): 30 questions 0.4 ms above the round trip are
    stored as 1.0; they show as "< 1 ms" with their count, never as the histogram's bar at 1 ms."""
    fast = dict(system="http", latency_ms=2.0, network_ms=1.6, latency_minus_rtt_ms=1.0, speed_status="measured")
    slow = dict(system="http", latency_ms=20.0, network_ms=1.6, latency_minus_rtt_ms=18.4, speed_status="measured")
    rows = [record(qid=f"F{i}", **fast) for i in range(30)] + [record(qid=f"S{i}", **slow) for i in range(10)]
    fig = plots.latency_histogram(records_frame(rows))
    (hist,) = [t for t in fig.data if t.type == "histogram"]
    assert len(hist.x) == 10 and min(10**v for v in hist.x) == pytest.approx(18.4)  # no value at the clamp
    (below,) = [t for t in fig.data if t.type == "bar"]
    assert list(below.y) == [30] and below.text[0] == "< 1 ms: 30"
    texts = {a.text for a in fig.layout.annotations}
    assert "p50: < 1 ms" in texts and "p50: 1.0 ms" not in texts  # the median is the clamp: said so
    assert any("n=40 (30 below 1 ms)" in t for t in texts)


def test_latency_histogram_draws_no_empty_panel():
    rows = [
        record(
            system="served",
            qid=f"Q{i}",
            latency_minus_rtt_ms=5.0,
            speed_status="unmeasurable",
            speed_reason="concurrency 8: latency includes queueing",
        )
        for i in range(5)
    ]
    rows += [record(system="bm25", qid="Q1", latency_minus_rtt_ms=5.0)]
    fig = plots.latency_histogram(records_frame(rows))
    assert len(fig.data) == 1 and fig.data[0].name == "bm25"
    assert fig.data[0].marker.color == plots.system_colour("bm25")
    assert "not drawn, no measured latency: served (concurrency 8: latency includes queueing)" in fig.layout.title.text


def test_percentile_matches_hand_values():
    assert plots.percentile([3.0, 1.0, 2.0, 4.0], 50) == pytest.approx(2.5)
    assert plots.percentile([10.0], 99) == 10.0
    assert math.isnan(plots.percentile([], 50))


def test_failure_split_classes():
    df = synthetic_records().filter(pl.col("system") == "bm25")
    fig = plots.failure_split(df)
    by_name = {t.name: list(t.y) for t in fig.data}
    # medium (x index 2), 5 records: Q1 0 no hit, Q2 0 no hit, Q3 ABSTAIN 1, Q4 error, Q9 1 (hit True)
    assert by_name["correct"][2] == pytest.approx(2 / 5)
    assert by_name["wrong: evidence not returned"][2] == pytest.approx(2 / 5)
    assert by_name["ungraded or error"][2] == pytest.approx(1 / 5)
    # small: Q2 wrong with evidence returned, Q4 partial
    assert by_name["wrong: evidence returned"][1] == pytest.approx(1 / 4)
    assert by_name["partial"][1] == pytest.approx(1 / 4)
    for i in range(3):
        assert sum(v[i] for v in by_name.values()) == pytest.approx(1.0)
    assert fig.layout.barmode == "stack"
    by_axis = plots.failure_split(df, by="axis")
    assert list(by_axis.data[0].x) == ["BASIC", "TEMPORAL", "MULTI", "ABSTAIN"]


def test_curve_points_carry_their_95_interval():
    # per tier: bm25 got one of two questions right -> mean 0.5, interval 0..1 (hand: resampling two
    # questions gives 0, 0.5 or 1 with p 1/4, 1/2, 1/4); the oracle got both right -> 1..1
    rows = []
    for tier in ("core", "small"):
        rows += [
            record(system="bm25", tier=tier, qid="Q1", score=1.0),
            record(system="bm25", tier=tier, qid="Q2", score=0.0),
            record(system="oracle", tier=tier, qid="Q1", score=1.0),
            record(system="oracle", tier=tier, qid="Q2", score=1.0),
        ]
    fig = plots.degradation_curve(records_frame(rows), ceiling=False)
    bm25 = _trace(fig, "bm25")
    assert list(bm25.y) == [0.5, 0.5]
    assert list(bm25.error_y.array) == [0.5, 0.5] and list(bm25.error_y.arrayminus) == [0.5, 0.5]
    oracle = _trace(fig, "oracle")
    assert list(oracle.error_y.array) == [0.0, 0.0] and "95% CI 0.000–1.000" not in str(oracle.customdata)
    assert "bars: 95% bootstrap intervals" in fig.layout.title.text


def test_per_axis_curves_are_one_panel_each_in_the_systems_colour():
    from memeval.bench.axes import AXES

    rows = [
        record(system="bm25", tier=t, qid=f"Q{a}", axis=a, weight=1, score=1.0) for a in AXES for t in ("core", "small")
    ]
    fig = plots.degradation_curve(records_frame(rows), by="axis", floor=False, ceiling=False)
    assert len(fig.data) == len(AXES) == 17 and len({t.xaxis for t in fig.data}) == 17  # 17 panels, not 17 lines
    assert {t.line.color for t in fig.data} == {plots.system_colour("bm25")}
    assert sum(t.showlegend is not False for t in fig.data) == 1  # one legend entry for the system


def test_a_system_keeps_its_colour_whatever_else_a_figure_shows():
    df = synthetic_records()
    full = plots.degradation_curve(df)  # no_memory and oracle are bands here
    alone = plots.retrieval_curve(df.filter(pl.col("system") == "bm25"))
    bounds_as_lines = plots.degradation_curve(df, floor=False, ceiling=False)
    colour = _trace(full, "bm25").line.color
    assert _trace(alone, "bm25").line.color == colour == _trace(bounds_as_lines, "bm25").line.color
    # bounds drawn as lines are dashed in their own colours, never a system's
    assert _trace(bounds_as_lines, "oracle").line.color == plots.CEILING_COLOUR != colour
    assert _trace(bounds_as_lines, "no_memory").line.dash == "dash"
    assert _trace(full, "floor: no_memory").line.color == plots.FLOOR_COLOUR


def test_overall_table_carries_intervals_beside_each_mean():
    from memeval.analysis.aggregate import RETRIEVAL_METRICS, overall_table

    rows = [
        record(system="bm25", qid="Q1", axis="BASIC", score=1.0),
        record(system="bm25", qid="Q2", axis="MULTI", score=0.0),
    ]  # weights 1 and 3
    df = records_frame(rows).with_columns(pl.lit(None, pl.Float64).alias(c) for c in RETRIEVAL_METRICS)
    row = overall_table(df).row(0, named=True)
    assert row["weighted"] == pytest.approx(0.25) and row["unweighted"] == pytest.approx(0.5)
    assert (row["weighted_lo"], row["weighted_hi"]) == (0.0, 1.0)
    assert (row["unweighted_lo"], row["unweighted_hi"]) == (0.0, 1.0)


def test_seed_spread_shows_between_bench_band_and_within_bench_bars():
    frames = {}
    for seed, right in ((1, 2), (2, 1), (3, 0)):  # bm25 gets 2, 1, 0 of two questions right per tier
        rows = []
        for tier in ("core", "small"):
            rows += [record(system="bm25", tier=tier, qid=f"Q{i}", score=1.0 if i < right else 0.0) for i in range(2)]
            rows += [record(system="oracle", tier=tier, qid=f"Q{i}", score=1.0) for i in range(2)]
        frames[seed] = records_frame(rows)
    fig = plots.seed_spread_curve(frames)
    mean = _trace(fig, "bm25: mean over seeds")
    assert list(mean.y) == pytest.approx([0.5, 0.5])  # (1 + 0.5 + 0) / 3
    band = _trace(fig, "bm25: between-seed spread (min–max)")
    assert list(band.y) == pytest.approx([1.0, 1.0, 0.0, 0.0])  # max per tier, then min back
    seed2 = _trace(fig, "bm25, seed 2 (95% CI)")
    assert list(seed2.error_y.arrayminus) == [0.5, 0.5] and list(seed2.error_y.array) == [0.5, 0.5]
    assert not [t for t in fig.data if t.name.startswith("oracle")]
    assert "seeds 1, 2, 3" in fig.layout.title.text
