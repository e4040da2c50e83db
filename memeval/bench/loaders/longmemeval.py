"""LongMemEval (xiaowu0162/LongMemEval) → a bench: one haystack per question, one tier per file.

``longmemeval_oracle.json``, ``longmemeval_s*.json`` and ``longmemeval_m*.json`` hold the same
questions with haystacks of growing size; any subset becomes the tiers ``oracle``, ``s``, ``m`` of
one bench. Files are read one instance at a time (the M file is several gigabytes).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import replace
from datetime import datetime
from functools import lru_cache
from itertools import chain
from pathlib import Path
from typing import Any, Iterable, NamedTuple

from ...atomic import write_jsonl
from ...errors import BenchContractError, InputError, MemevalError
from ..io import file_sha256, json_strings, save_bench
from ..model import Bench, Question, Turn
from ..tokens import TOKENIZER
from ._common import SourceRecord, TierCounter, staged_output
from ._jsonstream import iter_json_array

__all__ = [
    "AXIS_MAP",
    "TIER_ORDER",
    "import_longmemeval",
    "convert_instance",
    "instance_lines",
    "parse_date",
    "tier_name_for",
    "haystack_id",
    "export_hypotheses",
]

#: question_type → axis. Abstention questions (id ending ``_abs``) go to ABSTAIN whatever their type.
AXIS_MAP: dict[str, str] = {
    "single-session-user": "BASIC",
    "single-session-assistant": "BASIC",
    "single-session-preference": "IMPLICIT",
    "multi-session": "MULTI",
    "temporal-reasoning": "TEMPORAL",
    "knowledge-update": "UPDATE",
    "*_abs": "ABSTAIN",
}
TIER_ORDER = ("oracle", "s", "m")
LICENSE = "MIT"
SOURCE = "https://github.com/xiaowu0162/LongMemEval"
NOTES = [
    "dry mode is an approximation of LongMemEval's official grader, a GPT-4o judge with one prompt "
    "per question type; for official numbers export hypotheses (memeval export-longmemeval) and run "
    "the official evaluator",
    "single-session-preference is mapped to IMPLICIT: its gold is a rubric of the user's preferences "
    "(what a good personalised reply uses), which dry matching rarely finds verbatim",
    "question ids ending in _abs are abstention questions: axis ABSTAIN, expect no_memory, no evidence",
    "evidence = turns with has_answer; where a question has none, every turn of its answer sessions",
    "haystack ids are opaque (lme- + a hash of the question id; see each question's haystack field) so "
    "that no turn field tells abstention haystacks apart; sessions are renumbered 1..N per haystack in date order; original session ids of the answer "
    "sessions are kept in each question's answer_session_ids",
    "tiers are not guaranteed to nest (each file has its own filler sessions; memeval audit shows whether "
    "they do): compare tiers on the question ids they share",
]

_DATE = re.compile(r"^\s*(\d{4})/(\d{1,2})/(\d{1,2})(?:\s*\(\w+\))?\s*(?:(\d{1,2}):(\d{2}))?\s*$")
_TIER = re.compile(r"longmemeval_(oracle|s|m)(?=$|[_.\-])", re.I)


def tier_name_for(path) -> str:
    """``longmemeval_s_cleaned.json`` → ``s``; an unrecognised name → its stem."""
    m = _TIER.search(Path(path).name)
    return m.group(1).lower() if m else Path(path).stem


def haystack_id(question_id: str) -> str:
    """An opaque haystack id per question: the question id itself would tell an ingesting system
    which haystacks belong to abstention questions (the ``_abs`` suffix)."""
    return "lme-" + hashlib.sha256(question_id.encode("utf-8")).hexdigest()[:12]


def parse_date(text: str) -> datetime:
    """``"2023/05/20 (Sat) 02:21"`` → datetime(2023, 5, 20, 2, 21); ValueError if not in that shape."""
    m = _DATE.match(text) if isinstance(text, str) else None
    if not m:
        raise BenchContractError(f"expected a date like '2023/05/20 (Sat) 02:21', got {text!r}")
    y, mo, d, hh, mm = m.groups()
    return datetime(int(y), int(mo), int(d), int(hh or 0), int(mm or 0))


_session_date = lru_cache(maxsize=4096)(parse_date)  # haystacks repeat their sessions' dates


class _Rec(SourceRecord):
    """A LongMemEval instance, named by its ``question_id`` in errors."""

    def __init__(self, path, index: int, obj: Any):
        super().__init__(path, index, obj, "question_id")

    def str_list(self, obj: dict, key: str, required: bool = True) -> list[str]:
        if key not in obj and not required:
            return []
        v = self.get(obj, key, list)
        for i, x in enumerate(v):
            if not isinstance(x, str):
                raise self.err(f"{key}[{i}]", f"expected str, got {type(x).__name__}")
        return v


class _Head(NamedTuple):
    """An instance's fields other than its turns; ``dated``: (date, index) of its sessions in date
    order (stable for equal dates: file order)."""

    qid: str
    qtype: str
    question: str
    answer: Any
    asked: datetime
    sids: list
    sessions: list
    answer_sids: list
    dated: list


def _header(r: _Rec, obj: Any) -> _Head:
    """An instance's fields other than its turns, checked in file order."""
    if not isinstance(obj, dict):
        raise r.err(None, f"expected a JSON object, got {type(obj).__name__}")
    qid = r.get(obj, "question_id", str)
    qtype = r.get(obj, "question_type", str)
    if qtype not in AXIS_MAP:
        raise r.err(
            "question_type", f"unknown type {qtype!r} (known: {', '.join(k for k in AXIS_MAP if '*' not in k)})"
        )
    question = r.get(obj, "question", str)
    answer = r.get(obj, "answer", (str, int, float))
    try:
        asked = parse_date(r.get(obj, "question_date", str))
    except ValueError as e:
        raise r.err("question_date", str(e)) from None
    sids = r.str_list(obj, "haystack_session_ids")
    dates_raw = r.str_list(obj, "haystack_dates")
    sessions = r.get(obj, "haystack_sessions", list)
    if not (len(sids) == len(dates_raw) == len(sessions)):
        raise r.err(
            "haystack_sessions",
            f"{len(sessions)} sessions but {len(sids)} haystack_session_ids and {len(dates_raw)} haystack_dates",
        )
    answer_sids = r.str_list(obj, "answer_session_ids", required=False)
    dated = []
    for i, (raw, sess) in enumerate(zip(dates_raw, sessions)):
        try:
            when = _session_date(raw)
        except ValueError as e:
            raise r.err(f"haystack_dates[{i}]", str(e)) from None
        if not isinstance(sess, list):
            raise r.err(f"haystack_sessions[{i}]", f"expected a list of turns, got {type(sess).__name__}")
        dated.append((when, i))
    dated.sort()
    return _Head(qid, qtype, question, answer, asked, sids, sessions, answer_sids, dated)


def _turn_fields(r: _Rec, t: Any, i: int, j: int) -> tuple[str, str, bool]:
    """Turn ``j`` of session ``i``: (role, content, has_answer), each checked."""
    where = f"haystack_sessions[{i}][{j}]"
    if not isinstance(t, dict):
        raise r.err(where, f"expected an object, got {type(t).__name__}")
    role = r.get(t, "role", str, f"{where}.role")
    if role not in ("user", "assistant"):
        raise r.err(f"{where}.role", f"expected 'user' or 'assistant', got {role!r}")
    content = r.get(t, "content", str, f"{where}.content")
    has = t.get("has_answer", False)
    if not isinstance(has, bool):
        raise r.err(f"{where}.has_answer", f"expected true or false, got {has!r}")
    return role, content, has


def _question(head: _Head, hay: str, flagged: list[tuple[int, int]], answer_turns: list[int], ev_sessions: list[int]):
    """The question of an instance: evidence = its ``has_answer`` turns (``flagged``: turn and session
    ids), else every turn of its answer sessions; none for an abstention question."""
    qid, qtype = head.qid, head.qtype
    abstain = qid.endswith("_abs")
    evidence = () if abstain else tuple([tid for tid, _ in flagged] or answer_turns)
    if evidence:  # the answer turns' sessions are answer sessions already
        ev_sessions = sorted({sid for _, sid in flagged} | set(ev_sessions))
    return Question(
        id=qid,
        axis="ABSTAIN" if abstain else AXIS_MAP[qtype],
        question_en=head.question,
        gold_answer=str(head.answer),
        expect="no_memory" if abstain else "answer",
        evidence_turns=evidence,
        evidence_sessions=() if abstain else tuple(ev_sessions),
        asked_at=head.asked.date().isoformat(),
        haystack=hay,
        extra={"question_type": qtype, "answer_session_ids": head.answer_sids},
    )


def convert_instance(obj: Any, path="<json>", index: int = 0) -> tuple[list[Turn], Question]:
    """One LongMemEval instance → (its haystack's turns, its question). The import writes the same
    turns without building them (:func:`instance_lines`); this is the reference it is tested against."""
    r = _Rec(path, index, obj)
    head = _header(r, obj)
    qid, sids, sessions, answer_sids, dated = head.qid, head.sids, head.sessions, head.answer_sids, head.dated
    hay = haystack_id(qid)
    turns: list[Turn] = []
    flagged: list[tuple[int, int]] = []
    answer_turns: list[int] = []
    ev_sessions: list[int] = []
    answer_set = set(answer_sids)
    for new_sid, (when, i) in enumerate(dated, 1):
        day = when.date().isoformat()
        for j, t in enumerate(sessions[i]):
            role, content, has = _turn_fields(r, t, i, j)
            tid = len(turns) + 1
            turns.append(Turn(turn_id=tid, session_id=new_sid, speaker=role, text=content, date=day, haystack=hay))
            if has:
                flagged.append((tid, new_sid))
            if sids[i] in answer_set:
                answer_turns.append(tid)
        if sids[i] in answer_set:
            ev_sessions.append(new_sid)
    return turns, _question(head, hay, flagged, answer_turns, ev_sessions)


_BOOL = frozenset({bool})
_TURN_ID: list[bytes] = []  # b'{"turn_id": N' for N = 1, 2, ... (as many as the longest haystack so far)


def _turn_id_heads(n: int) -> list[bytes]:
    """The first ``n`` of ``b'{"turn_id": 1'``, ``b'{"turn_id": 2'``, ... (a longer list replaces the
    shared one whole: imports in two threads never see it half extended)."""
    global _TURN_ID
    heads = _TURN_ID
    if len(heads) < n:
        heads = heads + [b'{"turn_id": %d' % k for k in range(len(heads) + 1, n + 1)]
        _TURN_ID = heads
    return heads[:n]


def instance_lines(obj: Any, path="<json>", index: int = 0) -> tuple[bytes, int, list[str], Question]:
    """One LongMemEval instance → (its turn lines as the tier file holds them, UTF-8; how many; one
    text per session that has turns, its turns' texts joined by spaces, for token counts; its
    question): the bytes of ``turn_line`` over :func:`convert_instance`'s turns, with the same errors,
    without a :class:`Turn` per turn (an import writes millions). Each session's turns are checked
    field by field in bulk (a failed check re-checks them one by one to name the field), all texts
    escaped in one pass (:func:`json_strings`) and the lines joined from their parts.

    >>> inst = {"question_id": "q1", "question_type": "multi-session", "question": "?", "answer": 2,
    ...         "question_date": "2023/06/01", "haystack_session_ids": ["a"], "haystack_dates": ["2023/05/20"],
    ...         "haystack_sessions": [[{"role": "user", "content": 'Café "Zur Post"', "has_answer": True}]]}
    >>> lines, n, texts, q = instance_lines(inst)
    >>> print(lines.decode(), end="")
    {"turn_id": 1, "session_id": 1, "speaker": "user", "text": "Café \\"Zur Post\\"", "date": "2023-05-20", "haystack": "lme-c75de8c1b7c3"}
    >>> n, texts, q.evidence_turns
    (1, ['Café "Zur Post"'], (1,))
    """
    r = _Rec(path, index, obj)
    head = _header(r, obj)
    qid, sids, sessions, answer_sids, dated = head.qid, head.sids, head.sessions, head.answer_sids, head.dated
    hay = haystack_id(qid).encode()
    contents: list[str] = []  # every turn's text, in order
    heads: list[bytes] = []  # every turn's line from ', "session_id"' to the text's opening quote
    tails: list[bytes] = []  # every turn's line from the text's closing quote to the newline
    texts: list[str] = []
    flagged: list[tuple[int, int]] = []
    answer_turns: list[int] = []
    ev_sessions: list[int] = []
    answer_set = set(answer_sids)
    for new_sid, (when, i) in enumerate(dated, 1):
        sess = sessions[i]
        if sess:
            # a line is turn_line's: {"turn_id": T, "session_id": S, "speaker": R, "text": X, "date": D,
            # "haystack": H} (R is user or assistant, D an ISO date, H lme-<hex>: none needs escaping)
            mids = {
                "user": b', "session_id": %d, "speaker": "user", "text": "' % new_sid,
                "assistant": b', "session_id": %d, "speaker": "assistant", "text": "' % new_sid,
            }
            try:  # any turn not an object with a known role, a str content and a bool has_answer fails here
                roles = list(map(mids.__getitem__, [t["role"] for t in sess]))
                cs = [t["content"] for t in sess]
                has = [t.get("has_answer", False) for t in sess]
                text = " ".join(cs)
                ok = set(map(type, has)) <= _BOOL and all(map(dict.__instancecheck__, sess))
            except (TypeError, KeyError, AttributeError):
                ok = False
            if not ok:  # name the first bad field (or, for an input the bulk check is too strict for, read it)
                fields = [_turn_fields(r, t, i, j) for j, t in enumerate(sess)]
                roles = [mids[f[0]] for f in fields]
                cs = [f[1] for f in fields]
                has = [f[2] for f in fields]
                text = " ".join(cs)
            first = len(contents)
            contents += cs
            heads += roles
            tails += [b'", "date": "%s", "haystack": "%s"}\n' % (when.date().isoformat().encode(), hay)] * len(cs)
            texts.append(text)
            if True in has:
                flagged += [(first + k, new_sid) for k, h in enumerate(has, 1) if h]
            if sids[i] in answer_set:
                answer_turns.extend(range(first + 1, len(contents) + 1))
        if sids[i] in answer_set:
            ev_sessions.append(new_sid)
    n = len(contents)
    lines = b"".join(chain.from_iterable(zip(_turn_id_heads(n), heads, json_strings(contents), tails)))
    return lines, n, texts, _question(head, hay.decode(), flagged, answer_turns, ev_sessions)


def import_longmemeval(paths: Iterable, out, *, name: str = "longmemeval", force: bool = False) -> Bench:
    """Convert LongMemEval files (any of oracle / s / m) into one bench folder at ``out``."""
    paths = [Path(p) for p in paths]
    if not paths:
        raise MemevalError("longmemeval: give at least one file (longmemeval_oracle.json, _s, _m)")
    by_tier: dict[str, Path] = {}
    for p in paths:
        if not p.is_file():
            raise InputError(p, None, None, "no such file")
        t = tier_name_for(p)
        if t in by_tier:
            raise InputError(p, None, None, f"tier {t!r} already comes from {by_tier[t]}")
        by_tier[t] = p
    order = sorted(
        by_tier, key=lambda t: (TIER_ORDER.index(t) if t in TIER_ORDER else len(TIER_ORDER), list(by_tier).index(t))
    )
    tiers, question_ids = [], {}
    with staged_output(out, force) as root:
        for tname in order:
            src = by_tier[tname]
            counter, questions, seen = TierCounter(), [], set()
            turns_file, q_file = f"turns_{tname}.jsonl", f"questions_{tname}.jsonl"
            with open(root / turns_file, "wb") as fh:
                for index, obj in iter_json_array(src):
                    lines, n_turns, texts, q = instance_lines(obj, src, index)
                    if q.id in seen:
                        raise InputError(src, f"{index} (question_id {q.id!r})", "question_id", "duplicate question id")
                    seen.add(q.id)
                    counter.add_sessions(texts, n_turns)
                    fh.write(lines)
                    questions.append(q)
            if not questions:
                raise InputError(src, None, None, "the list holds no questions")
            write_jsonl(root / q_file, (q.to_dict() for q in questions))
            tiers.append(counter.tier(tname, turns_file, q_file, len(questions)))
            question_ids[tname] = [q.id for q in questions]
        common = set.intersection(*(set(v) for v in question_ids.values()))
        bench = Bench(
            name=name,
            version="1",
            tiers=tuple(tiers),
            root=str(out),
            license=LICENSE,
            source=SOURCE,
            tokenizer=TOKENIZER,
            axis_map=dict(AXIS_MAP),
            extra={
                "format": "longmemeval",
                "tiers_nest": "not guaranteed",
                "notes": NOTES,
                "source_files": {t: {"file": by_tier[t].name, "sha256": file_sha256(by_tier[t])} for t in order},
                "questions_in_every_tier": len(common),
            },
        )
        save_bench(bench, root)
    return replace(bench, root=str(out))


def _as_int(v) -> int:
    try:
        return int(v)
    except (TypeError, ValueError):
        return 0


def export_hypotheses(records: Iterable[dict], path, *, tier: str | None = None, epoch: int | None = None) -> dict:
    """Write LongMemEval hypotheses (``{"question_id", "hypothesis"}`` per line) from run records.

    Records need ``qid``, ``answer``, ``tier``, ``epoch``. With several tiers, ``tier`` must be given;
    ``epoch`` defaults to the lowest. A record without an answer (an error) is written with an empty
    hypothesis and counted in the returned summary, never left out.
    """
    rows = [r for r in records if isinstance(r, dict)]
    tiers = sorted({str(r.get("tier")) for r in rows})
    if tier is None:
        if len(tiers) > 1:
            raise MemevalError(f"records hold several tiers {tiers}: choose one with --tier")
        tier = tiers[0] if tiers else None
    rows = [r for r in rows if str(r.get("tier")) == str(tier)]
    if not rows:
        raise MemevalError(f"no records for tier {tier!r} (tiers present: {tiers})")
    epochs = sorted({_as_int(r.get("epoch")) for r in rows})
    if epoch is None:
        epoch = epochs[0]
    rows = [r for r in rows if _as_int(r.get("epoch")) == epoch]
    if not rows:
        raise MemevalError(f"no records for epoch {epoch} (epochs present: {epochs})")
    seen: dict[str, str] = {}
    missing = 0
    for r in rows:
        qid = str(r.get("qid"))
        ans = r.get("answer")
        if not isinstance(ans, str):
            missing += 1
            ans = ""
        seen[qid] = ans  # a resumed run may repeat a question: the last record wins
    write_jsonl(path, ({"question_id": q, "hypothesis": h} for q, h in seen.items()))
    return {"tier": tier, "epoch": epoch, "written": len(seen), "without_answer": missing}
