"""What every memeval score figure shares: the template and palette, per-group means with their 95%
intervals, and the tier-size x axis.

``TEMPLATE``, ``PALETTE`` and ``mean_scores`` are public; the other names are the building blocks of
the ``plot_*`` modules (one copy of each, here).
"""

from __future__ import annotations

import polars as pl
from plotly.colors import qualitative

from ..errors import ArgumentError
from ..bench.axes import AXES
from .aggregate import question_set
from .intervals import DEFAULT_RESAMPLES, bootstrap_means

__all__ = ["TEMPLATE", "PALETTE", "mean_scores"]

#: 10 + 24 distinct colours: a figure never repeats one for up to 34 lines (17 axes fit twice).
PALETTE = qualitative.Plotly + [c for c in qualitative.Dark24 if c not in qualitative.Plotly]
TEMPLATE = "plotly_white"  #: the plotly template every memeval figure uses

_X_COLUMNS = {
    "turns": ("tier_turns", "turns in the haystack"),
    "tokens": ("tier_tokens", "tokens in the haystack (memeval's approx-v1 count)"),
}


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


def x_column(x: str) -> tuple[str, str]:
    """The tier-size column and axis title for ``x`` ("turns" or "tokens")."""
    if x not in _X_COLUMNS:
        raise ArgumentError(f"x must be 'turns' or 'tokens', not {x!r}")
    return _X_COLUMNS[x]


def question_rows(df: pl.DataFrame, core: bool = True) -> tuple[pl.DataFrame, str]:
    """The rows a curve compares (``aggregate.question_set``), and the phrase naming that set for a title."""
    kept = question_set(df, "core" if core else "all")
    if not core:
        return kept, "all questions per tier"
    return kept, f"core set: {kept['qid'].n_unique()} questions present in every tier"


def is_role(system: str, name: str) -> bool:
    """Whether ``system`` is the baseline ``name`` (bare, or with parameters: ``name:...``)."""
    return system == name or system.startswith(name + ":")


def tier_order(df: pl.DataFrame) -> pl.DataFrame:
    """One row per tier (tier, tier_index, tier_turns, tier_tokens), smallest first."""
    return df.select("tier", "tier_index", "tier_turns", "tier_tokens").unique("tier", keep="first").sort("tier_index")


def axis_order(df: pl.DataFrame) -> list[str]:
    """The axes present in ``df``: weight-table order, then any others sorted."""
    present = set(df["axis"].unique().to_list())
    return [a for a in AXES if a in present] + sorted(present - set(AXES))


def tier_xaxis(tiers: pl.DataFrame, xcol: str, xlabel: str) -> dict:
    """A log x axis with one tick per tier (``tier_order`` rows), labelled with its name and size."""
    return {
        "type": "log",
        "title": xlabel,
        "tickvals": tiers[xcol].to_list(),
        "ticktext": [f"{t}<br>{v:,}" for t, v in zip(tiers["tier"].to_list(), tiers[xcol].to_list())],
    }


def error_bars(m: pl.DataFrame) -> dict:
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


def hover_interval(m: pl.DataFrame) -> list[str]:
    """Each ``mean_scores`` row's 95% interval as hover text ("–" when there is none)."""
    return [("–" if lo is None else f"{lo:.3f}–{hi:.3f}") for lo, hi in zip(m["lo"].to_list(), m["hi"].to_list())]
