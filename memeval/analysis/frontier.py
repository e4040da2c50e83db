"""The accuracy–latency and accuracy–cost frontier across systems and their operating points
(``bm25:k=5``, ``bm25:k=10``, ``context:tokens=8000`` ...), at one tier.

Each point is one system in its own colour (``plot_base.system_colour``, as in every figure) and its
family's marker (the name before ``:``), named in the legend with its n (graded questions) rather than
labelled on the plot, where labels would overlap; the dashed line joins the points no other point
beats on both axes. The floor and ceiling are dashed horizontal lines at their accuracy, as in every
figure. Latency and cost are on log axes; a panel with nothing to draw is left out and said so.
"""

from __future__ import annotations

import plotly.graph_objects as go
import polars as pl
from plotly.subplots import make_subplots

from .costs import operating_points
from .plot_base import TEMPLATE, bound_kind, bound_line, natural_key, system_colour, title_layout, update_layout

__all__ = ["frontier_plot"]

_PANELS = (
    ("p50_ms", "latency_frontier", "median latency minus round trip (ms, log scale)"),
    ("cost_per_q", "cost_frontier", "mean cost per question (USD, log scale)"),
)
_SYMBOLS = ("circle", "square", "diamond", "triangle-up", "cross", "x", "star", "hexagon", "pentagon")
_MISSING = {
    "p50_ms": "no measured latency",
    "cost_per_q": "no cost recorded (run with --prices, models that report usage)",
}


def frontier_plot(df: pl.DataFrame, tier: str | None = None) -> go.Figure:
    """Accuracy (mean score over graded questions) against latency and against cost per question."""
    pts = operating_points(df, tier)
    tier_name = pts["tier"][0] if pts.height else tier
    bounds = pts.filter(pl.col("system").map_elements(bound_kind, return_dtype=pl.Utf8).is_not_null())
    pts = pts.filter(~pl.col("system").is_in(bounds["system"].to_list()))
    usable = {
        x: pts.filter(pl.col(x).is_not_null() & (pl.col(x) > 0) & pl.col("accuracy").is_not_null())
        for x, _, _ in _PANELS
    }
    panels = [p for p in _PANELS if usable[p[0]].height] or [_PANELS[0]]
    left_out = [_MISSING[x] for x, _, _ in _PANELS if not usable[x].height]
    fig = make_subplots(rows=1, cols=len(panels), subplot_titles=[p[2] for p in panels], horizontal_spacing=0.1)
    families = sorted(dict.fromkeys(pts["family"].to_list()), key=natural_key)
    symbol = {f: _SYMBOLS[i % len(_SYMBOLS)] for i, f in enumerate(families)}
    shown: set[str] = set()
    for col, (x, on, label) in enumerate(panels, start=1):
        known = usable[x]
        for row in sorted(known.to_dicts(), key=lambda r: natural_key(r["system"])):
            name = f"{row['system']} (n={row['n']})"
            fig.add_trace(
                go.Scatter(
                    x=[row[x]],
                    y=[row["accuracy"]],
                    mode="markers",
                    marker={"size": 12, "color": system_colour(row["system"]), "symbol": symbol[row["family"]]},
                    name=name,
                    legendgroup=row["system"],
                    showlegend=name not in shown,
                    customdata=[[row["n"], row["prompt_tokens"], row["completion_tokens"]]],
                    hovertemplate=f"{name}<br>accuracy %{{y:.3f}}<br>{label} %{{x}}<br>"
                    "tokens/q in %{customdata[1]:.0f} out %{customdata[2]:.0f}<extra></extra>",
                ),
                row=1,
                col=col,
            )
            shown.add(name)
        front = known.filter(pl.col(on)).sort(x)
        if front.height > 1:
            fig.add_trace(
                go.Scatter(
                    x=front[x].to_list(),
                    y=front["accuracy"].to_list(),
                    mode="lines",
                    line={"dash": "dot", "color": "grey"},
                    name="frontier",
                    legendgroup="frontier",
                    showlegend="frontier" not in shown,
                    hoverinfo="skip",
                ),
                row=1,
                col=col,
            )
            shown.add("frontier")
        for b in bounds.filter(pl.col("accuracy").is_not_null()).to_dicts():
            kind = bound_kind(b["system"]) or "floor"
            fig.add_hline(
                y=b["accuracy"],
                line=bound_line(kind),
                row=1,
                col=col,
                annotation_text=f"{kind}: {b['system']} {b['accuracy']:.3f} (n={b['n']})",
                annotation_position="bottom right" if kind == "ceiling" else "top right",
                annotation_font={"size": 10, "color": bound_line(kind)["color"]},
            )
        fig.update_xaxes(title_text=label, type="log", row=1, col=col)
        fig.update_yaxes(
            title_text="accuracy (mean score, graded)" if col == 1 else None,
            range=[-0.05, 1.1],
            tickvals=[0, 0.2, 0.4, 0.6, 0.8, 1],
            row=1,
            col=col,
        )
    head = f"Accuracy against latency and cost, tier {tier_name} (one point per system; n = graded questions)"
    if left_out:
        head += "<br><sup>not drawn: " + "; ".join(left_out) + "</sup>"
    update_layout(fig, **title_layout(head), height=480, template=TEMPLATE, legend={"title": "system"})
    return fig
