"""Multi-turn samples as JSON: strict loading (:func:`sample_from_dict`, :func:`read_samples`) and
writing (:func:`sample_to_dict`, :func:`write_samples`). Bad input raises
:class:`memeval.errors.InputError` naming file, line and field.
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any, Iterable

from ..atomic import write_jsonl
from ..bench.io import iter_jsonl
from ..errors import InputError
from .sample import (
    CORRECTION_KINDS,
    Clarify,
    Correction,
    FinalExpect,
    Labels,
    MODES,
    MemoryNeed,
    ProcessExpect,
    ReplaySpec,
    Sample,
    StateExpect,
    UNIT_TYPES,
)

__all__ = ["sample_from_dict", "sample_to_dict", "read_samples", "write_samples"]


def _type_name(t) -> str:
    return t.__name__ if isinstance(t, type) else " or ".join(x.__name__ for x in t)


def _get(obj: dict, key: str, typ, path, n, prefix="", required=True, default=None):
    name = prefix + key
    if key not in obj or obj[key] is None:
        if required:
            raise InputError(path, n, name, "missing")
        return default
    v = obj[key]
    bad_bool = isinstance(v, bool) and typ is not bool and (typ is int or (isinstance(typ, tuple) and bool not in typ))
    if not isinstance(v, typ) or bad_bool:
        raise InputError(path, n, name, f"expected {_type_name(typ)}, got {type(v).__name__}")
    return v


def _one_of(obj: dict, key: str, allowed: tuple[str, ...], path, n, prefix="", what: str | None = None) -> str:
    """The string ``obj[key]``, which must be one of ``allowed``."""
    v = _get(obj, key, str, path, n, prefix)
    if v not in allowed:
        raise InputError(path, n, prefix + key, f"unknown {what or key} '{v}' (expected one of {', '.join(allowed)})")
    return v


def _str_list(obj: dict, key: str, path, n, prefix="") -> tuple[str, ...]:
    v = obj.get(key) or []
    if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
        raise InputError(path, n, prefix + key, "expected a list of strings")
    return tuple(v)


def _int_list(v, path, n, name) -> tuple[int, ...]:
    if not isinstance(v, list) or not all(isinstance(x, int) and not isinstance(x, bool) for x in v):
        raise InputError(path, n, name, "expected a list of integers")
    return tuple(v)


def _state_expect(obj, path, n, i) -> StateExpect:
    p = f"state_expect[{i}]."
    if not isinstance(obj, dict):
        raise InputError(path, n, f"state_expect[{i}]", "expected an object")
    mode = _one_of(obj, "mode", MODES, path, n, p)
    if "value" not in obj:
        raise InputError(path, n, p + "value", "missing")
    if mode == "one_of" and not isinstance(obj["value"], list):
        raise InputError(path, n, p + "value", "one_of needs a list of allowed values")
    return StateExpect(
        key=_get(obj, "key", str, path, n, p),
        mode=mode,
        value=obj["value"],
        from_turn=_get(obj, "from_turn", int, path, n, p, required=False, default=0),
    )


def _final_expect(obj, path, n) -> FinalExpect:
    if not isinstance(obj, dict):
        raise InputError(path, n, "final_expect", "expected an object")
    p = "final_expect."
    total = _get(obj, "total", (int, float), path, n, p, required=False)
    return FinalExpect(
        artifact_type=_get(obj, "artifact_type", str, path, n, p, required=False),
        must_have_columns=_str_list(obj, "must_have_columns", path, n, p),
        must_not_have_columns=_str_list(obj, "must_not_have_columns", path, n, p),
        answer_must_contain=_str_list(obj, "answer_must_contain", path, n, p),
        total=float(total) if total is not None else None,
        open_requirements=_str_list(obj, "open_requirements", path, n, p),
    )


def _process(obj, path, n) -> ProcessExpect:
    if obj is None:
        return ProcessExpect()
    if not isinstance(obj, dict):
        raise InputError(path, n, "process", "expected an object")
    for key, typ in (("tools", dict), ("clarify", list), ("corrections", list)):
        if not isinstance(obj.get(key) or typ(), typ):
            raise InputError(path, n, f"process.{key}", f"expected {'an object' if typ is dict else 'a list'}")
    tools = {}
    for k, v in (obj.get("tools") or {}).items():
        if not (str(k).lstrip("-").isascii() and str(k).lstrip("-").isdigit()) or len(str(k)) > 9:
            raise InputError(path, n, f"process.tools.{k}", "keys must be turn numbers")
        if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
            raise InputError(path, n, f"process.tools.{k}", "expected a list of tool names")
        tools[int(k)] = tuple(v)
    clar = []
    for i, c in enumerate(obj.get("clarify") or []):
        if not isinstance(c, dict):
            raise InputError(path, n, f"process.clarify[{i}]", "expected an object")
        clar.append(
            Clarify(
                _get(c, "turn", int, path, n, f"process.clarify[{i}]."),
                _get(c, "item", str, path, n, f"process.clarify[{i}]."),
            )
        )
    corr = []
    for i, c in enumerate(obj.get("corrections") or []):
        p = f"process.corrections[{i}]."
        if not isinstance(c, dict):
            raise InputError(path, n, p[:-1], "expected an object")
        kind = _get(c, "kind", str, path, n, p)
        if kind not in CORRECTION_KINDS:
            raise InputError(path, n, p + "kind", f"unknown correction kind '{kind}'")
        corr.append(
            Correction(
                _get(c, "turn", int, path, n, p),
                kind,
                _get(c, "key", str, path, n, p, required=False),
                c.get("old"),
                c.get("new"),
            )
        )
    return ProcessExpect(
        tools=tools,
        clarify=tuple(clar),
        conflicts=_int_list(obj.get("conflicts") or [], path, n, "process.conflicts"),
        confirm_turns=_int_list(obj.get("confirm_turns") or [], path, n, "process.confirm_turns"),
        corrections=tuple(corr),
    )


SCHEMA_TYPES = ("string", "integer", "number", "boolean")


def _state_schema(obj, path, n) -> dict:
    """``{key: {"type", "enum"?, "money"?, "tol"?}}``; numbers compare within ``tol`` (money
    defaults to half a cent)."""
    if obj is None:
        return {}
    if not isinstance(obj, dict):
        raise InputError(path, n, "state_schema", "expected an object keyed by state key")
    out = {}
    for k, v in obj.items():
        p = f"state_schema.{k}."
        if not isinstance(v, dict):
            raise InputError(path, n, f"state_schema.{k}", "expected an object")
        typ = _one_of(v, "type", SCHEMA_TYPES, path, n, p)
        spec: dict[str, Any] = {"type": typ}
        if v.get("enum") is not None:
            if not isinstance(v["enum"], list) or not v["enum"]:
                raise InputError(path, n, p + "enum", "expected a non-empty list")
            spec["enum"] = list(v["enum"])
        if v.get("money") is not None:
            spec["money"] = _get(v, "money", bool, path, n, p)
        tol = _get(v, "tol", (int, float), path, n, p, required=False)
        if tol is not None:
            if typ not in ("number", "integer") or tol < 0:
                raise InputError(path, n, p + "tol", "a tolerance needs a number type and a value >= 0")
            spec["tol"] = float(tol)
        out[k] = spec
    return out


def sample_from_dict(obj: dict, path="<dict>", n: int | None = None) -> Sample:
    """Validate one sample object; every problem names its field."""
    sid = _get(obj, "sample_id", str, path, n)
    session = _get(obj, "session_ref", str, path, n)
    unit = _one_of(obj, "unit_type", UNIT_TYPES, path, n, what="unit type")
    if "#g" not in sid or not sid.rsplit("#g", 1)[1].isdigit():
        raise InputError(path, n, "sample_id", f"'{sid}' is not '<session id>#g<goal number>'")
    if "turn_index" not in obj:
        raise InputError(path, n, "turn_index", "missing")
    turns = _int_list(obj["turn_index"], path, n, "turn_index")
    if not turns:
        raise InputError(path, n, "turn_index", "empty")
    if list(turns) != sorted(set(turns)):
        raise InputError(path, n, "turn_index", "must be a list of distinct turn indices in order")
    texts_raw = _get(obj, "user_text", dict, path, n)
    texts = {}
    for t in turns:
        v = texts_raw.get(str(t))
        if not isinstance(v, str):
            raise InputError(path, n, f"user_text.{t}", "missing user text for this turn")
        texts[t] = v
    se_raw = _get(obj, "state_expect", list, path, n, required=False, default=[])
    state = tuple(_state_expect(e, path, n, i) for i, e in enumerate(se_raw))
    rp = _get(obj, "replay", dict, path, n)
    replay = ReplaySpec(
        tool_fixture=_get(rp, "tool_fixture", str, path, n, "replay."),
        config_snapshot=_get(rp, "config_snapshot", str, path, n, "replay."),
        seed=_get(rp, "seed", int, path, n, "replay."),
        grader_version=_get(rp, "grader_version", str, path, n, "replay."),
    )
    lb = _get(obj, "labels", dict, path, n)
    labels = Labels(
        turns=_get(lb, "turns", int, path, n, "labels."),
        goal_changes=_get(lb, "goal_changes", int, path, n, "labels."),
        corrections=_get(lb, "corrections", int, path, n, "labels."),
        has_artifact=_get(lb, "has_artifact", bool, path, n, "labels."),
        cross_task=_get(lb, "cross_task", bool, path, n, "labels.", required=False, default=False),
    )
    if labels.turns != len(turns):
        raise InputError(path, n, "labels.turns", f"{labels.turns} but turn_index has {len(turns)} turns")
    max_steps = _get(obj, "max_steps", int, path, n, required=False, default=4)
    if max_steps < 1:
        raise InputError(path, n, "max_steps", "must be at least 1")
    prior = _str_list(obj, "prior_sessions", path, n)
    graded_from = _get(obj, "graded_from", int, path, n, required=False)
    if graded_from is not None and graded_from not in turns:
        raise InputError(path, n, "graded_from", f"{graded_from} is not one of the sample's turns")
    schema = _state_schema(obj.get("state_schema"), path, n)
    needs = []
    for i, m in enumerate(obj.get("memory_needs") or []):
        p = f"memory_needs[{i}]."
        if not isinstance(m, dict):
            raise InputError(path, n, p[:-1], "expected an object")
        said = _str_list(m, "said_as", path, n, p)
        if not said:
            raise InputError(path, n, p + "said_as", "needs at least one phrasing")
        if "value" not in m:
            raise InputError(path, n, p + "value", "missing")
        needs.append(MemoryNeed(_get(m, "key", str, path, n, p), m["value"], said))
    return Sample(
        sample_id=sid,
        session_ref=session,
        unit_type=unit,
        turn_index=turns,
        goal=_get(obj, "goal", str, path, n, required=False, default=""),
        user_text=texts,
        state_expect=state,
        final_expect=_final_expect(obj.get("final_expect") or {}, path, n),
        replay=replay,
        labels=labels,
        process=_process(obj.get("process"), path, n),
        max_steps=max_steps,
        prior_sessions=prior,
        user_id=_get(obj, "user_id", str, path, n, required=False),
        topic=_get(obj, "topic", str, path, n, required=False),
        graded_from=graded_from,
        state_schema=schema,
        memory_needs=tuple(needs),
    )


def _drop_empty(d: dict) -> dict:
    return {k: v for k, v in d.items() if v not in (None, (), [], {})}


def sample_to_dict(s: Sample) -> dict:
    """The JSON form (what :func:`sample_from_dict` reads back)."""
    d = {
        "sample_id": s.sample_id,
        "session_ref": s.session_ref,
        "unit_type": s.unit_type,
        "turn_index": list(s.turn_index),
        "goal": s.goal,
        "user_text": {str(t): s.user_text[t] for t in s.turn_index},
        "state_expect": [asdict(e) for e in s.state_expect],
        "final_expect": _drop_empty(
            {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(s.final_expect).items()}
        ),
        "replay": asdict(s.replay),
        "labels": asdict(s.labels),
        "max_steps": s.max_steps,
    }
    p = s.process
    proc = _drop_empty(
        {
            "tools": {str(k): list(v) for k, v in p.tools.items()},
            "clarify": [asdict(c) for c in p.clarify],
            "conflicts": list(p.conflicts),
            "confirm_turns": list(p.confirm_turns),
            "corrections": [asdict(c) for c in p.corrections],
        }
    )
    if proc:
        d["process"] = proc
    if s.prior_sessions:
        d["prior_sessions"] = list(s.prior_sessions)
    if s.user_id:
        d["user_id"], d["topic"] = s.user_id, s.topic
    if s.graded_from is not None:
        d["graded_from"] = s.graded_from
    if s.memory_needs:
        d["memory_needs"] = [{"key": m.key, "value": m.value, "said_as": list(m.said_as)} for m in s.memory_needs]
    if s.state_schema:
        d["state_schema"] = {k: dict(v) for k, v in s.state_schema.items()}
    return d


def read_samples(path) -> list[Sample]:
    """All samples of a JSONL file; duplicate ``sample_id`` is an error."""
    out: list[Sample] = []
    seen: dict[str, int] = {}  # sample_id -> line
    for n, obj in iter_jsonl(path):
        s = sample_from_dict(obj, path, n)
        if s.sample_id in seen:
            raise InputError(path, n, "sample_id", f"duplicate of line {seen[s.sample_id]}")
        seen[s.sample_id] = n
        out.append(s)
    return out


def write_samples(path: str | Path, samples: Iterable[Sample]) -> int:
    return write_jsonl(path, (sample_to_dict(s) for s in samples))
