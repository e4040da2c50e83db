"""Where multi-turn tasks break: aggregates over result records (polars).

* :func:`bad_turn_histogram` -- failed samples by the position of their breaking turn within the
  graded turns (turn 1 = the first turn the sample is judged on), per stratum, or per assertion
  mode (every failed assertion counted at its own breaking turn: ``eq``, ``persist``, ``absent``,
  ``one_of``, ``rule``, ``veto``, ``agent`` for an unknown tool or a tool loop, ``judge``).
* :func:`process_directions` -- process score and the two error directions: final right / process
  wrong (pass with a process score below 1) and final wrong / process right (fail with a perfect
  process score). Only samples long enough for process checks count.
* :func:`correction_breakdown` -- per correction kind (fact, goal, form): tasks, pass rate, response
  lag (turns from the correction to the behaviour changing; never changed counted apart) and stale
  residue (tasks where the pre-correction value came back).

Every table carries its ``n``. Rows are the latest record per (sample, agent, grader version), as in
:func:`memeval.multiturn.rates.results_frame`; pass one grader version and agent at a time.
"""

from __future__ import annotations

from typing import Iterable, Mapping

import polars as pl

from ..errors import ArgumentError
from .config import STRATA
from .records import stratum_of

__all__ = [
    "latest",
    "bad_turn_histogram",
    "process_directions",
    "correction_breakdown",
    "format_breakdown",
    "CORRECTION_KINDS",
]

CORRECTION_KINDS = ("fact", "goal", "form")


def latest(records: Iterable[Mapping], grader_version: str | None = None, agent: str | None = None) -> list[Mapping]:
    """The last record per (sample, agent, grader version), optionally of one version and agent."""
    out: dict = {}
    for r in records:
        if grader_version is not None and r.get("grader_version") != grader_version:
            continue
        if agent is not None and r.get("agent") != agent:
            continue
        out[(r.get("sample_id"), r.get("agent"), r.get("grader_version"))] = r
    return list(out.values())


def _shown(r: Mapping) -> Mapping:
    runs = r.get("runs") or [{}]
    return next((x for x in runs if x.get("verdict") == r.get("verdict")), runs[0])


def _graded(r: Mapping) -> list[int]:
    g = r.get("graded_from")
    return [t for t in r.get("turn_index") or [] if g is None or t >= g]


def _position(r: Mapping, turn) -> int | None:
    turns = _graded(r)
    return turns.index(turn) + 1 if turn in turns else None


_HIST = {"group": pl.String, "position": pl.Int64, "count": pl.Int64}


def bad_turn_histogram(records: Iterable[Mapping], by: str = "stratum") -> pl.DataFrame:
    """Counts of breaking-turn positions: ``by="stratum"`` (one per failed sample, at its
    ``bad_turn``) or ``by="mode"`` (one per failed assertion). Columns: group, position, count."""
    if by not in ("stratum", "mode"):
        raise ArgumentError(f"by must be 'stratum' or 'mode', not {by!r}")
    rows = []
    for r in records:
        if r.get("verdict") != "fail":
            continue
        if by == "stratum":
            pos = _position(r, r.get("bad_turn"))
            if pos is not None:
                rows.append({"group": r.get("stratum") or stratum_of(int(r.get("turns") or 1)), "position": pos})
        else:
            for c in _shown(r).get("failed_checks") or []:
                pos = _position(r, c.get("turn"))
                if pos is not None:
                    rows.append({"group": c["mode"], "position": pos})
    if not rows:
        return pl.DataFrame(schema=_HIST)
    df = pl.DataFrame(rows, schema={"group": pl.String, "position": pl.Int64})
    return df.group_by("group", "position").agg(pl.len().cast(pl.Int64).alias("count")).sort("group", "position")


def process_directions(records: Iterable[Mapping]) -> dict:
    """n, mean process score, and the two error directions among pass/fail samples with a process
    score (``final_right_process_wrong``, ``final_wrong_process_right``, each a count)."""
    judged = [r for r in records if r.get("verdict") in ("pass", "fail") and r.get("process_score") is not None]
    ps = [float(r["process_score"]) for r in judged]
    return {
        "n": len(judged),
        "mean_process": (sum(ps) / len(ps)) if ps else None,
        "final_right_process_wrong": sum(1 for r in judged if r["verdict"] == "pass" and r["process_score"] < 1),
        "final_wrong_process_right": sum(1 for r in judged if r["verdict"] == "fail" and r["process_score"] >= 1),
        "pass": sum(1 for r in judged if r["verdict"] == "pass"),
        "fail": sum(1 for r in judged if r["verdict"] == "fail"),
    }


_CORR = {
    "kind": pl.String,
    "tasks": pl.Int64,
    "pass": pl.Int64,
    "fail": pl.Int64,
    "rate": pl.Float64,
    "lag_n": pl.Int64,
    "mean_lag": pl.Float64,
    "never_changed": pl.Int64,
    "stale_residue": pl.Int64,
}


def correction_breakdown(records: Iterable[Mapping]) -> pl.DataFrame:
    """One row per correction kind: tasks holding such a correction in their graded turns, pass /
    fail and rate, response lag (``lag_n`` corrections whose behaviour changed, their ``mean_lag``;
    ``never_changed``), ``stale_residue`` (tasks where the old value reappeared). Goal changes have
    no value to change, so no lag."""
    out = []
    recs = list(records)
    for kind in CORRECTION_KINDS:
        with_kind = [r for r in recs if any(c.get("kind") == kind for c in r.get("correction_events") or [])]
        p = sum(1 for r in with_kind if r.get("verdict") == "pass")
        f = sum(1 for r in with_kind if r.get("verdict") == "fail")
        lags, never, residue = [], 0, 0
        for r in with_kind:
            obs = r.get("observed") or {}
            keys = {c.get("key") for c in r.get("correction_events") or [] if c.get("kind") == kind and c.get("key")}
            for k in keys if kind != "goal" else ():
                if k not in (obs.get("response_lag") or {}):
                    continue
                lag = obs["response_lag"][k]
                if lag is None:
                    never += 1
                else:
                    lags.append(lag)
            if any((obs.get("stale_residue") or {}).get(k) for k in keys):
                residue += 1
        out.append(
            {
                "kind": kind,
                "tasks": len(with_kind),
                "pass": p,
                "fail": f,
                "rate": p / (p + f) if p + f else None,
                "lag_n": len(lags),
                "mean_lag": sum(lags) / len(lags) if lags else None,
                "never_changed": never,
                "stale_residue": residue,
            }
        )
    return pl.DataFrame(out, schema=_CORR)


def _f(x, fmt=".3f") -> str:
    return "-" if x is None else format(x, fmt)


def format_breakdown(records: Iterable[Mapping]) -> str:
    """The three aggregates as text (``memeval multiturn summary``), for one version and agent."""
    recs = list(records)
    lines = []
    order = [s[0] for s in STRATA]
    for by in ("stratum", "mode"):
        h = bad_turn_histogram(recs, by)
        n = int(h["count"].sum()) if h.height else 0
        what = "failed samples" if by == "stratum" else "failed assertions"
        lines.append(f"bad turn by {by} (position among the graded turns; {what}, n={n}):")
        groups = sorted(h["group"].unique().to_list(), key=lambda g: (order.index(g) if g in order else 99, g))
        for g in groups:
            sub = h.filter(pl.col("group") == g)
            cells = ", ".join(f"turn {p}: {c}" for p, c in zip(sub["position"], sub["count"]))
            lines.append(f"  {g:8} n={int(sub['count'].sum()):<4} {cells}")
        if not groups:
            lines.append("  (no failures)")
    d = process_directions(recs)
    lines.append(
        f"process score (samples of >= 4 graded turns with pass/fail, n={d['n']}): mean "
        f"{_f(d['mean_process'])}; final right / process wrong: {d['final_right_process_wrong']} of "
        f"{d['pass']} passes; final wrong / process right: {d['final_wrong_process_right']} of "
        f"{d['fail']} fails"
    )
    lines.append("by correction kind:")
    lines.append(
        f"  {'kind':5} {'tasks':>5} {'pass':>4} {'fail':>4} {'rate':>6} {'lag n':>5} {'mean lag':>8} "
        f"{'never changed':>13} {'stale residue':>13}"
    )
    for r in correction_breakdown(recs).iter_rows(named=True):
        lines.append(
            f"  {r['kind']:5} {r['tasks']:5d} {r['pass']:4d} {r['fail']:4d} {_f(r['rate']):>6} "
            f"{r['lag_n']:5d} {_f(r['mean_lag'], '.2f'):>8} {r['never_changed']:13d} "
            f"{r['stale_residue']:13d}"
        )
    return "\n".join(lines)
