"""The accuracy–latency and accuracy–cost frontier across systems and their operating points
(``bm25:k=5``, ``bm25:k=10``, ``context:tokens=8000`` ...), at one tier.

Each point is one system (its family, the name before ``:``, sets the colour), labelled with its n
(graded questions); the dashed line joins the points no other point beats on both axes.
"""

from __future__ import annotations

import plotly.graph_objects as go
import polars as pl
from plotly.colors import qualitative
from plotly.subplots import make_subplots

from .costs import operating_points

__all__ = ["frontier_plot"]

_PANELS = (
    ("p50_ms", "latency_frontier", "median latency minus round trip (ms)"),
    ("cost_per_q", "cost_frontier", "mean cost per question (USD)"),
)


def frontier_plot(df: pl.DataFrame, tier: str | None = None) -> go.Figure:
    """Accuracy (mean score over graded questions) against latency and against cost per question."""
    pts = operating_points(df, tier)
    tier_name = pts["tier"][0] if pts.height else tier
    fig = make_subplots(rows=1, cols=2, subplot_titles=[p[2] for p in _PANELS], horizontal_spacing=0.1)
    families = list(dict.fromkeys(pts["family"].to_list()))
    colour = {f: qualitative.Plotly[i % len(qualitative.Plotly)] for i, f in enumerate(families)}
    shown: set[str] = set()
    for col, (x, on, label) in enumerate(_PANELS, start=1):
        known = pts.filter(pl.col(x).is_not_null() & pl.col("accuracy").is_not_null())
        for fam in families:
            d = known.filter(pl.col("family") == fam)
            if not d.height:
                continue
            shown.add(fam)
            fig.add_trace(
                go.Scatter(
                    x=d[x].to_list(),
                    y=d["accuracy"].to_list(),
                    mode="markers+text",
                    text=[f"{s} (n={n})" for s, n in zip(d["system"], d["n"])],
                    textposition="top center",
                    marker={"size": 11, "color": colour[fam]},
                    name=fam,
                    legendgroup=fam,
                    showlegend=fam not in shown,
                    customdata=list(zip(d["n"], d["prompt_tokens"], d["completion_tokens"])),
                    hovertemplate="%{text}<br>accuracy %{y:.3f}<br>"
                    + label
                    + " %{x}<br>tokens/q in %{customdata[1]:.0f} out %{customdata[2]:.0f}<extra></extra>",
                ),
                row=1,
                col=col,
            )
        front = known.filter(pl.col(on)).sort(x)
        if front.height > 1:
            fig.add_trace(
                go.Scatter(
                    x=front[x].to_list(),
                    y=front["accuracy"].to_list(),
                    mode="lines",
                    line={"dash": "dash", "color": "grey"},
                    name="frontier",
                    legendgroup="frontier",
                    showlegend=col == 1,
                    hoverinfo="skip",
                ),
                row=1,
                col=col,
            )
        if not known.height:
            why = "no cost recorded (run with --prices, models that report usage)" if x == "cost_per_q" else "no data"
            fig.add_annotation(text=why, xref=f"x{col} domain", yref=f"y{col} domain", x=0.5, y=0.5, showarrow=False)
        fig.update_xaxes(title_text=label, row=1, col=col)
        fig.update_yaxes(
            title_text="accuracy (mean score, graded)",
            range=[-0.05, 1.15],
            tickvals=[0, 0.2, 0.4, 0.6, 0.8, 1],
            row=1,
            col=col,
        )
    fig.update_layout(
        title=f"Accuracy against latency and cost, tier {tier_name} (one point per system; n = graded questions)",
        height=460,
        template="plotly_white",
    )
    return fig
