"""A sweep folder as records: every shard's run folder loaded as one frame, with the shard's bench,
preset and seed beside each record, tiers placed in their bench's order, and the core set (questions
asked in every tier) found across the shards of one (bench, system, mode) rather than per run folder
(a shard holds one tier)."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from ..errors import ArgumentError
from ..run.sweep.plan import is_sweep, read_sweep
from .aggregate import load_records

__all__ = ["load_sweep", "sweep_run_dirs", "is_sweep", "sweep_table"]


def sweep_run_dirs(sweep_dir) -> list[Path]:
    """The run folders of a sweep's shards that have begun (their manifest exists), in plan order."""
    return [r["run_dir"] for r in read_sweep(sweep_dir)["shards"] if (r["run_dir"] / "manifest.json").is_file()]


def load_sweep(sweep_dir) -> pl.DataFrame:
    """All records of a sweep (see ``aggregate.load_records``), plus columns ``bench``, ``preset``,
    ``seed`` and ``shard``; ``tier_index`` is the tier's place in its bench, ``in_all_tiers`` is
    computed per (bench, system, mode, epoch-free question id) across the shards."""
    doc = read_sweep(sweep_dir)
    rows = [r for r in doc["shards"] if (r["run_dir"] / "manifest.json").is_file()]
    if not rows:
        raise ArgumentError(f"{sweep_dir}: no shard has started yet")
    info = pl.DataFrame(
        {
            "run_id": [r["run_dir"].name for r in rows],
            "shard": [r["id"] for r in rows],
            "bench": [r["bench"] for r in rows],
            "preset": [r.get("preset") for r in rows],
            "seed": [r.get("seed") for r in rows],
            "_tier_index": [r["tier_index"] for r in rows],
        },
        schema={
            "run_id": pl.Utf8,
            "shard": pl.Utf8,
            "bench": pl.Utf8,
            "preset": pl.Utf8,
            "seed": pl.Int64,
            "_tier_index": pl.Int32,
        },
    )
    df = load_records([r["run_dir"] for r in rows]).drop("in_all_tiers")
    df = (
        df.join(info, on="run_id", how="left")
        .with_columns(pl.col("_tier_index").alias("tier_index"))
        .drop("_tier_index")
    )
    group = ["bench", "system", "mode"]
    n_tiers = df.group_by(group).agg(pl.col("tier").n_unique().alias("_n"))
    per_q = df.group_by(*group, "qid").agg(pl.col("tier").n_unique().alias("_q"))
    flags = per_q.join(n_tiers, on=group).select(*group, "qid", (pl.col("_q") == pl.col("_n")).alias("in_all_tiers"))
    return df.join(flags, on=[*group, "qid"], how="left")


def sweep_table(sweep_dir) -> pl.DataFrame:
    """One row per shard of the sweep manifest: bench, seed, system, mode, tier, status, records."""
    doc = read_sweep(sweep_dir)
    return pl.DataFrame(
        [
            {
                "shard": r["id"],
                "bench": r["bench"],
                "seed": r.get("seed"),
                "system": r["system"],
                "mode": r["mode"],
                "tier": r["tier"],
                "status": r.get("status", "not run"),
                "records": r.get("n_records"),
            }
            for r in doc["shards"]
        ],
        schema={
            "shard": pl.Utf8,
            "bench": pl.Utf8,
            "seed": pl.Int64,
            "system": pl.Utf8,
            "mode": pl.Utf8,
            "tier": pl.Utf8,
            "status": pl.Utf8,
            "records": pl.Int64,
        },
    )
