"""Tokens and cost per question beside accuracy and latency, per system and tier.

Cost comes from the records' ``cost_usd`` (the run's own price table), or is recomputed from each
record's ``usage`` with a price table given here (``memeval summary --prices``). A question whose cost
is unknown (a model missing from the table, an endpoint without token counts) is left out of the mean
and counted in ``unpriced``: never taken as free.
"""

from __future__ import annotations

import polars as pl

from ..run.cost import Prices

__all__ = ["with_prices", "cost_table", "operating_points"]


def with_prices(df: pl.DataFrame, prices: Prices | None) -> pl.DataFrame:
    """``df`` with ``cost_usd`` recomputed from ``usage`` by ``prices`` (unchanged when None)."""
    if prices is None or not df.height:
        return df
    costs = [prices.cost(u) if u is not None else None for u in df["usage"].to_list()]
    return df.with_columns(pl.Series("cost_usd", costs, dtype=pl.Float64))


_SYSTEM_USAGE = ("system_calls", "system_prompt_tokens", "system_completion_tokens")


def cost_table(df: pl.DataFrame, by: tuple[str, ...] = ("system", "tier_index", "tier")) -> pl.DataFrame:
    """Per group: accuracy (mean score over graded questions, n graded), median latency minus round trip,
    mean prompt and completion tokens per question (over questions whose endpoints reported them),
    mean cost per question in USD (``priced`` questions; ``unpriced`` left out), the same per thousand
    questions (``usd_per_1k_q``, readable at three decimals) and the total; ``system_calls`` and
    ``system_tokens``: a system's own model calls per question where it counts them (mem0), which the
    cost does not price.

    >>> d = pl.DataFrame({"system": ["a", "a"], "tier_index": [0, 0], "tier": ["t", "t"], "score": [1.0, 0.0],
    ...     "error": [None, None], "latency_minus_rtt_ms": [2.0, 4.0], "prompt_tokens": [100, 300],
    ...     "completion_tokens": [10, 30], "cost_usd": [0.001, None]})
    >>> cost_table(d).select("accuracy", "n", "p50_ms", "prompt_tokens", "cost_per_q", "priced", "unpriced").row(0)
    (0.5, 2, 3.0, 200.0, 0.001, 1, 1)
    """
    ok = pl.col("error").is_null()
    graded = pl.col("score").is_not_null()
    absent = [c for c in _SYSTEM_USAGE if c not in df.columns]  # frames built by hand, older records
    if absent:
        df = df.with_columns(pl.lit(None, pl.Int64).alias(c) for c in absent)
    return (
        df.group_by(*by)
        .agg(
            pl.col("score").mean().alias("accuracy"),
            graded.sum().alias("n"),
            pl.col("latency_minus_rtt_ms").filter(ok).median().alias("p50_ms"),
            pl.col("prompt_tokens").filter(ok).mean().alias("prompt_tokens"),
            pl.col("completion_tokens").filter(ok).mean().alias("completion_tokens"),
            pl.col("cost_usd").filter(ok).mean().alias("cost_per_q"),
            pl.col("cost_usd").filter(ok).is_not_null().sum().alias("priced"),
            (ok & pl.col("cost_usd").is_null()).sum().alias("unpriced"),
            pl.col("cost_usd").sum().alias("cost_total"),
            # a system's own model calls it counted itself (mem0): beside the cost, not priced in it
            pl.col("system_calls").filter(ok).mean().alias("system_calls"),
            (pl.col("system_prompt_tokens") + pl.col("system_completion_tokens"))
            .filter(ok)
            .mean()
            .alias("system_tokens"),
        )
        .with_columns((pl.col("cost_per_q") * 1000).alias("usd_per_1k_q"))
        .sort(*by)
    )


def operating_points(df: pl.DataFrame, tier: str | None = None) -> pl.DataFrame:
    """One row per system at one tier (default: the largest every system ran): :func:`cost_table`'s
    columns, the system's family (its name before ``:``) and whether it is on the accuracy–latency and
    accuracy–cost frontiers (no other point is at least as accurate and cheaper or faster)."""
    if tier is None:
        common = df.group_by("tier", "tier_index").agg(pl.col("system").n_unique().alias("k"))
        common = common.filter(pl.col("k") == df["system"].n_unique()).sort("tier_index")
        tier = common["tier"][-1] if common.height else df.sort("tier_index")["tier"][-1]
    t = cost_table(df.filter(pl.col("tier") == tier))
    t = t.with_columns(pl.col("system").str.split(":").list.first().alias("family"))
    return t.with_columns(
        pl.Series("latency_frontier", _frontier(t["p50_ms"].to_list(), t["accuracy"].to_list())),
        pl.Series("cost_frontier", _frontier(t["cost_per_q"].to_list(), t["accuracy"].to_list())),
    )


def _frontier(xs: list, ys: list) -> list[bool]:
    """Pareto points: none other has x <= and y >= with one strict (x lower is better, y higher).

    >>> _frontier([1, 2, 3, 2], [0.5, 0.7, 0.6, 0.4])
    [True, True, False, False]
    """
    out = []
    for i, (x, y) in enumerate(zip(xs, ys)):
        if x is None or y is None:
            out.append(False)
            continue
        out.append(
            not any(
                j != i and x2 is not None and y2 is not None and x2 <= x and y2 >= y and (x2 < x or y2 > y)
                for j, (x2, y2) in enumerate(zip(xs, ys))
            )
        )
    return out
