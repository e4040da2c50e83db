"""Run folders: ``manifest.json`` (written before the first question, status updated) and
``records.jsonl`` (append-only, one JSON line per (tier, question, epoch), flushed per record).

A process killed mid-write leaves at most one partial last line; opening the store drops it, so a
resumed run asks that question again and never holds a duplicate.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any, Iterator

from ..atomic import dumps_line, repair_tail, write_text
from ..bench.io import loads_json, read_json
from ..errors import InputError, MemevalError, input_error_from

__all__ = ["RECORD_FIELDS", "RecordStore", "read_records", "read_manifest", "write_manifest", "record_key", "RunLock"]

#: The record of benchmark.md §6, plus what analysis needs without re-reading the bench.
RECORD_FIELDS = (
    "run_id", "system", "tier", "qid", "axis", "epoch", "question_asked", "query_lang", "answer",
    "memories_returned", "retrieved_turns", "chars_returned", "retrieval_hit", "score", "verdict", "rule", "grader",
    "ungraded_reason", "latency_ms", "network_ms", "latency_minus_rtt_ms", "response_bytes", "speed_points",
    "speed_status", "speed_reason", "error", "started_at",
    # additions: what the question was, so every aggregate and trace can be recomputed from records alone
    "mode", "weight", "haystack", "gold_answer", "evidence_turns", "judge_evidence", "attempts",
    # ranked evidence retrieval (scoring/retrieval.py): {turn_recall_any@1: ..., session_ndcg@10: ...} or
    # None for a question without evidence turns; "turn_ids" or "text" (how the ranking was read)
    "retrieval_metrics", "retrieval_source",
    # answer mode: the bench's own published metric beside memeval's verdict (LoCoMo F1, LongMemEval judge)
    "official_metric", "official_score",
)


def record_key(rec: dict) -> tuple:
    return (rec["tier"], rec["qid"], rec["epoch"])




def read_records(run_dir) -> list[dict]:
    """Every complete record of a run, in file order."""
    path = Path(run_dir) / "records.jsonl"
    if not path.exists():
        return []
    out = []
    try:
        with open(path, encoding="utf-8") as fh:
            for n, line in enumerate(fh, 1):
                if not line.endswith("\n"):
                    break  # partial tail of a killed run
                out.append(check_record(loads_json(line, path, n), path, n))
    except UnicodeDecodeError as e:
        raise input_error_from(e, path, len(out) + 1) from None
    return out


_N = type(None)
_STR = ("run_id", "system", "axis", "question_asked", "query_lang", "answer", "rule", "verdict", "ungraded_reason",
        "speed_status", "speed_reason", "error", "started_at", "mode", "haystack", "gold_answer", "retrieval_source",
        "official_metric")
_NUM = ("score", "latency_ms", "network_ms", "latency_minus_rtt_ms", "speed_points", "official_score")
_INT = ("chars_returned", "response_bytes", "attempts")
#: the type each record field must have where present (analysis builds typed columns from them)
_RECORD_TYPES: dict[str, tuple] = {
    "tier": (str,), "qid": (str,), "epoch": (int,), "weight": (int, _N), "retrieval_hit": (bool, _N),
    **{k: (str, _N) for k in _STR}, **{k: (int, float, _N) for k in _NUM}, **{k: (int, _N) for k in _INT},
    "memories_returned": (list, _N), "retrieved_turns": (list, _N), "evidence_turns": (list, _N),
    "grader": (dict, str, _N), "retrieval_metrics": (dict, _N),
}
_LIST_ITEMS = {"memories_returned": str, "retrieved_turns": int, "evidence_turns": int}
_REQUIRED = ("tier", "qid", "epoch")


def check_record(obj, path, n: int) -> dict:
    """``obj`` if it is a record whose fields have the types analysis needs, else :class:`InputError`
    naming the line and the field."""
    if not isinstance(obj, dict):
        raise InputError(path, n, None, f"expected a JSON object, got {type(obj).__name__}")
    for k, types in _RECORD_TYPES.items():
        if k not in obj:
            if k in _REQUIRED:
                raise InputError(path, n, k, "missing")
            continue
        v = obj[k]
        if not isinstance(v, types) or (isinstance(v, bool) and bool not in types):
            want = " or ".join("null" if t is _N else t.__name__ for t in types)
            raise InputError(path, n, k, f"expected {want}, got {type(v).__name__}")
        if isinstance(v, int) and not isinstance(v, bool) and not -2**31 < v < 2**31:
            raise InputError(path, n, k, "integer out of range")
        if k == "grader" and isinstance(v, dict) and any(
                not isinstance(v.get(x), (str, type(None))) for x in ("name", "version", "prompt_hash", "model")):
            raise InputError(path, n, k, "name, version, prompt_hash and model must be strings")
        if k == "retrieval_metrics" and isinstance(v, dict) and any(
                not isinstance(x, (int, float, _N)) or isinstance(x, bool) for x in v.values()):
            raise InputError(path, n, k, "expected numbers (or null) per metric")
        item = _LIST_ITEMS.get(k)
        if item and v and any(not isinstance(x, item) or isinstance(x, bool) or (item is int and not -2**62 < x < 2**62)
                              for x in v):
            raise InputError(path, n, k, f"expected a list of {item.__name__}")
    return obj


#: manifest fields summaries read: (path, type)
_MANIFEST_TYPES = (("run_id", str), ("status", str), ("config", dict), ("config.system", dict),
                   ("config.system.spec", str), ("config.mode", str), ("config.bench", dict),
                   ("config.bench.name", str), ("config.bench.version", str), ("config.tiers", list),
                   ("config.grader", dict))


def check_manifest(obj, path) -> dict:
    """``obj`` if it has the fields (and types) a summary reads, else :class:`InputError`."""
    if not isinstance(obj, dict):
        raise InputError(path, None, None, f"expected a JSON object, got {type(obj).__name__}")
    for dotted, typ in _MANIFEST_TYPES:
        v = obj
        for k in dotted.split("."):
            v = v.get(k) if isinstance(v, dict) else None
        if not isinstance(v, typ):
            raise InputError(path, None, dotted, "missing" if v is None else f"expected {typ.__name__}, got {type(v).__name__}")
    for i, t in enumerate(obj["config"]["tiers"]):
        if not isinstance(t, dict) or not isinstance(t.get("name"), str):
            raise InputError(path, f"config.tiers[{i}]", "name", "missing or not a string")
        for k in ("n_turns", "n_tokens"):
            if t.get(k) is not None and (not isinstance(t[k], int) or isinstance(t[k], bool) or not 0 <= t[k] < 2**62):
                raise InputError(path, f"config.tiers[{i}]", k, "expected a whole number")
    return obj


class RecordStore:
    """Appends records; knows which (tier, qid, epoch) keys are already done."""

    def __init__(self, run_dir):
        self.path = Path(run_dir) / "records.jsonl"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        repair_tail(self.path)
        self.done: set[tuple] = {record_key(r) for r in read_records(run_dir)}
        self._fh = open(self.path, "a", encoding="utf-8")
        self._lock = threading.Lock()

    def append(self, rec: dict[str, Any]) -> None:
        line = dumps_line({k: rec.get(k) for k in RECORD_FIELDS}) + "\n"
        with self._lock:
            key = record_key(rec)
            if key in self.done:
                raise RuntimeError(f"duplicate record {key}")
            self._fh.write(line)
            self._fh.flush()
            self.done.add(key)

    def close(self) -> None:
        self._fh.close()

    def __iter__(self) -> Iterator[tuple]:
        return iter(self.done)


def read_manifest(run_dir) -> dict:
    path = Path(run_dir) / "manifest.json"
    if not path.is_file():
        raise InputError(path, None, None, "no run manifest here (is this a run folder?)")
    return check_manifest(read_json(path), path)


def write_manifest(run_dir, manifest: dict) -> None:
    write_text(Path(run_dir) / "manifest.json", json.dumps(manifest, indent=2, ensure_ascii=False) + "\n")


LOCK_NAME = ".lock"


class RunLock:
    """One writer per run folder: an exclusive ``flock`` on ``RUN/.lock`` holding the writer's pid.

    The kernel drops the lock when its holder dies (even by SIGKILL), so a stale lock file never blocks.
    A second writer is refused with one line naming the holder's pid.
    """

    def __init__(self, run_dir):
        self.path = Path(run_dir) / LOCK_NAME
        self._fd: int | None = None

    def acquire(self) -> "RunLock":
        import fcntl

        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as e:
            raise MemevalError(f"{self.path.parent}: cannot write a run folder here ({e.strerror or e})") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = os.read(fd, 64).decode("ascii", "replace").strip() or "unknown"
            os.close(fd)
            raise MemevalError(f"{self.path.parent}: another memeval process (pid {holder}) is writing this run "
                               "folder; wait for it to finish or use another --out") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._fd = fd
        return self

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing the descriptor drops the flock
            self._fd = None

    def __enter__(self) -> "RunLock":
        return self.acquire()

    def __exit__(self, *exc) -> None:
        self.release()
