"""The runner: one system × one bench × chosen tiers × epochs → a run folder of records.

For each tier (or each haystack of a tier): reset the system, ingest the sessions in file order, then
ask every question not yet recorded. Rerunning the same command resumes, and asks again the questions
whose records are errors (``keep_errors`` keeps them); Ctrl-C (or SIGTERM) leaves the manifest marked
``cancelled`` and every written record intact. A finished run's status is ``complete``,
``complete_with_errors`` or ``failed`` (``run.status``: errors against ``max_errors``). A circuit
breaker stops the run (status ``error``) when a served system stops answering: after
``max_connection_failures`` consecutive connection failures, or at the first one its health check
confirms.
"""

from __future__ import annotations

import contextlib
import signal
import threading
import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Iterable, Iterator

from tqdm.auto import tqdm

from ..text.names import slug
from ..bench.axes import AXIS_WEIGHTS
from ..bench.images import inline_session
from ..bench.io import load_bench, read_questions, read_turns
from ..bench.model import Question, haystacks_of
from ..errors import SystemContractError, MemevalError
from ..audit import validity
from ..audit.loading import TierData
from ..llm import metered
from ..scoring import retrieval, scorers
from ..systems.base import Declared, Recall, SystemCallError, declared, memory_text
from ..systems.http import HttpSystem, ingest_key, public_url
from ..systems.registry import make_system
from .answering import Answering, speed_fields
from .cost import usage_entries
from .records import RecordStore, memories_json, system_usage_fields
from .folder import RunLock, write_manifest
from .setup import config_id as _config_id, config_snapshot, now, open_manifest, verify_bench
from .status import MaxErrors, run_status

__all__ = ["RunConfig", "run_system", "default_run_dir"]

MODES = ("dry", "memory", "answer")


@dataclass(frozen=True)
class RunConfig:
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
    label: str = ""  # what records and tables call the system (name, the server's own name, or the spec)
    keep_errors: bool = False  # a rerun keeps error records instead of asking their questions again
    max_errors: MaxErrors = field(default_factory=MaxErrors)  # errors tolerated before status failed
    max_connection_failures: int = 10  # the circuit breaker: consecutive connection failures tolerated


def _slug(text: str) -> str:
    return slug(text).strip("_")[:48]


def _scorers(cfg: RunConfig) -> list:
    """The scorers the run's mode names (scoring/scorers.py), in the order they run."""
    return scorers.scorers_for(cfg.mode, cfg.judge, cfg.reader)


def _grader(cfg: RunConfig) -> dict:
    """What grades this run, as the manifest and every record store it (never an API key)."""
    return next(s.grader() for s in _scorers(cfg) if hasattr(s, "grader"))


def default_run_dir(bench_name: str, system: str, mode: str, config_id: str, root="runs") -> Path:
    return Path(root) / f"{_slug(bench_name)}_{_slug(system)}_{mode}_{config_id}"


def run_system(
    bench_dir,
    system: str = "bm25",
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
    messages=None,
) -> Path:
    """Run (or resume) and return the run folder. See ``memeval run --help``.

    ``name``: the system's logical name (e.g. ``bm25-http`` for a server on a random loopback port);
    it names the run folder and stands for the URL in the config id, so the run resumes whatever the port.
    ``context_max_tokens``: in answer mode, the most memory tokens the reader reads (the cut is recorded);
    ``prices``: a ``run.cost.Prices`` turning each question's token usage into ``cost_usd``.
    ``keep_errors``: keep the error records of an earlier pass (default: ask those questions again);
    ``max_errors``: errors tolerated (a count, or a fraction as ``"10%"``/``"0.1"``) before the status is
    ``failed``; ``max_connection_failures``: consecutive connection failures before the run stops;
    ``messages``: called with each line the run has to say (e.g. how many questions it asks again).

    >>> run_dir = run_system(tiny_bench, "recent:tokens=500", tiers=["core"], runs_root=tmp, progress=False)
    >>> run_dir.parent == tmp, (run_dir / "records.jsonl").is_file()
    (True, True)
    >>> run_system(tiny_bench, "recent:tokens=500", tiers=["core"], runs_root=tmp, progress=False) == run_dir  # resumed
    True
    """
    if context_max_tokens is not None and int(context_max_tokens) <= 0:
        raise MemevalError(f"context_max_tokens must be a positive number of tokens, got {context_max_tokens}")
    if context_max_tokens is not None and mode != "answer":
        raise MemevalError("--context-max-tokens caps what the reader reads: it applies to --mode answer only")
    if mode not in MODES:
        raise MemevalError(f"mode must be one of {MODES}, got {mode!r}")
    if mode != "dry" and judge is None:
        raise MemevalError(f"mode {mode!r} needs a judge (--judge-url/--judge-model)")
    if mode == "answer" and reader is None:
        raise MemevalError("mode 'answer' needs a reader (--reader-url/--reader-model)")
    spec = public_url(system)  # user-info in a URL is a credential: sent, never written
    budget = max_errors if isinstance(max_errors, MaxErrors) else MaxErrors.parse(str(max_errors or 0))
    if max_connection_failures < 1:
        raise MemevalError(f"max_connection_failures must be at least 1, got {max_connection_failures}")
    cfg = RunConfig(
        str(bench_dir),
        spec,
        tuple(tiers) if tiers else None,
        mode,
        int(epochs),
        max(1, int(concurrency)),
        question_set,
        target_ms,
        budget_ms,
        judge,
        reader,
        None if context_max_tokens is None else int(context_max_tokens),
        prices,
    )
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
    files_hash = verify_bench(bench, chosen, question_set, verify)
    sut = declared(make_system(system, **(http_options or {})))
    run_dir: Path | None = None  # set once the run folder is chosen (after the system named itself)
    try:
        served = sut.system if isinstance(sut.system, HttpSystem) else None
        if served is not None:  # a served system names itself (GET /health); unreachable: one line, nothing written
            served.fetch_info()
        sys_label = name or (served.label if served is not None else spec)
        cfg = replace(
            cfg,
            label=sys_label,
            keep_errors=keep_errors,
            max_errors=budget,
            max_connection_failures=int(max_connection_failures),
        )
        snapshot = config_snapshot(cfg, bench, sut.system, chosen, _grader(cfg))
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
        label = mode if question_set == "main" else f"{mode}-{question_set}"
        run_dir = Path(out) if out else default_run_dir(bench.name, sys_label, label, config_id, runs_root)
        with RunLock(run_dir):
            _run_locked(cfg, bench, sut, chosen, snapshot, config_id, run_dir, progress, messages)
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
    messages=None,
) -> None:
    """The run proper, with this process holding the run folder's lock."""
    manifest = open_manifest(run_dir, snapshot, config_id)
    manifest["status"] = "started"
    loaded: dict[str, TierData] = {}  # the tiers the gate read: asked from, not read again
    if cfg.mode == "dry" and "dry_validity" not in manifest:  # the validity gate (audit/validity.py)
        manifest["dry_validity"] = validity.dry_validity(
            cfg.bench_dir, [t.name for t in chosen], on_tier=lambda d: loaded.__setitem__(d.tier.name, d)
        )
    manifest["scorers"] = [s.spec() for s in _scorers(cfg)]  # what wrote each graded field, versioned
    if cfg.prices is not None:
        manifest["prices"] = cfg.prices.to_json()
    write_manifest(run_dir, manifest)

    store = RecordStore(run_dir, keep_errors=cfg.keep_errors)
    if store.reasked and messages is not None:
        n = len(store.reasked)
        messages(
            f"asking again {n} question{'s' if n > 1 else ''} whose record{'s are errors' if n > 1 else ' is an error'} "
            "(--keep-errors keeps them)"
        )
    elif store.errors and messages is not None:
        messages(f"keeping {len(store.errors)} error records (--keep-errors)")
    runner = _Runner(cfg, sut, store, run_dir.name, progress)
    prev = (
        signal.signal(signal.SIGTERM, _raise_interrupt)
        if threading.current_thread() is threading.main_thread()
        else None
    )
    try:
        runner.measure_floor("before")
        for tier in chosen:
            runner.run_tier(bench, tier, loaded.pop(tier.name, None))
        runner.measure_floor("after")
        status = run_status(len(store.done), len(store.errors), cfg.max_errors, _failure_reasons(cfg, store))
        manifest["status"] = status.status
        manifest["max_errors"] = str(cfg.max_errors)
        if status.reasons:
            manifest["status_reasons"] = list(status.reasons)
        else:
            manifest.pop("status_reasons", None)
        manifest.pop("error", None)
    except KeyboardInterrupt:
        manifest["status"] = "cancelled"
        raise
    except (SystemCallError, MemevalError) as e:
        manifest["status"] = "error"
        manifest["error"] = str(e)
        raise
    except BaseException as e:
        manifest["status"] = "error"
        manifest["error"] = f"{type(e).__name__}: {e}"
        raise
    finally:
        manifest["network_floor_ms"] = runner.floor
        manifest["finished_at"] = now()
        manifest["n_records"] = len(store.done)
        manifest["n_errors"] = len(store.errors)
        system_usage = sut.usage()  # the system's own model calls, ingest included (e.g. mem0's)
        if system_usage is not None:
            manifest["system_usage"] = dict(system_usage)
        if runner.ingest_usage:  # model calls a system made while ingesting (per haystack; not per question)
            manifest["ingest_usage"] = {**manifest.get("ingest_usage", {}), **runner.ingest_usage}
        write_manifest(run_dir, manifest)
        store.close()
        if prev is not None:
            signal.signal(signal.SIGTERM, prev)


def _failure_reasons(cfg: RunConfig, store: RecordStore) -> list[str]:
    """Reasons other than error records that make a finished run ``failed`` (``run.status.run_status``),
    in plain words; each check that judges a whole run (e.g. a judge that graded too few answers) adds
    its reason here. None yet."""
    return []


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt


class CircuitOpen(MemevalError):
    """The circuit breaker stopped the run: the system stopped answering (one line; rerun resumes)."""


def _a(value: object) -> str:
    """``a dict``, ``an int``, ``None``: what a value is, for a one-line contract error."""
    if value is None:
        return "None"
    name = type(value).__name__
    return f"{'an' if name[:1].lower() in 'aeiou' else 'a'} {name}"


class _Runner:
    def __init__(self, cfg: RunConfig, sut: Declared, store: RecordStore, run_id: str, progress: bool):
        self.cfg, self.sut, self.store, self.run_id, self.progress = cfg, sut, store, run_id, progress
        self.system, self.caps = sut.system, sut.capabilities
        self.floor: dict[str, float | None] = {"before": None, "after": None}
        self.ingest_usage: dict[str, list] = {}
        self.grader = _grader(cfg)
        self.scorers = _scorers(cfg)
        self.corpus = retrieval.Corpus((), {}, {})  # the haystack being asked (ranked retrieval metrics)
        self.root: str | None = None  # the bench folder (images the reader is shown are read from it)
        self.answering = Answering(cfg.mode, self.scorers, cfg.reader, cfg.context_max_tokens, cfg.prices)
        self.label = cfg.label or cfg.system
        # the error records that will count (kept ones, then each new one), shown live on the progress bar
        self.n_errors = len(set(store.errors) - store.reasked)
        self.failures: list[str] = []  # the current streak of connection failures (their reasons)

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
        haystacks = haystacks_of(data.turns if data is not None else read_turns(root / tier.turns_file))
        # one bar at a time below the questions' bar: each haystack's ingest bar is closed (and its line
        # cleared) before questions are asked, so the closed questions' bar is the last line written
        ask_bar = None
        try:
            for hay, items in by_hay.items():
                scope = tier.name if hay is None else f"{tier.name}/{hay}"
                sessions = haystacks.get(hay, [])
                with tqdm(
                    total=len(sessions), desc=f"{scope}: ingest", unit="session", disable=not self.progress, leave=False
                ) as ingest_bar:
                    with metered() as calls:
                        self._reset_and_ingest(sessions, ingest_bar, bench.content_hash, scope)
                if calls:
                    self.ingest_usage[scope] = usage_entries(calls, lambda c: "system")
                self.corpus = retrieval.Corpus.of((t for s in sessions for t in s.turns), memory_text)
                if ask_bar is None:
                    ask_bar = tqdm(total=len(todo), desc=f"{tier.name}: questions", unit="q", disable=not self.progress)
                    ask_bar.set_postfix(errors=self.n_errors, refresh=False)
                self._ask_all(tier.name, items, ask_bar)
        finally:
            if ask_bar is not None:
                ask_bar.close()

    def _reset_and_ingest(self, sessions, bar, bench_hash: str = "", scope: str = "") -> None:
        """Reset, then ingest in order; an HTTP system gets one idempotency key per (bench, haystack, session)."""
        with self._crash_is_one_line(f"reset before {scope}"):
            self.system.reset()
        keyed = self.caps.idempotent_ingest
        inline = self.caps.image_input == "inline"  # the system takes image bytes
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

    @contextlib.contextmanager
    def _crash_is_one_line(self, what: str) -> Iterator[None]:
        """A system that raises while being reset or fed stops the run with one line naming the system,
        the call and the exception (the traceback stays chained, for ``memeval --debug``)."""
        try:
            yield
        except (SystemCallError, MemevalError, KeyboardInterrupt):
            raise
        except Exception as e:
            raise MemevalError(
                f"system {self.label!r} raised in {what}: {type(e).__name__}: {e} (memeval --debug run ... "
                "shows the traceback)"
            ) from e

    def _record(self, rec: dict, bar) -> None:
        """Append one record, count its error on the progress bar, and trip the circuit breaker when a
        served system stops answering."""
        self.store.append(rec)
        bar.update(1)
        if rec.get("error") is None:
            self.failures.clear()
            return
        self.n_errors += 1
        bar.set_postfix(errors=self.n_errors)
        if not rec.get("_connection"):
            self.failures.clear()
            return
        self.failures.append(rec["error"])
        problem = self.system.health_problem() if isinstance(self.system, HttpSystem) else None
        if problem is None and len(self.failures) < self.cfg.max_connection_failures:
            return
        what = (
            f"its health check failed ({problem}) after {rec['error']}"
            if problem is not None
            else f"{len(self.failures)} consecutive connection failures (last: {rec['error']})"
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
                self._record(self._ask(tier, q, e), bar)
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
                    self._record(f.result(), bar)
        except BaseException:  # Ctrl-C: abort the requests in flight rather than wait for them
            self.sut.cancel()
            raise
        finally:
            pool.shutdown(wait=True, cancel_futures=True)

    def _ask(self, tier: str, q: Question, epoch: int) -> dict:
        asked = q.text_to_ask
        axis_for_weight = "ABSTAIN" if q.expect == "no_memory" else q.axis
        rec: dict[str, Any] = {
            "run_id": self.run_id,
            "system": self.label,
            "tier": tier,
            "qid": q.id,
            "axis": q.axis,
            "epoch": epoch,
            "question_asked": asked,
            "query_lang": q.lang,
            "mode": self.cfg.mode,
            "weight": AXIS_WEIGHTS[axis_for_weight],
            "haystack": q.haystack,
            "gold_answer": q.gold_answer,
            "evidence_turns": list(q.evidence_turns),
            "grader": self.grader,
            "started_at": now(),
        }
        try:
            with metered() as system_calls:  # model calls a system makes in this thread (e.g. mem0)
                if self.sut.prepare is not None:  # the built-in oracle only (systems.base.declared)
                    self.sut.prepare(q)
                t0 = time.perf_counter_ns()
                recall: Recall = self.system.query(asked, q.asked_at)
                wall_ms = (time.perf_counter_ns() - t0) / 1e6
        except SystemCallError as e:
            rec.update(error=str(e), chars_returned=0, _connection=e.connection)
            return rec
        except Exception as e:  # a crashing system is an error record, not a crashed run
            rec.update(error=f"{type(e).__name__}: {e}", chars_returned=0)
            return rec
        if not isinstance(recall, Recall):  # a broken contract, not a failed question: stop, one line
            raise SystemContractError(
                f"system {self.label!r}: query returned {_a(recall)}, expected Recall "
                "(return memeval.Recall(memories=[...]); see memeval.MemorySystem)"
            )
        memories = list(recall.memories)
        rec.update(
            memories_returned=[str(m) for m in memories],
            memories=memories_json(memories),
            retrieved_turns=None if recall.turn_ids is None else list(recall.turn_ids),
            chars_returned=sum(len(m) for m in memories) + len(recall.answer or ""),
            response_bytes=recall.response_bytes,
            attempts=recall.attempts,
        )
        rec.update(system_usage_fields(recall.usage))  # the system's own model calls (e.g. mem0's), if counted
        cfg = self.cfg
        rec.update(speed_fields(recall, wall_ms, cfg.target_ms, self.floor["before"], cfg.concurrency))
        keep = self.caps.context_keep
        rec.update(self.answering.fields(q, recall, memories, self.corpus, system_calls, keep, self.root))
        return rec
