"""Tool returns during replay: recorded fixtures (the default) or live tools compared with them.

Fixtures are keyed ``"{turn}:{call_index}"`` (``call_index`` counts every call of the turn, across
steps). A call is served the recording at its key, or else a recorded call of the same tool with the
same arguments in their normal form (:func:`_loose`: case, blanks, 36 vs "36", null keys) not served
yet — a real model's harmless differences in order or spelling do not stop the replay (``--live-tools``
calls the real tools where the environment must be exact). A call with no such recording raises
:class:`MissingFixture` — the replayer marks the sample ``incomplete`` and never falls back to a live
call. An identical repeat of a recorded read-only call (same tool, same arguments) is served the
recorded return, so repeated actions stay observable offline.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Protocol

from ..errors import InputError, MemevalError
from ..bench.io import iter_jsonl

__all__ = [
    "ToolCall",
    "ToolReturn",
    "RecordedCall",
    "Fixture",
    "MissingFixture",
    "ToolSource",
    "FixtureTools",
    "LiveTools",
    "UnknownTool",
    "read_fixtures",
    "fixture_to_dict",
    "canonical",
]


def canonical(obj: Any) -> str:
    """A stable text form used to compare arguments and returns."""
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


@dataclass(frozen=True)
class ToolCall:
    name: str
    args: Mapping[str, Any]
    id: str = ""


@dataclass(frozen=True)
class RecordedCall:
    tool: str
    args: Mapping[str, Any]
    result: Any


@dataclass(frozen=True)
class Fixture:
    fixture_id: str
    calls: Mapping[str, RecordedCall]


@dataclass(frozen=True)
class ToolReturn:
    key: str
    content: Any
    source: str  # recorded | reused:<key> | live
    differs: bool = False  # live return differs from the recording


class MissingFixture(MemevalError):
    def __init__(self, key: str, reason: str):
        super().__init__(f"{key}: {reason}")
        self.key, self.reason = key, reason


class UnknownTool(MemevalError):
    """The agent called a tool the registry does not have: the agent's fault (a ``fail``), unlike a
    gap in the recording (:class:`MissingFixture`, ``incomplete``)."""

    def __init__(self, key: str, name: str):
        super().__init__(f"{key}: unknown tool '{name}'")
        self.key, self.name = key, name


class ToolSource(Protocol):
    def call(self, key: str, call: ToolCall) -> ToolReturn: ...


def _loose(obj: Any) -> str:
    """Arguments in a normal form, so a model's harmless differences match the recording: strings
    case-folded with blanks collapsed (a numeric string read as its number), numbers compared as
    numbers (36, 36.0 and "36" alike), keys whose value is null or empty left out.

    >>> _loose({"customer": " Acme  Trading", "qty": "36", "note": None}) == _loose({"qty": 36.0, "customer": "acme trading"})
    True
    """

    def norm(x):
        if isinstance(x, str):
            t = " ".join(x.split()).casefold()
            try:
                return float(t) if t and t.lstrip("-").replace(".", "", 1).isdigit() else t
            except ValueError:
                return t
        if isinstance(x, bool) or x is None:
            return x
        if isinstance(x, (int, float)):
            return float(x)
        if isinstance(x, dict):
            return {k: norm(v) for k, v in x.items() if v is not None and v != ""}
        if isinstance(x, (list, tuple)):
            return [norm(v) for v in x]
        return x

    return canonical(norm(obj))


@dataclass
class FixtureTools:
    """Recorded returns only.

    ``read_only``: tools whose identical repeats may be re-served from the recording.
    ``match_args``: lookup tools whose return depends on the query, so a call with other arguments
    than the recorded one is not served (the sample becomes ``incomplete``); other tools (renders,
    writes) take the agent's output as arguments and are matched by name.
    """

    fixture: Fixture
    read_only: frozenset[str] = frozenset()
    match_args: frozenset[str] = frozenset()
    known: frozenset[str] = frozenset()  # the tool registry (empty: not checked)
    served: set[str] = field(default_factory=set)  # recorded keys already served (one replay)

    def call(self, key: str, call: ToolCall) -> ToolReturn:
        if self.known and call.name not in self.known:
            raise UnknownTool(key, call.name)
        rec = self.fixture.calls.get(key)
        if (
            rec is not None
            and key not in self.served
            and rec.tool == call.name
            and (call.name not in self.match_args or _loose(dict(rec.args)) == _loose(dict(call.args)))
        ):
            self.served.add(key)
            return ToolReturn(key, rec.result, "recorded")
        want = _loose(dict(call.args))
        for k, r in self.fixture.calls.items():  # the same call recorded elsewhere (another order or step)
            if k not in self.served and r.tool == call.name and _loose(dict(r.args)) == want:
                self.served.add(k)
                return ToolReturn(key, r.result, f"matched:{k}")
        if call.name in self.read_only:
            for k, r in self.fixture.calls.items():
                if r.tool == call.name and _loose(dict(r.args)) == want:
                    return ToolReturn(key, r.result, f"reused:{k}")
        if rec is None:
            raise MissingFixture(key, f"no recorded return for {call.name}")
        if rec.tool != call.name:
            raise MissingFixture(key, f"recorded call is {rec.tool}, agent called {call.name}")
        raise MissingFixture(
            key,
            f"recorded {rec.tool}({canonical(dict(rec.args))}), agent asked {call.name}({canonical(dict(call.args))})",
        )


@dataclass
class LiveTools:
    """Calls ``run(name, args)`` (the real tools) and notes where the return differs from the
    recording: a failing sample with differing returns is ``env_drift``, not a regression."""

    run: Callable[[str, dict], Any]
    fixture: Fixture | None = None
    seen: dict = field(default_factory=dict)
    known: frozenset[str] = frozenset()  # the tool registry (empty: not checked)

    def call(self, key: str, call: ToolCall) -> ToolReturn:
        if self.known and call.name not in self.known:
            raise UnknownTool(key, call.name)
        out = self.run(call.name, dict(call.args))
        rec = self.fixture.calls.get(key) if self.fixture else None
        differs = bool(rec is not None and rec.tool == call.name and canonical(rec.result) != canonical(out))
        return ToolReturn(key, out, "live", differs)


def _fixture_from_dict(obj: dict, path, n) -> Fixture:
    fid = obj.get("fixture_id")
    if not isinstance(fid, str):
        raise InputError(path, n, "fixture_id", "missing or not a string")
    calls = obj.get("calls")
    if not isinstance(calls, dict):
        raise InputError(path, n, "calls", "expected an object keyed 'turn:call_index'")
    out = {}
    for k, v in calls.items():
        t, _, c = k.partition(":")
        if not (t.isdigit() and c.isdigit()):
            raise InputError(path, n, f"calls.{k}", "key must be 'turn:call_index'")
        if (
            not isinstance(v, dict)
            or not isinstance(v.get("tool"), str)
            or "result" not in v
            or not isinstance(v.get("args") or {}, dict)
        ):
            raise InputError(path, n, f"calls.{k}", "expected {tool, args (an object), result}")
        out[k] = RecordedCall(v["tool"], dict(v.get("args") or {}), v["result"])
    return Fixture(fid, out)


def read_fixtures(path) -> dict[str, Fixture]:
    out: dict[str, Fixture] = {}
    for n, obj in iter_jsonl(path):
        fx = _fixture_from_dict(obj, path, n)
        if fx.fixture_id in out:
            raise InputError(path, n, "fixture_id", f"duplicate '{fx.fixture_id}'")
        out[fx.fixture_id] = fx
    return out


def fixture_to_dict(fx: Fixture) -> dict:
    return {
        "fixture_id": fx.fixture_id,
        "calls": {k: {"tool": r.tool, "args": dict(r.args), "result": r.result} for k, r in fx.calls.items()},
    }
