"""Two runs on the same bench, question by question: the one definition ``memeval diff`` prints and the
run browser's comparison page draws.

:func:`paired_diff` refuses runs on different bench files (content hash) or question sets (their
questions are not the same questions), then gives per tier (and per tier × axis) the mean of each run
on the records both graded, A − B with its paired-bootstrap 95% interval, how many questions only A or
only B got right and McNemar's exact p on those (``intervals.paired_differences``), the fairness lines
(``fairness.compare_runs``) and the questions that flipped (right, score 1, in one run only).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import polars as pl

from ..errors import MemevalError
from ..run.folder import run_identity
from .aggregate import load_records
from .fairness import compare_runs
from .intervals import DEFAULT_RESAMPLES, paired_differences

__all__ = ["PairedDiff", "paired_diff", "flipped"]

_KEYS = ["tier", "qid", "epoch"]


@dataclass(frozen=True)
class PairedDiff:
    """What :func:`paired_diff` measured: ``overall`` per tier, ``per_axis`` per tier × axis (columns of
    ``intervals.paired_differences``, in tier order), ``flips`` (tier, qid, epoch, axis, a, b) and the
    records of each run (for the traces)."""

    label: str  # "A = bm25 (dry), B = recent (dry)"
    bench: str  # "lifelog 1.2.0, question set main"
    fairness: tuple[str, ...]
    method: str  # how the difference, interval and p were computed
    overall: pl.DataFrame
    per_axis: pl.DataFrame
    flips: pl.DataFrame
    a: pl.DataFrame
    b: pl.DataFrame


def flipped(a: pl.DataFrame, b: pl.DataFrame) -> pl.DataFrame:
    """The records graded in both runs that one run got right (score 1) and the other did not: tier,
    qid, epoch, axis and each run's score (``a``, ``b``), in tier, axis and question order."""
    return (
        a.select(*_KEYS, "tier_index", "axis", pl.col("score").alias("a"))
        .join(b.select(*_KEYS, pl.col("score").alias("b")), on=_KEYS)
        .filter(pl.col("a").is_not_null() & pl.col("b").is_not_null() & ((pl.col("a") >= 1) != (pl.col("b") >= 1)))
        .sort("tier_index", "axis", "qid")
        .drop("tier_index")
    )


def paired_diff(
    run_a: str | Path,
    run_b: str | Path,
    *,
    by_axis: bool = True,
    n_resamples: int | None = None,
    seed: int = 0,
    records: tuple[pl.DataFrame, pl.DataFrame] | None = None,
) -> PairedDiff:
    """Run A against run B (see the module docstring); ``records``: both runs' records if already
    loaded (``aggregate.load_records``). Runs on different benches or question sets: one-line
    :class:`MemevalError`.

    >>> d = paired_diff(tiny_run, tiny_run, by_axis=False)
    >>> d.overall.select("tier", "n", "diff", "a_only", "b_only", "p").row(0)
    ('core', 58, 0.0, 0, 0, 1.0)
    """
    ca, hash_a, set_a = run_identity(run_a)
    cb, hash_b, set_b = run_identity(run_b)
    if hash_a != hash_b:
        raise MemevalError(
            f"{run_b}: bench content hash {hash_b[:12]} differs from {run_a}'s "
            f"{hash_a[:12]}: not the same questions, refusing to compare"
        )
    if set_a != set_b:
        raise MemevalError(f"{run_b}: question set {set_b!r} differs from {run_a}'s {set_a!r}: refusing to compare")
    a, b = records if records is not None else (load_records([run_a]), load_records([run_b]))
    n = n_resamples or DEFAULT_RESAMPLES
    tiers = a.select("tier", "tier_index").unique().sort("tier_index")

    def ordered(t: pl.DataFrame, *more: str) -> pl.DataFrame:
        return tiers.join(t, on="tier", how="inner").sort("tier_index", *more).drop("tier_index")

    overall = ordered(paired_differences(a, b, ["tier"], n_resamples=n, seed=seed))
    per_axis = (
        ordered(paired_differences(a, b, ["tier", "axis"], n_resamples=n, seed=seed), "axis")
        if by_axis
        else pl.DataFrame()
    )
    return PairedDiff(
        label=f"A = {ca['system']['spec']} ({ca['mode']}), B = {cb['system']['spec']} ({cb['mode']})",
        bench=f"bench {ca['bench']['name']} {ca['bench']['version']}, question set {set_a}",
        fairness=tuple(compare_runs(pl.concat([a, b], how="vertical_relaxed"), [run_a, run_b]).lines()),
        method=(
            f"difference A − B on records both runs graded; 95% paired bootstrap ({n} resamples, seed "
            f"{seed}); a_only/b_only = right (score 1) in one run only; p = exact McNemar"
        ),
        overall=overall,
        per_axis=per_axis,
        flips=flipped(a, b),
        a=a,
        b=b,
    )
