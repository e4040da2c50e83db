"""The failure split: each record classed as right, partly right, or wrong with or without its
evidence retrieved, and the share of each class per tier or per axis.

>>> import polars as pl
>>> df = pl.DataFrame({"score": [1.0, 0.0, 0.0, None], "retrieval_hit": [True, True, False, None]})
>>> df.select(failure_class().alias("outcome"))["outcome"].to_list()
['correct', 'wrong: evidence returned', 'wrong: evidence not returned', 'ungraded or error']
"""

from __future__ import annotations

import plotly.graph_objects as go
import polars as pl
from plotly.subplots import make_subplots

from ..errors import ArgumentError
from .plot_base import TEMPLATE, axis_order, tier_order, title_layout, update_layout

__all__ = ["failure_class", "failure_split", "FAILURE_CLASSES"]

FAILURE_CLASSES = (
    "correct",
    "partial",
    "wrong: evidence returned",
    "wrong: evidence not returned",
    "wrong: nothing to retrieve",
    "ungraded or error",
)
_FAILURE_COLORS = ["#2ca02c", "#bcbd22", "#ff7f0e", "#d62728", "#9467bd", "#7f7f7f"]


def failure_class() -> pl.Expr:
    """Classify each record: answer right, partly right, or wrong split by whether evidence came back."""
    s, hit = pl.col("score"), pl.col("retrieval_hit")
    return (
        pl.when(s.is_null())
        .then(pl.lit(FAILURE_CLASSES[5]))
        .when(s >= 1)
        .then(pl.lit(FAILURE_CLASSES[0]))
        .when(s > 0)
        .then(pl.lit(FAILURE_CLASSES[1]))
        .when(hit.is_null())
        .then(pl.lit(FAILURE_CLASSES[4]))
        .when(hit)
        .then(pl.lit(FAILURE_CLASSES[2]))
        .otherwise(pl.lit(FAILURE_CLASSES[3]))
    )


def failure_split(df: pl.DataFrame, by: str = "tier") -> go.Figure:
    """Share of records per class (see ``FAILURE_CLASSES``), per tier or per axis, one panel per system.

    "evidence returned but answer wrong" is a reading/answering failure; "evidence not returned"
    is a retrieval failure.
    """
    if by not in ("tier", "axis"):
        raise ArgumentError(f"by must be 'tier' or 'axis', not {by!r}")
    systems = df["system"].unique(maintain_order=True).to_list()
    if by == "tier":
        order = tier_order(df)["tier"].to_list()
    else:
        order = axis_order(df)
    counts = df.with_columns(failure_class().alias("outcome")).group_by(["system", by, "outcome"]).len()
    totals = counts.group_by(["system", by]).agg(pl.col("len").sum().alias("total"))
    share = counts.join(totals, on=["system", by]).with_columns((pl.col("len") / pl.col("total")).alias("share"))
    fig = make_subplots(rows=1, cols=len(systems), subplot_titles=systems, shared_yaxes=True)
    for c, s in enumerate(systems, start=1):
        d = share.filter(pl.col("system") == s)
        for k, cls in enumerate(FAILURE_CLASSES):
            got = {r[by]: r for r in d.filter(pl.col("outcome") == cls).to_dicts()}
            fig.add_trace(
                go.Bar(
                    x=order,
                    y=[got[o]["share"] if o in got else 0.0 for o in order],
                    name=cls,
                    marker={"color": _FAILURE_COLORS[k]},
                    legendgroup=cls,
                    showlegend=c == 1,
                    customdata=[got[o]["len"] if o in got else 0 for o in order],
                    hovertemplate=f"{s} %{{x}}<br>{cls}: %{{y:.0%}} (%{{customdata}})<extra></extra>",
                ),
                row=1,
                col=c,
            )
    update_layout(
        fig,
        barmode="stack",
        template=TEMPLATE,
        yaxis={"tickformat": ".0%", "title": "share"},
        **title_layout(f"Outcome per {by}: wrong with evidence returned vs evidence not returned vs correct"),
    )
    return fig
