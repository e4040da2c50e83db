"""Where did it break? Each question of a run attributed to one cause: the fact never stored (write
loss), stored but not retrieved (retrieval loss), retrieved but not used by the reader (reader loss),
or beyond the reader even with the evidence in hand (reader ceiling) -- or answered right.

``attribute_run`` asks the run's own reader, graded by the run's own judge, under counterfactual
conditions beside the run itself (a): (b) ``oracle``, the question's evidence turns; (c) ``context``,
the whole haystack cut to the reading budget (newest kept); (d) ``stored``, what the system stored for
the haystack (``memories(haystack)``, re-ingested for it; where the system lists it), cut likewise.
The conditions are asked for the misses (whose cause needs them; ``all_conditions`` for every
graded question), once per question whatever its epochs. The dump also says, without any reader,
whether the evidence was stored; the run's records say whether it was retrieved. A dry or memory
run gets that retrieval part only (no reader is asked).

The cause of a graded record (:func:`cause_of`; a score of 1 is correct, anything less a miss):

1. ``correct``;
2. ``reader_ceiling``: the oracle condition misses too (the question or the reader, not memory);
3. ``write_loss``: an evidence turn is not in the stored dump;
4. ``retrieval_loss``: stored (or the dump unknown: ``memory_loss``, write or retrieval) but an
   evidence turn is not among the memories the reader read (a reading budget that cut it counts here);
5. ``reader_loss``: every evidence turn was read (all the oracle condition gives, and more), the
   answer is wrong, the oracle condition is right (a question without evidence -- abstention --
   lands here when the oracle condition abstains right).

Each miss gets exactly one cause; an error record, an ungraded one, or one whose deciding condition
could not be graded gets none (``attribution_note`` says why). The result is a new run folder (the
source is never rewritten), its records carrying the ``attribution*`` fields and its manifest the
counts and shares per tier and per axis with 95% bootstrap intervals (:func:`attribution_table`).
A regrade drops them (they depend on the grade).
"""

from __future__ import annotations


from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import polars as pl

from .._version import __version__
from ..callcache import cache_note
from ..bench.images import inline_session
from ..bench.io import read_questions, read_turns
from ..bench.model import Question, haystacks_of
from ..errors import InputError, MemevalError, SystemCallError, SystemContractError
from ..run.folder import RunLock, read_manifest, write_manifest
from ..run.setup import now
from ..run.manifest import Manifest
from ..run.records import RECORD_FIELDS, RecordStore, read_records
from ..run.regrade import record_memory_objects, source_bench
from ..run.writepath import DEFAULT_SEARCHABLE_TIMEOUT, wait_searchable
from ..scoring import retrieval, scorers
from ..scoring.errata import load_errata
from ..systems.base import declared, memory_text
from ..systems.context import fit_memories
from ..systems.http import ingest_key
from ..systems.registry import make_system
from .intervals import bootstrap_means

__all__ = [
    "CAUSES",
    "MISS_CAUSES",
    "ATTRIBUTION_VERSION",
    "DEFAULT_BUDGET",
    "cause_of",
    "evidence_in",
    "attribute_run",
    "attribution_table",
    "attribution_summary",
    "attributed",
]

ATTRIBUTION_VERSION = "attribution-v1"
#: every cause, in the order the charts stack them
CAUSES = ("correct", "reader_ceiling", "reader_loss", "retrieval_loss", "memory_loss", "write_loss")
MISS_CAUSES = CAUSES[1:]
#: the reading budget of the context and stored conditions when the run set none (tokens, approx-v1)
DEFAULT_BUDGET = 32000


def cause_of(
    score: float | None, oracle: float | None, stored: bool | None, read: bool | None, reader: bool = True
) -> tuple[str | None, str | None]:
    """``(cause, note)`` of one graded record: ``score`` the run's, ``oracle`` the oracle condition's
    (None: not graded), ``stored``/``read`` whether the evidence was in the dump / what the reader read
    (None: unknown, or no evidence); ``reader``: whether the run has a reader (answer mode).

    >>> cause_of(1.0, None, None, True)
    ('correct', None)
    >>> cause_of(0.0, 0.0, True, True), cause_of(0.0, 1.0, False, False), cause_of(0.0, 1.0, True, False)
    (('reader_ceiling', None), ('write_loss', None), ('retrieval_loss', None))
    >>> cause_of(0.5, 1.0, None, False), cause_of(0.0, 1.0, True, True)
    (('memory_loss', None), ('reader_loss', None))
    >>> cause_of(0.0, None, True, True)
    (None, 'the oracle condition is ungraded')
    """
    if score is None:
        return None, "ungraded"
    if score >= 1:
        return "correct", None
    if reader:
        if oracle is None:
            return None, "the oracle condition is ungraded"
        if oracle < 1:
            return "reader_ceiling", None
    if stored is False:
        return "write_loss", None
    if read is False:
        return ("memory_loss" if stored is None else "retrieval_loss"), None
    if not reader:
        return None, "evidence retrieved: a run without a reader cannot tell more"
    return "reader_loss", None


def evidence_in(
    q: Question, memories: Sequence[str], corpus: retrieval.Corpus, turn_ids: Sequence | None = None
) -> bool | None:
    """Whether *all* the question's evidence turns are among ``memories`` (``turn_ids`` where the system
    named them, else each memory mapped to the turn whose text it is, ``retrieval.map_memories``): the
    oracle condition holds them all, so a reader given fewer is not compared like for like. Where a
    memory is not a turn of the haystack (a system that rewrites what it stores), a memory holding the
    gold counts (``retrieval.retrieval_hit``'s text rule). None for a question without evidence.

    >>> from memeval.bench.model import Turn
    >>> t = [Turn(1, 1, "user", "My dog is Rex.", "2024-01-01"), Turn(2, 1, "user", "Hi.", "2024-01-01")]
    >>> c = retrieval.Corpus.of(t, memory_text)
    >>> q = Question("q", "BASIC", "Dog?", "Rex", evidence_turns=(1,))
    >>> evidence_in(q, [memory_text(t[1])], c), evidence_in(q, [memory_text(t[0])], c), evidence_in(q, ["Rex the dog"], c)
    (False, True, True)
    >>> both = Question("q2", "GATHER", "Dog and greeting?", "Rex, Hi", evidence_turns=(1, 2))
    >>> evidence_in(both, [memory_text(t[0])], c), evidence_in(both, [], c, turn_ids=[2, 1])
    (False, True)
    """
    if not retrieval.has_evidence(q) or not q.evidence_turns:
        return None
    wanted = {retrieval._id_key(t) for t in q.evidence_turns}
    texts = [str(m) for m in memories if m]
    if turn_ids:
        return wanted <= {retrieval._id_key(t) for t in turn_ids if t is not None}
    mapped = retrieval.map_memories(texts, corpus)
    if wanted <= {m for m in mapped if m is not None}:
        return True
    if all(m is not None for m in mapped):
        return False
    return bool(retrieval.retrieval_hit(q, None, texts))


def _read_evidence(q: Question, rec: dict, corpus: retrieval.Corpus, keep: str) -> bool | None:
    """Whether all the evidence was among what the reader read: the memories the system returned, cut
    to the run's reading budget where one cut them (then mapped by text)."""
    mems = [str(m) for m in record_memory_objects(rec)]
    if rec.get("context_truncated"):
        return evidence_in(q, list(fit_memories(mems, rec.get("context_limit"), keep).memories), corpus)
    return evidence_in(q, mems, corpus, rec.get("retrieved_turns"))


def _identity(x: Any) -> dict | None:
    if not isinstance(x, dict):
        return None
    return {k: x.get(k) for k in ("model", "prompt", "prompt_hash")}


def _check_same(role: str, given: Any, grader: Mapping[str, Any]) -> None:
    want, got = _identity(grader.get(role)), _identity(given.identity()) if given is not None else None
    if got is None:
        raise MemevalError(f"attributing an answer-mode run needs its {role} (--{role}-url/--{role}-model)")
    if want is not None and want != got:
        raise MemevalError(
            f"the {role} given ({got['model']}, prompt {got['prompt']}) is not the run's ({want['model']}, prompt "
            f"{want['prompt']}): attribution asks the run's own {role}"
        )


def attribute_run(
    run_dir,
    *,
    judge=None,
    reader=None,
    system=None,
    out=None,
    bench_dir=None,
    budget: int | None = None,
    reingest: bool = True,
    errata=None,
    all_conditions: bool = False,
    concurrency: int = 1,
    n_resamples: int = 1000,
) -> Path:
    """Attribute every record of ``run_dir`` (see the module docstring); return the new run folder.

    ``judge``/``reader``: the run's own (answer mode; checked against the manifest's grader);
    ``system``: the system to re-ingest for its dump (an object or a spec; default the run's spec);
    ``reingest=False``: no dump (write and retrieval loss then merge as ``memory_loss``); ``budget``:
    the reading budget of the context and stored conditions (default the run's
    ``context_max_tokens``, else :data:`DEFAULT_BUDGET`); ``all_conditions``: ask the conditions for
    the questions answered right too (default: the misses only, whose cause needs them);
    ``concurrency``: questions whose conditions are asked at once (threads; the reader and judge must
    take that many calls in parallel).

    >>> out = attribute_run(tiny_run, out=tmp / "attributed")
    >>> recs = read_records(out)
    >>> sorted({r["attribution"] for r in recs if r["score"] == 1.0})
    ['correct']
    """
    src = Path(run_dir)
    man = read_manifest(src)
    mode = man["config"]["mode"]
    grader = man["config"].get("grader") or {}
    answer = mode == "answer"
    if answer:
        _check_same("reader", reader, grader)
        _check_same("judge", judge, grader)
    records = read_records(src)
    bench = source_bench(src, man, bench_dir)
    limit = budget or man["config"].get("context_max_tokens") or DEFAULT_BUDGET
    if isinstance(errata, (str, Path)):
        errata = load_errata(errata)
    grading = scorers.scorers_for("answer", judge, reader, errata)[1] if answer else None
    dest = Path(out) if out else src.parent / f"{src.name}_attributed"
    if dest.resolve() == src.resolve():
        raise MemevalError(f"{dest}: the attribution must go to a new folder, not the source run")
    if (dest / "records.jsonl").exists() or (dest / "manifest.json").exists():
        raise MemevalError(f"{dest}: already holds a run; use another --out")
    sut = None
    dump_note = "not asked (--no-reingest)"
    if reingest:
        spec = system if system is not None else man["config"]["system"]["spec"]
        sut = declared(make_system(spec) if isinstance(spec, str) else spec)
        dump_note = "listed" if sut.lists_memories else f"system {sut.system.name!r} does not list its stored memories"
        if not sut.lists_memories:
            sut.close()
            sut = None
    keep = sut.capabilities.context_keep if sut is not None else "first"
    conditions = ["run", *(("oracle", "context") if answer else ()), *(("stored",) if answer and sut else ())]
    with RunLock(dest):
        source = Manifest.from_json(man, src / "manifest.json")
        manifest = source.derived(
            dest.name,
            now(),
            __version__,
            attribution={
                "version": ATTRIBUTION_VERSION,
                "source": {"run_id": man["run_id"], "path": str(src.resolve())},
            },
        )
        write_manifest(dest, manifest)
        store = RecordStore(dest)
        status, error = "started", None
        try:
            ctx = _Ctx(bench, man, grading, sut, limit, keep, dest.name, store, all_conditions, concurrency)
            for tier in [t["name"] for t in man["config"]["tiers"]]:
                mine = [r for r in records if r["tier"] == tier]
                if mine:
                    ctx.tier(tier, mine)
            status = man.get("status") or "complete"  # the source's errors stay said: never greener than it
        except BaseException as e:
            status, error = "error", f"{type(e).__name__}: {e}"
            raise
        finally:
            store.close()
            done = read_records(dest)
            summary = attribution_summary(done, n_resamples=n_resamples) if error is None else {}
            summary |= {
                "version": ATTRIBUTION_VERSION,
                "source": {"run_id": man["run_id"], "path": str(src.resolve())},
                "conditions": conditions,
                "budget_tokens": limit,
                "stored_dump": dump_note,
            }
            manifest = replace(
                manifest,
                status=status,
                error=error,
                finished_at=now(),
                n_records=len(done),
                attribution=summary,
                model_cache=cache_note((judge, reader)),  # this command's calls, not the source run's
            )
            write_manifest(dest, manifest)
            if sut is not None:
                sut.close()
    return dest


class _Ctx:
    """What attributing one run holds: the bench, the grading scorer, the system re-ingested."""

    def __init__(self, bench, man, grading, sut, limit, keep, run_id, store, all_conditions=False, concurrency=1):
        self.bench, self.man, self.grading, self.sut = bench, man, grading, sut
        self.all_conditions, self.concurrency = all_conditions, concurrency
        self.limit, self.keep, self.run_id, self.store = limit, keep, run_id, store
        self.root = Path(bench.root)

    def tier(self, tier_name: str, recs: list[dict]) -> None:
        tier = self.bench.tier(tier_name)
        qset = self.man["config"]["question_set"]
        questions = {q.id: q for q in read_questions(self.root / tier.questions_path(qset))}
        haystacks = haystacks_of(read_turns(self.root / tier.turns_file))
        by_hay: dict[str | None, list[dict]] = {}
        for r in recs:
            q = questions.get(r["qid"])
            if q is None:
                raise InputError(
                    self.root / tier.questions_path(qset),
                    None,
                    r["qid"],
                    f"question of the source run's tier {tier_name!r} is not in the bench",
                )
            by_hay.setdefault(q.haystack, []).append(r)
        for hay, group in by_hay.items():
            sessions = haystacks.get(hay, [])
            scope = tier_name if hay is None else f"{tier_name}/{hay}"
            dump, dump_error = self._dump(sessions, scope)
            h = _Haystack([t for s in sessions for t in s.turns], dump, self.limit)
            # per question: the conditions' fields (every epoch shares them), asked ``concurrency`` at a time
            todo = list(
                {r["qid"]: questions[r["qid"]] for r in group if r.get("error") is None and self._asks(r)}.values()
            )
            with ThreadPoolExecutor(max(1, self.concurrency)) as pool:
                asked = dict(zip((q.id for q in todo), pool.map(lambda q: self._conditions(q, h), todo)))
            for r in group:
                q = questions[r["qid"]]
                fields = self._fields(q, r, h, dump_error, asked)
                self.store.append({k: r.get(k) for k in RECORD_FIELDS} | {"run_id": self.run_id} | fields)

    def _dump(self, sessions, scope: str) -> tuple[tuple[str, ...] | None, str | None]:
        """What the system stores for the haystack, re-ingested (None and why where it cannot be had)."""
        if self.sut is None:
            return None, None
        system, caps = self.sut.system, self.sut.capabilities
        try:
            system.reset()
            for i, s in enumerate(sessions):
                if caps.image_input == "inline":
                    s = inline_session(s, str(self.root), f"{scope}: session {s.session_id}")
                if caps.idempotent_ingest:
                    key = ingest_key(self.bench.content_hash, scope, s.session_id, i)
                    system.ingest(s, idempotency_key=key)  # type: ignore[call-arg]
                else:
                    system.ingest(s)
            if caps.indexing == "async" and sessions:  # a hosted API still indexing: its dump would be short
                waited = wait_searchable(system.query, sessions[-1], DEFAULT_SEARCHABLE_TIMEOUT)
                if waited.problem is not None:
                    return None, f"stored dump of {scope}: {waited.problem}"
            return tuple(self.sut.memories(scope)), None
        except (SystemCallError, SystemContractError) as e:
            return None, f"stored dump of {scope}: {e}"

    def _asks(self, r: dict) -> bool:
        """Whether the conditions are asked for record ``r``: answer mode, graded, a miss (or every one)."""
        score = r.get("score")
        return self.grading is not None and score is not None and (score < 1 or self.all_conditions)

    def _fields(self, q: Question, r: dict, h: _Haystack, dump_error: str | None, asked: dict) -> dict[str, Any]:
        out: dict[str, Any] = {"attribution_version": ATTRIBUTION_VERSION}
        if r.get("error") is not None:
            return out | {"attribution_note": "error record"}
        stored = h.stored(q)
        read = _read_evidence(q, r, h.corpus, self.keep)
        out |= {"attribution_stored": stored, "attribution_read": read}
        score = r.get("score")
        out |= asked.get(q.id, {})
        cause, note = cause_of(score, out.get("attribution_oracle_score"), stored, read, self.grading is not None)
        notes = [x for x in (note, dump_error) if x]
        return out | {"attribution": cause, "attribution_note": "; ".join(notes) or None}

    def _conditions(self, q: Question, h: _Haystack) -> dict[str, Any]:
        assert self.grading is not None  # answer mode only
        evidence = h.evidence(q)
        conds = {"oracle": fit_memories(evidence, self.limit).memories, "context": h.context}
        if h.stored_read is not None:
            conds["stored"] = h.stored_read
        answers: dict[str, Any] = {}
        out: dict[str, Any] = {}
        for name, read in conds.items():
            got = self.grading.score(q, scorers.Response(None, tuple(read), root=str(self.root)), {})
            out[f"attribution_{name}_score"] = got.get("score")
            answers[name] = {"answer": got.get("answer"), "verdict": got.get("verdict")}
            if got.get("ungraded_reason"):
                answers[name]["ungraded_reason"] = got["ungraded_reason"]
        return out | {"attribution_answers": answers}


class _Haystack:
    """One haystack's turns, the system's stored dump, and what every question of it shares: the
    whole haystack and the dump cut to the budget (newest kept), the turns the dump holds."""

    def __init__(self, turns: list, dump: tuple[str, ...] | None, limit: int):
        self.turns = turns
        self.corpus = retrieval.Corpus.of(turns, memory_text)
        self.by_id = {retrieval._id_key(t.turn_id): t for t in turns}
        self.context = fit_memories([memory_text(t) for t in turns], limit, "last").memories
        self.dump = dump
        self.stored_read = None if dump is None else fit_memories(list(dump), limit, "last").memories
        texts = [str(m) for m in dump or () if m]
        mapped = retrieval.map_memories(texts, self.corpus)
        self._held = {m for m in mapped if m is not None}
        self._all_turns = all(m is not None for m in mapped)  # else: a system that rewrites what it stores
        self._texts = texts

    def evidence(self, q: Question) -> list:
        """The question's evidence turns as memories (none for a question whose answer is an abstention)."""
        if not retrieval.has_evidence(q):
            return []
        keys = (retrieval._id_key(t) for t in q.evidence_turns)
        return [memory_text(self.by_id[k]) for k in keys if k in self.by_id]

    def stored(self, q: Question) -> bool | None:
        """:func:`evidence_in` of the dump (None: no dump, or no evidence)."""
        if self.dump is None or not retrieval.has_evidence(q) or not q.evidence_turns:
            return None
        if all(retrieval._id_key(t) in self._held for t in q.evidence_turns):
            return True
        return False if self._all_turns else bool(retrieval.retrieval_hit(q, None, self._texts))


def attribution_table(
    records: Iterable[Mapping[str, Any]] | pl.DataFrame, by: Sequence[str] = ("tier",), n_resamples: int = 1000
) -> pl.DataFrame:
    """Per group of ``by`` and cause: ``n`` records, their ``share`` of the group's attributed records
    (``of``) with its 95% bootstrap interval ``lo``/``hi`` (whole questions or haystacks resampled,
    ``intervals.bootstrap_means``); records without a cause are left out.

    >>> recs = [{"tier": "t", "qid": f"q{i}", "attribution": c} for i, c in enumerate(["correct"] * 3 + ["write_loss"])]
    >>> attribution_table(recs).filter(pl.col("cause") == "write_loss").select("n", "share", "of").row(0)
    (1, 0.25, 4)
    """
    by = list(by)
    df = records if isinstance(records, pl.DataFrame) else pl.DataFrame(list(records), infer_schema_length=None)
    schema = {**{c: pl.Utf8 for c in by}, "cause": pl.Utf8, "n": pl.Int64, "share": pl.Float64}
    schema |= {"lo": pl.Float64, "hi": pl.Float64, "of": pl.Int64}
    if "attribution" not in df.columns:
        return pl.DataFrame(schema=schema)
    df = df.filter(pl.col("attribution").is_not_null())
    if not df.height:
        return pl.DataFrame(schema=schema)
    cols = [c for c in (*by, "qid", "haystack", "attribution") if c in df.columns]
    df = df.select(list(dict.fromkeys(cols)))
    of = df.group_by(by).agg(pl.len().alias("of"))
    parts = []
    for cause in CAUSES:
        flag = df.with_columns((pl.col("attribution") == cause).cast(pl.Float64).alias("_v"))
        ci = bootstrap_means(flag, by, value="_v", n_resamples=n_resamples)
        counts = flag.group_by(by).agg(pl.col("_v").sum().cast(pl.Int64).alias("n"))
        parts.append(
            ci.drop("n")
            .join(counts, on=by)
            .select(
                *[pl.col(c).cast(pl.Utf8) for c in by],
                pl.lit(cause).alias("cause"),
                "n",
                pl.col("mean").alias("share"),
                "lo",
                "hi",
            )
        )
    table = pl.concat(parts).join(of.with_columns([pl.col(c).cast(pl.Utf8) for c in by]), on=by)
    return table.select(list(schema)).sort([*by, "cause"])


def attribution_summary(records: Sequence[Mapping[str, Any]], n_resamples: int = 1000) -> dict[str, Any]:
    """What the manifest holds: misses and attributed misses, records without a cause, and the table
    per tier and per tier and axis (rows of :func:`attribution_table`)."""
    graded = [r for r in records if r.get("score") is not None and r.get("error") is None]
    misses = [r for r in graded if r["score"] < 1]
    return {
        "records": len(records),
        "graded": len(graded),
        "misses": len(misses),
        "attributed_misses": sum(1 for r in misses if r.get("attribution") in MISS_CAUSES),
        "unattributed": sum(1 for r in records if r.get("attribution") is None),
        "counts": {c: sum(1 for r in records if r.get("attribution") == c) for c in CAUSES},
        "by_tier": attribution_table(records, ["tier"], n_resamples).to_dicts(),
        "by_axis": attribution_table(records, ["tier", "axis"], n_resamples).to_dicts(),
    }


def attributed(run: str | Path) -> str:
    """The attributed folder of ``run`` (``NAME=RUN_DIR`` kept as such), made by :func:`attribute_run`
    unless it exists: for notebooks, on runs without a reader (dry or memory mode)."""
    name, sep, path = str(run).rpartition("=") if "=" in str(run) else ("", "", str(run))
    dest = Path(path).parent / f"{Path(path).name}_attributed"
    if not (dest / "manifest.json").exists():
        attribute_run(path, out=dest)
    elif read_manifest(dest).get("status") != "complete":
        raise MemevalError(f"{dest}: an unfinished attribution (status not complete); remove it and run again")
    return f"{name}{sep}{dest}"
