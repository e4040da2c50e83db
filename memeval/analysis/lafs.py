"""LongMemEval-V2's leaderboard score, LAFS, with an interval it does not publish.

An *operating point* is one run of a system setting: its accuracy (mean official score over the
questions, in percentage points) and its latency (mean wall time of the memory's ``query`` only,
seconds). LAFS is the mean, over log latency budgets T in [1 s, 200 s], of the best accuracy among
points with latency <= T (0 where none is that fast) -- the area under the Pareto frontier's step
function on a log axis. A submission's score is its *gain*: LAFS of the reference frontier joined
with its points, minus LAFS of the reference frontier alone (``leaderboard/compute_lafs.py``; the
reference points below are its published constants).

:func:`bootstrap_gain` puts a percentile interval on the gain: it resamples questions with
replacement -- the same draw for every operating point, each question's score and query latency
kept together -- recomputes each point's accuracy and mean latency, and the gain.

>>> small = REFERENCE["small"]
>>> round(lafs(small), 4), [p.name for p in pareto(small)]
(55.7648, ['RAG: query -> slice + notes', 'AgentRunbook-R', 'AgentRunbook-C'])
>>> round(lafs_gain("small", [Point("fast", 62.0, 15.0)]), 4)
2.1064
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

import numpy as np

from ..errors import MemevalError

__all__ = [
    "Point",
    "REFERENCE",
    "T_MIN",
    "T_MAX",
    "pareto",
    "lafs",
    "lafs_gain",
    "GainInterval",
    "bootstrap_gain",
    "operating_point",
    "lafs_figure",
    "lafs_frontiers",
]

T_MIN, T_MAX, FLOOR = 1.0, 200.0, 0.0


@dataclass(frozen=True)
class Point:
    """One operating point: ``acc`` in percentage points (74.9), ``latency`` in seconds."""

    name: str
    acc: float
    latency: float


#: the fixed reference frontier per tier (RAG slice+notes, Codex, AgentRunbook-R, AgentRunbook-C)
REFERENCE: Mapping[str, tuple[Point, ...]] = {
    "small": (
        Point("RAG: query -> slice + notes", 51.0, 0.2),
        Point("Codex", 69.9, 177.2),
        Point("AgentRunbook-R", 58.6, 26.9),
        Point("AgentRunbook-C", 74.9, 108.3),
    ),
    "medium": (
        Point("RAG: query -> slice + notes", 45.9, 0.3),
        Point("Codex", 68.7, 185.8),
        Point("AgentRunbook-R", 57.0, 25.8),
        Point("AgentRunbook-C", 70.1, 139.9),
    ),
}


def pareto(points: Iterable[Point]) -> list[Point]:
    """The points no faster point matches in accuracy, by latency (ties: the more accurate first);
    a latency that is not positive is an error."""
    best, out = -math.inf, []
    for p in sorted(points, key=lambda p: (p.latency, -p.acc)):
        if not p.latency > 0:
            raise MemevalError(f"operating point {p.name!r}: latency must be positive, got {p.latency}")
        if p.acc > best:
            out.append(p)
            best = p.acc
    return out


def lafs(points: Iterable[Point], t_min: float = T_MIN, t_max: float = T_MAX, floor: float = FLOOR) -> float:
    """The exact LAFS of ``points`` (the step function integrated piece by piece on log latency)."""
    if not 0 < t_min < t_max:
        raise MemevalError("LAFS needs 0 < t_min < t_max")
    front = pareto(points)
    cuts = sorted({t_min, t_max, *(p.latency for p in front if t_min < p.latency < t_max)})
    area = 0.0
    for left, right in zip(cuts, cuts[1:]):
        acc = max((p.acc for p in front if p.latency <= left), default=floor)
        area += acc * math.log(right / left)
    return area / math.log(t_max / t_min)


def _reference(tier: str) -> tuple[Point, ...]:
    try:
        return REFERENCE[tier]
    except KeyError:
        raise MemevalError(f"LAFS: unknown tier {tier!r} (small or medium)") from None


def lafs_gain(tier: str, points: Sequence[Point]) -> float:
    """LAFS(reference ∪ points) − LAFS(reference) for ``tier``."""
    ref = _reference(tier)
    return lafs([*ref, *points]) - lafs(ref)


@dataclass(frozen=True)
class GainInterval:
    """The gain, its ``level`` percentile-bootstrap interval, questions and resamples."""

    gain: float
    lo: float
    hi: float
    n_questions: int
    n_resamples: int
    level: float


def bootstrap_gain(
    tier: str,
    scores: Mapping[str, Sequence[float]],
    latencies: Mapping[str, Sequence[float]],
    *,
    n_resamples: int = 2000,
    level: float = 0.95,
    seed: int = 0,
) -> GainInterval:
    """The gain of the operating points ``scores``/``latencies`` (name → per-question score 0..1 and
    query seconds, every point over the same questions in the same order) with its interval.

    >>> iv = bootstrap_gain("small", {"x": [1, 1, 0, 1]}, {"x": [10, 20, 10, 20]}, n_resamples=200)
    >>> round(iv.gain, 3), iv.lo <= iv.gain <= iv.hi, iv.n_questions
    (6.968, True, 4)
    """
    names = list(scores)
    if not names or set(names) != set(latencies):
        raise MemevalError("bootstrap_gain: give scores and latencies for the same operating points")
    s = np.array([np.asarray(scores[k], dtype=float) for k in names])
    t = np.array([np.asarray(latencies[k], dtype=float) for k in names])
    if s.ndim != 2 or s.shape != t.shape or s.shape[1] == 0:
        raise MemevalError("bootstrap_gain: every operating point needs one score and latency per question")
    if np.isnan(s).any() or np.isnan(t).any():
        raise MemevalError("bootstrap_gain: a missing score or latency (an ungraded question) cannot be resampled")
    n = s.shape[1]

    def gain(acc, lat) -> float:
        return lafs_gain(tier, [Point(k, float(a), float(b)) for k, a, b in zip(names, acc, lat)])

    point = gain(s.mean(axis=1) * 100, t.mean(axis=1))
    rng = np.random.default_rng(seed)
    draws = rng.multinomial(n, np.full(n, 1.0 / n), size=n_resamples)  # one draw for every point
    accs = draws @ s.T / n * 100
    lats = draws @ t.T / n
    values = np.array([gain(a, b) for a, b in zip(accs, lats)])
    tail = (1 - level) / 2
    lo, hi = np.quantile(values, [tail, 1 - tail])
    return GainInterval(point, float(lo), float(hi), n, n_resamples, level)


def operating_point(records: Iterable[Mapping], name: str) -> tuple[Point, dict]:
    """A run's operating point from its records: accuracy = mean ``official_score`` × 100, latency =
    mean ``latency_ms`` / 1000 (the system's query only). Returns the point and its particulars
    (questions, graded, per-question scores and seconds by qid); a run with an ungraded question or
    an error has no point (:class:`MemevalError` saying how many), as the leaderboard scores every
    question."""
    rows = [r for r in records if isinstance(r, Mapping)]
    bad = [r.get("qid") for r in rows if r.get("official_score") is None or r.get("latency_ms") is None]
    if not rows:
        raise MemevalError(f"{name}: no records")
    if bad:
        raise MemevalError(
            f"{name}: {len(bad)} of {len(rows)} questions have no official score or latency (first: {bad[0]}); "
            "the leaderboard scores every question"
        )
    score = {str(r["qid"]): float(r["official_score"]) for r in rows}
    secs = {str(r["qid"]): float(r["latency_ms"]) / 1000 for r in rows}
    acc = 100 * sum(score.values()) / len(score)
    lat = sum(secs.values()) / len(secs)
    return Point(name, acc, lat), {"n": len(score), "scores": score, "seconds": secs}


def lafs_figure(tier: str, points: Sequence[Point], intervals: Mapping[str, GainInterval] | None = None):
    """The accuracy–latency plane on a log latency axis: the tier's reference points (grey), the given
    operating points, and the joined frontier as the step function LAFS integrates (1 s to 200 s
    shaded); the title gives the gain (with its interval where ``intervals`` holds one for the set,
    under the key ``"all"``). Returns a plotly figure."""
    import plotly.graph_objects as go  # on use: plotly is heavy to import

    ref = list(_reference(tier))
    front = pareto([*ref, *points])
    fig = go.Figure()
    fig.add_vrect(x0=T_MIN, x1=T_MAX, fillcolor="rgba(120,120,120,0.08)", line_width=0)
    xs, ys = [], []
    for i, p in enumerate(front):
        right = front[i + 1].latency if i + 1 < len(front) else max(T_MAX, p.latency)
        xs += [p.latency, right]
        ys += [p.acc, p.acc]
    fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", name="frontier", line={"shape": "hv", "dash": "dash"}))
    for name, pts, colour in (("reference", ref, "#888888"), ("submitted", list(points), "#1f77b4")):
        fig.add_trace(
            go.Scatter(
                x=[p.latency for p in pts],
                y=[p.acc for p in pts],
                mode="markers+text",
                text=[p.name for p in pts],
                textposition="top center",
                name=name,
                marker={"size": 10, "color": colour},
            )
        )
    gain = lafs_gain(tier, list(points))
    iv = (intervals or {}).get("all")
    title = f"LongMemEval-V2 {tier}: LAFS gain {gain:+.2f}"
    if iv is not None:
        title += f" [{iv.lo:+.2f}, {iv.hi:+.2f}] ({iv.level:.0%}, n={iv.n_questions})"
    fig.update_layout(title=title, xaxis={"type": "log", "title": "query latency (s)"}, yaxis={"title": "accuracy (%)"})
    return fig


def lafs_frontiers(df, *, n_resamples: int = 2000, seed: int = 0) -> list:
    """One :func:`lafs_figure` per LongMemEval-V2 tier (``small``, ``medium``) among a frame of runs
    (``memeval.load_runs``: columns ``system``, ``tier``, ``qid``, ``official_score``, ``latency_ms``):
    each system one operating point over the questions every system there scored (first epoch), with
    the gain's bootstrap interval. A frame with no official scores gives ``[]`` (nothing to draw).

    >>> import polars as pl
    >>> rows = [{"system": s, "tier": "small", "qid": q, "official_score": float(q != "b" or s == "x"),
    ...          "latency_ms": 9000.0} for s in ("x", "y") for q in ("a", "b")]
    >>> [f.layout.title.text.split(":")[0] for f in lafs_frontiers(pl.DataFrame(rows), n_resamples=50)]
    ['LongMemEval-V2 small']
    """
    import polars as pl  # on use: the notebooks have it loaded already

    need = {"system", "tier", "qid", "official_score", "latency_ms"}
    if not need <= set(df.columns):
        return []
    if "epoch" in df.columns:
        df = df.filter(pl.col("epoch") == pl.col("epoch").min().over("system", "tier"))
    df = df.filter(pl.col("official_score").is_not_null() & pl.col("latency_ms").is_not_null())
    figures = []
    for tier in ("small", "medium"):
        part = df.filter(pl.col("tier").cast(pl.Utf8) == tier)
        systems = sorted(part["system"].unique().to_list())
        if not systems:
            continue
        common = set.intersection(*(set(part.filter(pl.col("system") == s)["qid"].to_list()) for s in systems))
        qids = sorted(common)
        if not qids:
            continue
        scores, secs, points = {}, {}, []
        for s in systems:
            rows = {r["qid"]: r for r in part.filter(pl.col("system") == s).iter_rows(named=True)}
            scores[s] = [float(rows[q]["official_score"]) for q in qids]
            secs[s] = [float(rows[q]["latency_ms"]) / 1000 for q in qids]
            points.append(Point(s, 100 * sum(scores[s]) / len(qids), sum(secs[s]) / len(qids)))
        iv = bootstrap_gain(tier, scores, secs, n_resamples=n_resamples, seed=seed)
        figures.append(lafs_figure(tier, points, {"all": iv}))
    return figures
