"""Result records: one JSON line per sample, appended and flushed as each sample finishes (the
runner writes them through the shared JSONL store, :class:`memeval.atomic.JsonlAppender`, which
drops a torn last line on opening; :func:`read_sample_records` reads them back with
``bench.files.iter_jsonl``).

Every record carries the grader version, the full grading config and its id, the verdict with its
reason and ``bad_turn``, the labels used for stratification, and per run the regenerated trace
(turn texts, tool calls, the tool returns the agent saw, the state per turn) and every check.
"""

from __future__ import annotations

from dataclasses import asdict
from .config import STRATA
from .grade import RunGrade, SampleResult
from .replay import RunTrace
from ..bench.files import check_field_types
from ..bench.io import iter_jsonl
from ..errors import InputError

__all__ = ["result_record", "read_sample_records", "check_record", "record_key", "stratum_of"]


def stratum_of(turns: int) -> str:
    for name, lo, hi, _ in STRATA:
        if turns >= lo and (hi is None or turns <= hi):
            return name
    return STRATA[0][0]


def _trace(run: RunTrace) -> list[dict]:
    return [
        {
            "turn": t.turn,
            "user_text": t.user_text,
            "text": t.text,
            "tool_calls": list(t.tool_calls),
            "tool_returns": dict(t.tool_returns),
            "state": t.state,
            "state_source": t.state_source,
            "steps": t.steps,
            "drifted": list(t.drifted),
            **({"state_errors": list(t.state_errors)} if t.state_errors else {}),
        }
        for t in run.turns
    ]


def _grade(g: RunGrade, weights: dict | None = None) -> dict:
    return {
        "verdict": g.verdict,
        "reason": g.reason,
        "score": g.score,
        "coverage": g.coverage,
        "bad_turn": g.bad_turn,
        "state_checks": [
            {
                "key": c.key,
                "mode": c.mode,
                "status": c.status,
                "bad_turn": c.bad_turn,
                "want": c.want,
                "got_last": c.got_last,
                "missing_turns": list(c.missing_turns),
                "from_turn": c.from_turn,
            }
            for c in g.state
        ],
        "final_checks": [asdict(c) for c in g.final],
        "process": asdict(g.process) if g.process else None,
        "process_score": round(g.process.score(weights), 4) if g.process and weights else None,
        "failed_checks": _failed_checks(g),
        "vetoes": [asdict(v) for v in g.vetoes],
        "judge": asdict(g.judge) if g.judge else None,
        "observed": (
            {
                "response_lag": g.observed.response_lag,
                "stale_residue": g.observed.stale_residue,
                "conflict_flagged": {str(k): v for k, v in g.observed.conflict_flagged.items()},
                "self_correction": g.observed.self_correction,
                "decision_changes": g.observed.decision_changes,
            }
            if g.observed
            else None
        ),
    }


def _failed_checks(g: RunGrade) -> list[dict]:
    """Every failed assertion with the turn it broke at: state checks by mode, rules, vetoes, and
    an agent stop (unknown tool, tool loop) -- the input of the "where does it break" histograms."""
    out = [{"mode": c.mode, "name": c.key, "turn": c.bad_turn} for c in g.state if c.status == "fail"]
    out += [{"mode": "rule", "name": c.name, "turn": g.bad_turn} for c in g.final if c.status == "fail"]
    out += [{"mode": "veto", "name": v.kind, "turn": v.turn} for v in g.vetoes]
    if g.verdict == "fail" and not out:
        out.append(
            {
                "mode": "agent" if g.reason.startswith(("unknown tool", "max_steps")) else "judge",
                "name": (g.reason or "").split(":", 1)[0],
                "turn": g.bad_turn,
            }
        )
    return out


def result_record(r: SampleResult, run_id: str = "") -> dict:
    s, lb = r.sample, r.sample.labels
    scores = sorted(g.score for _, g in r.runs if g.score is not None)
    shown = next((g for _, g in r.runs if g.verdict == r.verdict), r.runs[0][1] if r.runs else None)
    return {
        "run_id": run_id,
        "sample_id": s.sample_id,
        "session_ref": s.session_ref,
        "unit_type": s.unit_type,
        "agent": r.agent,
        "grader_version": r.config.grader_version,
        "config_id": r.config.config_id,
        "config": r.config.to_dict(),
        "verdict": r.verdict,
        "reason": r.reason,
        "bad_turn": r.bad_turn,
        "flaky_cause": r.flaky_cause,
        "score": scores[len(scores) // 2] if scores else None,
        "process_score": (round(shown.process.score(r.config.process_weights), 4) if shown and shown.process else None),
        "turns": lb.turns,
        "corrections": lb.corrections,
        "goal_changes": lb.goal_changes,
        "cross_task": lb.cross_task,
        "has_artifact": lb.has_artifact,
        "stratum": stratum_of(lb.turns),
        "turn_index": list(s.turn_index),
        "graded_from": s.graded_from,
        "correction_events": [
            {"turn": c.turn, "kind": c.kind, "key": c.key}
            for c in s.process.corrections
            if s.graded_from is None or c.turn >= s.graded_from
        ],
        "tool_fixture": s.replay.tool_fixture,
        "config_snapshot": s.replay.config_snapshot,
        "seed": s.replay.seed,
        "observed": _grade(shown)["observed"] if shown else None,
        "runs": [
            {
                **_grade(g, r.config.process_weights),
                "status": t.status,
                "drifted": list(t.drifted),
                "teacher_forced": t.teacher_forced,
                "usage": list(t.usage),
                "trace": _trace(t),
            }
            for t, g in r.runs
        ],
        **({"extra": r.extra} if r.extra else {}),
    }


def record_key(rec: dict) -> tuple:
    """What a rerun into the same file skips when already there: sample, agent and grading config."""
    return (rec.get("sample_id"), rec.get("agent"), rec.get("config_id"))


REQUIRED = ("sample_id", "agent", "grader_version", "verdict", "turns", "corrections")
_N = type(None)
#: the types summaries need (``rates.results_frame`` builds typed columns from these fields)
_TYPES = {
    "sample_id": (str,),
    "agent": (str,),
    "grader_version": (str,),
    "verdict": (str,),
    "turns": (int,),
    "corrections": (int,),
    "cross_task": (bool, _N),
    "bad_turn": (int, _N),
    "score": (int, float, _N),
    "unit_type": (str, _N),
    "run_id": (str, _N),
    "config_id": (str, _N),
}


def check_record(obj: dict, path, n: int) -> dict:
    """``obj`` if every field a summary reads is present (where required) and of its type."""
    return check_field_types(obj, path, n, _TYPES, REQUIRED, int_bits=62)


def read_sample_records(path) -> list[dict]:
    """Every whole multi-turn record of the JSONL file ``path`` (one per sample; a partial last line
    of a run still writing, or killed, is left out). Not ``run.records.read_records``, which reads
    a run folder's question records."""
    out: list[dict] = []
    first: dict[tuple, int] = {}
    for n, obj in iter_jsonl(path, skip_torn_tail=True):
        rec = check_record(obj, path, n)
        key = record_key(rec)
        if rec.get("config_id") is not None:  # one record per sample, agent and grading config
            if key in first:
                raise InputError(
                    path,
                    n,
                    "sample_id",
                    f"duplicate record of sample {key[0]!r}, agent {key[1]!r} (first on line "
                    f"{first[key]}): two writers, or a file appended twice",
                )
            first[key] = n
        out.append(rec)
    return out
