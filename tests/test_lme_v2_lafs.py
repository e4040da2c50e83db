"""LAFS (memeval.analysis.lafs): the published step-function area, the gain over the reference
frontier, and the bootstrap interval that resamples each question's score and latency together."""

from __future__ import annotations

import math

import pytest

from memeval.analysis.lafs import REFERENCE, Point, bootstrap_gain, lafs, lafs_gain, operating_point, pareto
from memeval.errors import MemevalError

L = math.log


def test_reference_lafs_is_the_area_under_its_frontier():
    # small: RAG 51.0 from 1 s (0.2 s < 1 s), R 58.6 from 26.9 s, C 74.9 from 108.3 s; Codex is dominated
    want = (51.0 * L(26.9) + 58.6 * L(108.3 / 26.9) + 74.9 * L(200 / 108.3)) / L(200)
    assert lafs(REFERENCE["small"]) == pytest.approx(want, abs=1e-12)
    assert [p.name for p in pareto(REFERENCE["small"])] == [
        "RAG: query -> slice + notes",
        "AgentRunbook-R",
        "AgentRunbook-C",
    ]


def test_gain_of_a_new_point():
    ref = (51.0 * L(26.9) + 58.6 * L(108.3 / 26.9) + 74.9 * L(200 / 108.3)) / L(200)
    joined = (51.0 * L(15) + 62.0 * L(108.3 / 15) + 74.9 * L(200 / 108.3)) / L(200)
    assert lafs_gain("small", [Point("x", 62.0, 15.0)]) == pytest.approx(joined - ref, abs=1e-12)
    assert lafs_gain("small", [Point("dominated", 70.0, 150.0)]) == 0.0
    # faster than 1 s counts from 1 s; slower than 200 s never counts
    assert lafs_gain("medium", [Point("slow", 99.0, 250.0)]) == 0.0
    with pytest.raises(MemevalError):
        lafs_gain("large", [])
    with pytest.raises(MemevalError):
        lafs([Point("z", 10, 0.0)])


def test_bootstrap_resamples_score_and_latency_together():
    # one point, two questions: right in 150 s, wrong in 0.5 s. Jointly resampled, a draw is
    # (100 %, 150 s), (50 %, 75.25 s) or (0 %, 0.5 s); resampled apart, (100 %, 0.5 s) would occur.
    joint = [lafs_gain("small", [Point("p", a, t)]) for a, t in ((100, 150), (50, 75.25), (0, 0.5))]
    iv = bootstrap_gain("small", {"p": [1, 0]}, {"p": [150, 0.5]}, n_resamples=400, seed=3)
    apart = lafs_gain("small", [Point("p", 100, 0.5)])
    assert apart > max(joint)
    assert min(joint) <= iv.lo <= iv.gain <= iv.hi <= max(joint)
    assert iv.gain == pytest.approx(lafs_gain("small", [Point("p", 50, 75.25)]))


def test_bootstrap_is_seeded_and_collapses_on_identical_questions():
    a = bootstrap_gain("medium", {"p": [1, 0, 1, 1, 0]}, {"p": [20, 30, 25, 20, 40]}, n_resamples=300, seed=7)
    b = bootstrap_gain("medium", {"p": [1, 0, 1, 1, 0]}, {"p": [20, 30, 25, 20, 40]}, n_resamples=300, seed=7)
    assert a == b and a.lo < a.hi
    same = bootstrap_gain("small", {"p": [1, 1, 1]}, {"p": [10, 10, 10]}, n_resamples=100)
    assert same.lo == same.gain == same.hi
    with pytest.raises(MemevalError):
        bootstrap_gain("small", {"p": [1, float("nan")]}, {"p": [1, 2]})


def test_operating_point_needs_every_question_scored():
    recs = [
        {"qid": "a", "official_score": 1.0, "latency_ms": 2000.0},
        {"qid": "b", "official_score": 0.0, "latency_ms": 4000.0},
    ]
    p, d = operating_point(recs, "run")
    assert (p.acc, p.latency, d["n"]) == (50.0, 3.0, 2)
    with pytest.raises(MemevalError, match="1 of 3 questions"):
        operating_point([*recs, {"qid": "c", "official_score": None, "latency_ms": 1.0}], "run")


def test_figure_draws_reference_points_and_the_joined_frontier():
    from memeval.analysis.lafs import GainInterval, lafs_figure

    iv = GainInterval(2.1, 0.5, 3.0, 451, 200, 0.95)
    fig = lafs_figure("small", [Point("mine", 62.0, 15.0)], {"all": iv})
    names = [t.name for t in fig.data]
    assert names == ["frontier", "reference", "submitted"]
    ref = fig.data[1]
    assert list(ref.x) == [0.2, 177.2, 26.9, 108.3] and list(ref.y) == [51.0, 69.9, 58.6, 74.9]
    # the step function: RAG from 0.2 s, mine from 15 s (R dominated), C from 108.3 s to 200 s
    assert list(fig.data[0].x) == [0.2, 15.0, 15.0, 108.3, 108.3, 200.0]
    assert list(fig.data[0].y) == [51.0, 51.0, 62.0, 62.0, 74.9, 74.9]
    assert "[+0.50, +3.00]" in fig.layout.title.text and "n=451" in fig.layout.title.text


def test_frontiers_of_runs_pair_systems_over_the_questions_all_scored():
    """The compare notebook's LAFS figure: one point per system over the common questions (a question only
    one system scored is left out), the gain the published formula gives for those points."""
    import polars as pl

    from memeval.analysis.lafs import lafs_frontiers

    rows = [
        # x: right on a and b, 15 s each; y: right on a only, 2 s each; c scored by x alone (left out)
        *({"system": "x", "tier": "small", "qid": q, "official_score": 1.0, "latency_ms": 15000.0} for q in "abc"),
        {"system": "y", "tier": "small", "qid": "a", "official_score": 1.0, "latency_ms": 2000.0},
        {"system": "y", "tier": "small", "qid": "b", "official_score": 0.0, "latency_ms": 2000.0},
        {"system": "y", "tier": "small", "qid": "c", "official_score": None, "latency_ms": 2000.0},
    ]
    figs = lafs_frontiers(pl.DataFrame(rows), n_resamples=100)
    assert len(figs) == 1
    want = lafs_gain("small", [Point("x", 100.0, 15.0), Point("y", 50.0, 2.0)])
    assert f"LAFS gain {want:+.2f} [" in figs[0].layout.title.text and "n=2)" in figs[0].layout.title.text
    assert lafs_frontiers(pl.DataFrame({"system": ["bm25"], "tier": ["core"]})) == []
