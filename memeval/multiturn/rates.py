"""Pass rates over result records (polars): task denominator, fixed stratum weights, shares.

Task-like units (task, user x topic) make the denominator; one-turn detour samples are counted per
turn and session units per session, each summarised apart (a session unit re-judges the turns its
tasks already count).

``undetermined``, ``flaky``, ``incomplete`` and ``env_drift`` are left out of the denominator and
reported as shares of all tasks. Strata weigh 1-3 turns 0.2, 4-8 0.5, 9+ 0.3; a stratum with no
pass/fail verdict (all undetermined, say) is skipped and the other weights renormalised. The
grader version is always part of the filter: mixed versions are refused (or split explicitly with
:func:`pass_rates_by_version`). Every rate carries its 95% interval: Wilson's score interval for a
stratum's pass / (pass + fail), and for the weighted total the normal approximation over the strata's
binomial variances (clamped to [0, 1]).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable

import polars as pl

from ..errors import ArgumentError
from .config import STRATA
from .records import stratum_of

__all__ = [
    "results_frame",
    "PassRates",
    "pass_rates",
    "pass_rates_by_version",
    "format_pass_rates",
    "MixedVersionsError",
    "EXCLUDED",
    "TASK_UNITS",
    "wilson_interval",
]

EXCLUDED = ("undetermined", "flaky", "incomplete", "env_drift")
TASK_UNITS = ("task", "user_topic")
_COLS = {
    "sample_id": pl.String,
    "agent": pl.String,
    "grader_version": pl.String,
    "verdict": pl.String,
    "turns": pl.Int64,
    "corrections": pl.Int64,
    "cross_task": pl.Boolean,
    "bad_turn": pl.Int64,
    "score": pl.Float64,
    "unit_type": pl.String,
}


class MixedVersionsError(ArgumentError):
    """Records of more than one grader version (or agent) would be mixed."""


def results_frame(records: Iterable[dict]) -> pl.DataFrame:
    """One row per (sample, agent, grader version); a later record of the same triple (a rerun
    appended to the same file) replaces the earlier one, so nothing is counted twice."""
    latest = {}
    for r in records:
        latest[(r.get("sample_id"), r.get("agent"), r.get("grader_version"))] = r
    rows = [{k: r.get(k) for k in _COLS} for r in latest.values()]
    df = pl.DataFrame(rows, schema=_COLS)
    return df.with_columns(
        pl.col("cross_task").fill_null(False),
        pl.col("turns").map_elements(stratum_of, return_dtype=pl.String).alias("stratum"),
    )


@dataclass(frozen=True)
class PassRates:
    grader_version: str
    agent: str | None
    total: float | None
    tasks: int
    strata: pl.DataFrame
    shares: dict
    by_corrections: pl.DataFrame
    by_cross_task: pl.DataFrame
    turn_samples: dict  # one-turn detour samples, counted per turn, outside the task rate
    session_units: dict | None = None  # session units, counted per session, outside the task rate
    total_lo: float | None = None  # the weighted total's 95% interval (normal approximation)
    total_hi: float | None = None


_Z95 = 1.959963984540054


def wilson_interval(k: int, n: int, z: float = _Z95) -> tuple[float | None, float | None]:
    """Wilson's score interval (95% by default) for ``k`` passes out of ``n``; (None, None) for n = 0.

    >>> [round(x, 3) for x in wilson_interval(8, 10)]
    [0.49, 0.943]
    >>> wilson_interval(0, 0)
    (None, None)
    """
    if n <= 0:
        return None, None
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


def _counts(df: pl.DataFrame, by: str) -> pl.DataFrame:
    aggs = [pl.len().alias("tasks")] + [(pl.col("verdict") == v).sum().alias(v) for v in ("pass", "fail") + EXCLUDED]
    out = df.group_by(by).agg(aggs)
    out = out.with_columns(
        pl.when(pl.col("pass") + pl.col("fail") > 0)
        .then(pl.col("pass") / (pl.col("pass") + pl.col("fail")))
        .otherwise(None)
        .alias("rate")
    ).sort(by)
    ci = [wilson_interval(k, k + f) for k, f in zip(out["pass"].to_list(), out["fail"].to_list())]
    return out.with_columns(
        pl.Series("rate_lo", [c[0] for c in ci], pl.Float64), pl.Series("rate_hi", [c[1] for c in ci], pl.Float64)
    )


def _only(df: pl.DataFrame, col: str, want: str | None) -> tuple[pl.DataFrame, str | None]:
    vals = sorted(v for v in df[col].unique().to_list() if v is not None)
    if want is None:
        if len(vals) > 1:
            raise MixedVersionsError(f"records mix {col} values {vals}: pick one (results are never mixed)")
        want = vals[0] if vals else None
    return df.filter(pl.col(col).eq_missing(want)), want


def pass_rates(
    df: pl.DataFrame, grader_version: str | None = None, agent: str | None = None, units: tuple[str, ...] = TASK_UNITS
) -> PassRates:
    """Rates over task-like units (``units``); turn samples are summarised apart."""
    df, gv = _only(df, "grader_version", grader_version)
    df, ag = _only(df, "agent", agent)
    turn_df = df.filter(pl.col("unit_type") == "turn")
    tp, tf = turn_df.filter(pl.col("verdict") == "pass").height, turn_df.filter(pl.col("verdict") == "fail").height
    turn_samples = {"samples": turn_df.height, "pass": tp, "fail": tf, "rate": tp / (tp + tf) if tp + tf else None}
    ses = df.filter(pl.col("unit_type") == "session")
    sp, sf = ses.filter(pl.col("verdict") == "pass").height, ses.filter(pl.col("verdict") == "fail").height
    session_units = {"samples": ses.height, "pass": sp, "fail": sf, "rate": sp / (sp + sf) if sp + sf else None}
    df = df.filter(pl.col("unit_type").is_in(list(units)) | pl.col("unit_type").is_null())
    counts = _counts(df, "stratum")
    base = pl.DataFrame({"stratum": [s[0] for s in STRATA], "weight": [s[3] for s in STRATA]})
    strata = base.join(counts, on="stratum", how="left").with_columns(
        [pl.col(c).fill_null(0) for c in ("tasks", "pass", "fail") + EXCLUDED]
    )
    used = strata.filter(pl.col("rate").is_not_null())
    # float weights (config.STRATA); polars types a sum as int | float | Decimal
    wsum = float(used["weight"].sum()) if used.height else 0.0
    strata = strata.with_columns(
        pl.when(pl.col("rate").is_not_null())
        .then(pl.col("weight") / wsum if wsum else None)
        .otherwise(0.0)
        .alias("weight_used")
    )
    total = float((used["weight"] * used["rate"]).sum()) / wsum if wsum else None
    total_lo = total_hi = None
    if total is not None:
        var = sum(
            (w / wsum) ** 2 * r * (1 - r) / (k + f)
            for w, r, k, f in zip(used["weight"], used["rate"], used["pass"], used["fail"])
        )
        total_lo, total_hi = max(0.0, total - _Z95 * math.sqrt(var)), min(1.0, total + _Z95 * math.sqrt(var))
    n = df.height
    shares = {v: (df.filter(pl.col("verdict") == v).height / n if n else 0.0) for v in EXCLUDED}
    byc = _counts(
        df.with_columns(
            pl.when(pl.col("corrections") > 0).then(pl.lit(">0")).otherwise(pl.lit("0")).alias("corrections_group")
        ),
        "corrections_group",
    )
    byx = _counts(df, "cross_task")
    return PassRates(gv or "", ag, total, n, strata, shares, byc, byx, turn_samples, session_units, total_lo, total_hi)


def pass_rates_by_version(df: pl.DataFrame, agent: str | None = None, **kw) -> dict[str, PassRates]:
    """Split explicitly: one :class:`PassRates` per grader version."""
    return {v: pass_rates(df, v, agent, **kw) for v in sorted(df["grader_version"].unique().to_list())}


def format_pass_rates(pr: PassRates) -> str:
    """Per-stratum rates always printed with the total."""
    lines = [
        f"grader_version={pr.grader_version} agent={pr.agent} tasks={pr.tasks}",
        f"{'stratum':8} {'weight':>6} {'used':>6} {'tasks':>5} {'pass':>4} {'fail':>4} "
        + " ".join(f"{v:>{len(v)}}" for v in EXCLUDED)
        + f" {'rate [95% CI]':>21}",
    ]  # headers never cut
    for r in pr.strata.iter_rows(named=True):
        rate = _rate_text(r["rate"], r["rate_lo"], r["rate_hi"])
        lines.append(
            f"{r['stratum']:8} {r['weight']:6.2f} {r['weight_used']:6.2f} {r['tasks']:5d} {r['pass']:4d} "
            f"{r['fail']:4d} " + " ".join(f"{r[v]:{len(v)}d}" for v in EXCLUDED) + f" {rate:>21}"
        )
    lines.append("total (weighted): " + _rate_text(pr.total, pr.total_lo, pr.total_hi))
    lines.append("shares: " + ", ".join(f"{k}={v:.3f}" for k, v in pr.shares.items()))
    for name, tab, col in (
        ("corrections", pr.by_corrections, "corrections_group"),
        ("cross_task", pr.by_cross_task, "cross_task"),
    ):
        parts = [
            f"{r[col]}: {_rate_text(r['rate'], r['rate_lo'], r['rate_hi'])} (n={r['tasks']})"
            for r in tab.iter_rows(named=True)
        ]
        lines.append(f"by {name}: " + "; ".join(parts))
    ts = pr.turn_samples
    if ts["samples"]:
        lines.append(
            f"turn samples (per turn, not in the task rate): {ts['samples']}, pass rate "
            + ("-" if ts["rate"] is None else f"{ts['rate']:.3f}")
        )
    ss = pr.session_units or {"samples": 0}
    if ss["samples"]:
        lines.append(
            f"session units (per session, not in the task rate): {ss['samples']}, pass rate "
            + ("-" if ss["rate"] is None else f"{ss['rate']:.3f}")
            + f" (pass {ss['pass']}, fail {ss['fail']})"
        )
    return "\n".join(lines)


def _rate_text(rate: float | None, lo: float | None, hi: float | None) -> str:
    """A rate with its interval: ``0.800 [0.490, 0.943]``; ``-`` when there is none."""
    if rate is None:
        return "-"
    return f"{rate:.3f}" if lo is None or hi is None else f"{rate:.3f} [{lo:.3f}, {hi:.3f}]"
