"""The latency histogram: latency minus round trip per question, one panel per system, with its
percentile lines and the latency target.

>>> percentile([3.0, 1.0, 2.0, 4.0], 50)
2.5
"""

from __future__ import annotations

import math
from typing import Any, Mapping

import plotly.graph_objects as go
import polars as pl
from plotly.subplots import make_subplots

from ..scoring.speed import quantile
from .plot_base import TEMPLATE, system_colour, title_layout, update_layout

__all__ = ["latency_histogram", "percentile", "RESOLUTION_MS", "write_path_figure"]

#: latency minus round trip is ``max(1, latency - network)`` (benchmark.md §5): nothing below 1 ms is
#: told apart, so values under it are counted as "< 1 ms" rather than drawn as a bar at 1 ms
RESOLUTION_MS = 1.0


def percentile(values: list[float], q: float) -> float:
    """Linear-interpolated percentile (``q`` in 0..100), as ``scoring.speed`` computes p50..p99."""
    return quantile(sorted(values), q / 100) if values else math.nan


def latency_histogram(
    df: pl.DataFrame, percentiles: tuple[int, ...] = (50, 95, 99), target_ms: float | None = 500.0
) -> go.Figure:
    """Histogram of latency-minus-RTT per system (one panel each, log x axis) with percentile lines
    and the ``target_ms`` line (benchmark.md §5; None draws none).

    Records whose speed is ``unmeasurable`` and error records are excluded and counted in the panel
    title (as ``aggregate.latency_table`` does); systems measured in process (no network in between)
    are flagged there too. A system with no measured latency at all (e.g. a concurrent run, whose
    latencies include queueing) gets no empty panel: the figure's title names it and why.
    """
    systems = df["system"].unique(maintain_order=True).to_list()
    titles, samples, skipped = [], [], []
    for s in systems:
        d = df.filter(pl.col("system") == s)
        n_errors = d.filter(pl.col("error").is_not_null()).height
        d = d.filter(pl.col("error").is_null())
        unmeasurable = d.filter(pl.col("speed_status") == "unmeasurable")
        kept = d.filter(
            pl.col("speed_status").is_in(["measured", "in_process"]) & pl.col("latency_minus_rtt_ms").is_not_null()
        )
        values = kept["latency_minus_rtt_ms"].to_list()
        if not values:
            reasons = sorted({r for r in unmeasurable["speed_reason"].to_list() if r})
            skipped.append(f"{s} ({'; '.join(reasons) or 'no measured latency'})")
            continue
        flag = " [in-process: service time, no network]" if (kept["speed_status"] == "in_process").any() else ""
        below = _below_resolution(kept)
        titles.append(
            f"{s}{flag} — n={len(values)}"
            + (f" ({below} below {RESOLUTION_MS:g} ms)" if below else "")
            + f", unmeasurable excluded: {unmeasurable.height}"
            + (f", errors excluded: {n_errors}" if n_errors else "")
        )
        samples.append((s, values, below))
    rows = max(1, len(samples))
    panel_px, head_px = 250, 150
    height = panel_px * rows + head_px
    fig = make_subplots(
        rows=rows,
        cols=1,
        subplot_titles=titles or ["no measured latency"],
        vertical_spacing=min(0.9 / rows, 110 / height) if rows > 1 else 0.0,
    )
    for i, (s, values, below) in enumerate(samples, start=1):
        # measured over HTTP, latency minus round trip is max(1 ms, ...) (benchmark.md §5): values under
        # that resolution are one count beside the histogram, never a bar at exactly 1 ms
        shown = sorted(values)[below:]
        logs = [math.log10(max(v, 0.01)) for v in shown]
        anchor = [math.log10(RESOLUTION_MS)] if below else []
        lo = min(logs + anchor) if logs or anchor else 0.0
        hi = max(logs + anchor + ([math.log10(target_ms)] if target_ms else []))
        if below:
            lo = min(lo, math.log10(RESOLUTION_MS) - 0.3)
            fig.add_trace(
                go.Bar(
                    x=[math.log10(RESOLUTION_MS) - 0.15],
                    y=[below],
                    width=[0.2],
                    name=f"{s}: < {RESOLUTION_MS:g} ms",
                    marker={"color": "#bbbbbb", "pattern": {"shape": "/"}},
                    text=[f"< {RESOLUTION_MS:g} ms: {below}"],
                    textposition="outside",
                    hovertemplate=f"{below} questions below the {RESOLUTION_MS:g} ms resolution<extra></extra>",
                    showlegend=False,
                ),
                row=i,
                col=1,
            )
        if logs:
            fig.add_trace(
                go.Histogram(
                    x=logs,
                    name=s,
                    xbins={"start": lo - 0.05, "end": hi + 0.05, "size": max((hi - lo) / 40, 0.01)},
                    customdata=shown,
                    hovertemplate="%{y} questions<extra></extra>",
                    marker={"color": system_colour(s)},
                    showlegend=False,
                ),
                row=i,
                col=1,
            )
        marks = [(f"p{q}", percentile(values, q), "#444") for q in percentiles]
        if target_ms:
            marks.append((f"target {target_ms:g}", float(target_ms), "#d62728"))
        for k, (label, v, colour) in enumerate(sorted(marks, key=lambda m: m[1])):
            # labels stacked at increasing heights so close percentiles never print on top of each other
            text = (
                f"{label}: < {RESOLUTION_MS:g} ms"
                if below and colour == "#444" and v <= RESOLUTION_MS
                else f"{label}: {v:.1f} ms"
                if v >= 1
                else f"{label}: {v:.3f} ms"
            )
            fig.add_vline(
                x=math.log10(max(v, 0.01)),
                line_dash="dash" if colour == "#444" else "solid",
                line_color=colour,
                row=i,
                col=1,
                annotation_text=text,
                annotation_position="top right",
                annotation_yshift=-14 * k,
                annotation_font={"size": 10, "color": colour},
            )
        ticks = [t for t in range(math.floor(lo) - 1, math.ceil(hi) + 2)]
        fig.update_xaxes(
            title_text="latency minus round trip (ms, log scale)",
            title_standoff=4,
            row=i,
            col=1,
            tickvals=ticks,
            ticktext=[f"{10.0**t:g}" for t in ticks],
            range=[lo - 0.2, hi + 0.3],
        )
    head = "Latency minus round trip per question (sequential loop: service time, not load)"
    if skipped:
        head += "<br><sup>not drawn, no measured latency: " + "; ".join(skipped) + "</sup>"
    update_layout(fig, **title_layout(head), height=height, template=TEMPLATE, bargap=0.05)
    fig.update_annotations(font_size=12, selector={"xref": "paper"})  # the panel titles
    return fig


def write_path_figure(manifests: Mapping[str, Mapping[str, Any]]) -> go.Figure:
    """Each run's write path per haystack (``manifest["write_path"]``, run.writepath): ingest time and,
    for a system that indexes asynchronously, time to searchable, one point per haystack (ms, log
    axis). Haystacks that never became searchable are counted in the trace's name, never drawn as 0.

    >>> m = {"write_path": {"indexing": "async", "haystacks": {"a": {"ingest_ms": 12.0, "searchable_ms": 340.0},
    ...      "b": {"ingest_ms": 9.0, "searchable_ms": None, "probes": 7}}}}
    >>> [t.name for t in write_path_figure({"zep": m}).data]
    ['zep: ingest (n=2)', 'zep: time to searchable (n=1, 1 never)']
    """
    fig = go.Figure()
    i = 0
    for label, m in manifests.items():
        wp = m.get("write_path")
        wp = wp if isinstance(wp, dict) else {}
        hays = wp.get("haystacks")
        if not isinstance(hays, dict):
            continue
        rows = [h for h in hays.values() if isinstance(h, dict)]
        series = [("ingest", [h.get("ingest_ms") for h in rows], 0)]
        if wp.get("indexing") == "async":
            never = sum(1 for h in rows if h.get("searchable_ms") is None and h.get("probes"))
            series.append(("time to searchable", [h.get("searchable_ms") for h in rows], never))
        for what, values, never in series:
            xs = [float(v) for v in values if isinstance(v, (int, float))]
            fig.add_trace(
                go.Box(
                    x=xs,
                    name=f"{label}: {what} (n={len(xs)}" + (f", {never} never)" if never else ")"),
                    boxpoints="all",
                    marker={"color": system_colour(label)},
                    showlegend=False,
                )
            )
        i += 1
    update_layout(fig, template=TEMPLATE, title="write path per haystack (ms)", xaxis_type="log")
    return fig


def _below_resolution(kept: pl.DataFrame) -> int:
    """How many measured (over HTTP) questions took less than the resolution once the round trip is
    subtracted (their stored figure is the clamp, :data:`RESOLUTION_MS`)."""
    if "latency_ms" not in kept.columns or "network_ms" not in kept.columns:
        return 0
    raw = pl.col("latency_ms") - pl.col("network_ms")
    return kept.filter((pl.col("speed_status") == "measured") & raw.is_not_null() & (raw < RESOLUTION_MS)).height
