"""The 17 axes of benchmark.md §3 and their weights ("what happens when it is wrong")."""

from __future__ import annotations

__all__ = ["AXIS_WEIGHTS", "AXES", "ANSWERABLE_AXES", "ABSTENTION_AXES"]

AXIS_WEIGHTS: dict[str, int] = {
    "BASIC": 1,
    "PARAPHRASE": 1,
    "IMAGE": 1,
    "XLING_QUERY": 1,
    "XLING_STORE": 1,
    "TEMPORAL": 2,
    "UPDATE": 2,
    "GATHER": 2,
    "RECONCILE": 2,
    "MULTI": 3,
    "IMPLICIT": 3,
    "CROSS": 3,
    "CONFLICT": 3,
    "STALE": 3,
    "CONTRADICT": 3,
    "ABSTAIN": 3,
    "FALSE_MEMORY": 3,
}
AXES: tuple[str, ...] = tuple(AXIS_WEIGHTS)
#: Axes whose right answer is "it was never said": no evidence to retrieve.
ABSTENTION_AXES: frozenset[str] = frozenset({"ABSTAIN", "FALSE_MEMORY"})
#: Axes with a gold that evidence turns contain (used by the ceiling check).
ANSWERABLE_AXES: tuple[str, ...] = tuple(a for a in AXES if a not in ABSTENTION_AXES | {"CONTRADICT"})
