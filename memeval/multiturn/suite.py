"""The built-in multi-turn suite, generated deterministically from a seed.

Quote-editing sessions of 2 to 14 turns (fact corrections, a goal change, a form change, a standing
tax constraint, a conflicting request, detours, a confirmed save), recorded against a seeded
:class:`~memeval.multiturn.domain.World`: tool returns keyed ``"turn:call"``, the reference
assistant texts, and hand labels of the state each reply states (for measuring a state extractor).
Plus user x topic units spanning two sessions (cross-session memory).

Files in a suite folder: ``sessions.jsonl``, ``samples.jsonl``, ``fixtures.jsonl``,
``configs.jsonl``, ``state_labels.jsonl``, ``suite.yaml``.
"""

from __future__ import annotations

import hashlib
import json
import random
from dataclasses import dataclass, replace
from pathlib import Path

import yaml

from ..atomic import write_jsonl, write_text
from ..errors import InputError
from .agents import reply_text
from .domain import STATE_SCHEMA, TOOLS, Desk, World, columns_for, render_request
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
    read_samples,
    write_samples,
)
from .split import split_session
from .tools import Fixture, RecordedCall, fixture_to_dict, read_fixtures
from .split import Cut
from ..bench.io import as_int, iter_jsonl, read_yaml

__all__ = ["Suite", "generate_suite", "save_suite", "load_suite", "hand_label", "paraphrase", "SUITE_FILES"]

SUITE_FILES = ("sessions.jsonl", "samples.jsonl", "fixtures.jsonl", "configs.jsonl", "state_labels.jsonl")
GOAL_TEXT = {
    "quote": "Draft the customer's quote with the requested terms",
    "formats": "Answer which export formats are supported",
    "orders": "Group last month's orders as requested",
}
PROMPT_VERSION = "quote-agent-v1"
# what "same terms as last time" needs from the earlier session, and how that session states it
MEMORY_NEEDS = (
    MemoryNeed("currency", "USD", ("dollars", "USD")),
    MemoryNeed("tax_mode", "inclusive", ("include tax", "tax-inclusive", "incl. tax", "tax included")),
)


@dataclass(frozen=True)
class Suite:
    seed: int
    sessions: tuple[dict, ...]
    samples: tuple[Sample, ...]
    fixtures: dict
    configs: dict
    labels: tuple[dict, ...]
    world_seed: int

    def world(self) -> World:
        return World.make(self.world_seed)

    def sample(self, sample_id: str) -> Sample:
        return next(s for s in self.samples if s.sample_id == sample_id)


def _config_snapshot(grader_version: str) -> dict:
    body = {
        "prompt_version": PROMPT_VERSION,
        "tools": {k: dict(v) for k, v in TOOLS.items()},
        "defaults": {"currency": "CNY", "tax_mode": "exclusive", "form": "text", "max_steps": 4},
        "switches": {"confirm_before_write": True},
        "state_schema": STATE_SCHEMA,
    }
    cid = "cfg_" + hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()[:8]
    return {"config_id": cid, **body}


def _plan(rng: random.Random, length: int) -> list[dict]:
    """Event list of exactly ``length`` user turns."""
    cur = rng.choice(["CNY", "USD", "EUR"])
    head = (
        [{"kind": "start_nocust", "currency": cur}, {"kind": "name_customer"}]
        if length >= 4 and rng.random() < 0.3
        else [{"kind": "start", "currency": cur}]
    )
    budget = length - len(head)
    opt = []
    if budget >= 3 and rng.random() < 0.7:
        opt.append({"kind": "tax_inclusive"})
    if budget >= 3 and rng.random() < 0.6:
        opt.append(
            {
                "kind": "correct_currency",
                "currency": rng.choice([c for c in ("CNY", "USD", "EUR") if c != cur]),
                "old": cur,
            }
        )
    if budget >= 4 and rng.random() < 0.5:
        opt.append({"kind": "as_table"})
    tail = []
    if budget >= 5 and rng.random() < 0.6:
        tail.append({"kind": "confirm_save"})
    if budget >= 7 and rng.random() < 0.5:
        tail += [{"kind": "group_orders"}] + ([{"kind": "regroup"}] if rng.random() < 0.5 else [])
    extra = []
    if any(e["kind"] == "tax_inclusive" for e in opt) and budget >= 5 and rng.random() < 0.7:
        extra.append({"kind": "tax_line"})
    if budget >= 4 and rng.random() < 0.4:
        extra.append({"kind": "ask_formats"})
    if budget >= 6 and rng.random() < 0.4:
        extra.append({"kind": "ask_second_item"})
    while len(opt) + len(tail) + len(extra) > budget - 1:
        (extra or opt or tail).pop()
    n_add = budget - len(opt) - len(tail) - len(extra)
    body = opt + [{"kind": "add"} for _ in range(n_add)]
    rng.shuffle(body)
    if any(e["kind"] == "add" for e in body) and body[0]["kind"] != "add":
        i = next(i for i, e in enumerate(body) if e["kind"] == "add")
        body.insert(0, body.pop(i))
    for e in extra:
        if e["kind"] == "tax_line":
            lo = next(i for i, b in enumerate(body) if b["kind"] == "tax_inclusive") + 1
        elif e["kind"] == "ask_second_item":
            adds = [i for i, b in enumerate(body) if b["kind"] == "add"]
            lo = adds[1] + 1 if len(adds) > 1 else len(body)
        else:
            lo = 1
        body.insert(rng.randint(min(lo, len(body)), len(body)), e)
    return head + body + tail


def _record_session(
    session_id: str,
    events: list[dict],
    world: World,
    rng: random.Random,
    seed: int,
    desk: Desk | None = None,
    user_id: str | None = None,
    topic: str = "quote",
    customer: str | None = None,
) -> tuple[dict, Fixture, Desk]:
    desk = desk or Desk()
    customer = customer or rng.choice(world.customers)
    turns, calls, goal_of = [], {}, {"quote": 1}
    cur_goal = 1
    for t, ev in enumerate(events):
        kind = ev["kind"]
        fields = {k: v for k, v in ev.items() if k != "kind"}
        if kind in ("start", "name_customer", "start_same"):
            fields["customer"] = customer
        if kind == "add":
            fields = {"qty": rng.randint(1, 40), "item": rng.choice(world.items)}
        if kind == "correct_currency":
            fields["old"] = desk.currency
        text = render_request(kind, rng.randrange(2), **fields)
        parsed = {"kind": kind, **fields}
        needs_context, goal = True, cur_goal
        if kind == "ask_formats":
            goal_of.setdefault(f"formats{t}", len(goal_of) + 1)
            goal, needs_context = goal_of[f"formats{t}"], False
        elif kind == "ask_second_item":
            goal_of.setdefault(f"recall{t}", len(goal_of) + 1)
            goal = goal_of[f"recall{t}"]
        elif kind == "group_orders":
            goal_of["orders"] = len(goal_of) + 1
            cur_goal = goal = goal_of["orders"]
        elif kind in ("start", "start_nocust", "start_same") and t == 0:
            needs_context = False
        old_state = desk.snapshot()
        desk.apply(parsed)
        rec = []
        for i, (name, args) in enumerate(desk.needs(parsed)):
            ret = world.call(name, args)
            calls[f"{t}:{i}"] = RecordedCall(name, args, ret)
            rec.append({"key": f"{t}:{i}", "name": name, "args": args})
            desk.learn(name, ret)
        reply = reply_text(desk, parsed, seed, t)
        correction = {"correct_currency": "fact", "as_table": "form", "group_orders": "goal"}.get(kind)
        turns.append(
            {
                "index": t,
                "user_text": text,
                "kind": kind,
                "goal": goal,
                "needs_context": needs_context,
                "correction": correction,
                "event": parsed,
                "assistant_text": reply,
                "tool_calls": rec,
                "state": desk.snapshot(),
                "state_before": old_state,
            }
        )
    session = {
        "session_id": session_id,
        "user_id": user_id or f"u_{session_id[-4:]}",
        "topic": topic,
        "seed": seed,
        "turns": turns,
    }
    return session, Fixture(f"fx_{session_id}", calls), desk


def hand_label(turn: dict) -> dict | None:
    """The state a reference reply states (None: the reply states no quote state)."""
    kind, st = turn["kind"], turn["state"]
    if kind in ("ask_formats", "ask_second_item"):
        return None
    if kind in ("group_orders", "regroup"):
        return {"group_by": st["group_by"]}
    if not st.get("customer"):
        return None
    return {k: st[k] for k in ("customer", "currency", "tax_mode", "lines", "total", "form", "extra_tax_line", "saved")}


def paraphrase(state: dict, variant: int) -> str:
    """Free phrasings of a quote state (as a model might write them), for measuring extractors on
    text that does not follow the reference template."""
    tax = state["tax_mode"] == "inclusive"
    extras = (
        (" Laid out as a table." if state["form"] == "table" else "")
        + (" A separate tax line is included." if state["extra_tax_line"] else "")
        + (" It has been saved." if state["saved"] else "")
    )
    if variant % 2 == 0:
        return (
            f"Updated: {state['customer']}, {state['lines']} item lines, {state['total']:.2f} {state['currency']} "
            f"in total, taxes {'included' if tax else 'not included'}.{extras}"
        )
    return (
        f"{state['customer']}'s quote now stands at {state['currency']} {state['total']:,.2f} across "
        f"{state['lines']} lines ({'tax-inclusive' if tax else 'before tax'}).{extras}"
    )


def _quote_expect(turns: list[dict], idx: tuple[int, ...]) -> tuple[list[StateExpect], FinalExpect]:
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


def _sample_for_cut(session: dict, cut, fixture_id: str, cfg_id: str, grader_version: str) -> Sample:
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
        state, final = _quote_expect(turns, idx)
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


def _cross_session(k: int, world: World, rng: random.Random, seed: int, cfg_id: str, grader_version: str):
    user = f"u{k:02d}"
    day1_id, day2_id = f"ss_{seed}_m{k:02d}a", f"ss_{seed}_m{k:02d}b"
    day1_events = [
        {"kind": "start", "currency": "USD"},
        {"kind": "tax_inclusive"},
        {"kind": "add"},
        {"kind": "confirm_save"},
    ]
    s1, f1, _ = _record_session(day1_id, day1_events, world, random.Random(rng.random()), seed + 7 * k, user_id=user)
    customer = s1["turns"][0]["event"]["customer"]
    r2 = random.Random(rng.random())
    day2_desk = Desk(currency="USD", tax_mode="inclusive")
    s2, f2, _ = _record_session(
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
    base = _sample_for_cut(session, cut, fixture_id, cfg_id, grader_version)
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


def generate_suite(
    seed: int = 20261018,
    sessions: int = 24,
    cross_session: int = 2,
    grader_version: str = "r5",
    session_units: bool = False,
) -> Suite:
    """``sessions`` task sessions (lengths cycle through the 1-3, 4-8 and 9+ strata) and
    ``cross_session`` user x topic units; with ``session_units`` also a session unit per session
    holding several goals. Same arguments, same suite."""
    rng = random.Random(seed)
    world_seed = rng.randrange(10**9)
    world = World.make(world_seed)
    cfg = _config_snapshot(grader_version)
    ranges = [(2, 3), (4, 8), (9, 14)]
    all_sessions, fixtures, samples, labels = [], {}, [], []
    for k in range(sessions):
        lo, hi = ranges[k % 3]
        length = rng.randint(lo, hi)
        srng = random.Random(rng.random())
        sid = f"ss_{seed}_{k:04d}"
        sess, fx, _ = _record_session(sid, _plan(srng, length), world, srng, seed + k)
        all_sessions.append(sess)
        fixtures[fx.fixture_id] = fx
        for cut in split_session(sid, sess["turns"]):
            samples.append(_sample_for_cut(sess, cut, fx.fixture_id, cfg["config_id"], grader_version))
        whole = session_sample(sess, fx.fixture_id, cfg["config_id"], grader_version) if session_units else None
        if whole is not None:
            samples.append(whole)
    for k in range(cross_session):
        (s1, f1), (s2, f2), ut = _cross_session(k, world, rng, seed, cfg["config_id"], grader_version)
        for s, f in ((s1, f1), (s2, f2)):
            all_sessions.append(s)
            fixtures[f.fixture_id] = f
        for cut in split_session(s1["session_id"], s1["turns"]):
            samples.append(_sample_for_cut(s1, cut, f1.fixture_id, cfg["config_id"], grader_version))
        samples.append(ut)
    for s in all_sessions:
        for t in s["turns"]:
            lab = hand_label(t)
            labels.append(
                {
                    "session_id": s["session_id"],
                    "turn": t["index"],
                    "source": "reference",
                    "text": t["assistant_text"],
                    "state": lab,
                }
            )
            if lab and "customer" in lab and (len(labels) % 4 == 0):
                labels.append(
                    {
                        "session_id": s["session_id"],
                        "turn": t["index"],
                        "source": "paraphrase",
                        "text": paraphrase(lab, len(labels) // 4),
                        "state": lab,
                    }
                )
    return Suite(
        seed, tuple(all_sessions), tuple(samples), fixtures, {cfg["config_id"]: cfg}, tuple(labels), world_seed
    )


def save_suite(suite: Suite, folder) -> Path:
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    write_jsonl(folder / "sessions.jsonl", suite.sessions)
    write_samples(folder / "samples.jsonl", suite.samples)
    write_jsonl(folder / "fixtures.jsonl", (fixture_to_dict(f) for f in suite.fixtures.values()))
    write_jsonl(folder / "configs.jsonl", suite.configs.values())
    write_jsonl(folder / "state_labels.jsonl", suite.labels)
    hashes = {n: hashlib.sha256((folder / n).read_bytes()).hexdigest()[:16] for n in SUITE_FILES}
    write_text(
        folder / "suite.yaml",
        yaml.safe_dump(
            {
                "kind": "memeval-multiturn-suite",
                "seed": suite.seed,
                "world_seed": suite.world_seed,
                "sessions": len(suite.sessions),
                "samples": len(suite.samples),
                "files": hashes,
            },
            sort_keys=False,
        ),
    )
    return folder


def load_suite(folder) -> Suite:
    """Read a suite folder; every sample's fixture and config must exist."""
    folder = Path(folder)
    man_path = folder / "suite.yaml"
    man = read_yaml(man_path) or {}
    if not isinstance(man, dict):
        raise InputError(man_path, None, None, f"expected a mapping, got {type(man).__name__}")
    seeds = {k: as_int(man, k, man_path, hi=2**63) for k in ("seed", "world_seed")}
    samples = read_samples(folder / "samples.jsonl")
    fixtures = read_fixtures(folder / "fixtures.jsonl")
    configs = {}
    for n, o in iter_jsonl(folder / "configs.jsonl"):
        if not isinstance(o.get("config_id"), str):
            raise InputError(folder / "configs.jsonl", n, "config_id", "missing or not a string")
        configs[o["config_id"]] = o
    sessions = tuple(o for _, o in iter_jsonl(folder / "sessions.jsonl"))
    labels = []
    lpath = folder / "state_labels.jsonl"
    for n, o in iter_jsonl(lpath):
        if not isinstance(o.get("text"), str):
            raise InputError(lpath, n, "text", "missing or not a string")
        if not isinstance(o.get("turn"), int) or isinstance(o.get("turn"), bool):
            raise InputError(lpath, n, "turn", "missing or not an integer")
        if "state" not in o or not (o["state"] is None or isinstance(o["state"], dict)):
            raise InputError(lpath, n, "state", "expected an object or null")
        labels.append(o)
    for n, s in enumerate(samples, 1):
        if s.replay.tool_fixture not in fixtures:
            raise InputError(
                folder / "samples.jsonl", n, "replay.tool_fixture", f"unknown fixture '{s.replay.tool_fixture}'"
            )
        if s.replay.config_snapshot not in configs:
            raise InputError(
                folder / "samples.jsonl", n, "replay.config_snapshot", f"unknown config '{s.replay.config_snapshot}'"
            )
    return Suite(seeds["seed"], sessions, tuple(samples), fixtures, configs, tuple(labels), seeds["world_seed"])
