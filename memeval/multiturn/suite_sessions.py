"""The built-in suite's sessions: a seeded plan of user events per session (fact corrections, a goal
change, a form change, a standing tax constraint, detours, a confirmed save), recorded against a
:class:`~memeval.multiturn.domain.World` (tool returns keyed ``"turn:call"``, the reference
assistant texts), and the hand labels of the state each reply states.
"""

from __future__ import annotations

import hashlib
import json
import random

from .agents import reply_text
from .domain import STATE_SCHEMA, TOOLS, Desk, World, render_request
from .tools import Fixture, RecordedCall

__all__ = ["PROMPT_VERSION", "config_snapshot", "plan_session", "record_session", "hand_label", "paraphrase"]

PROMPT_VERSION = "quote-agent-v1"


def config_snapshot(grader_version: str) -> dict:
    body = {
        "prompt_version": PROMPT_VERSION,
        "tools": {k: dict(v) for k, v in TOOLS.items()},
        "defaults": {"currency": "CNY", "tax_mode": "exclusive", "form": "text", "max_steps": 4},
        "switches": {"confirm_before_write": True},
        "state_schema": STATE_SCHEMA,
    }
    cid = "cfg_" + hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()[:8]
    return {"config_id": cid, **body}


def plan_session(rng: random.Random, length: int) -> list[dict]:
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


def record_session(
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
