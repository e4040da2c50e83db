"""Cut a recorded session into samples by goal, with the replay test deciding disagreements.

Each session turn carries ``goal`` (a number, in order of first appearance) and ``needs_context``
(whether the turn can be replayed without what came before). Rules:

* every goal yields a sample ``<session>#g<goal>``;
* a detour (a goal whose turns sit inside another goal's span) that replays without context becomes
  its own sample (``turn`` for a single turn) and the task keeps its turns around it (``turn_index``
  skips the detour); a detour that needs context cannot be cut out: it stays in the enclosing task;
* a goal change whose first turn needs context shares the prefix: the new goal's sample starts with
  the turns of the goal it replaced.

>>> turns = [{"goal": 1}, {"goal": 1}, {"goal": 2, "needs_context": False}, {"goal": 1},
...          {"goal": 3, "needs_context": True}]
>>> [(c.sample_id, c.unit_type, c.turn_index) for c in split_session("s", turns)]
[('s#g1', 'task', (0, 1, 3)), ('s#g2', 'turn', (2,)), ('s#g3', 'task', (0, 1, 3, 4))]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

__all__ = ["Cut", "split_session"]


@dataclass(frozen=True)
class Cut:
    sample_id: str
    goal: int
    unit_type: str
    turn_index: tuple[int, ...]
    goal_changes: int
    shares_prefix_with: int | None = None


def split_session(session_id: str, turns: Sequence[Mapping]) -> list[Cut]:
    """Cuts for one session; ``turns[i]`` is turn ``i`` (``index`` keys, if present, must agree)."""
    goal_turns: dict[int, list[int]] = {}
    for i, t in enumerate(turns):
        goal_turns.setdefault(int(t["goal"]), []).append(i)
    order = sorted(goal_turns, key=lambda g: goal_turns[g][0])
    needs = {i: bool(t.get("needs_context", False)) for i, t in enumerate(turns)}

    def enclosing(g: int) -> int | None:
        lo, hi = goal_turns[g][0], goal_turns[g][-1]
        for h in order:
            if h != g and goal_turns[h][0] < lo and goal_turns[h][-1] > hi:
                return h
        return None

    owner = {g: g for g in order}  # where each goal's turns are evaluated
    for g in order:
        h = enclosing(g)
        if h is not None and any(needs[i] for i in goal_turns[g]):
            owner[g] = h  # replay test wins: cannot be cut out
    members: dict[int, list[int]] = {g: [] for g in order}
    for g in order:
        members[owner[g]].extend(goal_turns[g])
    cuts = []
    for pos, g in enumerate(order):
        if owner[g] != g:
            continue
        idx = sorted(members[g])
        prefix_of, changes = None, 0
        is_detour = enclosing(g) is not None
        if not is_detour and pos > 0 and needs[goal_turns[g][0]]:
            prev = next((h for h in reversed(order[:pos]) if owner[h] == h and enclosing(h) is None), None)
            if prev is not None:
                idx = sorted(set(idx) | {i for i in members[prev] if i < goal_turns[g][0]})
                prefix_of, changes = prev, 1
        unit = "turn" if len(idx) == 1 and not needs[idx[0]] else "task"
        cuts.append(Cut(f"{session_id}#g{g}", g, unit, tuple(idx), changes, prefix_of))
    return cuts
