"""Final rules on a replayed run (with coverage), the process measures, the guard vetoes and the
observed labels. Each function reads a :class:`RunTrace` and the sample; none calls a model.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Mapping

from .assertions import MONEY_TOL, StateCheck, tolerance
from .domain import WRITE_TOOLS
from .replay import RunTrace
from .sample import Sample
from .tools import canonical

__all__ = [
    "RuleCheck",
    "final_checks",
    "coverage",
    "Process",
    "process_measures",
    "Veto",
    "guard_vetoes",
    "Observed",
    "observe",
]


@dataclass(frozen=True)
class RuleCheck:
    name: str
    status: str  # pass | fail | undetermined
    detail: str = ""


def _last_artifact(run: RunTrace) -> dict | None:
    for t in reversed(run.turns):
        for c in reversed(t.tool_calls):
            if c["name"] == "render_sheet":
                return c["args"]
    return None


def final_checks(sample: Sample, run: RunTrace) -> list[RuleCheck]:
    """Columns present/absent, totals and required words, judged on the end of the run."""
    fe, out = sample.final_expect, []
    art = _last_artifact(run)
    cols = [str(c) for c in (art or {}).get("columns", [])]
    last_text = run.turns[-1].text if run.turns else ""
    if fe.artifact_type == "sheet":
        out.append(RuleCheck("artifact:sheet", "pass" if art else "fail", "" if art else "no sheet rendered"))
    for c in fe.must_have_columns:
        out.append(RuleCheck(f"has_column:{c}", "pass" if c in cols else "fail", f"columns={cols}"))
    for c in fe.must_not_have_columns:
        out.append(RuleCheck(f"no_column:{c}", "fail" if c in cols else "pass", f"columns={cols}"))
    for w in fe.answer_must_contain:
        ok = w.casefold() in last_text.casefold()
        out.append(RuleCheck(f"answer_contains:{w}", "pass" if ok else "fail", "" if ok else last_text[:120]))
    if fe.total is not None:
        if art and art.get("rows"):
            try:
                got = round(sum(float(r[-1]) for r in art["rows"]), 2)
            except (TypeError, ValueError, IndexError):
                got = None
            tol = 0.01 * max(1, len(art["rows"]))
        else:
            st = run.turns[-1].state if run.turns else None
            got = st.get("total") if isinstance(st, Mapping) else None
            tol = tolerance(sample.state_schema, "total") or MONEY_TOL
        if not isinstance(got, (int, float)):
            out.append(RuleCheck("total", "undetermined", "no total found"))
        else:
            ok = abs(float(got) - fe.total) <= tol
            out.append(RuleCheck("total", "pass" if ok else "fail", f"got {got}, want {fe.total}"))
    for r in fe.open_requirements:
        out.append(RuleCheck(f"open:{r}", "undetermined", "needs a judge"))
    return out


def coverage(state: Iterable[StateCheck], final: Iterable[RuleCheck]) -> float:
    """Share of assertions the rules could judge (pass or fail)."""
    sts = [c.status for c in state] + [c.status for c in final]
    return 1.0 if not sts else sum(s != "undetermined" for s in sts) / len(sts)


@dataclass(frozen=True)
class Process:
    tool_choice: float
    clarify_timing: float
    repeat_action: float
    repeats: int
    detail: dict = field(default_factory=dict)

    def score(self, weights: Mapping[str, float]) -> float:
        tot = sum(weights.values())
        return sum(weights[k] * getattr(self, k) for k in weights) / tot if tot else 0.0


def _questions(text: str) -> int:
    return text.count("?") + text.count("？")


def process_measures(sample: Sample, run: RunTrace) -> Process:
    """Tool choice, clarification timing and repeated actions over the replayed turns."""
    pe = sample.process
    ok_turns, bad_tool_turns = 0, []
    for t in run.turns:
        want = set(pe.tools.get(t.turn, ()))
        got = {c["name"] for c in t.tool_calls}
        if got == want:
            ok_turns += 1
        else:
            bad_tool_turns.append(t.turn)
    tool_choice = ok_turns / len(run.turns) if run.turns else 1.0

    clar_turns = {c.turn: c.item for c in pe.clarify}
    hits, misses = 0, []
    for t in run.turns:
        q = _questions(t.text)
        if t.turn in clar_turns:
            item = clar_turns[t.turn]
            if q == 1 and item.casefold() in t.text.casefold() and not t.tool_calls:
                hits += 1
            else:
                misses.append(t.turn)
        elif q and t.turn not in pe.conflicts:
            misses.append(t.turn)  # a question nobody needed
    denom = hits + len(misses)
    clarify = hits / denom if denom else 1.0

    repeats, prev_q = 0, None
    for t in run.turns:
        prev = None
        for c in t.tool_calls:
            cur = (c["name"], canonical(c["args"]))
            if cur == prev:
                repeats += 1
            prev = cur
        qs = t.text.strip() if _questions(t.text) else None
        if qs and qs == prev_q:
            repeats += 1
        prev_q = qs
    repeat = max(0.0, 1.0 - 0.5 * repeats)
    return Process(
        tool_choice, clarify, repeat, repeats, {"tool_mismatch_turns": bad_tool_turns, "clarify_misses": misses}
    )


@dataclass(frozen=True)
class Veto:
    kind: str  # unconfirmed_write | stale_state_used
    turn: int
    detail: str


def guard_vetoes(sample: Sample, run: RunTrace, write_tools: Iterable[str] = WRITE_TOOLS) -> list[Veto]:
    """Writes without a confirming user turn; tool calls acting on a pre-correction value."""
    writes, out = set(write_tools), []
    confirm = set(sample.process.confirm_turns)
    facts = [c for c in sample.process.corrections if c.kind == "fact" and c.key]
    for t in run.turns:
        for c in t.tool_calls:
            if c["name"] in writes and t.turn not in confirm:
                out.append(Veto("unconfirmed_write", t.turn, f"{c['name']} without confirmation"))
            for f in facts:
                if t.turn >= f.turn and c["args"].get(f.key) == f.old and f.old != f.new:
                    out.append(
                        Veto(
                            "stale_state_used",
                            t.turn,
                            f"{c['name']} used {f.key}={f.old!r} after the correction at turn {f.turn}",
                        )
                    )
    return out


@dataclass(frozen=True)
class Observed:
    """Process labels (no credit): lag per corrected key (fact and form corrections), stale residue, conflicts flagged,
    self-correction, and for decisions (one_of keys) the turns where the choice changed."""

    response_lag: dict
    stale_residue: dict
    conflict_flagged: dict
    self_correction: bool
    decision_changes: dict = field(default_factory=dict)


def observe(sample: Sample, run: RunTrace, state_checks: Iterable[StateCheck]) -> Observed:
    turns = list(run.turns)
    lag, residue = {}, {}
    for f in sample.process.corrections:
        if f.kind == "goal" or not f.key:  # facts and forms have a value to change to
            continue
        after = [(t.turn, t.state) for t in turns if t.turn >= f.turn and isinstance(t.state, Mapping)]
        changed = next((i for i, (_, st) in enumerate(after) if st.get(f.key) == f.new), None)
        lag[f.key] = changed  # turns from the correction to the behaviour changing
        later = after[changed + 1 :] if changed is not None else []
        residue[f.key] = [n for n, st in later if st.get(f.key) == f.old]
    flagged = {}
    for c in sample.process.conflicts:
        t = next((t for t in turns if t.turn == c), None)
        flagged[c] = bool(t and _questions(t.text) and not t.tool_calls)
    selfcorr = False
    for sc in state_checks:
        if sc.mode == "persist" and sc.bad_turn is not None:
            states = [t.state for t in turns if t.turn > sc.bad_turn and isinstance(t.state, Mapping)]
            fixed_by_user = any(c.turn > sc.bad_turn for c in sample.process.corrections)
            if states and states[-1].get(sc.key) == sc.want and not fixed_by_user:
                selfcorr = True
    decisions = {}
    for sc in state_checks:
        if sc.mode != "one_of":
            continue
        seen, changes = None, []
        for t in turns:
            v = t.state.get(sc.key) if isinstance(t.state, Mapping) else None
            if v is not None and seen is not None and v != seen:
                changes.append({"turn": t.turn, "from": seen, "to": v})
            seen = v if v is not None else seen
        decisions[sc.key] = changes
    return Observed(lag, residue, flagged, selfcorr, decisions)
