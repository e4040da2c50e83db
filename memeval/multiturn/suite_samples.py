"""The built-in suite's samples: each recorded session cut by goal into samples with their state
assertions and final rules, the session unit of a session holding several goals, and the user x
topic units spanning two sessions (cross-session memory).
"""

from __future__ import annotations

import random
from dataclasses import replace

from .domain import STATE_SCHEMA, Desk, World, columns_for
from .sample import (
    Clarify,
    Correction,
    FinalExpect,
    Labels,
    MemoryNeed,
    ProcessExpect,
    ReplaySpec,
    Sample,
    StateExpect,
)
from .split import Cut
from .suite_sessions import record_session

__all__ = ["GOAL_TEXT", "MEMORY_NEEDS", "quote_expect", "sample_for_cut", "cross_session_unit", "session_sample"]

GOAL_TEXT = {
    "quote": "Draft the customer's quote with the requested terms",
    "formats": "Answer which export formats are supported",
    "orders": "Group last month's orders as requested",
}
# what "same terms as last time" needs from the earlier session, and how that session states it
MEMORY_NEEDS = (
    MemoryNeed("currency", "USD", ("dollars", "USD")),
    MemoryNeed("tax_mode", "inclusive", ("include tax", "tax-inclusive", "incl. tax", "tax included")),
)


def quote_expect(turns: list[dict], idx: tuple[int, ...]) -> tuple[list[StateExpect], FinalExpect]:
    ts = [turns[i] for i in idx if turns[i]["goal"] == turns[idx[0]]["goal"] or turns[i]["kind"] == "ask_second_item"]
    last = ts[-1]["state"]
    ex: list[StateExpect] = []
    first = idx[0]

    def last_turn(pred):
        return max((t["index"] for t in ts if pred(t)), default=first)

    ex.append(
        StateExpect(
            "customer",
            "eq",
            last["customer"],
            last_turn(lambda t: t["kind"] in ("start", "name_customer", "start_same")),
        )
    )
    ex.append(
        StateExpect(
            "currency",
            "eq",
            last["currency"],
            last_turn(lambda t: t["kind"] in ("start", "start_nocust", "correct_currency")),
        )
    )
    ex.append(
        StateExpect("lines", "eq", last["lines"], last_turn(lambda t: t["kind"] in ("add", "start", "start_same")))
    )
    ex.append(StateExpect("total", "eq", last["total"], ts[-1]["index"]))
    tax = [t["index"] for t in ts if t["kind"] == "tax_inclusive"]
    if tax:
        ex.append(StateExpect("tax_mode", "persist", "inclusive", tax[0]))
    conflict = [t["index"] for t in ts if t["kind"] == "tax_line"]
    if conflict:
        ex.append(StateExpect("extra_tax_line", "absent", True, conflict[0]))
    form = [t["index"] for t in ts if t["kind"] == "as_table"]
    if form:
        ex.append(StateExpect("form", "eq", "table", form[0]))
    saves = [t["index"] for t in ts if t["kind"] == "confirm_save"]
    if saves:
        ex.append(StateExpect("saved", "eq", True, saves[-1]))
    fe = FinalExpect()
    if form:
        cols = columns_for(last["tax_mode"])
        other = columns_for("exclusive" if last["tax_mode"] == "inclusive" else "inclusive")
        fe = FinalExpect(
            artifact_type="sheet",
            must_have_columns=tuple(cols),
            must_not_have_columns=tuple(other[2:]),
            total=last["total"],
        )
    if saves and ts[-1]["kind"] == "confirm_save":
        fe = replace(fe, answer_must_contain=("Saved",))
    if conflict:  # the open part, for a judge: rules see the state, not how the conflict was handled
        fe = replace(
            fe,
            open_requirements=(
                "points out that a separate tax line contradicts tax-inclusive prices and asks before adding it",
            ),
        )
    return ex, fe


def sample_for_cut(session: dict, cut, fixture_id: str, cfg_id: str, grader_version: str) -> Sample:
    turns = session["turns"]
    idx = cut.turn_index
    goal_turns = [turns[i] for i in idx if turns[i]["goal"] == cut.goal]
    kinds = {t["kind"] for t in goal_turns}
    if kinds & {"group_orders", "regroup"}:
        goal = GOAL_TEXT["orders"]
        rg = [t["index"] for t in goal_turns if t["kind"] == "regroup"]
        go = [t["index"] for t in goal_turns if t["kind"] == "group_orders"][0]
        state = [
            StateExpect("group_by", "one_of", ["region", "customer"], rg[0])
            if rg
            else StateExpect("group_by", "eq", "customer", go)
        ]
        final = FinalExpect(answer_must_contain=("Grouped",))
    elif kinds == {"ask_formats"}:
        goal, state, final = GOAL_TEXT["formats"], [], FinalExpect(answer_must_contain=("PDF", "XLSX", "CSV"))
    else:
        goal = GOAL_TEXT["quote"]
        state, final = quote_expect(turns, idx)
    sel = [turns[i] for i in idx]
    process = ProcessExpect(
        tools={t["index"]: tuple(dict.fromkeys(c["name"] for c in t["tool_calls"])) for t in sel if t["tool_calls"]},
        clarify=tuple(Clarify(t["index"], "customer") for t in sel if t["kind"] == "start_nocust"),
        conflicts=tuple(t["index"] for t in sel if t["kind"] == "tax_line"),
        confirm_turns=tuple(t["index"] for t in sel if t["kind"] == "confirm_save"),
        corrections=tuple(
            Correction(t["index"], "fact", "currency", t["state_before"]["currency"], t["state"]["currency"])
            if t["kind"] == "correct_currency"
            else Correction(t["index"], "form", "form", "text", "table")
            if t["kind"] == "as_table"
            else Correction(t["index"], "goal")
            for t in sel
            if t["correction"]
        ),
    )
    own = [t["index"] for t in goal_turns]
    graded_from = own[0] if cut.shares_prefix_with is not None and own and own[0] != idx[0] else None
    labels = Labels(
        turns=len(idx),
        goal_changes=cut.goal_changes,
        corrections=sum(
            1 for t in sel if t["correction"] in ("fact", "form") and (graded_from is None or t["index"] >= graded_from)
        ),
        has_artifact=any(t["kind"] == "as_table" for t in sel),
    )
    return Sample(
        sample_id=cut.sample_id,
        session_ref=session["session_id"],
        unit_type=cut.unit_type,
        turn_index=idx,
        goal=goal,
        user_text={i: turns[i]["user_text"] for i in idx},
        state_expect=tuple(state),
        final_expect=final,
        replay=ReplaySpec(fixture_id, cfg_id, session["seed"], grader_version),
        labels=labels,
        process=process,
        graded_from=graded_from,
        state_schema=STATE_SCHEMA,
    )


def cross_session_unit(k: int, world: World, rng: random.Random, seed: int, cfg_id: str, grader_version: str):
    user = f"u{k:02d}"
    day1_id, day2_id = f"ss_{seed}_m{k:02d}a", f"ss_{seed}_m{k:02d}b"
    day1_events = [
        {"kind": "start", "currency": "USD"},
        {"kind": "tax_inclusive"},
        {"kind": "add"},
        {"kind": "confirm_save"},
    ]
    s1, f1, _ = record_session(day1_id, day1_events, world, random.Random(rng.random()), seed + 7 * k, user_id=user)
    customer = s1["turns"][0]["event"]["customer"]
    r2 = random.Random(rng.random())
    day2_desk = Desk(currency="USD", tax_mode="inclusive")
    s2, f2, _ = record_session(
        day2_id,
        [{"kind": "start_same"}, {"kind": "add"}, {"kind": "add"}],
        world,
        r2,
        seed + 7 * k + 1,
        desk=day2_desk,
        user_id=user,
        customer=customer,
    )
    last = s2["turns"][-1]["state"]
    sample = Sample(
        sample_id=f"{day2_id}#g1",
        session_ref=day2_id,
        unit_type="user_topic",
        turn_index=(0, 1, 2),
        goal="Draft a new quote on the terms agreed last time",
        user_text={t["index"]: t["user_text"] for t in s2["turns"]},
        state_expect=(
            StateExpect("currency", "eq", "USD", 0),
            StateExpect("tax_mode", "persist", "inclusive", 0),
            StateExpect("lines", "eq", 2, 2),
            StateExpect("total", "eq", last["total"], 2),
        ),
        final_expect=FinalExpect(),
        replay=ReplaySpec(f2.fixture_id, cfg_id, s2["seed"], grader_version),
        labels=Labels(turns=3, goal_changes=0, corrections=0, has_artifact=False, cross_task=True),
        process=ProcessExpect(
            tools={t["index"]: tuple(c["name"] for c in t["tool_calls"]) for t in s2["turns"] if t["tool_calls"]}
        ),
        prior_sessions=(day1_id,),
        user_id=user,
        topic="quote",
        state_schema=STATE_SCHEMA,
        memory_needs=MEMORY_NEEDS,
    )
    return (s1, f1), (s2, f2), sample


def session_sample(session: dict, fixture_id: str, cfg_id: str, grader_version: str) -> Sample | None:
    """The session unit (``<session>#g0``, open to close) of a session holding more than one goal:
    the quote's terms carry over to the end (persist / eq judged on the last snapshot, across the
    detours and the goal change: isolation between tasks), and a later goal's own state holds.
    Answer-text rules are left to the task samples (the last reply belongs to the last task)."""
    turns = session["turns"]
    if len({t["goal"] for t in turns}) < 2:
        return None
    cut = Cut(
        f"{session['session_id']}#g0",
        0,
        "session",
        tuple(range(len(turns))),
        sum(1 for t in turns if t["correction"] == "goal"),
    )
    base = sample_for_cut(session, cut, fixture_id, cfg_id, grader_version)
    state = list(base.state_expect)
    rg = [t["index"] for t in turns if t["kind"] == "regroup"]
    go = [t["index"] for t in turns if t["kind"] == "group_orders"]
    if rg:
        state.append(StateExpect("group_by", "one_of", ["region", "customer"], rg[0]))
    elif go:
        state.append(StateExpect("group_by", "eq", "customer", go[0]))
    final = replace(base.final_expect, answer_must_contain=(), open_requirements=())
    labels = replace(
        base.labels, cross_task=True, corrections=sum(1 for t in turns if t["correction"] in ("fact", "form"))
    )
    return replace(
        base,
        goal="The whole session: every task done, terms carried over, tasks kept apart",
        state_expect=tuple(state),
        final_expect=final,
        labels=labels,
        graded_from=None,
    )
