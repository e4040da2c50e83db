"""Score curves per tier against tier size (log x axis): the degradation curve with its floor and
ceiling bands, the evidence-retrieval curve, and the spread of the curve across generated benches.

>>> from memeval.workbench import load_runs
>>> fig = retrieval_curve(load_runs([tiny_run]))
>>> [t.name for t in fig.data], fig.layout.xaxis.type
(['bm25'], 'log')
"""

from __future__ import annotations

import math

import plotly.graph_objects as go
import polars as pl
from plotly.subplots import make_subplots

from ..errors import ArgumentError
from .aggregate import CEILING as CEILING_SYSTEM
from .aggregate import FLOOR as FLOOR_SYSTEM
from .aggregate import ceiling_gaps
from .intervals import DEFAULT_RESAMPLES
from .plot_base import (
    TEMPLATE,
    axis_order,
    bound_kind,
    bound_line,
    error_bars,
    hover_interval,
    is_role,
    mean_scores,
    natural_key,
    parts,
    question_rows,
    system_colour,
    system_line,
    title_layout,
    tier_order,
    update_layout,
    tier_xaxis,
    x_column,
)

__all__ = ["degradation_curve", "retrieval_curve", "seed_spread_curve"]


def degradation_curve(
    df: pl.DataFrame,
    by: str = "system",
    x: str = "turns",
    floor: str | bool | None = None,
    ceiling: str | bool | None = None,
    core: bool = True,
    weighted: bool = False,
    system: str | None = None,
    n_resamples: int = DEFAULT_RESAMPLES,
) -> go.Figure:
    """Mean score per tier against tier size (log x axis), one line per system or per axis, each point
    with its 95% bootstrap interval (``n_resamples``).

    ``floor``/``ceiling`` name the systems drawn as shaded bands rather than lines (default: the
    ``no_memory`` and ``oracle`` systems when present; ``False`` draws none). The floor band fills
    0 up to the floor score (no better than no memory); the ceiling band fills from the ceiling
    score up to 1. With ``by="axis"``: small multiples, one panel per axis holding one system's curve
    (``system``, or the only system in ``df`` that is not a floor or ceiling) and that axis's floor and
    ceiling as dashed lines. Each system has its colour (``plot_base.system_colour``) in every figure.
    The title names the question set (``core``) and the mean used.
    """
    if by not in ("system", "axis"):
        raise ArgumentError(f"by must be 'system' or 'axis', not {by!r}")
    xcol, xlabel = x_column(x)
    rows, set_label = question_rows(df, core)
    systems = rows["system"].unique(maintain_order=True).to_list()
    floor_name = _pick(systems, floor, FLOOR_SYSTEM)
    ceiling_name = _pick(systems, ceiling, CEILING_SYSTEM)
    lines = sorted((s for s in systems if s not in (floor_name, ceiling_name)), key=natural_key)
    mean_name = "weighted mean score" if weighted else "mean score (unweighted)"
    if by == "axis":
        if system is None:
            candidates = [s for s in lines if bound_kind(s) is None]
            if len(candidates) != 1:
                raise ArgumentError(f"by='axis' needs one system; pass system= (have {candidates})")
            system = candidates[0]
        return _by_axis(
            rows, system, floor_name, ceiling_name, xcol, xlabel, set_label, mean_name, weighted, n_resamples
        )
    fig = go.Figure()
    # every system's means at once (each exactly as if computed alone): one bootstrap pass, not one per line
    means = parts(
        mean_scores(rows, ["tier_index", "tier", xcol], weighted, n_resamples=n_resamples, within=["system"]),
        ["system"],
    )
    for name, kind in ((floor_name, "floor"), (ceiling_name, "ceiling")):
        if name is not None:
            label = name
            gaps: list[str] = []
            if kind == "ceiling":  # name what the ceiling cannot reach beside its line
                gaps = ceiling_gaps(rows, name)["axis"].to_list()
                label = f"{name}, cannot reach {', '.join(gaps)}" if gaps else name
            band = means[(name,)]  # a floor or ceiling is one of the systems in rows
            _add_band(fig, band, xcol, label, kind)
            _explain_band(fig, band, xcol, kind, gaps)
    for g in lines:
        fig.add_trace(_score_line(means[(g,)], xcol, g, g, system_line(g)))
    tiers = tier_order(rows)
    update_layout(
        fig,
        **title_layout(f"Degradation: {mean_name} per tier ({set_label}; bars: 95% bootstrap intervals)"),
        xaxis=tier_xaxis(tiers, xcol, xlabel),
        yaxis={"title": mean_name, "range": [-0.02, 1.02]},
        legend={"title": "system"},
        template=TEMPLATE,
    )
    return fig


def _score_line(m: pl.DataFrame, xcol: str, name: str, who: str, line: dict, **more) -> go.Scatter:
    """One curve of ``mean_scores`` rows: markers, 95% interval bars, n and ungraded in the hover."""
    return go.Scatter(
        x=m[xcol].to_list(),
        y=m["mean"].to_list(),
        mode="lines+markers",
        name=name,
        line=line,
        marker={"color": line["color"]},
        error_y=error_bars(m),
        customdata=list(zip(m["tier"].to_list(), m["n"].to_list(), m["n_ungraded"].to_list(), hover_interval(m))),
        hovertemplate=f"{who}<br>tier %{{customdata[0]}}: %{{y:.3f}} (95% CI %{{customdata[3]}})<br>"
        "n=%{customdata[1]}, ungraded/error=%{customdata[2]}<extra></extra>",
        **more,
    )


def _by_axis(
    rows: pl.DataFrame,
    system: str,
    floor_name: str | None,
    ceiling_name: str | None,
    xcol: str,
    xlabel: str,
    set_label: str,
    mean_name: str,
    weighted: bool,
    n_resamples: int,
) -> go.Figure:
    """Small multiples: one panel per axis (weight-table order) holding ``system``'s curve in its own
    colour, with that axis's floor and ceiling as dashed lines; never 17 lines on one plot."""
    own = rows.filter(pl.col("system") == system)
    axes = axis_order(own)
    cols = min(4, max(1, len(axes)))
    nrows = max(1, math.ceil(len(axes) / cols))
    weights = dict(zip(own["axis"].to_list(), own["weight"].to_list()))
    fig = make_subplots(
        rows=nrows,
        cols=cols,
        subplot_titles=[f"{a} (weight {weights.get(a)})" for a in axes],
        shared_xaxes="all",
        shared_yaxes="all",
        horizontal_spacing=0.04,
        vertical_spacing=min(0.3 / nrows, 0.12),
    )
    tiers = tier_order(rows)
    shown: set[str] = set()
    drawn = rows.filter(pl.col("system").is_in([n for n in (system, floor_name, ceiling_name) if n is not None]))
    # every (system, axis) curve's means at once, each exactly as if computed alone
    means = parts(
        mean_scores(drawn, ["tier_index", "tier", xcol], weighted, n_resamples=n_resamples, within=["system", "axis"]),
        ["system", "axis"],
    )
    for i, a in enumerate(axes):
        r, c = i // cols + 1, i % cols + 1
        for name, kind in ((floor_name, "floor"), (ceiling_name, "ceiling")):
            if name is None:
                continue
            b = means.get((name, a))
            if b is not None and b.height:
                label = f"{kind}: {name}"
                fig.add_trace(
                    go.Scatter(
                        x=b[xcol].to_list(),
                        y=b["mean"].to_list(),
                        mode="lines",
                        line=bound_line(kind),
                        name=label,
                        legendgroup=label,
                        showlegend=label not in shown,
                        hovertemplate=f"{kind} ({name}), {a}: %{{y:.3f}}<extra></extra>",
                        meta={"axis": a},
                    ),
                    row=r,
                    col=c,
                )
                shown.add(label)
        m = means[(system, a)]
        line = _score_line(
            m, xcol, system, f"{system}, {a}", system_line(system), legendgroup=system, showlegend=system not in shown
        )
        fig.add_trace(line.update(meta={"axis": a}), row=r, col=c)
        shown.add(system)
    fig.update_xaxes(
        type="log", tickvals=tiers[xcol].to_list(), ticktext=tiers["tier"].to_list(), tickfont={"size": 10}
    )
    fig.update_yaxes(range=[-0.05, 1.05], tickvals=[0, 0.5, 1])
    fig.update_annotations(font={"size": 12})
    update_layout(
        fig,
        **title_layout(
            f"Degradation — {system}, by axis: {mean_name} per tier against {xlabel} "
            f"({set_label}; bars: 95% bootstrap intervals)"
        ),
        height=190 * nrows + 140,
        template=TEMPLATE,
        legend={"orientation": "h", "y": -0.08, "yanchor": "top"},
    )
    return fig


def _pick(systems: list[str], choice, default: str) -> str | None:
    if choice is False:
        return None
    if isinstance(choice, str):
        if choice not in systems:
            raise ArgumentError(f"{choice!r} is not a system in these records ({systems})")
        return choice
    return next((s for s in systems if is_role(s, default)), None)


def _add_band(fig: go.Figure, m: pl.DataFrame, xcol: str, name: str, kind: str) -> None:
    xs, ys = m[xcol].to_list(), m["mean"].to_list()
    edge = [0.0] * len(xs) if kind == "floor" else [1.0] * len(xs)
    color = "rgba(214,39,40,0.15)" if kind == "floor" else "rgba(44,160,44,0.15)"
    fig.add_trace(
        go.Scatter(
            x=xs, y=edge, mode="lines", line={"width": 0}, hoverinfo="skip", showlegend=False, name=f"{kind} edge"
        )
    )
    fig.add_trace(
        go.Scatter(
            x=xs,
            y=ys,
            mode="lines",
            fill="tonexty",
            fillcolor=color,
            line=bound_line(kind),
            name=f"{kind}: {name}",
            hovertemplate=f"{kind} ({name}): %{{y:.3f}}<extra></extra>",
        )
    )


def _explain_band(fig: go.Figure, m: pl.DataFrame, xcol: str, kind: str, gaps: list[str]) -> None:
    """Say on the figure what a band is, and for the ceiling why it sits below 1."""
    if m.is_empty() or m["mean"].drop_nulls().is_empty():
        return
    if kind == "floor":
        text = "floor: a system that returns nothing"
    else:
        why = (
            f"below 1: {', '.join(gaps)} cannot be answered from the evidence text"
            if gaps
            else "below 1 only where evidence text does not hold the gold"
        )
        text = f"ceiling: the evidence turns handed over verbatim; {why}"
    last = m.drop_nulls("mean").row(-1, named=True)
    fig.add_annotation(
        x=math.log10(last[xcol]) if last[xcol] else 0,
        y=last["mean"],
        text=text,
        showarrow=False,
        xanchor="right",
        yanchor="bottom" if kind == "floor" else "top",
        yshift=4 if kind == "floor" else -4,
        font={"size": 11, "color": "#555"},
    )


def retrieval_curve(
    df: pl.DataFrame,
    metric: str = "turn_recall_any@5",
    x: str = "turns",
    core: bool = True,
    n_resamples: int = DEFAULT_RESAMPLES,
) -> go.Figure:
    """Mean evidence-retrieval ``metric`` (a ``aggregate.RETRIEVAL_METRICS`` column, LongMemEval's
    definitions) per tier against tier size, one line per system. Questions without evidence turns
    are excluded for every system alike; the hover gives n and the excluded count."""
    if metric not in df.columns:
        raise ArgumentError(f"{metric!r} is not a retrieval metric column")
    xcol, xlabel = x_column(x)
    rows, set_label = question_rows(df.filter(pl.col("error").is_null()), core)
    fig = go.Figure()
    means = parts(
        mean_scores(rows, ["tier_index", "tier", xcol], value=metric, n_resamples=n_resamples, within=["system"]),
        ["system"],
    )
    for name in sorted(rows["system"].unique().to_list(), key=natural_key):
        m = means[(name,)]
        line = _score_line(m, xcol, name, name, system_line(name))
        line.update(
            hovertemplate=f"{name}<br>tier %{{customdata[0]}}: %{{y:.3f}} (95% CI %{{customdata[3]}})<br>"
            "n=%{customdata[1]} with evidence, excluded (no evidence)=%{customdata[2]}<extra></extra>"
        )
        fig.add_trace(line)
    tiers = tier_order(rows)
    update_layout(
        fig,
        **title_layout(f"Evidence retrieval: {metric} per tier ({set_label}; bars: 95% bootstrap intervals)"),
        xaxis=tier_xaxis(tiers, xcol, xlabel),
        yaxis={"title": metric, "range": [-0.02, 1.02]},
        legend={"title": "system"},
        template=TEMPLATE,
    )
    return fig


def seed_spread_curve(
    frames, x: str = "turns", weighted: bool = False, core: bool = True, n_resamples: int = DEFAULT_RESAMPLES
) -> go.Figure:
    """One generated bench per seed (``frames``: ``{seed: records}``), the same systems: per system, the
    mean of the per-seed means per tier with the between-bench spread (min-max over seeds) as a band,
    and each seed's own point with its within-bench 95% interval. The floor and ceiling systems are left
    out (they are the same on every seed by construction)."""
    xcol, xlabel = x_column(x)
    fig = go.Figure()
    per_seed = []
    for seed, df in frames.items():
        rows, _ = question_rows(df, core)
        m = mean_scores(rows, ["system", "tier_index", "tier"], weighted, n_resamples=n_resamples)
        sizes = tier_order(rows).select("tier_index", xcol)
        per_seed.append(m.join(sizes, on="tier_index").with_columns(pl.lit(seed).alias("seed")))
    if not per_seed:
        raise ArgumentError("no seeds given")
    allm = pl.concat(per_seed)
    systems = sorted(
        (s for s in allm["system"].unique().to_list() if not (is_role(s, FLOOR_SYSTEM) or is_role(s, CEILING_SYSTEM))),
        key=natural_key,
    )
    for name in systems:
        colour = system_colour(name)
        d = allm.filter(pl.col("system") == name)
        agg = (
            d.group_by("tier_index", "tier")
            .agg(
                pl.col(xcol).mean(),
                pl.col("mean").mean().alias("across"),
                pl.col("mean").min().alias("min"),
                pl.col("mean").max().alias("max"),
                pl.len().alias("seeds"),
            )
            .sort("tier_index")
        )
        xs = agg[xcol].to_list()
        fig.add_trace(
            go.Scatter(
                x=xs + xs[::-1],
                y=agg["max"].to_list() + agg["min"].to_list()[::-1],
                fill="toself",
                fillcolor=colour,
                opacity=0.15,
                line={"width": 0},
                hoverinfo="skip",
                name=f"{name}: between-seed spread (min–max)",
            )
        )
        fig.add_trace(
            go.Scatter(
                x=xs,
                y=agg["across"].to_list(),
                mode="lines",
                name=f"{name}: mean over seeds",
                line={"color": colour, "width": 3},
                customdata=list(
                    zip(agg["tier"].to_list(), agg["seeds"].to_list(), agg["min"].to_list(), agg["max"].to_list())
                ),
                hovertemplate=f"{name}<br>tier %{{customdata[0]}}: %{{y:.3f}} over %{{customdata[1]}} "
                "seeds (min %{customdata[2]:.3f}, max %{customdata[3]:.3f})<extra></extra>",
            )
        )
        for seed in d["seed"].unique(maintain_order=True).to_list():
            one = d.filter(pl.col("seed") == seed).sort("tier_index")
            fig.add_trace(
                go.Scatter(
                    x=one[xcol].to_list(),
                    y=one["mean"].to_list(),
                    mode="markers",
                    marker={"color": colour, "size": 6, "symbol": "circle-open"},
                    error_y=error_bars(one),
                    name=f"{name}, seed {seed} (95% CI)",
                    legendgroup=name,
                    showlegend=False,
                    customdata=list(zip(one["tier"].to_list(), one["n"].to_list(), hover_interval(one))),
                    hovertemplate=f"{name}, seed {seed}<br>tier %{{customdata[0]}}: %{{y:.3f}} "
                    "(95% CI %{customdata[2]}, n=%{customdata[1]})<extra></extra>",
                )
            )
    tiers = tier_order(pl.concat([f for f in frames.values()]))
    mean_name = "weighted mean score" if weighted else "mean score (unweighted)"
    update_layout(
        fig,
        **title_layout(
            f"Degradation across {len(frames)} generated benches (seeds {', '.join(map(str, frames))}): "
            "band = between-seed spread, bars = within-bench 95% intervals"
        ),
        xaxis=tier_xaxis(tiers, xcol, xlabel),
        yaxis={"title": mean_name, "range": [-0.02, 1.02]},
        template=TEMPLATE,
    )
    return fig
