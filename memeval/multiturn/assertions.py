"""State assertions (``check_state``) over the per-turn state trace: eq, one_of, persist, absent.

``trace`` is the state snapshot after each replayed turn, as :class:`Snapshot` (or ``{"turn": t,
"state": {...}}``); ``from_turn`` and ``bad_turn`` are session turn numbers, so a task that skips a
detour turn is judged correctly. A key missing from a snapshot means the state extractor missed it:
the assertion is ``undetermined`` unless a definite break was seen — never a pass of ``absent``.

>>> tr = [Snapshot(3, {"tax": "excl"}), Snapshot(4, {"tax": "incl"}), Snapshot(5, {"tax": "excl"})]
>>> check_state(tr, [StateExpect("tax", "persist", "incl", 4)])[0].bad_turn
5
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

from ..errors import ArgumentError
from .sample import MODES, StateExpect

__all__ = [
    "Snapshot",
    "StateCheck",
    "UnknownModeError",
    "check_state",
    "MISSING",
    "MONEY_TOL",
    "tolerance",
    "same_value",
]

MONEY_TOL = 0.005  # half a cent: the default tolerance of a money key


class UnknownModeError(ArgumentError):
    """A ``state_expect`` mode that is not one of eq, one_of, persist, absent."""


class _Missing:
    def __repr__(self):
        return "MISSING"


MISSING = _Missing()


@dataclass(frozen=True)
class Snapshot:
    turn: int
    state: Mapping[str, Any]


@dataclass(frozen=True)
class StateCheck:
    key: str
    mode: str
    status: str  # pass | fail | undetermined
    bad_turn: int | None
    want: Any
    got_last: Any = None
    missing_turns: tuple[int, ...] = ()
    from_turn: int = 0

    @property
    def ok(self) -> bool | None:
        return {"pass": True, "fail": False}.get(self.status)


def _snap(x) -> Snapshot:
    if isinstance(x, Snapshot):
        return x
    if isinstance(x, Mapping) and "turn" in x and "state" in x:
        return Snapshot(int(x["turn"]), x["state"] or {})
    raise ArgumentError(f"trace entries must be Snapshot or {{'turn', 'state'}} mappings, got {x!r}")


def _expect(x) -> StateExpect:
    if isinstance(x, StateExpect):
        return x
    return StateExpect(
        key=x["key"], mode=x["mode"], value=x.get("value", x.get("values")), from_turn=int(x.get("from_turn", 0))
    )


def tolerance(schema: Mapping[str, Mapping] | None, key: str) -> float | None:
    """The numeric tolerance the state schema declares for ``key`` (money: half a cent by default).

    >>> tolerance({"total": {"type": "number", "money": True}}, "total")
    0.005
    >>> tolerance({"lines": {"type": "integer"}}, "lines") is None
    True
    """
    spec = (schema or {}).get(key) or {}
    if "tol" in spec:
        return float(spec["tol"])
    return MONEY_TOL if spec.get("money") else None


def same_value(got: Any, want: Any, tol: float | None = None) -> bool:
    """Equality, with numbers (never booleans) within ``tol`` when one is given.

    >>> same_value(10.004, 10.0, 0.005), same_value(10.01, 10.0, 0.005), same_value(True, 1, 0.5)
    (True, False, False)
    """
    num = (int, float)
    if (
        tol is not None
        and isinstance(got, num)
        and isinstance(want, num)
        and not isinstance(got, bool)
        and not isinstance(want, bool)
    ):
        return abs(float(got) - float(want)) <= tol + 1e-9
    if isinstance(got, bool) != isinstance(want, bool):
        return False
    return got == want


def _check_one(snaps: Sequence[Snapshot], e: StateExpect, tol: float | None = None) -> StateCheck:
    if e.mode not in MODES:
        raise UnknownModeError(f"unknown state_expect mode '{e.mode}' for key '{e.key}'")
    window = [s for s in snaps if s.turn >= e.from_turn]
    got = [(s.turn, s.state.get(e.key, MISSING) if isinstance(s.state, Mapping) else MISSING) for s in window]
    missing = tuple(t for t, v in got if v is MISSING)
    last = got[-1][1] if got else MISSING
    base = dict(
        key=e.key,
        mode=e.mode,
        want=e.value,
        missing_turns=missing,
        got_last=None if last is MISSING else last,
        from_turn=e.from_turn,
    )
    if not got:
        return StateCheck(status="undetermined", bad_turn=None, **base)
    if e.mode in ("eq", "one_of"):
        allowed = list(e.value) if e.mode == "one_of" else [e.value]

        def ok(v):
            return any(same_value(v, a, tol) for a in allowed)

        wrong = [t for t, v in got if v is not MISSING and not ok(v)]
        bad = wrong[-1] if wrong else None  # the last turn whose value was wrong
        if last is MISSING:
            return StateCheck(status="undetermined", bad_turn=bad, **base)
        return StateCheck(status="pass" if ok(last) else "fail", bad_turn=bad, **base)
    if e.mode == "persist":
        broken = [t for t, v in got if v is not MISSING and not same_value(v, e.value, tol)]
    else:  # absent
        broken = [t for t, v in got if v is not MISSING and same_value(v, e.value, tol)]
    if broken:  # the first turn that broke it
        return StateCheck(status="fail", bad_turn=broken[0], **base)
    return StateCheck(status="undetermined" if missing else "pass", bad_turn=None, **base)


def check_state(trace: Iterable, expects: Iterable, schema: Mapping[str, Mapping] | None = None) -> list[StateCheck]:
    """One :class:`StateCheck` per expectation, in order; numbers compare within the tolerance the
    state ``schema`` declares for their key. Raises :class:`UnknownModeError`."""
    snaps = [_snap(x) for x in trace]
    out = []
    for x in expects:
        e = _expect(x)
        out.append(_check_one(snaps, e, tolerance(schema, e.key)))
    return out
