"""Judge agreement and leniency: two gradings of the same answers compared verdict by verdict, and
a judge's acceptance of trap answers (``memeval.scoring.leniency``).

Verdicts are ``correct`` / ``partial`` / ``wrong``; a record without a score is *ungraded* and counted
apart (never as a disagreement). Cohen's kappa is over the records both gradings graded:
``(p_o − p_e) / (1 − p_e)`` with ``p_e`` from the two marginals; it is undefined (None) when
``p_e = 1`` (both judges gave one and the same verdict to everything).

>>> round(cohen_kappa([["correct", "correct"], ["wrong", "correct"], ["wrong", "wrong"]]), 6)
0.4
"""

from __future__ import annotations

from collections import Counter
from typing import Iterable, Sequence

import polars as pl

from ..errors import InputError
from ..run.folder import run_identity
from .aggregate import load_records
from .plot_base import TEMPLATE, system_colour, title_layout, update_layout

__all__ = [
    "VERDICTS",
    "cohen_kappa",
    "verdict_expr",
    "paired_verdicts",
    "agreement_table",
    "confusion_table",
    "leniency_table",
    "load_judge_pair",
    "confusion_heatmap",
    "acceptance_bars",
]

VERDICTS: tuple[str, ...] = ("correct", "partial", "wrong")


def verdict_expr() -> pl.Expr:
    """A record's verdict from ``score`` and ``verdict``: the verdict a judge wrote, else from the score
    (dry mode: 1 / 0.5 / 0); None when ungraded.

    >>> df = pl.DataFrame({"score": [0.5, None, 1.0], "verdict": [None, "wrong", "Correct"]})
    >>> df.select(verdict_expr().alias("v"))["v"].to_list()
    ['partial', None, 'correct']
    """
    score, v = pl.col("score"), pl.col("verdict").str.strip_chars().str.to_lowercase()
    return (
        pl.when(score.is_null())
        .then(None)
        .when(v.is_in(VERDICTS))
        .then(v)
        .when(score >= 1)
        .then(pl.lit("correct"))
        .when(score <= 0)
        .then(pl.lit("wrong"))
        .otherwise(pl.lit("partial"))
    )


def cohen_kappa(pairs: Iterable[Sequence[str]]) -> float | None:
    """Cohen's kappa of (a, b) verdict pairs; None for no pairs or when chance agreement is 1."""
    pairs = [tuple(p) for p in pairs]
    n = len(pairs)
    if not n:
        return None
    po = sum(a == b for a, b in pairs) / n
    ca, cb = Counter(a for a, _ in pairs), Counter(b for _, b in pairs)
    pe = sum(ca[k] * cb[k] for k in ca) / (n * n)
    if pe >= 1:
        return None
    return (po - pe) / (1 - pe)


def paired_verdicts(a: pl.DataFrame, b: pl.DataFrame) -> pl.DataFrame:
    """One row per (tier, qid, epoch) in both record frames: ``axis``, ``a``/``b`` verdicts (None =
    ungraded) and ``same_text`` (the graded answer or memories are the same in both)."""
    keys = ["tier", "qid", "epoch"]

    def side(df: pl.DataFrame, name: str) -> pl.DataFrame:
        text = pl.coalesce(pl.col("answer"), pl.col("memories_returned").list.join("\n"))
        return df.select(*keys, "axis", text.alias(f"text_{name}"), verdict_expr().alias(name))

    sa, sb = side(a, "a"), side(b, "b").drop("axis")
    j = sa.join(sb, on=keys, how="inner")
    same = pl.col("text_a").eq_missing(pl.col("text_b"))
    return j.with_columns(same.alias("same_text")).drop("text_a", "text_b").sort("tier", "axis", "qid", "epoch")


def _summary(p: pl.DataFrame) -> dict:
    both = p.filter(pl.col("a").is_not_null() & pl.col("b").is_not_null())
    pairs = list(zip(both["a"].to_list(), both["b"].to_list()))
    agree = sum(x == y for x, y in pairs)
    return {
        "n": len(pairs),
        "agreement": agree / len(pairs) if pairs else None,
        "kappa": cohen_kappa(pairs),
        "ungraded_a_only": p.filter(pl.col("a").is_null() & pl.col("b").is_not_null()).height,
        "ungraded_b_only": p.filter(pl.col("b").is_null() & pl.col("a").is_not_null()).height,
        "ungraded_both": p.filter(pl.col("a").is_null() & pl.col("b").is_null()).height,
    }


def agreement_table(pairs: pl.DataFrame) -> pl.DataFrame:
    """Per axis, then ``ALL``: ``n`` (both graded), agreement, kappa, and the ungraded counted apart."""
    rows = [
        {"axis": ax, **_summary(pairs.filter(pl.col("axis") == ax))} for ax in sorted(pairs["axis"].unique().to_list())
    ]
    rows.append({"axis": "ALL", **_summary(pairs)})
    return pl.DataFrame(
        rows,
        schema={
            "axis": pl.Utf8,
            "n": pl.Int64,
            "agreement": pl.Float64,
            "kappa": pl.Float64,
            "ungraded_a_only": pl.Int64,
            "ungraded_b_only": pl.Int64,
            "ungraded_both": pl.Int64,
        },
    )


def confusion_table(pairs: pl.DataFrame, axis: str | None = None) -> pl.DataFrame:
    """Rows: judge A's verdict (plus ``ungraded``); columns: judge B's; cells: counts."""
    p = pairs if axis is None else pairs.filter(pl.col("axis") == axis)
    labels = [*VERDICTS, "ungraded"]
    c = Counter((x or "ungraded", y or "ungraded") for x, y in zip(p["a"].to_list(), p["b"].to_list()))
    return pl.DataFrame([{"A \\ B": x, **{y: c[(x, y)] for y in labels}} for x in labels])


def leniency_table(graded: pl.DataFrame, by: Sequence[str] = ("judge", "trap")) -> pl.DataFrame:
    """Acceptance of trap answers: per group, ``n`` graded, ``accepted`` (any credit: correct or
    partial), ``full`` (correct), ``acceptance`` = accepted / n, and ``ungraded`` counted apart.
    ``graded`` has one row per (judge, probe) with ``score`` (None = ungraded)."""
    s = pl.col("score")
    return (
        graded.group_by(*by)
        .agg(
            s.is_not_null().sum().cast(pl.Int64).alias("n"),
            (s > 0).sum().cast(pl.Int64).alias("accepted"),
            (s >= 1).sum().cast(pl.Int64).alias("full"),
            s.is_null().sum().cast(pl.Int64).alias("ungraded"),
        )
        .with_columns(pl.when(pl.col("n") > 0).then(pl.col("accepted") / pl.col("n")).alias("acceptance"))
        .select(*by, "n", "accepted", "acceptance", "full", "ungraded")
        .sort(*by)
    )


def load_judge_pair(run_a, run_b) -> tuple[pl.DataFrame, str, str]:
    """``(pairs, label_a, label_b)`` for two gradings of the same answers (see ``paired_verdicts``).
    Refused in one line (:class:`InputError`, exit 2) when the runs are on different benches or question
    sets, share no question, or graded different answers."""
    ca, hash_a, set_a = run_identity(run_a)
    cb, hash_b, set_b = run_identity(run_b)
    if hash_a != hash_b:
        raise InputError(
            f"{run_b}/manifest.json",
            None,
            "config.bench.content_hash",
            f"bench content hash {hash_b[:19]} differs from {run_a}'s {hash_a[:19]}: "
            "not the same questions, refusing to compare judges",
        )
    if set_a != set_b:
        raise InputError(
            f"{run_b}/manifest.json",
            None,
            "config.question_set",
            f"question set {set_b!r} differs from {run_a}'s {set_a!r}: refusing to compare judges",
        )
    pairs = paired_verdicts(load_records([run_a]), load_records([run_b]))
    if pairs.is_empty():
        raise InputError(
            f"{run_b}/records.jsonl", None, None, f"no question in common with {run_a}: nothing to compare"
        )
    differ = pairs.filter(~pl.col("same_text")).height
    if differ:
        raise InputError(
            f"{run_b}/records.jsonl",
            None,
            "answer",
            f"{differ} of {pairs.height} shared questions hold a different answer than in "
            f"{run_a}: not two gradings of the same answers, refusing to compare judges",
        )
    return pairs, _label(ca), _label(cb)


def _label(c: dict) -> str:
    """The grader of a run: the judge's model and prompt, else the mode's rule (dry)."""
    g: dict = c["grader"] if isinstance(c.get("grader"), dict) else {}
    j = g.get("judge") if isinstance(g.get("judge"), dict) else None
    who = f"judge {j.get('model')} ({j.get('prompt')})" if j else f"{g.get('name', c.get('mode'))} rules"
    return f"{who} on {(c.get('system') or {}).get('spec', '?')} {c.get('mode')}"


def confusion_heatmap(conf: pl.DataFrame, label_a: str = "judge A", label_b: str = "judge B", title: str = ""):
    """The confusion table as a heatmap: A's verdict by row, B's by column, counts in the cells."""
    import plotly.graph_objects as go

    rows = conf["A \\ B"].to_list()
    cols = [c for c in conf.columns if c != "A \\ B"]
    z = [[conf.row(i, named=True)[c] for c in cols] for i in range(conf.height)]
    fig = go.Figure(
        go.Heatmap(
            z=z,
            x=cols,
            y=rows,
            colorscale="Blues",
            text=z,
            texttemplate="%{text}",
            hovertemplate=f"{label_a}: %{{y}}<br>{label_b}: %{{x}}<br>n = %{{z}}<extra></extra>",
        )
    )
    update_layout(
        fig,
        **title_layout(title or f"Confusion (n = {sum(map(sum, z))} records)"),
        template=TEMPLATE,
        height=420,
        xaxis_title=label_b,
        yaxis_title=label_a,
        yaxis_autorange="reversed",
    )
    return fig


def acceptance_bars(table: pl.DataFrame, by: str = "trap", title: str = ""):
    """Acceptance of trap answers per ``by`` (trap or axis), one bar group per judge, n on each bar."""
    import plotly.graph_objects as go

    fig = go.Figure()
    for judge in sorted(table["judge"].unique().to_list()):
        t = table.filter(pl.col("judge") == judge).sort(by)
        fig.add_bar(
            x=t[by].to_list(),
            y=t["acceptance"].to_list(),
            name=judge,
            marker_color=system_colour(judge),
            text=[f"{a}/{n}" for a, n in zip(t["accepted"].to_list(), t["n"].to_list())],
            textposition="outside",
            hovertemplate=f"{judge}<br>%{{x}}: %{{y:.3f}} accepted (%{{text}})<extra></extra>",
        )
    update_layout(
        fig,
        **title_layout(title or f"Acceptance of trap answers per {by} (accepted/n)"),
        template=TEMPLATE,
        barmode="group",
        yaxis=dict(title="acceptance (0 = strict)", range=[0, 1.15]),
        height=420,
    )
    return fig
