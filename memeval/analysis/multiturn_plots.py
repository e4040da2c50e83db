"""Plotly figures for multi-turn pass rates (static: they survive in the HTML report), on the shared
plot template (:data:`memeval.analysis.plot_base.TEMPLATE`), each agent in its colour
(:func:`memeval.analysis.plot_base.system_colour`) and each pass rate with its 95% interval."""

from __future__ import annotations

from typing import Mapping

import polars as pl

import plotly.graph_objects as go

from ..multiturn.rates import EXCLUDED, PassRates
from .plot_base import PALETTE, TEMPLATE, system_colour, title_layout, update_layout

__all__ = ["strata_figure", "shares_figure", "bad_turn_figure"]


def strata_figure(rates: Mapping[str, PassRates]) -> go.Figure:
    """Pass rate per stratum and the weighted total, one bar group per agent."""
    fig = go.Figure()
    for agent, pr in rates.items():
        rows = list(pr.strata.iter_rows(named=True))
        x = [f"{r['stratum']} turns (w={r['weight']})" for r in rows] + ["total (weighted)"]
        y = [r["rate"] for r in rows] + [pr.total]
        lo = [r["rate_lo"] for r in rows] + [pr.total_lo]
        hi = [r["rate_hi"] for r in rows] + [pr.total_hi]
        text = [("n/a" if r["rate"] is None else f"{r['rate']:.2f}") + f" (n={r['pass'] + r['fail']})" for r in rows]
        text.append("n/a" if pr.total is None else f"{pr.total:.2f}")
        nan = float("nan")
        fig.add_bar(
            name=agent,
            x=x,
            y=y,
            text=text,
            textposition="inside",
            marker_color=system_colour(agent),
            error_y=dict(
                type="data",
                symmetric=False,
                array=[nan if v is None or h is None else h - v for v, h in zip(y, hi)],
                arrayminus=[nan if v is None or lw is None else v - lw for v, lw in zip(y, lo)],
                thickness=1.2,
            ),
        )
    gv = {pr.grader_version for pr in rates.values()}
    update_layout(
        fig,
        template=TEMPLATE,
        barmode="group",
        yaxis=dict(title="pass rate (pass / (pass + fail))", range=[0, 1.1]),
        **title_layout(
            f"Pass rate by session length (grader {', '.join(sorted(gv))}; bars: 95% intervals, Wilson per stratum)"
        ),
        legend_title="agent",
        height=420,
    )
    return fig


def shares_figure(rates: Mapping[str, PassRates]) -> go.Figure:
    """Shares of tasks left out of the denominator, per agent."""
    fig = go.Figure()
    agents = list(rates)
    for v in EXCLUDED:
        fig.add_bar(name=v, x=agents, y=[rates[a].shares[v] for a in agents])
    update_layout(
        fig,
        template=TEMPLATE,
        colorway=PALETTE,
        barmode="stack",
        yaxis=dict(title="share of tasks", range=[0, 1]),
        title="Excluded from the denominator",
        height=360,
    )
    return fig


def bad_turn_figure(hists: Mapping[str, pl.DataFrame]) -> go.Figure:
    """Failed samples by the position of their breaking turn, one bar group per (agent, stratum)."""
    fig = go.Figure()
    for agent, h in hists.items():
        for g in sorted(set(h["group"].to_list())):
            sub = h.filter(h["group"] == g)
            fig.add_bar(
                name=f"{agent} · {g} turns",
                x=sub["position"].to_list(),
                y=sub["count"].to_list(),
                text=[str(c) for c in sub["count"].to_list()],
                textposition="outside",
            )
    n = sum(int(h["count"].sum()) for h in hists.values() if h.height)
    update_layout(
        fig,
        template=TEMPLATE,
        colorway=PALETTE,
        barmode="group",
        xaxis=dict(title="breaking turn (position among the graded turns)", dtick=1),
        yaxis=dict(title="failed samples"),
        title=f"Bad-turn histogram per stratum (n={n} failures)",
        legend_title="agent · stratum",
        height=400,
    )
    return fig
