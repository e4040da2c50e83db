"""Plotly figures over run records (one row per record, columns of ``aggregate.load_records``).

Every function is pure: a polars DataFrame in, a ``plotly.graph_objects.Figure`` out. Scores that
are null (ungraded, or an error) are left out of means and counted in the hover text, never as 0.

>>> from memeval.workbench import load_runs
>>> fig = degradation_curve(load_runs([tiny_run]))
>>> type(fig).__name__, fig.layout.yaxis.title.text is not None
('Figure', True)
"""

from __future__ import annotations

import math

import plotly.graph_objects as go
import polars as pl
from plotly.colors import qualitative
from plotly.subplots import make_subplots

from ..bench.axes import AXES
from ..scoring.speed import quantile
from .aggregate import CEILING as CEILING_SYSTEM
from .aggregate import ceiling_gaps
from .aggregate import FLOOR as FLOOR_SYSTEM
from .aggregate import question_set
from .frontier import frontier_plot
from .intervals import DEFAULT_RESAMPLES, bootstrap_means

__all__ = [
    "FLOOR_SYSTEM",
    "CEILING_SYSTEM",
    "question_set",
    "mean_scores",
    "percentile",
    "degradation_curve",
    "axis_tier_heatmap",
    "latency_histogram",
    "failure_split",
    "failure_class",
    "FAILURE_CLASSES",
    "retrieval_curve",
    "seed_spread_curve",
    "WIDE_INTERVAL",
    "TEMPLATE",
    "PALETTE",
    "frontier_plot",
]

_X_COLUMNS = {
    "turns": ("tier_turns", "turns in the haystack"),
    "tokens": ("tier_tokens", "tokens in the haystack (memeval's approx-v1 count)"),
}
#: 10 + 24 distinct colours: a figure never repeats one for up to 34 lines (17 axes fit twice).
_PALETTE = qualitative.Plotly + [c for c in qualitative.Dark24 if c not in qualitative.Plotly]
PALETTE = _PALETTE  #: the colours every memeval figure cycles through
TEMPLATE = "plotly_white"  #: the plotly template every memeval figure uses
#: A heatmap cell whose 95% interval is wider than this is marked "±" (too few questions to read it).
WIDE_INTERVAL = 0.3


def _question_set(df: pl.DataFrame, core: bool = True) -> tuple[pl.DataFrame, str]:
    """The rows a curve compares (``aggregate.question_set``), and the phrase naming that set for a title."""
    kept = question_set(df, "core" if core else "all")
    if not core:
        return kept, "all questions per tier"
    return kept, f"core set: {kept['qid'].n_unique()} questions present in every tier"


def mean_scores(
    df: pl.DataFrame, by: list[str], weighted: bool = False, value: str = "score", n_resamples: int = DEFAULT_RESAMPLES
) -> pl.DataFrame:
    """Mean of ``value`` per group: columns ``by`` + mean, lo, hi (its 95% bootstrap interval, whole
    questions or haystacks resampled), n (graded), n_ungraded (null value: ungraded, error, excluded)."""
    graded = pl.col(value).is_not_null()
    counts = df.group_by(by).agg(graded.sum().alias("n"), (~graded).sum().alias("n_ungraded"))
    ci = bootstrap_means(df, by, value=value, weight="weight" if weighted else None, n_resamples=n_resamples)
    return (
        counts.join(ci.select(*by, "mean", "lo", "hi"), on=by, how="left")
        .select(*by, "mean", "lo", "hi", "n", "n_ungraded")
        .sort(by)
    )


def _error_bars(m: pl.DataFrame) -> dict:
    """plotly ``error_y`` for a ``mean_scores`` frame: the 95% interval around each mean."""
    mean, lo, hi = (m[c].fill_null(float("nan")).to_list() for c in ("mean", "lo", "hi"))
    return {
        "type": "data",
        "symmetric": False,
        "thickness": 1.2,
        "width": 4,
        "array": [h - v for v, h in zip(mean, hi)],
        "arrayminus": [v - lo_ for v, lo_ in zip(mean, lo)],
    }


def _hover_interval(m: pl.DataFrame) -> list[str]:
    return [("–" if lo is None else f"{lo:.3f}–{hi:.3f}") for lo, hi in zip(m["lo"].to_list(), m["hi"].to_list())]


def percentile(values: list[float], q: float) -> float:
    """Linear-interpolated percentile (``q`` in 0..100), as ``scoring.speed`` computes p50..p99."""
    return quantile(sorted(values), q / 100) if values else math.nan


def _role(system: str, name: str) -> bool:
    return system == name or system.startswith(name + ":")


def _tier_order(df: pl.DataFrame) -> pl.DataFrame:
    return df.select("tier", "tier_index", "tier_turns", "tier_tokens").unique("tier", keep="first").sort("tier_index")


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
    score up to 1. With ``by="axis"`` the lines are the axes of one system (``system``, or the only
    non-baseline system in ``df``) and bands are drawn only for systems named explicitly. The title names the question set (``core``) and the mean used.
    """
    if by not in ("system", "axis"):
        raise ValueError(f"by must be 'system' or 'axis', not {by!r}")
    if x not in _X_COLUMNS:
        raise ValueError(f"x must be 'turns' or 'tokens', not {x!r}")
    xcol, xlabel = _X_COLUMNS[x]
    rows, set_label = _question_set(df, core)
    systems = rows["system"].unique(maintain_order=True).to_list()
    floor_name = _pick(systems, floor, FLOOR_SYSTEM)
    ceiling_name = _pick(systems, ceiling, CEILING_SYSTEM)
    fig = go.Figure()
    for name, kind, asked in ((floor_name, "floor", floor), (ceiling_name, "ceiling", ceiling)):
        # per-axis lines against an all-axes band would mislead: bands there only when asked for
        if name is not None and (by == "system" or isinstance(asked, str)):
            label = name
            gaps: list[str] = []
            if kind == "ceiling":  # name what the ceiling cannot reach beside its line
                gaps = ceiling_gaps(rows, name)["axis"].to_list()
                label = f"{name}, cannot reach {', '.join(gaps)}" if gaps else name
            band = mean_scores(
                rows.filter(pl.col("system") == name), ["tier_index", "tier", xcol], weighted, n_resamples=n_resamples
            )
            _add_band(fig, band, xcol, label, kind)
            _explain_band(fig, band, xcol, kind, gaps)
    lines = [s for s in systems if s not in (floor_name, ceiling_name)]
    if by == "axis":
        if system is None:
            if len(lines) != 1:
                raise ValueError(f"by='axis' needs one system; pass system= (have {lines})")
            system = lines[0]
        rows = rows.filter(pl.col("system") == system)
        present = set(rows["axis"].unique().to_list())
        groups = [a for a in AXES if a in present] + sorted(present - set(AXES))
        column = "axis"
    else:
        groups, column = lines, "system"
    for i, g in enumerate(groups):
        m = mean_scores(
            rows.filter(pl.col(column) == g), ["tier_index", "tier", xcol], weighted, n_resamples=n_resamples
        )
        fig.add_trace(
            go.Scatter(
                x=m[xcol].to_list(),
                y=m["mean"].to_list(),
                mode="lines+markers",
                name=g,
                line={"color": _PALETTE[i % len(_PALETTE)]},
                error_y=_error_bars(m),
                customdata=list(
                    zip(m["tier"].to_list(), m["n"].to_list(), m["n_ungraded"].to_list(), _hover_interval(m))
                ),
                hovertemplate=f"{g}<br>tier %{{customdata[0]}}: %{{y:.3f}} (95% CI %{{customdata[3]}})<br>"
                "n=%{customdata[1]}, ungraded/error=%{customdata[2]}<extra></extra>",
            )
        )
    mean_name = "weighted mean score" if weighted else "mean score (unweighted)"
    who = f" — {system}, by axis" if by == "axis" else ""
    tiers = _tier_order(rows)
    fig.update_layout(
        title=f"Degradation{who}: {mean_name} per tier ({set_label}; bars: 95% bootstrap intervals)",
        xaxis={
            "type": "log",
            "title": xlabel,
            "tickvals": tiers[xcol].to_list(),
            "ticktext": [f"{t}<br>{v:,}" for t, v in zip(tiers["tier"].to_list(), tiers[xcol].to_list())],
        },
        yaxis={"title": mean_name, "range": [-0.02, 1.02]},
        legend={"title": by},
        template="plotly_white",
    )
    return fig


def _pick(systems: list[str], choice, default: str) -> str | None:
    if choice is False:
        return None
    if isinstance(choice, str):
        if choice not in systems:
            raise ValueError(f"{choice!r} is not a system in these records ({systems})")
        return choice
    return next((s for s in systems if _role(s, default)), None)


def _add_band(fig: go.Figure, m: pl.DataFrame, xcol: str, name: str, kind: str) -> None:
    xs, ys = m[xcol].to_list(), m["mean"].to_list()
    edge = [0.0] * len(xs) if kind == "floor" else [1.0] * len(xs)
    color = "rgba(214,39,40,0.15)" if kind == "floor" else "rgba(44,160,44,0.15)"
    line = "rgba(214,39,40,0.8)" if kind == "floor" else "rgba(44,160,44,0.8)"
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
            line={"color": line, "dash": "dash"},
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


def axis_tier_heatmap(df: pl.DataFrame, n_resamples: int = DEFAULT_RESAMPLES) -> go.Figure:
    """Mean score per axis (rows, in weight-table order) × tier (columns), one panel per system.

    Uses all questions of each tier (axes whose evidence lives only in larger tiers show there);
    each cell's text gives the mean and the number of graded questions.
    """
    systems = df["system"].unique(maintain_order=True).to_list()
    present = set(df["axis"].unique().to_list())
    axes = [a for a in AXES if a in present] + sorted(present - set(AXES))
    tiers = _tier_order(df)["tier"].to_list()
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
        template="plotly_white",
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
        titles.append(
            f"{s}{flag} — n={len(values)}, unmeasurable excluded: {unmeasurable.height}"
            + (f", errors excluded: {n_errors}" if n_errors else "")
        )
        samples.append((s, values))
    rows = max(1, len(samples))
    fig = make_subplots(
        rows=rows, cols=1, subplot_titles=titles or ["no measured latency"], vertical_spacing=0.12 / rows
    )
    for i, (s, values) in enumerate(samples, start=1):
        # drawn on log10(ms) with ms tick labels: one slow outlier no longer squeezes every sample into a bin
        logs = [math.log10(max(v, 0.01)) for v in values]
        lo, hi = min(logs), max(logs + ([math.log10(target_ms)] if target_ms else []))
        fig.add_trace(
            go.Histogram(
                x=logs,
                name=s,
                xbins={"start": lo - 0.05, "end": hi + 0.05, "size": max((hi - lo) / 40, 0.01)},
                customdata=values,
                hovertemplate="%{y} questions<extra></extra>",
                marker={"color": _PALETTE[(i - 1) % len(_PALETTE)]},
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
            fig.add_vline(
                x=math.log10(max(v, 0.01)),
                line_dash="dash" if colour == "#444" else "solid",
                line_color=colour,
                row=i,
                col=1,
                annotation_text=f"{label}: {v:.1f} ms",
                annotation_position="top right",
                annotation_yshift=-14 * k,
                annotation_font={"size": 10, "color": colour},
            )
        ticks = [t for t in range(math.floor(lo) - 1, math.ceil(hi) + 2)]
        fig.update_xaxes(
            title_text="latency minus round trip (ms, log scale)",
            row=i,
            col=1,
            tickvals=ticks,
            ticktext=[f"{10.0**t:g}" for t in ticks],
            range=[lo - 0.2, hi + 0.3],
        )
    head = "Latency minus round trip per question (sequential loop: service time, not load)"
    if skipped:
        head += "<br><sup>not drawn, no measured latency: " + "; ".join(skipped) + "</sup>"
    fig.update_layout(title=head, height=260 * rows + 100, template="plotly_white", bargap=0.05)
    return fig


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
        raise ValueError(f"by must be 'tier' or 'axis', not {by!r}")
    systems = df["system"].unique(maintain_order=True).to_list()
    if by == "tier":
        order = _tier_order(df)["tier"].to_list()
    else:
        present = set(df["axis"].unique().to_list())
        order = [a for a in AXES if a in present] + sorted(present - set(AXES))
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
    fig.update_layout(
        barmode="stack",
        template="plotly_white",
        yaxis={"tickformat": ".0%", "title": "share"},
        title=f"Outcome per {by}: wrong with evidence returned vs evidence not returned vs correct",
    )
    return fig


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
        raise ValueError(f"{metric!r} is not a retrieval metric column")
    if x not in _X_COLUMNS:
        raise ValueError(f"x must be 'turns' or 'tokens', not {x!r}")
    xcol, xlabel = _X_COLUMNS[x]
    rows, set_label = _question_set(df.filter(pl.col("error").is_null()), core)
    fig = go.Figure()
    for i, name in enumerate(rows["system"].unique(maintain_order=True).to_list()):
        m = mean_scores(
            rows.filter(pl.col("system") == name), ["tier_index", "tier", xcol], value=metric, n_resamples=n_resamples
        )
        fig.add_trace(
            go.Scatter(
                x=m[xcol].to_list(),
                y=m["mean"].to_list(),
                mode="lines+markers",
                name=name,
                line={"color": _PALETTE[i % len(_PALETTE)]},
                error_y=_error_bars(m),
                customdata=list(
                    zip(m["tier"].to_list(), m["n"].to_list(), m["n_ungraded"].to_list(), _hover_interval(m))
                ),
                hovertemplate=f"{name}<br>tier %{{customdata[0]}}: %{{y:.3f}} (95% CI %{{customdata[3]}})<br>"
                "n=%{customdata[1]} with evidence, excluded (no evidence)=%{customdata[2]}<extra></extra>",
            )
        )
    tiers = _tier_order(rows)
    fig.update_layout(
        title=f"Evidence retrieval: {metric} per tier ({set_label}; bars: 95% bootstrap intervals)",
        xaxis={
            "type": "log",
            "title": xlabel,
            "tickvals": tiers[xcol].to_list(),
            "ticktext": [f"{t}<br>{v:,}" for t, v in zip(tiers["tier"].to_list(), tiers[xcol].to_list())],
        },
        yaxis={"title": metric, "range": [-0.02, 1.02]},
        legend={"title": "system"},
        template="plotly_white",
    )
    return fig


def seed_spread_curve(
    frames, x: str = "turns", weighted: bool = False, core: bool = True, n_resamples: int = DEFAULT_RESAMPLES
) -> go.Figure:
    """One generated bench per seed (``frames``: ``{seed: records}``), the same systems: per system, the
    mean of the per-seed means per tier with the between-bench spread (min-max over seeds) as a band,
    and each seed's own point with its within-bench 95% interval. The floor and ceiling systems are left
    out (they are the same on every seed by construction)."""
    if x not in _X_COLUMNS:
        raise ValueError(f"x must be 'turns' or 'tokens', not {x!r}")
    xcol, xlabel = _X_COLUMNS[x]
    fig = go.Figure()
    per_seed = []
    for seed, df in frames.items():
        rows, _ = _question_set(df, core)
        m = mean_scores(rows, ["system", "tier_index", "tier"], weighted, n_resamples=n_resamples)
        sizes = _tier_order(rows).select("tier_index", xcol)
        per_seed.append(m.join(sizes, on="tier_index").with_columns(pl.lit(seed).alias("seed")))
    if not per_seed:
        raise ValueError("no seeds given")
    allm = pl.concat(per_seed)
    systems = [
        s
        for s in allm["system"].unique(maintain_order=True).to_list()
        if not (_role(s, FLOOR_SYSTEM) or _role(s, CEILING_SYSTEM))
    ]
    for i, name in enumerate(systems):
        colour = _PALETTE[i % len(_PALETTE)]
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
                    error_y=_error_bars(one),
                    name=f"{name}, seed {seed} (95% CI)",
                    legendgroup=name,
                    showlegend=False,
                    customdata=list(zip(one["tier"].to_list(), one["n"].to_list(), _hover_interval(one))),
                    hovertemplate=f"{name}, seed {seed}<br>tier %{{customdata[0]}}: %{{y:.3f}} "
                    "(95% CI %{customdata[2]}, n=%{customdata[1]})<extra></extra>",
                )
            )
    tiers = _tier_order(pl.concat([f for f in frames.values()]))
    mean_name = "weighted mean score" if weighted else "mean score (unweighted)"
    fig.update_layout(
        title=f"Degradation across {len(frames)} generated benches (seeds {', '.join(map(str, frames))}): "
        f"band = between-seed spread, bars = within-bench 95% intervals",
        xaxis={
            "type": "log",
            "title": xlabel,
            "tickvals": tiers[xcol].to_list(),
            "ticktext": [f"{t}<br>{v:,}" for t, v in zip(tiers["tier"].to_list(), tiers[xcol].to_list())],
        },
        yaxis={"title": mean_name, "range": [-0.02, 1.02]},
        template="plotly_white",
    )
    return fig
