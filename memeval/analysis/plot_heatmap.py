"""The axis × tier heatmap: mean score per axis and tier, one panel per system, each cell with its n
and a mark where its 95% interval is too wide to read.

>>> from memeval.workbench import load_runs
>>> fig = axis_tier_heatmap(load_runs([tiny_run]), n_resamples=50)
>>> [t.type for t in fig.data], fig.layout.annotations[0].text
(['heatmap'], 'bm25')
"""

from __future__ import annotations

import polars as pl
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .intervals import DEFAULT_RESAMPLES
from .plot_base import TEMPLATE, axis_order, mean_scores, tier_order

__all__ = ["axis_tier_heatmap", "WIDE_INTERVAL"]

#: A heatmap cell whose 95% interval is wider than this is marked "±" (too few questions to read it).
WIDE_INTERVAL = 0.3


def axis_tier_heatmap(df: pl.DataFrame, n_resamples: int = DEFAULT_RESAMPLES) -> go.Figure:
    """Mean score per axis (rows, in weight-table order) × tier (columns), one panel per system.

    Uses all questions of each tier (axes whose evidence lives only in larger tiers show there);
    each cell's text gives the mean and the number of graded questions.
    """
    systems = df["system"].unique(maintain_order=True).to_list()
    axes = axis_order(df)
    tiers = tier_order(df)["tier"].to_list()
    fig = make_subplots(rows=1, cols=len(systems), subplot_titles=systems, shared_yaxes=True, horizontal_spacing=0.03)
    for c, s in enumerate(systems, start=1):
        m = mean_scores(df.filter(pl.col("system") == s), ["axis", "tier"], n_resamples=n_resamples)
        cell = {(r["axis"], r["tier"]): r for r in m.to_dicts()}
        z = [[_cell(cell, a, t, "mean") for t in tiers] for a in axes]
        text = [[_cell_text(cell.get((a, t))) for t in tiers] for a in axes]
        ci = [[_cell_interval(cell.get((a, t))) for t in tiers] for a in axes]
        fig.add_trace(
            go.Heatmap(
                z=z,
                x=tiers,
                y=axes,
                zmin=0,
                zmax=1,
                colorscale="RdYlGn",
                text=text,
                customdata=ci,
                texttemplate="%{text}",
                showscale=c == 1,
                name=s,
                hovertemplate=f"{s}<br>%{{y}} × %{{x}}: %{{text}}<br>95% CI %{{customdata}}<extra></extra>",
            ),
            row=1,
            col=c,
        )
    fig.update_yaxes(autorange="reversed")
    fig.update_layout(
        title=f"Mean score per axis × tier (all questions per tier; n = graded questions; "
        f"± = 95% interval wider than {WIDE_INTERVAL})",
        height=max(320, 28 * len(axes) + 140),
        template=TEMPLATE,
    )
    return fig


def _cell(cell: dict, a: str, t: str, key: str):
    r = cell.get((a, t))
    return None if r is None else r[key]


def _cell_text(r: dict | None) -> str:
    if r is None:
        return ""
    if r["mean"] is None:
        return f"– (n=0, {r['n_ungraded']} ungraded)"
    wide = r["lo"] is not None and r["hi"] - r["lo"] > WIDE_INTERVAL
    return f"{r['mean']:.2f}{' ±' if wide else ''} (n={r['n']})"


def _cell_interval(r: dict | None) -> str:
    if r is None or r["lo"] is None:
        return "–"
    return f"{r['lo']:.2f}–{r['hi']:.2f}"
