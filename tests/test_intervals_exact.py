"""``bootstrap_means`` gives, to the bit, the intervals of the plain percentile bootstrap it always drew: one
generator per group seeded from the group's key, clusters in sorted order, 1000 resamples drawn 256 at a
time. Groups whose every cluster scores 0 (or every one 1) take a shortcut without draws, and ``within``
computes many parts in one call: neither may change a single interval."""

from __future__ import annotations

import math
import random
import zlib

import numpy as np
import polars as pl
import pytest

from memeval.analysis.intervals import bootstrap_means

TAIL = (1.0 - 0.95) / 2  # a hair over 0.025 in floating point, as the bootstrap computes it


def _reference(df: pl.DataFrame, by: list[str], weight: str | None, seed: int, n: int = 1000) -> pl.DataFrame:
    """``bootstrap_means`` as it was before the shortcut and ``within`` (commit 108fb2f), verbatim but for
    names: every group with two clusters or more drawn, one group at a time."""
    keep = df.filter(pl.col("score").is_not_null())
    w = pl.col(weight).cast(pl.Float64) if weight else pl.lit(1.0)
    per_cluster = (
        keep.with_columns(_cluster=pl.coalesce(pl.col("haystack").cast(pl.Utf8), pl.col("qid")), _w=w)
        .group_by([*by, "_cluster"])
        .agg(
            (pl.col("score").cast(pl.Float64) * pl.col("_w")).sum().alias("_num"),
            pl.col("_w").sum().alias("_den"),
            pl.len().alias("_n"),
        )
        .sort([*by, "_cluster"])
    )
    rows = []
    for key, g in per_cluster.group_by(by, maintain_order=True):
        num, den = g["_num"].to_numpy(), g["_den"].to_numpy()
        mean = float(num.sum() / den.sum()) if den.sum() > 0 else math.nan
        if len(g) == 1:
            lo = hi = mean
        else:
            rng = np.random.default_rng((seed * 1_000_003 + zlib.crc32(repr(tuple(key)).encode("utf-8"))) % 2**32)
            k, stats = len(num), []
            for start in range(0, n, 256):
                counts = rng.multinomial(k, np.full(k, 1.0 / k), size=min(256, n - start))
                d = counts @ den
                with np.errstate(invalid="ignore", divide="ignore"):
                    stats.append(np.where(d > 0, (counts @ num) / np.where(d > 0, d, 1), np.nan))
            values = np.concatenate(stats)
            values = values[~np.isnan(values)]
            lo, hi = (
                (float(v) for v in np.quantile(values, [TAIL, 1.0 - TAIL])) if values.size else (math.nan, math.nan)
            )
        rows.append(
            {**dict(zip(by, key)), "mean": mean, "lo": lo, "hi": hi, "n": int(g["_n"].sum()), "clusters": len(g)}
        )
    schema = {**{c: df.schema[c] for c in by}, "mean": pl.Float64, "lo": pl.Float64, "hi": pl.Float64}
    schema |= {"n": pl.Int64, "clusters": pl.Int64}
    return pl.DataFrame(rows, schema=schema, orient="row").sort(by)


def _bits(frame: pl.DataFrame) -> bytes:
    """The frame's exact bytes (a NaN, the sign of a zero, the last bit of a float all count)."""
    return frame.write_ipc(None).getvalue()


def _records(seed: int) -> pl.DataFrame:
    """Systems with mixed scores, all 0, all 1, all 1 with a zero-weight question and all -0.0; some questions
    sharing a haystack, some tiers with one cluster only."""
    rnd = random.Random(seed)
    rows = []
    for system, scores in (
        ("mixed", (0.0, 0.5, 1.0)),
        ("floor", (0.0,)),
        ("ceiling", (1.0,)),
        ("zero_w", (1.0,)),
        ("minus_zero", (-0.0,)),
    ):
        for tier, nq in (("t1", 1), ("t2", 7), ("t3", 40)):
            for q in range(nq):
                rows.append(
                    {
                        "system": system,
                        "tier": tier,
                        "axis": f"ax{q % 3}",
                        "qid": f"q{q}",
                        "haystack": f"h{q // 4}" if q % 2 else None,
                        "score": rnd.choice(scores) if rnd.random() > 0.1 else None,
                        "weight": 0 if system == "zero_w" and q == 0 else rnd.choice((1, 2, 3)),
                    }
                )
    return pl.DataFrame(rows)


@pytest.mark.parametrize("data_seed", [1, 2, 3])
@pytest.mark.parametrize("weight", [None, "weight"])
def test_intervals_are_the_plain_draws_to_the_bit(data_seed, weight):
    df = _records(data_seed)
    for by in (["system", "tier"], ["system", "tier", "axis"]):
        got = bootstrap_means(df, by, weight=weight, seed=data_seed)
        want = _reference(df, by, weight, data_seed)
        assert got.equals(want)
        assert _bits(got) == _bits(want)


@pytest.mark.parametrize("weight", [None, "weight"])
def test_within_is_one_call_per_part(weight):
    df = _records(4)
    got = bootstrap_means(df, ["tier", "axis"], weight=weight, within=["system"])
    for (system,), part in df.partition_by("system", as_dict=True).items():
        alone = bootstrap_means(part, ["tier", "axis"], weight=weight)
        assert _bits(got.filter(pl.col("system") == system).drop("system")) == _bits(alone)
