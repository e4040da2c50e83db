"""Grade replayed runs and combine three runs into one verdict.

Per run, in order: ``incomplete`` (replay stopped) > guard veto (``fail``) > coverage below the gate
(``undetermined``) > a definite state or rule failure (``fail``) > an undetermined state key
(``undetermined``) > the judge on the open part > ``pass``. A failing run whose live tool returns
differ from the recording is ``env_drift``. Across runs: pass if at least ``pass_runs`` pass; all
runs agreeing give their verdict; otherwise ``flaky`` with the cause ruled out in order
(grader, model, tool returns). The runner (:mod:`.runner`) replays and calls these.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable, Sequence, TypedDict

from .assertions import Snapshot, StateCheck, check_state
from .rules import Observed, Process, RuleCheck, Veto, coverage, final_checks, guard_vetoes, observe, process_measures
from ..scoring.judge import JudgeProtocol
from .config import DEFAULT_CONFIG, GraderConfig
from .judge import JudgeVerdict
from .replay import RunTrace, stopped_in_prefix
from .sample import ProcessExpect, Sample
from .tools import canonical

__all__ = [
    "RunGrade",
    "SampleResult",
    "graded_view",
    "grade_run",
    "combine_runs",
    "flaky_cause",
    "UNTRUSTED_REASON",
    "VERDICTS",
]

UNTRUSTED_REASON = "state extractor below its accuracy threshold"
VERDICTS = ("pass", "fail", "undetermined", "flaky", "incomplete", "env_drift")


@dataclass(frozen=True)
class RunGrade:
    verdict: str
    reason: str
    state: tuple[StateCheck, ...] = ()
    final: tuple[RuleCheck, ...] = ()
    coverage: float | None = None
    process: Process | None = None
    vetoes: tuple[Veto, ...] = ()
    judge: JudgeVerdict | None = None
    observed: Observed | None = None
    score: float | None = None
    bad_turn: int | None = None


class _Common(TypedDict):
    """The :class:`RunGrade` fields every fully replayed run carries, whatever its verdict."""

    state: tuple[StateCheck, ...]
    final: tuple[RuleCheck, ...]
    coverage: float
    process: Process | None
    vetoes: tuple[Veto, ...]
    observed: Observed


@dataclass(frozen=True)
class SampleResult:
    sample: Sample
    agent: str
    verdict: str
    reason: str
    runs: tuple[tuple[RunTrace, RunGrade], ...]
    config: GraderConfig
    flaky_cause: str | None = None
    extra: dict = field(default_factory=dict)

    @property
    def bad_turn(self) -> int | None:
        for _, g in self.runs:
            if g.verdict in ("fail", "env_drift") and g.bad_turn is not None:
                return g.bad_turn
        return None


def _share(checks) -> float | None:
    judged = [c for c in checks if c.status != "undetermined"]
    return sum(c.status == "pass" for c in judged) / len(judged) if judged else None


def _blend(cfg: GraderConfig, state, final, proc: Process | None, vetoed: bool) -> float | None:
    fparts = {"state_expect": _share(state), "final_expect": _share(final)}
    fw = {k: cfg.final_weights[k] for k, v in fparts.items() if v is not None}
    if not fw:
        return None
    final_score = sum(fw[k] * fparts[k] for k in fw) / sum(fw.values())
    parts = {"final": final_score, "guard": 0.0 if vetoed else 1.0}
    if proc is not None:
        parts["process"] = proc.score(cfg.process_weights)
    w = {k: cfg.blend[k] for k in parts}
    return round(sum(w[k] * parts[k] for k in parts) / sum(w.values()), 4)


def graded_view(sample: Sample, run: RunTrace) -> tuple[Sample, RunTrace]:
    """The part of a sample and its run that is evidence: a new goal sharing an earlier goal's prefix
    is judged only from ``graded_from`` on (assertions, process expectations, vetoes); the prefix
    was replayed as context."""
    g = sample.graded_from
    if g is None:
        return sample, run
    p = sample.process
    proc = ProcessExpect(
        tools={t: v for t, v in p.tools.items() if t >= g},
        clarify=tuple(c for c in p.clarify if c.turn >= g),
        conflicts=tuple(t for t in p.conflicts if t >= g),
        confirm_turns=tuple(t for t in p.confirm_turns if t >= g),
        corrections=tuple(c for c in p.corrections if c.turn >= g),
    )
    s = replace(
        sample,
        turn_index=tuple(t for t in sample.turn_index if t >= g),
        process=proc,
        state_expect=tuple(replace(e, from_turn=max(e.from_turn, g)) for e in sample.state_expect),
    )
    return s, replace(run, turns=tuple(t for t in run.turns if t.turn >= g))


def grade_run(
    sample: Sample,
    run: RunTrace,
    cfg: GraderConfig = DEFAULT_CONFIG,
    *,
    judge: JudgeProtocol | None = None,
    extractor_trusted: bool = True,
) -> RunGrade:
    if stopped_in_prefix(sample, run):  # the context could not be rebuilt: nothing of this goal was observed
        return RunGrade("incomplete", f"the shared prefix (context) did not replay: {run.reason}")
    if run.status == "failed":  # the agent's own fault stopped the replay (unknown tool, a loop)
        return RunGrade(
            "fail", run.reason or "agent failed", score=0.0, bad_turn=run.turns[-1].turn if run.turns else None
        )
    sample, run = graded_view(sample, run)
    if run.status != "done":
        vetoes = tuple(v for v in guard_vetoes(sample, run) if v.kind in cfg.veto)
        if vetoes:  # a veto seen before the replay stopped is decisive
            return RunGrade(
                "fail",
                f"veto: {vetoes[0].kind} at turn {vetoes[0].turn}",
                vetoes=vetoes,
                score=0.0,
                bad_turn=vetoes[0].turn,
            )
        return RunGrade("incomplete", run.reason or "replay stopped")
    snaps = [Snapshot(t.turn, t.state if t.state is not None else {}) for t in run.turns]
    state = tuple(check_state(snaps, sample.state_expect, sample.state_schema))
    final = tuple(final_checks(sample, run))
    cov = coverage(state, final)
    long_enough = len(sample.turn_index) >= cfg.min_turns
    proc = process_measures(sample, run) if long_enough else None
    vetoes = tuple(v for v in guard_vetoes(sample, run) if v.kind in cfg.veto)
    obs = observe(sample, run, state)  # labels (no credit): kept for every length
    used_extractor = any(t.state_source == "extractor" for t in run.turns)
    common = _Common(state=state, final=final, coverage=cov, process=proc, vetoes=vetoes, observed=obs)
    fails = [c for c in state if c.status == "fail"]
    bad = min((c.bad_turn for c in fails if c.bad_turn is not None), default=None)
    if vetoes:
        return RunGrade(
            "fail", f"veto: {vetoes[0].kind} at turn {vetoes[0].turn}", score=0.0, bad_turn=vetoes[0].turn, **common
        )
    if not state and not final:  # e.g. an imported transcript whose labels are not filled in yet
        return RunGrade(cfg.fallback, "no assertions to judge (state_expect and final_expect are empty)", **common)
    if used_extractor and not extractor_trusted:
        return RunGrade(cfg.fallback, UNTRUSTED_REASON, **common)
    if cov < cfg.coverage_gate:
        return RunGrade(cfg.fallback, f"rule coverage {cov:.2f} below gate {cfg.coverage_gate}", **common)
    score = _blend(cfg, state, final, proc, False)
    rule_fails = [c for c in final if c.status == "fail"]
    if fails or rule_fails:
        what = ", ".join([f"{c.key} {c.mode} (bad_turn {c.bad_turn})" for c in fails] + [c.name for c in rule_fails])
        if bad is None and rule_fails and run.turns:
            bad = run.turns[-1].turn
        return RunGrade("fail", what, score=score, bad_turn=bad, **common)
    undet = [c for c in state if c.status == "undetermined"]
    if undet:
        return RunGrade(cfg.fallback, "state key missing: " + ", ".join(c.key for c in undet), **common)
    jv = None
    if judge is not None and sample.final_expect.open_requirements:  # the judge only sees the open part
        jv = judge.grade(sample, run)
        if jv.status == "fail":
            return RunGrade(
                "fail",
                "judge: " + ", ".join(f"{k}={v}" for k, v in jv.answers.items()),
                judge=jv,
                score=score,
                **common,
            )
        if jv.status == "undetermined":
            return RunGrade(cfg.fallback, "judge gave no usable verdict for the open part", judge=jv, **common)
    return RunGrade("pass", "all checks passed", judge=jv, score=score, **common)


def _fingerprint(run: RunTrace) -> str:
    return canonical([[t.text, list(t.tool_calls), t.state] for t in run.turns] + [run.status])


def _returns(run: RunTrace) -> str:
    return canonical([dict(t.tool_returns) for t in run.turns])


def combine_runs(
    sample: Sample,
    runs: Sequence[tuple[RunTrace, RunGrade]],
    cfg: GraderConfig,
    regrade: Callable[[RunTrace], RunGrade] | None = None,
) -> tuple[str, str, str | None]:
    """(verdict, reason, flaky_cause) from the per-run grades."""
    # a failure with live tool returns differing from the recording is drift, not a regression
    # (a guard veto is the agent's own act: drift does not excuse it)
    verdicts = ["env_drift" if g.verdict == "fail" and t.drifted and not g.vetoes else g.verdict for t, g in runs]
    need = min(cfg.pass_runs, len(runs))
    passes = verdicts.count("pass")
    if passes >= need:
        return "pass", f"{passes}/{len(runs)} runs passed", None
    if len(set(verdicts)) == 1:
        return (
            verdicts[0],
            runs[0][1].reason
            if verdicts[0] != "env_drift"
            else ("failed with tool returns differing from the recording at " + ", ".join(runs[0][0].drifted)),
            None,
        )
    if "env_drift" in verdicts:
        return "env_drift", "runs disagree and tool returns differ from the recording", None
    return "flaky", f"runs disagree: {verdicts}", flaky_cause(runs, regrade)


def flaky_cause(runs: Sequence[tuple[RunTrace, RunGrade]], regrade: Callable[[RunTrace], RunGrade] | None) -> str:
    """Rule out in order: the grader (same output graded again), the model (outputs differ under the
    same seed and the same tool returns), the tool returns."""
    if regrade is not None and any(regrade(t).verdict != g.verdict for t, g in runs):
        return "grader"
    by_returns: dict[str, set] = {}
    for t, _ in runs:
        by_returns.setdefault(_returns(t), set()).add(_fingerprint(t))
    if any(len(fps) > 1 for fps in by_returns.values()):
        return "model"
    if len(by_returns) > 1:
        return "tool_returns"
    return "unknown"
