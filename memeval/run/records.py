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

from ..atomic import dumps_line, write_text
from ..errors import InputError

__all__ = ["RECORD_FIELDS", "RecordStore", "read_records", "read_manifest", "write_manifest", "record_key"]

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


def _repair_tail(path: Path) -> None:
    """Drop a partial last line left by a killed writer."""
    if not path.exists() or path.stat().st_size == 0:
        return
    with open(path, "rb+") as fh:
        fh.seek(-1, os.SEEK_END)
        if fh.read(1) == b"\n":
            return
        data = fh.seek(0) or fh.read()
        fh.truncate(data.rfind(b"\n") + 1)


def read_records(run_dir) -> list[dict]:
    """Every complete record of a run, in file order."""
    path = Path(run_dir) / "records.jsonl"
    if not path.exists():
        return []
    out = []
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.endswith("\n"):
                break  # partial tail of a killed run
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError as e:
                raise InputError(path, n, None, f"not valid JSON ({e.msg})") from None
    return out


class RecordStore:
    """Appends records; knows which (tier, qid, epoch) keys are already done."""

    def __init__(self, run_dir):
        self.path = Path(run_dir) / "records.jsonl"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        _repair_tail(self.path)
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
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(path, None, None, "no run manifest here (is this a run folder?)") from None
    except json.JSONDecodeError as e:
        raise InputError(path, e.lineno, None, f"not valid JSON ({e.msg})") from None


def write_manifest(run_dir, manifest: dict) -> None:
    write_text(Path(run_dir) / "manifest.json", json.dumps(manifest, indent=2, ensure_ascii=False) + "\n")
