"""The run record: its typed fields (``Record``), its checks on read, and ``records.jsonl`` (append-only,
one JSON line per (tier, question, epoch), flushed per record or, for a run, per batch of at most a
second).

Records are never rewritten: a question whose record is an error is asked again by a rerun (or
``memeval retry``) and its newer record is appended. :func:`current_records` defines once which record
counts (the last one per key, at the place of the first); every reader goes through it. The manifest (written before the first
question, status updated) and the writer lock are in ``run.folder``.

A process killed mid-write leaves at most one partial last line; opening the store drops it, so a
resumed run asks that question again and never holds a duplicate (a batch not yet written is asked
again the same way). Reading checks every record
(:func:`read_records`, the one reader behind regrade, summary, diff, view and ``load_runs``): types,
a ``score`` in [0, 1] or null, finite numbers, and one record per (tier, question, epoch); a bad
value or a duplicate is one line naming the file, the line and the field.
"""

from __future__ import annotations

import difflib
import math
import os
import threading
import time
from pathlib import Path
from dataclasses import dataclass, field, fields, replace
from typing import Any, Iterable, Iterator, Mapping

from ..atomic import JsonlAppender, dumps_fast
from ..bench.files import check_field_types
from ..bench.images import image_label
from ..bench.io import loads_json
from ..errors import InputError, SchemaError, input_error_from
from .cost import usage_entry_ok

__all__ = [
    "Record",
    "RECORD_FIELDS",
    "RECORD_KINDS",
    "memories_json",
    "record_memories",
    "system_usage_fields",
    "RecordStore",
    "read_records",
    "current_records",
    "record_key",
]

#: element types of the typed record's fields, named so each layer maps them to its own types
#: (``analysis.aggregate`` to polars): str, int (32-bit), long (64-bit), float, bool, json (a label or
#: object), list[int], list[str], memories (objects {text, timestamp, speaker}), metrics (name -> number),
#: usage (objects {role, model, calls, prompt_tokens, completion_tokens})
_f = field


def _col(kind: str, required: bool = False) -> Any:
    return _f(default=None, metadata={"kind": kind, "required": required})


@dataclass(frozen=True)
class Record:
    """One record of benchmark.md §6, plus what analysis needs without re-reading the bench.

    The one definition of a record: the JSONL writer (:data:`RECORD_FIELDS`), the read-time type
    checks (:func:`check_record`), the polars schema (``analysis.aggregate``) and the test fixtures
    all derive from these fields. ``memories_returned`` holds what each memory shows
    (``"[date] speaker: content"``); ``memories`` holds the same memories as objects
    ``{text, timestamp, speaker}`` so a re-grade sees their content without the metadata (records
    written before it have only the strings).

    >>> [f for f in RECORD_FIELDS[:4]]
    ['run_id', 'system', 'tier', 'qid']
    >>> Record(tier="t", qid="q1", epoch=0).to_json()["memories"] is None
    True
    """

    run_id: str | None = _col("str")
    system: str | None = _col("str")
    tier: str | None = _col("str", True)
    qid: str | None = _col("str", True)
    axis: str | None = _col("str")
    epoch: int | None = _col("int", True)
    question_asked: str | None = _col("str")
    query_lang: str | None = _col("str")
    answer: str | None = _col("str")
    memories_returned: list[str] | None = _col("list[str]")
    retrieved_turns: list[int] | None = _col("list[long]")
    chars_returned: int | None = _col("long")
    retrieval_hit: bool | None = _col("bool")
    score: float | None = _col("float")
    verdict: str | None = _col("str")
    rule: str | None = _col("str")
    grader: Any = _col("json")
    ungraded_reason: str | None = _col("str")
    latency_ms: float | None = _col("float")
    network_ms: float | None = _col("float")
    latency_minus_rtt_ms: float | None = _col("float")
    response_bytes: int | None = _col("long")
    speed_points: float | None = _col("float")
    speed_status: str | None = _col("str")
    speed_reason: str | None = _col("str")
    error: str | None = _col("str")
    started_at: str | None = _col("str")
    # what the question was, so every aggregate and trace can be recomputed from records alone
    mode: str | None = _col("str")
    weight: int | None = _col("int")
    haystack: str | None = _col("str")
    gold_answer: str | None = _col("str")
    evidence_turns: list[int] | None = _col("list[long]")
    judge_evidence: str | None = _col("str")
    attempts: int | None = _col("long")
    # ranked evidence retrieval (scoring/retrieval.py): {turn_recall_any@1: ..., session_ndcg@10: ...} or
    # None for a question without evidence turns; "turn_ids" or "text" (how the ranking was read)
    retrieval_metrics: dict[str, float | None] | None = _col("metrics")
    retrieval_source: str | None = _col("str")
    # how many entries of the system's ranking repeated a turn ranked before them (each turn counts once
    # in the ranked metrics, where it first appears)
    retrieval_repeats: int | None = _col("long")
    # answer mode: the bench's own published metric beside memeval's verdict (LoCoMo F1, LongMemEval judge)
    official_metric: str | None = _col("str")
    official_score: float | None = _col("float")
    # the returned memories as objects {text, timestamp, speaker} (content without its display metadata)
    memories: list[dict[str, Any]] | None = _col("memories")
    # answer mode: how many of the memories' images the reader was shown, and what happened, plainly
    # (e.g. "2 images sent to the reader", or why none were); None when no memory carried an image
    images_sent: int | None = _col("long")
    images_note: str | None = _col("str")
    # the system's own model calls for this question, where it reports them (mem0: its LLM and embedder)
    system_calls: int | None = _col("long")
    system_prompt_tokens: int | None = _col("long")
    system_completion_tokens: int | None = _col("long")
    # tokens and cost of the question's model calls (reader, judge, system-side where known): one entry
    # {role, model, calls, prompt_tokens, completion_tokens} per role and model (tokens None where an
    # endpoint reported no ``usage``); totals over the entries; cost from the run's price table (--prices)
    usage: list[dict[str, Any]] | None = _col("usage")
    prompt_tokens: int | None = _col("long")
    completion_tokens: int | None = _col("long")
    cost_usd: float | None = _col("float")
    # answer mode: the approx-v1 tokens of the memories the reader read, the tokens a limit cut away
    # (the system's own window, e.g. ``context:tokens=N``, or --context-max-tokens), and that limit
    context_tokens: int | None = _col("long")
    context_dropped_tokens: int | None = _col("long")
    context_truncated: bool | None = _col("bool")
    context_limit: int | None = _col("long")
    # with errata (scoring/errata.py): the score against the gold as published; ``score`` is against
    # the corrected gold (None where the errata drop the question)
    score_raw: float | None = _col("float")
    # the causal guard (run.writepath): how many returned memories are dated after the question's
    # asked_at (a leak from the future); None where the question has no date
    future_memories: int | None = _col("long")
    # the official metric's particulars where the bench has some (LongMemEval-V2: the function, the
    # extracted boxed answer, whether it was UNKNOWN, the judge's reply, why it is ungraded)
    official_detail: dict[str, Any] | None = _col("json")
    # ``memeval attribute`` (analysis.attribution): the cause of a miss (correct, write_loss, retrieval_loss,
    # memory_loss, reader_loss, reader_ceiling; None with a note where none can be said), whether the
    # evidence was in the system's stored dump and among what the reader read, and the scores (and
    # answers) of the counterfactual conditions (oracle evidence, whole haystack to budget, stored dump);
    # dropped by a regrade, since they depend on the grade
    attribution: str | None = _col("str")
    attribution_note: str | None = _col("str")
    attribution_stored: bool | None = _col("bool")
    attribution_read: bool | None = _col("bool")
    attribution_oracle_score: float | None = _col("float")
    attribution_context_score: float | None = _col("float")
    attribution_stored_score: float | None = _col("float")
    attribution_answers: Any = _col("json")
    attribution_version: str | None = _col("str")

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> "Record":
        """The record of a (type-checked) JSON object as read from a file; unknown keys are ignored
        (a later version's fields)."""
        return cls(**{k: obj.get(k) for k in RECORD_FIELDS})

    @classmethod
    def of(cls, values: Mapping[str, Any]) -> "Record":
        """The record of ``values``, every key a record field: a key the record does not have is a
        :class:`SchemaError` naming it, never dropped.

        >>> Record.of({"tier": "t", "qid": "q1", "epoch": 0, "score": 1.0}).score
        1.0
        >>> Record.of({"tier": "t", "qid": "q1", "epoch": 0, "scroe": 1.0})
        Traceback (most recent call last):
        ...
        memeval.errors.SchemaError: record field 'scroe' does not exist; did you mean 'score'?
        """
        if not values.keys() <= _FIELD_SET:
            unknown = [k for k in values if k not in _FIELD_SET]
            near = difflib.get_close_matches(str(unknown[0]), RECORD_FIELDS, 1, 0.7)
            hint = f"; did you mean {near[0]!r}?" if near else f" (fields: {', '.join(RECORD_FIELDS)})"
            raise SchemaError(f"record field {unknown[0]!r} does not exist{hint}")
        if cls is not Record:
            return cls(**values)
        # what cls(**values) makes (every field defaults to None; no __post_init__), without its 60
        # frozen-field assignments: the runner builds one record per question this way
        rec = object.__new__(cls)
        rec.__dict__.update(_EMPTY_ROW)
        rec.__dict__.update(values)
        return rec

    def with_fields(self, values: Mapping[str, Any]) -> "Record":
        """This record with ``values`` set (checked as :meth:`of` checks them)."""
        if any(k not in _FIELD_SET for k in values):
            Record.of(values)  # raises, naming the field
        return replace(self, **values)

    def to_json(self) -> dict[str, Any]:
        d = self.__dict__  # the fields, in field order (however the record was built)
        return dict(d) if len(d) == len(RECORD_FIELDS) else {k: getattr(self, k) for k in RECORD_FIELDS}


#: every field of :class:`Record`, in file order
RECORD_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(Record))
_FIELD_SET = frozenset(RECORD_FIELDS)
_EMPTY_ROW: dict[str, Any] = dict.fromkeys(RECORD_FIELDS)
#: field -> element kind (see :class:`Record`)
RECORD_KINDS: dict[str, str] = {f.name: f.metadata["kind"] for f in fields(Record)}


def memories_json(memories: Iterable[Any]) -> list[dict[str, Any]]:
    """Returned memories as record objects ``{text, timestamp, speaker}`` (a plain string is all text),
    with ``image`` where a memory carries one (a path or URL as given; inline bytes as their digest)."""
    return [
        {
            "text": getattr(m, "content", str(m)),
            "timestamp": getattr(m, "timestamp", None),
            "speaker": getattr(m, "speaker", None),
            **({"image": image_label(m.image)} if getattr(m, "image", None) else {}),
        }
        for m in memories
    ]


def system_usage_fields(usage: Mapping[str, Any] | None) -> dict[str, Any]:
    """A system's own model calls for one question (``Recall.usage``) as record fields; none when unknown.

    >>> system_usage_fields({"llm_calls": 1, "embedding_calls": 2, "prompt_tokens": 30, "completion_tokens": 4})
    {'system_calls': 3, 'system_prompt_tokens': 30, 'system_completion_tokens': 4}
    """
    if usage is None:
        return {}
    return {
        "system_calls": usage.get("llm_calls", 0) + usage.get("embedding_calls", 0),
        "system_prompt_tokens": usage.get("prompt_tokens"),
        "system_completion_tokens": usage.get("completion_tokens"),
    }


def record_memories(rec: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The memories of a record as objects ``{text, timestamp, speaker}``: the ``memories`` field, or
    for records written before it the display strings (whose text then still carries the metadata)."""
    if rec.get("memories") is not None:
        return [dict(m) for m in rec["memories"]]
    return [{"text": m, "timestamp": None, "speaker": None} for m in rec.get("memories_returned") or []]


def record_key(rec: Mapping[str, Any]) -> tuple[str, str, int]:
    return (rec["tier"], rec["qid"], rec["epoch"])


def current_records(records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The records that count: per (tier, qid, epoch) the last one written (a re-asked question's
    record supersedes its earlier error record), kept at the place of the key's first record.

    >>> recs = [{"tier": "t", "qid": "a", "epoch": 0, "error": "E"}, {"tier": "t", "qid": "b", "epoch": 0},
    ...         {"tier": "t", "qid": "a", "epoch": 0, "error": None}]
    >>> [(r["qid"], r.get("error")) for r in current_records(recs)]
    [('a', None), ('b', None)]
    """
    latest: dict[tuple[str, str, int], dict[str, Any]] = {}
    for r in records:
        latest[record_key(r)] = r  # a dict keeps the first insertion's place, takes the last value
    return list(latest.values())


def read_records(run_dir: str | os.PathLike[str], history: bool = False) -> list[dict[str, Any]]:
    """Every record of a run that counts (:func:`current_records`), in file order; ``history``: every
    complete line, superseded error records included.

    >>> records = read_records(tiny_run)
    >>> len(records), records[0]["system"], sorted({r["tier"] for r in records})
    (309, 'bm25', ['core', 'full', 'medium', 'small'])
    """
    path = Path(run_dir) / "records.jsonl"
    if not path.exists():
        return []
    out: list[dict[str, Any]] = []
    latest: dict[tuple[str, str, int], tuple[int, bool]] = {}  # key -> (line, is an error record)
    try:
        with open(path, encoding="utf-8") as fh:
            for n, line in enumerate(fh, 1):
                if not line.endswith("\n"):
                    break  # partial tail of a killed run
                rec = check_record(loads_json(line, path, n), path, n)
                key = record_key(rec)
                if key in latest and not latest[key][1]:  # only an error record is ever asked again
                    raise InputError(
                        path,
                        n,
                        "qid",
                        f"duplicate record of tier {key[0]!r}, question {key[1]!r}, epoch {key[2]} (first on "
                        f"line {latest[key][0]}): one record per question and epoch, unless the earlier is an error",
                    )
                latest[key] = (n, rec.get("error") is not None)
                out.append(rec)
    except UnicodeDecodeError as e:
        raise input_error_from(e, path, len(out) + 1) from None
    return out if history else current_records(out)


_N = type(None)
_KIND_TYPES: dict[str, tuple[type, ...]] = {
    "str": (str,),
    "int": (int,),
    "long": (int,),
    "float": (int, float),
    "bool": (bool,),
    "json": (dict, str),
    "list[str]": (list,),
    "list[long]": (list,),
    "memories": (list,),
    "metrics": (dict,),
    "usage": (list,),
}
#: the type each record field must have where present (analysis builds typed columns from them)
_RECORD_TYPES: dict[str, tuple[type, ...]] = {
    k: _KIND_TYPES[kind] + (() if k in ("tier", "qid", "epoch") else (_N,)) for k, kind in RECORD_KINDS.items()
}
_LIST_ITEMS = {k: int if kind == "list[long]" else str for k, kind in RECORD_KINDS.items() if kind.startswith("list[")}
_REQUIRED = tuple(f.name for f in fields(Record) if f.metadata["required"])
_FLOATS = tuple(k for k, kind in RECORD_KINDS.items() if kind == "float")


def check_record(obj: Any, path: str | os.PathLike[str], n: int) -> dict[str, Any]:
    """``obj`` if it is a record whose fields have the types analysis needs, else :class:`InputError`
    naming the line and the field."""
    if not isinstance(obj, dict):
        raise InputError(path, n, None, f"expected a JSON object, got {type(obj).__name__}")
    check_field_types(obj, path, n, _RECORD_TYPES, _REQUIRED, int_bits=31)
    for k in _FLOATS:
        v = obj.get(k)
        if isinstance(v, float) and not math.isfinite(v):
            raise InputError(path, n, k, f"expected a finite number, got {v}")
    score = obj.get("score")
    if score is not None and not 0 <= score <= 1:
        raise InputError(path, n, "score", f"expected a number in [0, 1] or null, got {score}")
    for k in _DEEP:  # the fields whose contents are checked too (absent or null: nothing to check)
        v = obj.get(k)
        if v is None:
            continue
        if (
            k == "grader"
            and isinstance(v, dict)
            and any(not isinstance(v.get(x), (str, type(None))) for x in ("name", "version", "prompt_hash", "model"))
        ):
            raise InputError(path, n, k, "name, version, prompt_hash and model must be strings")
        if (
            k == "retrieval_metrics"
            and isinstance(v, dict)
            and not _finite_metrics(v)
            and any(
                not isinstance(x, (int, float, _N))
                or isinstance(x, bool)
                or (isinstance(x, float) and not math.isfinite(x))
                for x in v.values()
            )
        ):
            raise InputError(path, n, k, "expected finite numbers (or null) per metric")
        if k == "memories" and isinstance(v, list) and not all(map(_memory_ok, v)):
            raise InputError(path, n, k, "expected objects {text, timestamp, speaker} with string values")
        if k == "usage" and isinstance(v, list) and any(not usage_entry_ok(u) for u in v):
            raise InputError(path, n, k, "expected objects {role, model, calls, prompt_tokens, completion_tokens}")
        item = _LIST_ITEMS.get(k)
        if (
            item
            and v
            and not _plain_items(v, item)
            and any(
                not isinstance(x, item) or isinstance(x, bool) or (isinstance(x, int) and not -(2**62) < x < 2**62)
                for x in v
            )
        ):
            raise InputError(path, n, k, f"expected a list of {item.__name__}")
    return obj


_DEEP = ("grader", "retrieval_metrics", "memories", "usage", *_LIST_ITEMS)
_NUMBER_TYPES = frozenset({int, float, _N})
_I62 = 2**62


def _finite_metrics(v: dict[str, Any]) -> bool:
    """True when every value of ``v`` is an int, a finite float or null (the usual metrics: one pass
    over the types in C); False means "look closer" (``check_record``'s own test decides)."""
    vals = v.values()
    kinds = set(map(type, vals))
    if not kinds <= _NUMBER_TYPES:
        return False
    return float not in kinds or all(map(math.isfinite, [x for x in vals if type(x) is float]))


def _plain_items(v: list[Any], item: type) -> bool:
    """True when ``v`` is a list of plain ``item`` values (ints within 62 bits); False means "look
    closer" (``check_record``'s own test decides)."""
    kinds = set(map(type, v))
    if kinds != {item}:
        return False
    return item is not int or -_I62 < min(v) and max(v) < _I62


def _memory_ok(m: Any) -> bool:
    """A record's memory object: ``{text, timestamp, speaker}``, text a string, the others strings or null."""
    if not isinstance(m, dict) or not isinstance(m.get("text"), str):
        return False
    ts, sp = m.get("timestamp"), m.get("speaker")
    return (ts is None or isinstance(ts, str)) and (sp is None or isinstance(sp, str))


class RecordStore:
    """Appends records (through the one JSONL appender); knows which (tier, qid, epoch) keys are done.

    A key whose current record is an error is not done unless ``keep_errors``: the run asks it again
    and the new record supersedes the error (:func:`current_records`). ``errors`` maps each key whose
    current record is an error to that record; ``reasked`` counts the error keys reopened this way.

    ``batch_s``: records are written in batches, at most ``batch_s`` seconds (and
    :data:`BATCH_LINES` records) after the first one held, and at :meth:`flush` / :meth:`close`
    (default None: each record written and flushed at once). A process killed (SIGKILL) loses at
    most the batch it held: whole lines only reach the file, so a rerun asks those questions again
    and holds no duplicate. :meth:`summary_rows` gives each current record's :data:`SUMMARY_FIELDS`
    (those read at open, then each one appended), so a run summarises itself without reading its
    records back.

    >>> import tempfile
    >>> d = tempfile.mkdtemp()
    >>> store = RecordStore(d, batch_s=60.0)
    >>> store.append({"tier": "t", "qid": "q1", "epoch": 0, "error": "boom"})
    >>> len(read_records(d)), store.summary_rows()
    (0, [{'mode': None, 'error': 'boom', 'ungraded_reason': None, 'score': None, 'future_memories': None}])
    >>> store.flush(); len(read_records(d))
    1
    >>> store.append({"tier": "t", "qid": "q1", "epoch": 0, "scroe": 1.0})
    Traceback (most recent call last):
    ...
    memeval.errors.SchemaError: record field 'scroe' does not exist; did you mean 'score'?
    """

    def __init__(self, run_dir: str | os.PathLike[str], keep_errors: bool = True, batch_s: float | None = None) -> None:
        self.path = Path(run_dir) / "records.jsonl"
        self._out = JsonlAppender(self.path, fast=True)  # drops a torn last line first; orjson lines
        current = read_records(run_dir)
        self.errors: dict[tuple[str, str, int], dict[str, Any]] = {
            record_key(r): r for r in current if r.get("error") is not None
        }
        self.done: set[tuple[str, str, int]] = {record_key(r) for r in current}
        self.reasked: set[tuple[str, str, int]] = set()
        if not keep_errors:
            self.reasked = set(self.errors)
            self.done -= self.reasked
        self._lock = threading.Lock()
        self._summary: dict[tuple[str, str, int], dict[str, Any]] = {record_key(r): _slim(r) for r in current}
        self._batch_s = batch_s
        self._held: list[str] = []  # encoded lines not yet written (batch_s)
        self._due = 0.0  # when the held lines must be written (monotonic seconds)
        self._timer: threading.Timer | None = None  # writes a held batch when no later record comes

    def append(self, rec: "Mapping[str, Any] | Record") -> None:
        """Write one record; a mapping with a key the record does not have is a :class:`SchemaError`
        (never silently dropped), a second record for the same (tier, qid, epoch) too. A mapping is
        the record with every other field None (``Record.of(rec)``)."""
        row = (rec if isinstance(rec, Record) else Record.of(rec)).to_json()
        with self._lock:
            key = record_key(row)
            if key in self.done:
                raise SchemaError(f"{self.path}: a second record for (tier, qid, epoch) {key}")
            if self._batch_s is None:
                self._out.write(row)
            else:
                now = time.monotonic()
                if not self._held:
                    self._due = now + self._batch_s
                    # a slow system may send no further record for minutes: the batch is written on time
                    self._timer = threading.Timer(self._batch_s, self.flush)
                    self._timer.daemon = True
                    self._timer.start()
                self._held.append(dumps_fast(row))
                if now >= self._due or len(self._held) >= BATCH_LINES:
                    self._write_held()
            self.done.add(key)
            self._summary[key] = _slim(row)
            if row.get("error") is not None:
                self.errors[key] = row
            else:
                self.errors.pop(key, None)

    def _write_held(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._held:
            lines, self._held = self._held, []
            self._out.write_lines(lines)

    def flush(self) -> None:
        """Write the records held for the current batch (a no-op without ``batch_s``)."""
        with self._lock:
            self._write_held()

    def summary_rows(self) -> list[dict[str, Any]]:
        """Each current record's :data:`SUMMARY_FIELDS`, in :func:`current_records` order (what a
        finished run's grading and causal summaries read)."""
        with self._lock:
            return list(self._summary.values())

    def close(self) -> None:
        try:
            self.flush()
        finally:
            self._out.close()

    def __iter__(self) -> Iterator[tuple[str, str, int]]:
        return iter(self.done)


#: most records a batching :class:`RecordStore` holds before writing them
BATCH_LINES = 1000
#: the record fields whole-run summaries read (``run.grading.grading_summary``,
#: ``run.writepath.causal_summary``): kept per current record by :class:`RecordStore`
SUMMARY_FIELDS = ("mode", "error", "ungraded_reason", "score", "future_memories")


def _slim(row: Mapping[str, Any]) -> dict[str, Any]:
    return {k: row.get(k) for k in SUMMARY_FIELDS}
