"""Records → polars DataFrames: per tier × axis scores, weighted/unweighted overall beside floor and
ceiling, latency percentiles. Everything here is recomputable from published records.

Scores average over *graded* records: ungraded (judge failure) and error records are counted in
their own columns, never as 0.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterable

import polars as pl

from ..errors import ArgumentError
from ..bench.axes import AXIS_WEIGHTS
from ..run.records import RECORD_KINDS, read_records, record_memories
from ..run.folder import read_manifest
from .intervals import DEFAULT_RESAMPLES, bootstrap_means
from ..scoring.retrieval import KS, LEVELS, METRICS, metric_names
from ..audit.validity import gate_line

__all__ = [
    "load_records",
    "record_schema",
    "tier_axis_table",
    "overall_table",
    "latency_table",
    "WEIGHT_TABLE",
    "FLOOR",
    "CEILING",
    "run_role",
    "question_set",
    "retrieval_table",
    "RETRIEVAL_METRICS",
    "dry_validity_gate",
    "official_table",
    "ceiling_gaps",
    "ceiling_gap_line",
]

#: One column per ranked-retrieval metric (``turn_recall_any@1`` ... ``session_ndcg@10``).
RETRIEVAL_METRICS: tuple[str, ...] = tuple(metric_names())

FLOOR, CEILING = "no_memory", "oracle"


def run_role(manifest: dict) -> str | None:
    """``"ceiling"``, ``"floor"`` or None: whether a run is a bound shown beside systems rather than a
    system. The manifest marks the built-in oracle (``config.system.role``); the floor is the
    ``no_memory`` system (runs made before the mark: the oracle by its name).

    >>> run_role({"config": {"system": {"spec": "oracle", "role": "ceiling"}}})
    'ceiling'
    >>> run_role({"config": {"system": {"spec": "no_memory"}}}), run_role({"config": {"system": {"spec": "bm25"}}})
    ('floor', None)
    """
    sys_cfg = (manifest.get("config") or {}).get("system") or {}
    if sys_cfg.get("role") in ("ceiling", "floor"):
        return str(sys_cfg["role"])
    spec = str(sys_cfg.get("spec") or "")
    for name, role in ((FLOOR, "floor"), (CEILING, "ceiling")):
        if spec == name or spec.startswith(name + ":"):
            return role
    return None


WEIGHT_TABLE = pl.DataFrame({"axis": list(AXIS_WEIGHTS), "weight": list(AXIS_WEIGHTS.values())})

#: polars type of each element kind of :class:`memeval.run.records.Record`
_MEMORY = pl.Struct({"text": pl.Utf8, "timestamp": pl.Utf8, "speaker": pl.Utf8})
_KIND_DTYPES = {
    "str": pl.Utf8,
    "int": pl.Int32,
    "long": pl.Int64,
    "float": pl.Float64,
    "bool": pl.Boolean,
    "json": pl.Utf8,
    "list[str]": pl.List(pl.Utf8),
    "list[long]": pl.List(pl.Int64),
    "memories": pl.List(_MEMORY),
    "usage": pl.List(
        pl.Struct(
            {
                "role": pl.Utf8,
                "model": pl.Utf8,
                "calls": pl.Int64,
                "prompt_tokens": pl.Int64,
                "completion_tokens": pl.Int64,
            }
        )
    ),
}


def record_schema() -> dict:
    """The polars schema of :func:`load_records`, derived from the typed record: every record field
    (``retrieval_metrics`` spread into one Float64 column per metric, ``grader`` as its label), plus
    the tier's position and size from the manifest."""
    schema: dict = {}
    for k, kind in RECORD_KINDS.items():
        if kind == "metrics":
            schema.update({m: pl.Float64 for m in metric_names()})
        else:
            schema[k] = _KIND_DTYPES[kind]
        if k == "tier":
            schema.update(tier_index=pl.Int32, tier_turns=pl.Int64, tier_tokens=pl.Int64)
    return schema


_SCHEMA = record_schema()


def _grader_label(g) -> str | None:
    if isinstance(g, dict):
        return g.get("name", "?") + ":" + str(g.get("version") or g.get("prompt_hash") or g.get("model") or "")
    return None if g is None else str(g)


def load_records(run_dirs: Iterable | str | Path) -> pl.DataFrame:
    """One row per record of the given run folders, with tier sizes from each run's manifest."""
    if isinstance(run_dirs, (str, Path)):
        run_dirs = [run_dirs]
    rows = []
    for rd in run_dirs:
        man = read_manifest(rd)
        tiers: dict[str, tuple[int | None, dict]] = {t["name"]: (i, t) for i, t in enumerate(man["config"]["tiers"])}
        for r in read_records(rd):
            i, t = tiers.get(r["tier"], (None, {}))
            row = {k: r.get(k) for k in _SCHEMA}
            row.update(r.get("retrieval_metrics") or {})
            row.update(
                tier_index=i,
                tier_turns=t.get("n_turns"),
                tier_tokens=t.get("n_tokens"),
                grader=_grader_label(r.get("grader")),
                memories=record_memories(r),
            )
            rows.append(row)
    df = pl.DataFrame(rows, schema=_SCHEMA)
    return with_question_set(df)


def with_question_set(df: pl.DataFrame) -> pl.DataFrame:
    """Add ``in_all_tiers``: the question id occurs in every tier its run covers (the core set)."""
    n_tiers = df.group_by("run_id").agg(pl.col("tier").n_unique().alias("_n"))
    per_q = df.group_by("run_id", "qid").agg(pl.col("tier").n_unique().alias("_q"))
    flags = per_q.join(n_tiers, on="run_id").select(
        "run_id", "qid", (pl.col("_q") == pl.col("_n")).alias("in_all_tiers")
    )
    return df.join(flags, on=["run_id", "qid"], how="left")


def question_set(df: pl.DataFrame, which: str = "core") -> pl.DataFrame:
    """``core`` = questions present in every tier (what a degradation curve compares); ``all`` = everything."""
    if which == "all":
        return df
    if which != "core":
        raise ArgumentError("question set is 'core' or 'all'")
    return df.filter(pl.col("in_all_tiers"))


_graded = pl.col("score").is_not_null()
#: Ranked evidence retrieval beside every score (means over questions with evidence turns; the full
#: set of k and levels is in ``retrieval_table``).
_RETRIEVAL_HEADLINE = (
    pl.col("turn_recall_any@5").mean().alias("recall_any@5"),
    pl.col("turn_ndcg@10").mean().alias("ndcg@10"),
)
#: what every summary table counts beside its scores: n, graded, ungraded, errors, retrieval, chars
_COUNTS = (
    pl.len().alias("n"),
    _graded.sum().alias("graded"),
    pl.col("ungraded_reason").is_not_null().sum().alias("ungraded"),
    pl.col("error").is_not_null().sum().alias("errors"),
    pl.col("retrieval_hit").cast(pl.Float64).mean().alias("retrieval_hit_rate"),
    *_RETRIEVAL_HEADLINE,
    pl.col("chars_returned").median().alias("median_chars"),
)


def _with_intervals(
    t: pl.DataFrame, df: pl.DataFrame, by: list[str], columns: dict[str, str | None], n_resamples: int
) -> pl.DataFrame:
    """Join 95% bootstrap bounds ``<column>_lo``/``<column>_hi`` (``intervals.bootstrap_means``: whole
    questions, or haystacks, resampled) for each mean column; ``columns`` maps it to its weight column."""
    for col, weight in columns.items():
        ci = bootstrap_means(df, by, weight=weight, n_resamples=n_resamples).select(
            *by, pl.col("lo").alias(f"{col}_lo"), pl.col("hi").alias(f"{col}_hi")
        )
        t = t.join(ci, on=by, how="left")
    return t


def tier_axis_table(df: pl.DataFrame, n_resamples: int = DEFAULT_RESAMPLES) -> pl.DataFrame:
    """Per system × tier × axis: mean score, n, graded, ungraded, errors, retrieval hit rate, turn-level
    evidence recall_any@5 and NDCG@10, median chars returned; ``score_lo``/``score_hi``: the score's 95%
    bootstrap interval (``n_resamples``)."""
    t = (
        df.group_by("system", "tier_index", "tier", "axis")
        .agg(
            pl.col("score").mean().alias("score"),
            *_COUNTS,
        )
        .sort("system", "tier_index", "axis")
    )
    t = _with_intervals(t, df, ["system", "tier", "axis"], {"score": None}, n_resamples)
    return t.select(
        *t.columns[:5], "score_lo", "score_hi", *[c for c in t.columns[5:] if c not in ("score_lo", "score_hi")]
    )


def overall_table(df: pl.DataFrame, n_resamples: int = DEFAULT_RESAMPLES) -> pl.DataFrame:
    """Per system × tier: weighted and unweighted mean side by side, each with its 95% bootstrap interval
    (``weighted_lo``/``weighted_hi``, ``unweighted_lo``/``unweighted_hi``; ``n_resamples``), with floor
    and ceiling beside each system. Where errata were applied (records with ``score_raw``), the same
    means against the published gold (``weighted_raw``, ``unweighted_raw``) stand beside them."""
    t = (
        df.group_by("system", "tier_index", "tier")
        .agg(
            pl.when(_graded.any())  # no graded question: no score (null), never nan
            .then((pl.col("score") * pl.col("weight")).sum() / pl.col("weight").filter(_graded).sum())
            .alias("weighted"),
            pl.col("score").mean().alias("unweighted"),
            *_COUNTS,
        )
        .sort("system", "tier_index")
    )
    t = _with_intervals(t, df, ["system", "tier"], {"weighted": "weight", "unweighted": None}, n_resamples)
    lead = [
        "system",
        "tier_index",
        "tier",
        "weighted",
        "weighted_lo",
        "weighted_hi",
        "unweighted",
        "unweighted_lo",
        "unweighted_hi",
    ]
    if "score_raw" in df.columns and df["score_raw"].is_not_null().any():  # errata applied: raw beside
        raw_graded = pl.col("score_raw").is_not_null()
        raw = df.group_by("system", "tier").agg(
            ((pl.col("score_raw") * pl.col("weight")).sum() / pl.col("weight").filter(raw_graded).sum()).alias(
                "weighted_raw"
            ),
            pl.col("score_raw").mean().alias("unweighted_raw"),
        )
        t = t.join(raw, on=["system", "tier"], how="left")
        lead[6:6] = ["weighted_raw"]
        lead.append("unweighted_raw")
    t = t.select(*lead, *[c for c in t.columns if c not in lead])
    for name, label in ((FLOOR, "floor"), (CEILING, "ceiling")):
        ref = t.filter(pl.col("system") == name).select(
            "tier", pl.col("weighted").alias(f"{label}_weighted"), pl.col("unweighted").alias(f"{label}_unweighted")
        )
        t = t.join(ref, on="tier", how="left")
    return t


def latency_table(df: pl.DataFrame) -> pl.DataFrame:
    """Per system: latency-minus-RTT percentiles over measured questions, mean speed points, exclusions."""
    lmr = pl.col("latency_minus_rtt_ms")
    measured = pl.col("speed_status").is_in(["measured", "in_process"])
    return (
        df.filter(pl.col("error").is_null())
        .group_by("system")
        .agg(
            pl.col("speed_status").filter(measured).first().alias("status"),
            measured.sum().alias("n"),
            lmr.filter(measured).quantile(0.5, "linear").alias("p50"),
            lmr.filter(measured).quantile(0.9, "linear").alias("p90"),
            lmr.filter(measured).quantile(0.95, "linear").alias("p95"),
            lmr.filter(measured).quantile(0.99, "linear").alias("p99"),
            lmr.filter(measured).max().alias("max"),
            pl.col("network_ms").median().alias("network_ms"),
            pl.col("speed_points").filter(measured).mean().alias("speed_points"),
            (pl.col("speed_status") == "unmeasurable").sum().alias("unmeasurable"),
            pl.col("speed_reason").filter(pl.col("speed_status") == "unmeasurable").unique().alias("reasons"),
        )
        .sort("system")
    )


def manifest_summary(run_dir) -> dict:
    m = read_manifest(run_dir)
    c = m["config"]
    return {
        "run_id": m["run_id"],
        "status": m["status"],
        "system": c["system"].get("label") or c["system"]["spec"],  # a served system's URL: manifest only
        "mode": c["mode"],
        "bench": f"{c['bench']['name']} {c['bench']['version']}",
        "grader": json.dumps(c["grader"]),
        "network_floor_ms": m.get("network_floor_ms"),
    }


def retrieval_table(df: pl.DataFrame, level: str = "turn") -> pl.DataFrame:
    """Per system × tier: mean evidence recall_any/recall_all/NDCG at k (LongMemEval's definitions) at
    ``level`` ("turn" or "session"), over the questions with evidence turns (``n``); questions without
    evidence are excluded for every system alike and counted (``excluded``)."""
    if level not in LEVELS:
        raise ArgumentError(f"level is one of {LEVELS}")
    cols = [f"{level}_{m}@{k}" for m in METRICS for k in KS]
    has = pl.col(cols[0]).is_not_null()
    return (
        df.filter(pl.col("error").is_null())
        .group_by("system", "tier_index", "tier")
        .agg(
            has.sum().alias("n"),
            (~has).sum().alias("excluded"),
            *[pl.col(c).mean().alias(c.removeprefix(level + "_")) for c in cols],
        )
        .sort("system", "tier_index")
    )


def dry_validity_gate(run_dirs: Iterable | str | Path) -> str | None:
    """The one-line statement that dry answer scores are not valid on these runs' bench (from the
    ``dry_validity`` the runner stores in each dry run's manifest, read off the bench's audit), or
    None when they are valid or no run is dry."""
    if isinstance(run_dirs, (str, Path)):
        run_dirs = [run_dirs]
    for rd in run_dirs:
        m = read_manifest(rd)
        line = gate_line(m["config"]["bench"]["name"], m.get("dry_validity"))
        if line:
            return line
    return None


def official_table(df: pl.DataFrame) -> pl.DataFrame:
    """Per system × tier × metric: the bench's own published answer metric (answer mode: LoCoMo's QA F1,
    LongMemEval's judge, named with its prompt and hash), mean over the records that carry it (n)."""
    d = df.filter(pl.col("official_metric").is_not_null())
    metric = pl.col("official_metric").str.split(":").list.first().alias("metric")
    return (
        d.with_columns(metric)
        .group_by("system", "tier_index", "tier", "metric")
        .agg(
            pl.col("official_score").mean().alias("score"),
            pl.col("official_score").is_not_null().sum().alias("n"),
            pl.col("official_score").is_null().sum().alias("ungraded"),
        )
        .sort("system", "tier_index", "metric")
    )


def ceiling_gaps(df: pl.DataFrame, ceiling: str = CEILING) -> pl.DataFrame:
    """The axes where the ceiling system (``oracle``) scores below 1 over all tiers: what the ceiling
    cannot reach (for a text-only oracle in dry mode, IMAGE questions about photos), with n."""
    d = df.filter((pl.col("system") == ceiling) & pl.col("score").is_not_null())
    return (
        d.group_by("axis")
        .agg(pl.col("score").mean().alias("score"), pl.len().alias("n"))
        .filter(pl.col("score") < 1)
        .sort("score", "axis")
    )


def ceiling_gap_line(df: pl.DataFrame, ceiling: str = CEILING) -> str | None:
    """One line naming what the ceiling cannot reach, e.g. "ceiling (oracle) cannot reach: IMAGE 0.00
    (n=9)"; None when it reaches 1 everywhere or was not run."""
    gaps = ceiling_gaps(df, ceiling)
    if not gaps.height:
        return None
    parts = ", ".join(f"{r['axis']} {r['score']:.2f} (n={r['n']})" for r in gaps.to_dicts())
    return f"ceiling ({ceiling}) cannot reach: {parts}"
