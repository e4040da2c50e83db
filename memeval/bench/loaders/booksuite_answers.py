"""Answers to the book suite: the book's answer files and a memeval run's records, as ``{test_id: answer}``."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

from ...errors import InputError
from ..io import iter_jsonl, read_json

__all__ = ["read_answers", "read_responses", "answers_from_run"]


def _read_json(path):
    return read_json(path)


def _answers(obj: Any, path, record: str | None, known: set[str] | None) -> dict[str, str]:
    if not isinstance(obj, dict):
        raise InputError(path, record, None, "expected a JSON object {test_id: answer}")
    out = {}
    for tid, ans in obj.items():
        if tid.startswith("_"):
            continue
        rec = f"{record}.{tid}" if record else tid
        if not isinstance(ans, str):
            raise InputError(path, rec, None, f"answer must be a string, got {type(ans).__name__}")
        if known is not None and tid not in known:
            raise InputError(path, rec, None, "unknown test_id (not in the suite)")
        out[tid] = ans
    return out


def read_answers(path, known: set[str] | None = None) -> dict[str, str]:
    """``{test_id: answer}`` (keys starting with "_" are comments)."""
    return _answers(_read_json(path), path, None, known)


def read_responses(path, known: set[str] | None = None) -> dict[str, dict[str, str]]:
    """``{system: {test_id: answer}}`` (keys starting with "_" are comments), systems in file order.

    The book's single-system batch file ``{test_id: answer}`` (every value a string) is read as one
    system named by the file's stem."""
    obj = _read_json(path)
    if not isinstance(obj, dict):
        raise InputError(path, None, None, "expected a JSON object {system: {test_id: answer}}")
    vals = [v for k, v in obj.items() if not k.startswith("_")]
    if vals and all(isinstance(v, str) for v in vals):
        return {Path(path).stem: _answers(obj, path, None, known)}
    out = {s: _answers(v, path, s, known) for s, v in obj.items() if not s.startswith("_")}
    if not out:
        raise InputError(path, None, None, "no systems in this file")
    return out


def _record_answer(row: dict) -> str | None:
    ans = row.get("answer")
    if isinstance(ans, str) and ans.strip():
        return ans
    mem = row.get("memories_returned")
    if isinstance(mem, list) and all(isinstance(m, str) for m in mem):
        return "\n".join(mem)  # a system without an answer of its own: its memories as one text (§4)
    if isinstance(ans, str):
        return ans
    return None


def _iter_records(run_dir) -> Iterator[tuple[int, dict]]:
    path = Path(run_dir) / "records.jsonl"
    if not path.is_file():
        raise InputError(path, None, None, "no records.jsonl here (is this a run folder?)")
    yield from iter_jsonl(path, skip_torn_tail=True)  # a run still writing (or killed) ends mid-line


def answers_from_run(run_dir, epoch: int = 0, known: set[str] | None = None) -> dict[str, str]:
    """``{test_id: answer}`` from a run's ``records.jsonl`` (qid is the test_id). Error records have no
    answer and are left out (they are missing, not wrong); a record without an answer of its own gives
    its returned memories joined as one text. With several epochs, ``epoch`` is the one read."""
    out: dict[str, str] = {}
    for n, row in _iter_records(run_dir):
        qid = row.get("qid")
        if not isinstance(qid, str):
            raise InputError(Path(run_dir) / "records.jsonl", n, "qid", "missing or not a string")
        if known is not None and qid not in known:
            raise InputError(Path(run_dir) / "records.jsonl", n, "qid", f"{qid!r} is not a book-suite test_id")
        if row.get("epoch", 0) not in (epoch, None) or row.get("error"):
            continue
        ans = _record_answer(row)
        if ans is not None:
            out[qid] = ans
    return out
