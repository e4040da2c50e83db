"""The runner: one system × one bench × chosen tiers × epochs → a run folder of records.

For each tier (or each haystack of a tier): reset the system, ingest the sessions in file order, then
ask every question not yet recorded. A system that can say what it holds (the HTTP adapter's
``verify_ingest``: session count and digest for the fenced generation) is checked before the first
question; a haystack whose memory is not what was sent is re-ingested once, then failed: its questions
become error records with the one-line reason. The manifest's ``memory_state`` says how haystacks were
fenced and checked. Rerunning the same command resumes, and asks again the questions whose records
are errors (``keep_errors`` keeps them); Ctrl-C (or SIGTERM) leaves the manifest marked ``cancelled``
and every written record intact. A finished run's status is ``complete``, ``complete_with_errors`` or
``failed`` (``run.status``: errors against ``max_errors``). A circuit breaker stops the run (status
``error``) when a served system stops answering: after ``max_connection_failures`` consecutive
connection failures, or at the first one its health check confirms.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

from tqdm.auto import tqdm

from ..text.names import slug
from ..bench.images import inline_session
from ..bench.io import load_bench, read_questions
from ..bench.model import Question
from ..bench.stream import TierTurns, cached_spans
from ..errors import MemevalError, SystemCallError, SystemContractError
from ..audit import validity
from ..audit.loading import TierData
from ..llm import metered, usage_entries
from ..scoring import bounds, retrieval, scorers
from ..scoring.errata import load_errata
from ..systems.base import Declared, Recall, declared, memory_text
from ..systems.http import HttpSystem, StaleGeneration, ingest_key
from ..text.urls import public_url
from ..systems.registry import make_system, public_spec
from . import writepath
from .answering import Answering, speed_fields
from .grading import failure_reason, grading_summary
from ..callcache import cache_note
from .records import Record, RecordStore, memories_json, system_usage_fields
from .folder import RunLock, write_manifest
from .setup import config_id as _config_id, config_snapshot, now, open_manifest, verify_bench
from .status import MaxErrors, run_status

__all__ = ["RunConfig", "run_system", "default_run_dir"]

MODES = ("dry", "memory", "answer")
#: the longest a run holds a written record before it reaches records.jsonl (seconds)
RECORD_BATCH_S = 1.0


@dataclass(frozen=True, kw_only=True)
class RunConfig:
    """Everything one run needs, built by keyword (``run_system`` takes it, or builds it from its own
    keyword arguments). The first group is what the run measures (the manifest's config, hashed into
    its id, reads it); the second is how and where it runs.

    ``system`` may carry user-info (``http://user:pass@host``): it is sent, never written (the run
    writes :func:`~memeval.systems.http.public_url` of it). ``name``: the system's logical name (e.g.
    ``bm25-http`` for a server on a random loopback port); it names the run folder and stands for the
    URL in the config id, so the run resumes whatever the port. ``context_max_tokens``: in answer mode,
    the most memory tokens the reader reads (the cut is recorded); ``prices``: a ``run.cost.Prices``
    turning each question's token usage into ``cost_usd``. ``keep_errors``: keep the error records of an
    earlier pass (default: ask those questions again); ``max_errors``: errors tolerated (a count, or a
    fraction as ``"10%"``/``"0.1"``) before the status is ``failed``; ``max_connection_failures``:
    consecutive connection failures before the run stops; ``messages``: called with each line the run
    has to say (e.g. how many questions it asks again); ``errata``: a ``scoring.errata.Errata`` (or its
    file) whose gold corrections grading applies.

    >>> RunConfig(bench_dir="b", system="bm25:k=3", tiers=["core"]).tiers
    ('core',)
    >>> RunConfig(bench_dir="b", mode="answer")
    Traceback (most recent call last):
    ...
    memeval.errors.MemevalError: mode 'answer' needs a judge (--judge-url/--judge-model)
    """

    bench_dir: str
    system: str = "bm25"
    tiers: tuple[str, ...] | None = None
    mode: str = "dry"
    epochs: int = 1
    concurrency: int = 1
    question_set: str = "main"
    target_ms: float = 500.0
    budget_ms: float = 1000.0
    judge: Any = field(default=None, compare=False)  # memeval.scoring.judge.Judge
    reader: Any = field(default=None, compare=False)  # memeval.scoring.judge.Reader
    context_max_tokens: int | None = None  # answer mode: the reader's budget of memory tokens
    prices: Any = field(default=None, compare=False)  # memeval.run.cost.Prices: cost per question
    errata: Any = field(default=None, compare=False)  # memeval.scoring.errata.Errata (or its file)
    # how and where it runs (not part of what it measures)
    name: str | None = None
    out: str | None = None  # the run folder (default: one named after bench, system, mode and config id)
    runs_root: str = "runs"
    progress: bool = True
    verify: bool = True  # check the bench's content hash before asking
    http_options: Mapping[str, Any] | None = field(default=None, compare=False)  # HttpSystem's options
    keep_errors: bool = False  # a rerun keeps error records instead of asking their questions again
    max_errors: MaxErrors | str | int | None = None  # errors tolerated before the status is failed
    max_connection_failures: int = 10  # the circuit breaker: consecutive connection failures tolerated
    messages: Callable[[str], None] | None = field(default=None, compare=False)
    #: an asynchronously indexing system: the longest wait, per haystack, for its newest session to be
    #: searchable after ingest (run.writepath); past it the haystack's questions are error records
    searchable_timeout: float = writepath.DEFAULT_SEARCHABLE_TIMEOUT

    def __post_init__(self) -> None:
        put = object.__setattr__  # normalised once, here, so every caller gets the same config
        put(self, "bench_dir", str(self.bench_dir))
        put(self, "tiers", tuple(self.tiers) if self.tiers else None)
        put(self, "epochs", int(self.epochs))
        put(self, "concurrency", max(1, int(self.concurrency)))
        if self.out is not None:
            put(self, "out", str(self.out))
        put(self, "runs_root", str(self.runs_root))
        me = self.max_errors
        put(self, "max_errors", me if isinstance(me, MaxErrors) else MaxErrors.parse(str(me or 0)))
        if not float(self.searchable_timeout) >= 0:
            raise MemevalError(f"searchable_timeout must be 0 or more seconds, got {self.searchable_timeout}")
        if int(self.max_connection_failures) < 1:
            raise MemevalError(f"max_connection_failures must be at least 1, got {self.max_connection_failures}")
        cmt = self.context_max_tokens
        if cmt is not None and int(cmt) <= 0:
            raise MemevalError(f"context_max_tokens must be a positive number of tokens, got {cmt}")
        if cmt is not None and self.mode != "answer":
            raise MemevalError("--context-max-tokens caps what the reader reads: it applies to --mode answer only")
        put(self, "context_max_tokens", None if cmt is None else int(cmt))
        if isinstance(self.errata, (str, Path)):  # a file: read (and checked) before anything is asked
            put(self, "errata", load_errata(self.errata))
        if self.mode not in MODES:
            raise MemevalError(f"mode must be one of {MODES}, got {self.mode!r}")
        if self.mode != "dry" and self.judge is None:
            raise MemevalError(f"mode {self.mode!r} needs a judge (--judge-url/--judge-model)")
        if self.mode == "answer" and self.reader is None:
            raise MemevalError("mode 'answer' needs a reader (--reader-url/--reader-model)")


def _slug(text: str) -> str:
    return slug(text).strip("_")[:48]


def _scorers(cfg: RunConfig) -> list:
    """The scorers the run's mode names (scoring/scorers.py), in the order they run."""
    return scorers.scorers_for(cfg.mode, cfg.judge, cfg.reader, cfg.errata)


def _grader(cfg: RunConfig) -> dict:
    """What grades this run, as the manifest and every record store it (never an API key)."""
    return next(s.grader() for s in _scorers(cfg) if hasattr(s, "grader"))


def default_run_dir(bench_name: str, system: str, mode: str, config_id: str, root="runs") -> Path:
    return Path(root) / f"{_slug(bench_name)}_{_slug(system)}_{mode}_{config_id}"


def run_system(
    config: RunConfig | str | os.PathLike[str],
    system: str = "bm25",
    *,
    tiers: Iterable[str] | None = None,
    mode: str = "dry",
    epochs: int = 1,
    concurrency: int = 1,
    out=None,
    progress: bool = True,
    judge=None,
    reader=None,
    target_ms: float = 500.0,
    budget_ms: float = 1000.0,
    runs_root="runs",
    http_options: dict | None = None,
    question_set: str = "main",
    verify: bool = True,
    name: str | None = None,
    context_max_tokens: int | None = None,
    prices=None,
    keep_errors: bool = False,
    max_errors: MaxErrors | str | int | None = None,
    max_connection_failures: int = 10,
    messages: Callable[[str], None] | None = None,
    errata=None,
    searchable_timeout: float = writepath.DEFAULT_SEARCHABLE_TIMEOUT,
) -> Path:
    """Run (or resume) and return the run folder. See :class:`RunConfig` and ``memeval run --help``.

    ``run_system(RunConfig(bench_dir=..., ...))`` runs a config; ``run_system(bench_dir, system, ...)``
    builds one from the keyword arguments (a thin convenience: they are RunConfig's fields).

    >>> run_dir = run_system(tiny_bench, "recent:tokens=500", tiers=["core"], runs_root=tmp, progress=False)
    >>> run_dir.parent == tmp, (run_dir / "records.jsonl").is_file()
    (True, True)
    >>> cfg = RunConfig(bench_dir=tiny_bench, system="recent:tokens=500", tiers=["core"], runs_root=tmp, progress=False)
    >>> run_system(cfg) == run_dir  # the same run, resumed
    True
    """
    if isinstance(config, RunConfig):
        return _run(config)
    return _run(
        RunConfig(
            bench_dir=str(config),
            system=system,
            tiers=tuple(tiers) if tiers else None,
            mode=mode,
            epochs=epochs,
            concurrency=concurrency,
            question_set=question_set,
            target_ms=target_ms,
            budget_ms=budget_ms,
            judge=judge,
            reader=reader,
            context_max_tokens=context_max_tokens,
            prices=prices,
            errata=errata,
            name=name,
            out=None if out is None else str(out),
            runs_root=str(runs_root),
            progress=progress,
            verify=verify,
            http_options=http_options,
            keep_errors=keep_errors,
            max_errors=max_errors,
            max_connection_failures=max_connection_failures,
            messages=messages,
            searchable_timeout=searchable_timeout,
        )
    )


def _run(config: RunConfig) -> Path:
    """The run of ``config``: checks the bench, opens or resumes the run folder, asks, records."""
    spec = public_url(config.system)  # user-info in a URL is a credential: sent, never written
    cfg = replace(config, system=spec)
    bench_dir, question_set, name, progress = cfg.bench_dir, cfg.question_set, cfg.name, cfg.progress
    bench = load_bench(bench_dir)
    try:
        chosen = [bench.tier(n) for n in cfg.tiers] if cfg.tiers else list(bench.tiers)
        if question_set != "main":
            if not cfg.tiers:
                chosen = [t for t in chosen if question_set in t.question_sets]
            for t in chosen:
                t.questions_path(question_set)
    except KeyError as e:
        raise MemevalError(e.args[0]) from None
    if not chosen:
        raise MemevalError(f"no tier of {bench.name!r} has question set {question_set!r}")
    chosen.sort(key=lambda t: bench.tier_names.index(t.name))
    files_hash = verify_bench(bench, chosen, question_set, cfg.verify)
    sut = declared(make_system(config.system, **(cfg.http_options or {})))
    run_dir: Path | None = None  # set once the run folder is chosen (after the system named itself)
    try:
        served = sut.system if isinstance(sut.system, HttpSystem) else None
        if served is not None:  # a served system names itself (GET /health); unreachable: one line, nothing written
            served.fetch_info()
        sys_label = name or (served.label if served is not None else public_spec(spec))
        snapshot = config_snapshot(cfg, bench, sut.system, chosen, _grader(cfg))
        if sut.prepare is not None:  # the built-in oracle (systems.base.declared refuses any other)
            snapshot["system"]["role"] = "ceiling"  # a bound shown beside systems, never ranked as one
        snapshot["bench"]["files_hash"] = files_hash
        if name or served is not None:
            snapshot["system"]["label"] = sys_label
        if served is not None:
            snapshot["system"]["server"] = {"version": served.server_version, "params": served.server_params}
        sys_cfg = snapshot["system"]  # a served or named system: the URL (spec, params.base_url) is left out
        config_id = _config_id(
            {
                **snapshot,
                "system": {
                    **{k: v for k, v in sys_cfg.items() if k not in ("spec", "name")},
                    "params": {k: v for k, v in sys_cfg["params"].items() if k != "base_url"},
                },
            }
            if name or served is not None
            else snapshot
        )
        label = cfg.mode if question_set == "main" else f"{cfg.mode}-{question_set}"
        run_dir = Path(cfg.out) if cfg.out else default_run_dir(bench.name, sys_label, label, config_id, cfg.runs_root)
        with RunLock(run_dir) as lock:
            _run_locked(cfg, bench, sut, chosen, snapshot, config_id, run_dir, progress, sys_label, lock.stale_pid)
    except SystemCallError as e:  # reset/ingest/health failed for good: stop; rerunning resumes
        where = (
            f"run folder {run_dir}: rerun the same command to resume"
            if run_dir
            else "nothing was written: rerun the same command once it answers"
        )
        raise MemevalError(f"{spec}: {e} ({where})") from None
    finally:
        sut.close()
    assert run_dir is not None  # set before the run, which returned
    return run_dir


def _run_locked(
    cfg: RunConfig,
    bench,
    sut: Declared,
    chosen,
    snapshot: dict,
    config_id: str,
    run_dir: Path,
    progress: bool,
    label: str,
    stale_pid: str | None = None,
) -> None:
    """The run proper, with this process holding the run folder's lock."""
    resuming = (run_dir / "manifest.json").exists()
    manifest = replace(open_manifest(run_dir, snapshot, config_id), status="started")
    loaded: dict[str, TierData] = {}  # the tiers the gate read: asked from, not read again
    if cfg.mode == "dry" and manifest.dry_validity is None:  # the validity gate (audit/validity.py)
        gate = validity.dry_validity(
            cfg.bench_dir,
            [t.name for t in chosen],
            on_tier=lambda d: loaded.__setitem__(d.tier.name, d),
            cache=cfg.verify,  # the hash was checked against the files: a graded gate is read back
        )
        manifest = replace(manifest, dry_validity=gate)
    manifest = replace(
        manifest,
        scorers=[s.spec() for s in _scorers(cfg)],  # what wrote each graded field, versioned
        prices=manifest.prices if cfg.prices is None else cfg.prices.to_json(),
    )
    write_manifest(run_dir, manifest)

    # records written in batches (at most RECORD_BATCH_S apart); a killed run's unwritten batch is asked again
    store = RecordStore(run_dir, keep_errors=cfg.keep_errors, batch_s=RECORD_BATCH_S)
    if cfg.messages is not None and (resuming or stale_pid):
        cfg.messages(_resume_line(cfg, chosen, len(store.done) if resuming else None, stale_pid))
    if cfg.messages is not None and store.reasked:
        n = len(store.reasked)
        cfg.messages(
            f"asking again {n} question{'s' if n > 1 else ''} whose record{'s are errors' if n > 1 else ' is an error'} "
            "(--keep-errors keeps them)"
        )
    elif cfg.messages is not None and store.errors:
        cfg.messages(f"keeping {len(store.errors)} error records (--keep-errors)")
    runner = _Runner(cfg, sut, store, run_dir.name, progress, label)
    runner.earlier_state = manifest.memory_state
    prev = (
        signal.signal(signal.SIGTERM, _raise_interrupt)
        if threading.current_thread() is threading.main_thread()
        else None
    )
    status, error, reasons = "started", manifest.error, manifest.status_reasons
    try:
        runner.measure_floor("before")
        for tier in chosen:
            runner.run_tier(bench, tier, loaded.pop(tier.name, None))
        runner.measure_floor("after")
        assert isinstance(cfg.max_errors, MaxErrors)  # RunConfig normalises it
        grading = grading_summary(store.summary_rows())  # a judge-graded run: did the judge grade enough?
        verdict = run_status(len(store.done), len(store.errors), cfg.max_errors, _failure_reasons(grading))
        status, error, reasons = verdict.status, None, list(verdict.reasons) or None
        manifest = replace(manifest, grading=grading)
    except KeyboardInterrupt:
        status = "cancelled"
        raise
    except (SystemCallError, MemevalError) as e:
        status, error = "error", str(e)
        raise
    except BaseException as e:
        status, error = "error", f"{type(e).__name__}: {e}"
        raise
    finally:
        store.flush()  # every record on disk before the manifest counts them
        system_usage = sut.usage()  # the system's own model calls, ingest included (e.g. mem0's)
        ingest_usage = manifest.ingest_usage
        if runner.ingest_usage:  # model calls a system made while ingesting (per haystack; not per question)
            ingest_usage = {**(ingest_usage or {}), **runner.ingest_usage}
        write_path = runner.write_path_json(manifest.write_path)
        causal = writepath.causal_summary(store.summary_rows())  # kept while writing: nothing read back
        manifest = replace(
            manifest,
            status=status,
            error=error,
            status_reasons=reasons,
            max_errors=str(cfg.max_errors),
            n_errors=len(store.errors),
            network_floor_ms=dict(runner.floor),
            finished_at=now(),
            n_records=len(store.done),
            system_usage=manifest.system_usage if system_usage is None else dict(system_usage),
            ingest_usage=ingest_usage,
            memory_state=manifest.memory_state
            if runner.memory_state is None
            else _memory_state_note(runner.memory_state),
            model_cache=cache_note((cfg.judge, cfg.reader), manifest.model_cache),  # this session's + earlier
            write_path=write_path,
            causal=causal if causal["checked"] else manifest.causal,
        )
        write_manifest(run_dir, manifest)
        store.close()
        if prev is not None:
            signal.signal(signal.SIGTERM, prev)


def _failure_reasons(grading: dict | None) -> list[str]:
    """Reasons other than error records that make a finished run ``failed`` (``run.status.run_status``),
    in plain words; each check that judges a whole run adds its reason here: a judge that graded under
    half its questions (``run.grading``)."""
    reason = failure_reason(grading)
    return [] if reason is None else [reason]


class _NoBar:
    """What the runner asks of a progress bar (count, update, refresh, close), showing nothing."""

    def __init__(self) -> None:
        self.n = 0

    def update(self, k: int = 1) -> None:
        self.n += k

    def refresh(self) -> None:
        pass

    def close(self) -> None:
        pass

    def __enter__(self) -> "_NoBar":
        return self

    def __exit__(self, *exc) -> None:
        return None


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt


def _resume_line(cfg: RunConfig, chosen, done: int | None, stale_pid: str | None) -> str:
    """What opening an existing run folder did, in one line.

    >>> _resume_line(RunConfig(bench_dir="b", epochs=2), [type("T", (), {"n_questions": 5})()], 3, "4242")
    'resumed: 3 of 10 already recorded; stale lock of pid 4242 removed (its writer had died)'
    """
    parts = []
    if done is not None:
        sizes = [t.n_questions for t in chosen]
        known = cfg.question_set == "main" and all(isinstance(n, int) for n in sizes)
        total = f" of {sum(sizes) * cfg.epochs:,}" if known else ""
        parts.append(f"resumed: {done:,}{total} already recorded")
    if stale_pid:
        parts.append(f"stale lock of pid {stale_pid} removed (its writer had died)")
    return "; ".join(parts)


class _OneLine:
    """``_Runner._crash_is_one_line``'s context (a class: entered per haystack and per session)."""

    __slots__ = ("label", "what")

    def __init__(self, label: str, what: str) -> None:
        self.label, self.what = label, what

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind, e, tb) -> None:
        # MemevalError (SystemCallError, StaleGeneration) is the caller's; Ctrl-C and exits pass through
        if kind is None or not issubclass(kind, Exception) or issubclass(kind, MemevalError):
            return
        raise MemevalError(
            f"system {self.label!r} raised in {self.what}: {kind.__name__}: {e} (memeval --debug run ... "
            "shows the traceback)"
        ) from e


class CircuitOpen(MemevalError):
    """The circuit breaker stopped the run: the system stopped answering (one line; rerun resumes)."""


def _a(value: object) -> str:
    """``a dict``, ``an int``, ``None``: what a value is, for a one-line contract error."""
    if value is None:
        return "None"
    name = type(value).__name__
    return f"{'an' if name[:1].lower() in 'aeiou' else 'a'} {name}"


_STATE_COUNTS = ("haystacks", "fenced", "unfenced", "count+digest", "count", "unchecked", "reingested", "failed")


def _memory_state(old) -> dict[str, Any]:
    """The counts of ``manifest["memory_state"]`` (a resumed run adds to them)."""
    old = old if isinstance(old, dict) else {}
    state: dict[str, Any] = {
        k: old[k] if isinstance(old.get(k), int) and not isinstance(old.get(k), bool) else 0 for k in _STATE_COUNTS
    }
    failed = old.get("failed_haystacks")
    state["failed_haystacks"] = [h for h in failed if isinstance(h, str)] if isinstance(failed, list) else []
    return state


def _memory_state_note(state: dict[str, Any]) -> dict[str, Any]:
    """``memory_state`` with one line saying what its counts mean for the run."""
    if state["unfenced"]:
        how = "count only" if state["count"] else "nothing"
        note = (
            f"{state['unfenced']} of {state['haystacks']} haystacks unfenced: the server returned no generation, "
            f"so a late request could change its memory unseen; {how} checked after ingest"
        )
    elif state["unchecked"]:
        note = f"fenced, but {state['unchecked']} haystacks unchecked: the server's /stats gave no session count"
    else:
        note = "every haystack fenced and its session count and digest checked before the first question"
    if state["failed"]:
        note += f"; {state['failed']} haystacks failed (their questions are error records)"
    return {**state, "note": note}


class _Runner:
    def __init__(self, cfg: RunConfig, sut: Declared, store: RecordStore, run_id: str, progress: bool, label: str = ""):
        self.cfg, self.sut, self.store, self.run_id, self.progress = cfg, sut, store, run_id, progress
        self.label = label or cfg.system  # what records and tables call the system
        # the error records that will count (kept ones, then each new one), shown live on the progress bar
        self.n_errors = len(set(store.errors) - store.reasked)
        self.failures: list[str] = []  # the current streak of connection failures (their reasons)
        self.unreachable: set[tuple[str, str, int]] = set()  # keys whose error was a connection failure
        self.system, self.caps = sut.system, sut.capabilities
        self.floor: dict[str, float | None] = {"before": None, "after": None}
        self.ingest_usage: dict[str, list] = {}
        self.grader = _grader(cfg)
        self.scorers = _scorers(cfg)
        self.corpus = retrieval.Corpus((), {}, {})  # the haystack being asked (ranked retrieval metrics)
        self.root: str | None = None  # the bench folder (images the reader is shown are read from it)
        self.answering = Answering(cfg.mode, self.scorers, cfg.reader, cfg.context_max_tokens, cfg.prices)
        self.memory_state: dict[str, Any] | None = None  # set once a system says what it holds
        self.earlier_state: Any = None  # memory_state of the manifest resumed (added to)
        self.write_path: dict[str, dict[str, Any]] = {}  # per haystack: ingest time, calls, time to searchable
        self.ingest_ms = 0.0  # the current haystack's ingest time (re-ingests included)

    def write_path_json(self, old: Any) -> dict[str, Any] | None:
        """``manifest["write_path"]``: each haystack's entry (a resumed run adds its own), how the system
        indexes, and the bounded wait."""
        old_hays = old.get("haystacks") if isinstance(old, dict) else None
        hays = {**(old_hays if isinstance(old_hays, dict) else {}), **self.write_path}
        if not hays:
            return old if isinstance(old, dict) else None
        indexing = self.caps.indexing
        return {
            "indexing": indexing,
            "searchable_timeout_s": self.cfg.searchable_timeout if indexing == "async" else None,
            "haystacks": hays,
            "note": "ingest_ms: reset excluded, re-ingests included; "
            + (
                "searchable_ms: from the end of ingest to the first probe query that returned the newest session"
                if indexing == "async"
                else "the system declares it is searchable when ingest returns (no probe)"
            ),
        }

    def measure_floor(self, when: str) -> None:
        self.sut.warm()
        floor = self.sut.network_floor_ms()  # None: in process, no network between us
        self.floor[when] = None if floor is None else round(floor, 3)

    def run_tier(self, bench, tier, data: TierData | None = None) -> None:
        """Ask the tier's questions; ``data``: the tier as the validity gate read it (used where its ids
        are unique, i.e. where reading the files again would give the same turns and questions)."""
        root = Path(bench.root)
        self.root = str(root)
        qset = self.cfg.question_set
        if data is not None and not (data.ids_unique and (qset == "main" or qset in data.sets)):
            data = None  # read again: reading raises on the repeated id, as it always has
        if data is not None:
            questions = data.questions if qset == "main" else data.sets[qset]
        else:
            questions = read_questions(root / tier.questions_path(qset))
        todo = [
            (q, e) for q in questions for e in range(self.cfg.epochs) if (tier.name, q.id, e) not in self.store.done
        ]
        if not todo:
            return
        by_hay: dict[str | None, list] = {}
        for q, e in todo:
            by_hay.setdefault(q.haystack, []).append((q, e))
        # one haystack read at a time, never the whole tier; where the bench's hash was checked against its
        # files, the haystacks' places in the file are found once per bench and read back after
        known = self.cfg.verify and bench.content_hash
        spans = cached_spans(root, tier.turns_file, bench.content_hash) if known else None
        haystacks = TierTurns(root / tier.turns_file, spans)
        # one bar at a time below the questions' bar: each haystack's ingest bar is closed (and its line
        # cleared) before questions are asked, so the closed questions' bar is the last line written
        ask_bar = None
        try:
            for hay, items in by_hay.items():
                scope = tier.name if hay is None else f"{tier.name}/{hay}"
                sessions = haystacks.sessions(hay)
                used_before = self.sut.usage()
                with (
                    tqdm(total=len(sessions), desc=f"{scope}: ingest", unit="session", leave=False)
                    if self.progress
                    else _NoBar()  # a disabled tqdm still costs ~150 us to make: one per haystack
                ) as ingest_bar:
                    with metered() as calls:
                        failed = self._reset_and_ingest(sessions, ingest_bar, bench.content_hash, scope)
                if calls:
                    self.ingest_usage[scope] = usage_entries(calls, lambda c: "system")
                failed = self._write_path(scope, sessions, failed, used_before)
                if ask_bar is None:
                    ask_bar = tqdm(total=len(todo), desc=f"{tier.name}: questions", unit="q", disable=not self.progress)
                    ask_bar.set_postfix(errors=self.n_errors, refresh=False)
                if failed is not None:  # the memory is not what was sent: no question is asked of it
                    for q, e in items:
                        self._keep(self._record(tier.name, q, e) | {"error": failed, "chars_returned": 0}, ask_bar)
                    continue
                self.corpus = retrieval.Corpus.of((t for s in sessions for t in s.turns), memory_text)
                self._ask_all(tier.name, items, ask_bar)
        finally:
            if ask_bar is not None:
                ask_bar.close()

    def _write_path(self, scope: str, sessions, failed: str | None, used_before) -> str | None:
        """Record the haystack's write path; for an asynchronously indexing system, wait (bounded) until
        its newest session is searchable. None when the haystack may be asked; else the one line why not."""
        entry: dict[str, Any] = {
            "sessions": len(sessions),
            "ingest_ms": round(self.ingest_ms, 3),
            "system_usage": writepath.usage_delta(used_before, self.sut.usage()),
        }
        if failed is None and sessions and self.caps.indexing == "async":
            waited = writepath.wait_searchable(self.system.query, sessions[-1], self.cfg.searchable_timeout)
            entry |= {"searchable_ms": waited.ms, "probes": waited.probes}
            if waited.problem is not None:
                failed = f"haystack {scope}: {waited.problem}"
                tqdm.write(f"memeval run: {failed}; its questions are error records", file=sys.stderr)
        entry["error"] = failed
        self.write_path[scope] = entry
        return failed

    def _reset_and_ingest(self, sessions, bar, bench_hash: str = "", scope: str = "") -> str | None:
        """Reset, ingest, and where the system can say what it holds, check it: re-ingest once if it is
        not what was sent. None when the haystack may be asked; else the one line why not."""
        problem, start = None, bar.n
        self.ingest_ms = 0.0
        for attempt in range(2):
            try:
                self._ingest(sessions, bar, bench_hash, scope)
            except StaleGeneration as e:  # reset under us during ingest: what is stored is unknown
                problem = str(e)
                if self.memory_state is None:
                    self.memory_state = _memory_state(self.earlier_state)
            else:
                check = self.sut.verify_ingest()
                if check is None:  # the system cannot say what it holds (in process: nothing between us)
                    return None
                if attempt == 0:
                    if self.memory_state is None:
                        self.memory_state = _memory_state(self.earlier_state)
                    st = self.memory_state
                    st["haystacks"] += 1
                    st["fenced" if check.fenced else "unfenced"] += 1
                    st["unchecked" if check.checked == "none" else check.checked] += 1
                problem = check.problem
            if problem is None:
                return None
            if self.memory_state is not None:
                self.memory_state["reingested" if attempt == 0 else "failed"] += 1
            if attempt == 0:
                tqdm.write(f"memeval run: haystack {scope}: {problem}; re-ingesting it", file=sys.stderr)
                bar.n = start  # the sessions are ingested again
                bar.refresh()
        line = f"haystack {scope}: memory not as sent after a re-ingest ({problem})"
        tqdm.write(f"memeval run: {line}; its questions are error records", file=sys.stderr)
        if self.memory_state is not None:
            self.memory_state["failed_haystacks"] = [*self.memory_state["failed_haystacks"], scope][-100:]
        return line

    def _ingest(self, sessions, bar, bench_hash: str = "", scope: str = "") -> None:
        """Reset, then ingest in order; an HTTP system gets one idempotency key per (bench, haystack, session)."""
        with self._crash_is_one_line(f"reset before {scope}"):
            self.system.reset()
        keyed = self.caps.idempotent_ingest
        inline = self.caps.image_input == "inline"  # the system takes image bytes
        t0 = time.perf_counter()
        try:
            self._ingest_sessions(sessions, bar, bench_hash, scope, keyed, inline)
        finally:
            self.ingest_ms += (time.perf_counter() - t0) * 1000

    def _ingest_sessions(self, sessions, bar, bench_hash: str, scope: str, keyed: bool, inline: bool) -> None:
        for i, s in enumerate(sessions):
            if inline:
                s = inline_session(s, self.root, f"{scope}: session {s.session_id}")
            with self._crash_is_one_line(f"ingest of session {s.session_id!r} ({scope})"):
                if keyed:  # declared idempotent_ingest: ingest takes the key
                    key = ingest_key(bench_hash, scope, s.session_id, i)
                    self.system.ingest(s, idempotency_key=key)  # type: ignore[call-arg]
                else:
                    self.system.ingest(s)
            bar.update(1)

    def _crash_is_one_line(self, what: str) -> "_OneLine":
        """A system that raises while being reset or fed stops the run with one line naming the system,
        the call and the exception (the traceback stays chained, for ``memeval --debug``)."""
        return _OneLine(self.label, what)

    def _keep(self, rec: dict[str, Any], bar) -> None:
        """Append one record (its fields; ``Record.of`` refuses a field ``Record`` does not have),
        count its error on the progress bar, and trip the circuit breaker when a served system stops
        answering."""
        self.store.append(Record.of(rec))  # the one Record of the question, built with all its fields
        bar.update(1)
        error = rec.get("error")
        if error is None:
            self.failures.clear()
            return
        self.n_errors += 1
        bar.set_postfix(errors=self.n_errors)
        key = (rec["tier"], rec["qid"], rec["epoch"])
        if key not in self.unreachable:
            self.failures.clear()
            return
        self.unreachable.discard(key)
        self.failures.append(error)
        problem = self.system.health_problem() if isinstance(self.system, HttpSystem) else None
        if problem is None and len(self.failures) < self.cfg.max_connection_failures:
            return
        what = (
            f"its health check failed ({problem}) after {error}"
            if problem is not None
            else f"{len(self.failures)} consecutive connection failures (last: {error})"
        )
        errors = self.store.done & set(self.store.errors)
        raise CircuitOpen(
            f"system {self.label!r} stopped answering: {what}; {len(self.store.done) - len(errors)} "
            f"questions answered, {len(errors)} errors; rerun to resume"
        )

    def _ask_all(self, tier: str, items, bar) -> None:
        parallel = self.cfg.concurrency > 1 and self.caps.concurrent_queries
        if not parallel:
            for q, e in items:
                self._keep(self._ask(tier, q, e), bar)
            return
        pool = ThreadPoolExecutor(self.cfg.concurrency)
        pending: set = set()
        it = iter(items)
        try:
            while True:
                while len(pending) < self.cfg.concurrency * 2:
                    nxt = next(it, None)
                    if nxt is None:
                        break
                    pending.add(pool.submit(self._ask, tier, *nxt))
                if not pending:
                    break
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                for f in done:
                    self._keep(f.result(), bar)
        except BaseException:  # Ctrl-C: abort the requests in flight rather than wait for them
            self.sut.cancel()
            raise
        finally:
            pool.shutdown(wait=True, cancel_futures=True)

    def _record(self, tier: str, q: Question, epoch: int) -> dict[str, Any]:
        """What a record of this question says before the system is asked: its fields (every one a
        ``Record`` field; ``_keep`` builds the record once, with all of them)."""
        return {
            "run_id": self.run_id,
            "system": self.label,
            "tier": tier,
            "qid": q.id,
            "axis": q.axis,
            "epoch": epoch,
            "question_asked": q.text_to_ask,
            "query_lang": q.lang,
            "mode": self.cfg.mode,
            "weight": bounds.run_weight(q),
            "haystack": q.haystack,
            "gold_answer": q.gold_answer,
            "evidence_turns": list(q.evidence_turns),
            "grader": self.grader,
            "started_at": now(),
        }

    def _ask(self, tier: str, q: Question, epoch: int) -> dict[str, Any]:
        asked = q.text_to_ask
        rec = self._record(tier, q, epoch)
        try:
            with metered() as system_calls:  # model calls a system makes in this thread (e.g. mem0)
                if self.sut.prepare is not None:  # the built-in oracle only (systems.base.declared)
                    self.sut.prepare(q)
                t0 = time.perf_counter_ns()
                recall: Recall = self.system.query(asked, q.asked_at)
                wall_ms = (time.perf_counter_ns() - t0) / 1e6
        except SystemCallError as e:
            if e.connection:  # the circuit breaker counts these (_keep)
                self.unreachable.add((tier, q.id, epoch))
            return rec | {"error": str(e), "chars_returned": 0}
        except Exception as e:  # a crashing system is an error record, not a crashed run
            return rec | {"error": f"{type(e).__name__}: {e}", "chars_returned": 0}
        if not isinstance(recall, Recall):  # a broken contract, not a failed question: stop, one line
            raise SystemContractError(
                f"system {self.label!r}: query returned {_a(recall)}, expected Recall "
                "(return memeval.Recall(memories=[...]); see memeval.MemorySystem)"
            )
        memories = list(recall.memories)
        rec["memories_returned"] = [str(m) for m in memories]
        rec["memories"] = memories_json(memories)
        rec["retrieved_turns"] = None if recall.turn_ids is None else list(recall.turn_ids)
        rec["chars_returned"] = sum(len(m) for m in memories) + len(recall.answer or "")
        rec["response_bytes"] = recall.response_bytes
        rec["attempts"] = recall.attempts
        rec.update(system_usage_fields(recall.usage))  # the system's own model calls (e.g. mem0's), if counted
        rec["future_memories"] = writepath.future_count(memories, q.asked_at)  # the causal guard
        cfg, keep = self.cfg, self.caps.context_keep
        rec.update(speed_fields(recall, wall_ms, cfg.target_ms, self.floor["before"], cfg.concurrency))
        rec.update(self.answering.fields(q, recall, memories, self.corpus, system_calls, keep, self.root))
        return rec
