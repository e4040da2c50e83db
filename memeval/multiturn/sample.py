"""Multi-turn samples: the frozen data model (reading and writing them: :mod:`.sample_io`).

A sample is one evaluation unit cut from a recorded session (``turn``, ``task`` or ``session``;
``user_topic`` for cross-session memory). ``turn_index`` is a list of session turn indices (a task
may skip a detour), ``state_expect`` holds key/value assertions, ``replay`` what makes it re-runnable.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

__all__ = [
    "MODES",
    "UNIT_TYPES",
    "StateExpect",
    "FinalExpect",
    "ReplaySpec",
    "Labels",
    "Correction",
    "Clarify",
    "ProcessExpect",
    "MemoryNeed",
    "Sample",
]

MODES = ("eq", "one_of", "persist", "absent")
UNIT_TYPES = ("turn", "task", "session", "user_topic")
CORRECTION_KINDS = ("fact", "goal", "form")


@dataclass(frozen=True)
class StateExpect:
    """``key`` must be ``value`` (eq), in ``value`` (one_of, a list), keep ``value`` on every turn from
    ``from_turn`` (persist) or never show ``value`` from ``from_turn`` (absent)."""

    key: str
    mode: str
    value: Any
    from_turn: int = 0


@dataclass(frozen=True)
class FinalExpect:
    """Rule-checkable end state; ``open_requirements`` are free-text needs only a judge can check."""

    artifact_type: str | None = None
    must_have_columns: tuple[str, ...] = ()
    must_not_have_columns: tuple[str, ...] = ()
    answer_must_contain: tuple[str, ...] = ()
    total: float | None = None
    open_requirements: tuple[str, ...] = ()


@dataclass(frozen=True)
class ReplaySpec:
    tool_fixture: str
    config_snapshot: str
    seed: int
    grader_version: str


@dataclass(frozen=True)
class Labels:
    turns: int
    goal_changes: int
    corrections: int
    has_artifact: bool
    cross_task: bool = False


@dataclass(frozen=True)
class Correction:
    """A user correction at ``turn``: ``fact`` (key old -> new), ``goal`` or ``form``."""

    turn: int
    kind: str
    key: str | None = None
    old: Any = None
    new: Any = None


@dataclass(frozen=True)
class Clarify:
    """At ``turn`` the user left out ``item``: the agent should ask once, for that item only."""

    turn: int
    item: str


@dataclass(frozen=True)
class ProcessExpect:
    """What process checks need: expected tools per turn, clarification points, conflicts
    (requests contradicting a standing constraint), turns that confirm a write, corrections."""

    tools: dict[int, tuple[str, ...]] = field(default_factory=dict)
    clarify: tuple[Clarify, ...] = ()
    conflicts: tuple[int, ...] = ()
    confirm_turns: tuple[int, ...] = ()
    corrections: tuple[Correction, ...] = ()


@dataclass(frozen=True)
class MemoryNeed:
    """A fact a user x topic unit needs from an earlier session: ``key`` = ``value``, stated in that
    session as any of ``said_as`` (retrieved when a returned memory contains one, case-insensitive)."""

    key: str
    value: Any
    said_as: tuple[str, ...]


@dataclass(frozen=True)
class Sample:
    sample_id: str
    session_ref: str
    unit_type: str
    turn_index: tuple[int, ...]
    goal: str
    user_text: dict[int, str]
    state_expect: tuple[StateExpect, ...]
    final_expect: FinalExpect
    replay: ReplaySpec
    labels: Labels
    process: ProcessExpect = ProcessExpect()
    max_steps: int = 4
    prior_sessions: tuple[str, ...] = ()
    user_id: str | None = None
    topic: str | None = None
    graded_from: int | None = None  # a new goal sharing a prefix: turns before this are context only
    state_schema: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    memory_needs: tuple[MemoryNeed, ...] = ()
