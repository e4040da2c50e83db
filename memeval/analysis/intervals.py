"""Uncertainty for every mean memeval shows: percentile-bootstrap intervals that resample whole
questions (or whole haystacks, where questions share one conversation), the paired difference of two
runs, and McNemar's exact test.

A *cluster* is what is resampled: the haystack where the records name one (LoCoMo's conversations,
LongMemEval's per-question haystacks), else the question id, so every epoch of a question moves
together. Weighted means use the same resampling: a cluster contributes ``sum(score * weight)`` and
``sum(weight)``, and a resample's mean is the ratio of their totals.

Each group draws from its own generator, seeded from ``seed`` and the group's key, so an interval
does not change when other groups are added or removed.

>>> import polars as pl
>>> df = pl.DataFrame({"system": ["a"] * 4, "qid": ["q1", "q2", "q3", "q4"], "score": [1.0, 1.0, 1.0, 1.0]})
>>> bootstrap_means(df, ["system"]).select("mean", "lo", "hi", "n").row(0)
(1.0, 1.0, 1.0, 4)
>>> mcnemar_exact(1, 5)  # 2 * P(X <= 1), X ~ Binomial(6, 1/2) = 2 * 7/64
0.21875
"""

from __future__ import annotations

import math
import zlib
from typing import Any

import numpy as np
import polars as pl

__all__ = ["DEFAULT_RESAMPLES", "bootstrap_means", "cluster_column", "mcnemar_exact", "paired_differences"]

#: Resamples per interval by default: enough for stable 95% percentile bounds (±0.005 on a mean of
#: ~500 questions) while keeping ``make report`` within its budget.
DEFAULT_RESAMPLES = 1000
_CHUNK = 256  # resamples drawn at a time, to bound memory on large groups


def cluster_column(df: pl.DataFrame) -> pl.Expr:
    """What a bootstrap resamples: the record's haystack where it names one, else its question id."""
    if "haystack" in df.columns:
        return pl.coalesce(pl.col("haystack").cast(pl.Utf8), pl.col("qid"))
    return pl.col("qid")


def _group_seed(seed: int, key: tuple) -> int:
    return (seed * 1_000_003 + zlib.crc32(repr(key).encode("utf-8"))) % 2**32


def _percentile_interval(
    num: np.ndarray, den: np.ndarray, n_resamples: int, level: float, seed: int
) -> tuple[float, float]:
    """Percentile interval of ``sum(num[c]) / sum(den[c])`` over clusters ``c`` drawn with replacement."""
    if den.size and (den > 0).all() and ((not num.any() and not np.signbit(num).any()) or np.array_equal(num, den)):
        # every cluster's ratio is 0 (or every one's is 1), so is every resample's, exactly: 0.0 / d is 0.0
        # (a -0.0 in num would give -0.0: drawn as before) and d / d is 1.0 in floating point, and the
        # quantiles of a constant are that constant. The draws would change nothing (each group has its
        # own generator; no other group reads this one's).
        v = 0.0 if not num.any() else 1.0
        return v, v
    rng = np.random.default_rng(seed)
    k = len(num)
    stats = []
    for start in range(0, n_resamples, _CHUNK):
        size = min(_CHUNK, n_resamples - start)
        counts = rng.multinomial(k, np.full(k, 1.0 / k), size=size)
        d = counts @ den
        with np.errstate(invalid="ignore", divide="ignore"):
            stats.append(np.where(d > 0, (counts @ num) / np.where(d > 0, d, 1), np.nan))
    values = np.concatenate(stats)
    values = values[~np.isnan(values)]
    if values.size == 0:
        return math.nan, math.nan
    tail = (1.0 - level) / 2
    lo, hi = np.quantile(values, [tail, 1.0 - tail])
    return float(lo), float(hi)


def bootstrap_means(
    df: pl.DataFrame,
    by: list[str],
    *,
    value: str = "score",
    weight: str | None = None,
    n_resamples: int = DEFAULT_RESAMPLES,
    level: float = 0.95,
    seed: int = 0,
    within: list[str] | None = None,
) -> pl.DataFrame:
    """Per group of ``by``: the mean of ``value`` (weighted by ``weight`` if given) over non-null rows,
    its ``level`` percentile-bootstrap interval ``lo``/``hi``, ``n`` rows and ``clusters`` resampled.

    Null values (ungraded questions, errors) are left out, never read as 0. A group with one cluster
    has ``lo == hi == mean``: one question cannot show its own spread.

    ``within``: columns that split the rows into parts first; the result (columns ``within`` + ``by``
    + ...) is exactly that of one call per part, concatenated: a group's generator is seeded from its
    ``by`` key only, as if the part were the whole frame. One call instead of one per system or axis.

    >>> import polars as pl
    >>> df = pl.DataFrame({"system": ["a", "a", "b", "b"] * 3, "tier": ["t"] * 12, "qid": [f"q{i}" for i in range(12)],
    ...                    "score": [1.0, 0.0, 1.0, 1.0, 0.0, 1.0] * 2})
    >>> parts = pl.concat([bootstrap_means(df.filter(pl.col("system") == s), ["tier"]).select(pl.lit(s).alias("system"), pl.all())
    ...                    for s in ("a", "b")])
    >>> bootstrap_means(df, ["tier"], within=["system"]).equals(parts)
    True
    """
    within = [c for c in (within or []) if c not in by]
    keys = [*within, *by]
    keep = df.filter(pl.col(value).is_not_null())
    w = pl.col(weight).cast(pl.Float64) if weight else pl.lit(1.0)
    per_cluster = (
        keep.with_columns(_cluster=cluster_column(keep), _w=w)
        .group_by([*keys, "_cluster"])
        .agg(
            (pl.col(value).cast(pl.Float64) * pl.col("_w")).sum().alias("_num"),
            pl.col("_w").sum().alias("_den"),
            pl.len().alias("_n"),
        )
        .sort([*keys, "_cluster"])
    )  # a fixed cluster order: the same draws give the same interval
    # each group's clusters are one slice of the sorted frame: its bounds, then numpy on the slices
    groups = (
        per_cluster.with_row_index("_row")
        .group_by(keys, maintain_order=True)
        .agg(pl.col("_row").first().alias("_start"), pl.len().alias("_len"))
    )
    nums, dens = per_cluster["_num"].to_numpy(), per_cluster["_den"].to_numpy()
    ns = per_cluster["_n"].to_numpy()
    rows = []
    for key, start, size in zip(
        groups.select(keys).rows(), groups["_start"].to_list(), groups["_len"].to_list(), strict=True
    ):
        num, den = nums[start : start + size], dens[start : start + size]  # views: nothing below writes to them
        mean = float(num.sum() / den.sum()) if den.sum() > 0 else math.nan
        if size == 1:
            lo = hi = mean
        else:
            lo, hi = _percentile_interval(num, den, n_resamples, level, _group_seed(seed, key[len(within) :]))
        rows.append((*key, mean, lo, hi, int(ns[start : start + size].sum()), size))
    schema: dict[str, Any] = {
        **{c: df.schema[c] for c in keys},
        "mean": pl.Float64,
        "lo": pl.Float64,
        "hi": pl.Float64,
        "n": pl.Int64,
        "clusters": pl.Int64,
    }
    return pl.DataFrame(rows, schema=schema, orient="row").sort(keys) if rows else pl.DataFrame(schema=schema)


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value for ``b`` and ``c`` discordant pairs (binomial, p = 1/2).

    >>> mcnemar_exact(0, 0)
    1.0
    >>> mcnemar_exact(0, 10)  # 2 / 1024
    0.001953125
    """
    n = b + c
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(b, c) + 1)) / 2**n
    return min(1.0, 2 * tail)


def paired_differences(
    a: pl.DataFrame,
    b: pl.DataFrame,
    by: list[str],
    *,
    correct_at: float = 1.0,
    n_resamples: int = DEFAULT_RESAMPLES,
    level: float = 0.95,
    seed: int = 0,
) -> pl.DataFrame:
    """Run A minus run B on the (tier, question, epoch) keys both graded, per group of ``by``.

    Columns: ``n`` shared graded records, ``mean_a``, ``mean_b``, ``diff`` with its paired-bootstrap
    interval ``lo``/``hi`` (whole questions or haystacks resampled, both runs together), ``a_only``
    and ``b_only`` (records only A, or only B, got right: score >= ``correct_at``) and McNemar's exact
    ``p`` on them.
    """
    keys = ["tier", "qid", "epoch"]
    cols = [*dict.fromkeys([*by, *keys, *(["haystack"] if "haystack" in a.columns else [])]), "score"]
    joined = (
        a.select(cols)
        .rename({"score": "score_a"})
        .join(b.select([*keys, "score"]).rename({"score": "score_b"}), on=keys, how="inner")
        .filter(pl.col("score_a").is_not_null() & pl.col("score_b").is_not_null())
        .with_columns(
            (pl.col("score_a") - pl.col("score_b")).alias("_diff"),
            (pl.col("score_a") >= correct_at).alias("_ra"),
            (pl.col("score_b") >= correct_at).alias("_rb"),
        )
    )
    diffs = bootstrap_means(joined, by, value="_diff", n_resamples=n_resamples, level=level, seed=seed)
    counts = joined.group_by(by).agg(
        pl.col("score_a").mean().alias("mean_a"),
        pl.col("score_b").mean().alias("mean_b"),
        (pl.col("_ra") & ~pl.col("_rb")).sum().alias("a_only"),
        (~pl.col("_ra") & pl.col("_rb")).sum().alias("b_only"),
    )
    out = diffs.rename({"mean": "diff"}).drop("clusters").join(counts, on=by, how="left")
    p = [mcnemar_exact(x, y) for x, y in zip(out["a_only"].to_list(), out["b_only"].to_list())]
    return (
        out.with_columns(pl.Series("p", p, dtype=pl.Float64))
        .select(*by, "n", "mean_a", "mean_b", "diff", "lo", "hi", "a_only", "b_only", "p")
        .sort(by)
    )
