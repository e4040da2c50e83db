"""The axis × tier heatmap: mean score per axis and tier, one panel per system, each cell with its n
and a mark where its 95% interval is too wide to read; cells with nothing graded grey, marked "–".

>>> from memeval.workbench import load_runs
>>> fig = axis_tier_heatmap(load_runs([tiny_run]), n_resamples=50)
>>> [t.name for t in fig.data], fig.layout.annotations[0].text
(['bm25: ungraded', 'bm25'], 'bm25')
"""

from __future__ import annotations

import polars as pl
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .intervals import DEFAULT_RESAMPLES
from .plot_base import (
    TEMPLATE,
    axis_order,
    bound_kind,
    mean_scores,
    natural_key,
    parts,
    tier_order,
    title_layout,
    update_layout,
)

__all__ = ["axis_tier_heatmap", "WIDE_INTERVAL"]

CELL_FONT_SIZE = 11  #: every cell label at this size (plotly would shrink long labels to fit)
UNGRADED_GREY = "#d9d9d9"  #: cells with no graded question

#: A heatmap cell whose 95% interval is wider than this is marked "±" (too few questions to read it).
WIDE_INTERVAL = 0.3


def axis_tier_heatmap(df: pl.DataFrame, n_resamples: int = DEFAULT_RESAMPLES) -> go.Figure:
    """Mean score per axis (rows, in weight-table order) × tier (columns), one panel per system.

    Uses all questions of each tier (axes whose evidence lives only in larger tiers show there);
    each cell's text gives the mean and the number of graded questions.
    """
    found = df["system"].unique().to_list()
    # systems in natural order, then the floor and the ceiling (named as such)
    systems = sorted((s for s in found if bound_kind(s) is None), key=natural_key)
    systems += sorted((s for s in found if bound_kind(s) is not None), key=lambda s: bound_kind(s) != "floor")
    titles = [f"{bound_kind(s)}: {s}" if bound_kind(s) else s for s in systems]
    axes = axis_order(df)
    tiers = tier_order(df)["tier"].to_list()
    fig = make_subplots(rows=1, cols=len(systems), subplot_titles=titles, shared_yaxes=True, horizontal_spacing=0.03)
    # every system's cells at once, each exactly as if computed alone
    means = parts(mean_scores(df, ["axis", "tier"], n_resamples=n_resamples, within=["system"]), ["system"])
    for c, s in enumerate(systems, start=1):
        m = means[(s,)]
        cell = {(r["axis"], r["tier"]): r for r in m.to_dicts()}
        z = [[_cell(cell, a, t, "mean") for t in tiers] for a in axes]
        text = [[_cell_text(cell.get((a, t))) for t in tiers] for a in axes]
        ci = [[_cell_interval(cell.get((a, t))) for t in tiers] for a in axes]
        ungraded = [[1 if (a, t) in cell and cell[(a, t)]["mean"] is None else None for t in tiers] for a in axes]
        fig.add_trace(  # ungraded cells: grey under the score layer (whose cell there is empty), marked "–"
            go.Heatmap(
                z=ungraded,
                x=tiers,
                y=axes,
                colorscale=[[0, UNGRADED_GREY], [1, UNGRADED_GREY]],
                showscale=False,
                hoverinfo="skip",
                name=f"{s}: ungraded",
            ),
            row=1,
            col=c,
        )
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
                textfont={"size": CELL_FONT_SIZE},
                showscale=c == 1,
                name=s,
                hovertemplate=f"{s}<br>%{{y}} × %{{x}}: %{{text}}<br>95% CI %{{customdata}}<extra></extra>",
            ),
            row=1,
            col=c,
        )
    fig.update_yaxes(autorange="reversed")
    update_layout(
        fig,
        **title_layout(
            f"Mean score per axis × tier (all questions per tier; n = graded questions; "
            f"± = 95% interval wider than {WIDE_INTERVAL}; grey – = none graded)"
        ),
        height=max(320, 34 * len(axes) + 160),
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
        return "–"
    wide = r["lo"] is not None and r["hi"] - r["lo"] > WIDE_INTERVAL
    return f"{r['mean']:.2f}{'±' if wide else ''}<br>n={r['n']}"


def _cell_interval(r: dict | None) -> str:
    if r is not None and r["mean"] is None:
        return f"none: n=0, {r['n_ungraded']} ungraded"
    if r is None or r["lo"] is None:
        return "–"
    return f"{r['lo']:.2f}–{r['hi']:.2f}"
