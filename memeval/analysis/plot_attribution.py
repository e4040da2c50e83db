""" "Where it broke": the share of each attribution cause (``analysis.attribution``) per tier or per
axis, stacked, one panel per system, each share's 95% interval in its hover text.

>>> import polars as pl
>>> df = pl.DataFrame({"system": ["s"] * 4, "tier": ["t"] * 4, "tier_index": [0] * 4, "tier_turns": [9] * 4,
...                    "tier_tokens": [9] * 4, "qid": list("abcd"),
...                    "attribution": ["correct", "correct", "write_loss", "reader_loss"]})
>>> fig = attribution_split(df)
>>> [(t.name, t.y[0]) for t in fig.data if t.y[0]]
[('correct', 0.5), ('reader loss', 0.25), ('write loss', 0.25)]
"""

from __future__ import annotations

import plotly.graph_objects as go
import polars as pl
from plotly.subplots import make_subplots

from ..errors import ArgumentError
from .attribution import CAUSES, attribution_table
from .plot_base import TEMPLATE, axis_order, tier_order, title_layout, update_layout

__all__ = ["attribution_split", "CAUSE_COLORS", "cause_label"]

#: one colour per cause, from the failure split's palette (``plot_failures``): green right, grey the
#: reader's ceiling, purple the reader, orange retrieval, brown either, red never stored
CAUSE_COLORS = {
    "correct": "#2ca02c",
    "reader_ceiling": "#7f7f7f",
    "reader_loss": "#9467bd",
    "retrieval_loss": "#ff7f0e",
    "memory_loss": "#8c564b",
    "write_loss": "#d62728",
}


def cause_label(cause: str) -> str:
    """A cause as a legend shows it: ``write_loss`` -> ``write loss``."""
    return cause.replace("_", " ")


def attribution_split(df: pl.DataFrame, by: str = "tier", n_resamples: int = 1000) -> go.Figure:
    """Share of attributed records per cause, per tier or axis, one panel per system (records of an
    attributed run: ``memeval attribute``); records without a cause (errors, ungraded) are left out."""
    if by not in ("tier", "axis"):
        raise ArgumentError(f"by must be 'tier' or 'axis', not {by!r}")
    if "attribution" not in df.columns:
        raise ArgumentError("these records carry no attribution: run memeval attribute RUN first")
    df = df.filter(pl.col("attribution").is_not_null())
    systems = df["system"].unique(maintain_order=True).to_list()
    order = tier_order(df)["tier"].to_list() if by == "tier" else axis_order(df)
    fig = make_subplots(rows=1, cols=max(1, len(systems)), subplot_titles=systems, shared_yaxes=True)
    for c, s in enumerate(systems, start=1):
        table = attribution_table(df.filter(pl.col("system") == s), [by], n_resamples)
        for cause in CAUSES:
            got = {r[by]: r for r in table.filter(pl.col("cause") == cause).to_dicts()}
            rows = [got.get(o) for o in order]
            fig.add_trace(
                go.Bar(
                    x=order,
                    y=[r["share"] if r else 0.0 for r in rows],
                    name=cause_label(cause),
                    marker={"color": CAUSE_COLORS[cause]},
                    legendgroup=cause,
                    showlegend=c == 1,
                    customdata=[(r["n"], r["of"], r["lo"], r["hi"]) if r else (0, 0, 0.0, 0.0) for r in rows],
                    hovertemplate=f"{s} %{{x}}<br>{cause_label(cause)}: %{{y:.0%}} (%{{customdata[0]}} of "
                    "%{customdata[1]}; 95% interval %{customdata[2]:.0%}–%{customdata[3]:.0%})<extra></extra>",
                ),
                row=1,
                col=c,
            )
    update_layout(
        fig,
        barmode="stack",
        template=TEMPLATE,
        yaxis={"tickformat": ".0%", "title": "share of attributed questions"},
        **title_layout(
            f"Where it broke, per {by}: never stored, stored but not retrieved, retrieved but misread, "
            "or beyond the reader"
        ),
    )
    return fig
