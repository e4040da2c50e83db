"""Re-grading: the answers and memories of a finished run, graded again by the scorers of a mode.

``regrade_run`` writes a new run folder whose records hold the source's responses (answer, memories,
ranking, latency) unchanged and new grades; its manifest names the source (``regraded_from``: run
id, path and grader). No system is made or called. In answer mode the stored answers are judged
again; a reader is asked only for records that hold no answer (a source run in dry or memory mode
whose system answered nothing).

What the system answered itself is read back from the record: in a ``memory`` or ``answer`` run it
is ``answer``; in a ``dry`` run ``answer`` is the system's answer or, when it answered nothing, its
memories joined by newlines, so an ``answer`` equal to that join is read as "no answer".
"""

from __future__ import annotations


import hashlib
import json
from dataclasses import replace
from pathlib import Path

from .._version import __version__
from ..bench.io import load_bench, read_questions, read_turns
from ..bench.model import haystacks_of
from ..errors import InputError, MemevalError, StateError
from ..audit import validity
from ..scoring import retrieval, scorers
from ..scoring.errata import load_errata
from ..systems.base import Memory, memory_text
from ..callcache import cache_note
from .records import RecordStore, read_records, record_memories
from .setup import now
from .folder import RunLock, read_manifest, write_manifest
from .manifest import Manifest

__all__ = ["regrade_run", "source_bench", "record_memory_objects"]

#: fields a re-grade takes from the source record unchanged (what the system returned, and when)
_KEPT = (
    "system",
    "tier",
    "qid",
    "axis",
    "epoch",
    "question_asked",
    "query_lang",
    "memories_returned",
    "memories",
    "retrieved_turns",
    "chars_returned",
    "latency_ms",
    "network_ms",
    "latency_minus_rtt_ms",
    "response_bytes",
    "speed_points",
    "speed_status",
    "speed_reason",
    "error",
    "started_at",
    "weight",
    "haystack",
    "gold_answer",
    "evidence_turns",
    "attempts",
)


def source_bench(src: Path, man: dict, bench_dir=None):
    """The bench a run was made on (``bench_dir``, else the one its manifest names), checked against the
    manifest's content hash (else :class:`InputError`, one line)."""
    bench = load_bench(bench_dir or man["config"]["bench"].get("root") or "")
    want, have = man["config"]["bench"].get("content_hash"), bench.content_hash
    if want and have and want != have:
        raise InputError(
            Path(bench.root) / "bench.yaml",
            None,
            "content_hash",
            f"{have} is not the bench {src} was run on ({want}); pass the right --bench",
        )
    return bench


def record_memory_objects(rec: dict) -> tuple:
    """The record's memories as :class:`Memory` (content, timestamp, speaker) where the record kept
    them, else the display strings of an older record."""
    if rec.get("memories") is None:
        return tuple(rec.get("memories_returned") or ())
    return tuple(Memory(m["text"], m.get("timestamp"), m.get("speaker"), m.get("image")) for m in record_memories(rec))


def system_answer(rec: dict, source_mode: str) -> str | None:
    """What the system answered itself, as the source record holds it (see the module docstring)."""
    answer = rec.get("answer")
    if source_mode == "dry" and answer is not None and answer == "\n".join(rec.get("memories_returned") or []):
        return None
    return answer


def _grader_of(scorer_list) -> dict:
    return next(s.grader() for s in scorer_list if hasattr(s, "grader"))


def _default_out(src: Path, mode: str, grader: dict) -> Path:
    tag = hashlib.sha256(json.dumps(grader, sort_keys=True).encode()).hexdigest()[:8]
    return src.parent / f"{src.name}_regrade-{mode}-{tag}"


def regrade_run(run_dir, mode: str, judge=None, reader=None, out=None, bench_dir=None, errata=None) -> Path:
    """Grade the responses of ``run_dir`` again with the scorers of ``mode``; return the new run folder.
    ``errata`` (an ``Errata`` or its file): gold corrections applied (``score_raw`` keeps the raw grade).

    >>> again = regrade_run(tiny_run, "dry", out=tmp / "again")
    >>> [r["score"] for r in read_records(again)] == [r["score"] for r in read_records(tiny_run)]
    True
    """
    src = Path(run_dir)
    man = read_manifest(src)
    if mode != "dry" and judge is None:
        raise MemevalError(f"mode {mode!r} needs a judge (--judge-url/--judge-model)")
    src_mode = man["config"]["mode"]
    records = read_records(src)
    if (
        mode == "answer"
        and reader is None
        and any(r.get("error") is None and system_answer(r, src_mode) is None for r in records)
    ):
        raise MemevalError(
            f"{src}: some records hold no answer; mode 'answer' needs a reader (--reader-url/--reader-model)"
        )
    bench = source_bench(src, man, bench_dir)
    if isinstance(errata, (str, Path)):
        errata = load_errata(errata)
    scorer_list = scorers.scorers_for(mode, judge, reader or _NoReader(), errata)
    grader = _grader_of(scorer_list)
    dest = Path(out) if out else _default_out(src, mode, grader)
    if dest.resolve() == src.resolve():
        raise MemevalError(f"{dest}: the regrade must go to a new folder, not the source run")
    if (dest / "records.jsonl").exists() or (dest / "manifest.json").exists():
        raise MemevalError(f"{dest}: already holds a run; use another --out")
    qset = man["config"]["question_set"]
    with RunLock(dest):
        source = Manifest.from_json(man, src / "manifest.json")
        manifest = source.derived(
            dest.name,
            now(),
            __version__,
            n_records=None,
            dry_validity=None,
            config={**man["config"], "mode": mode, "grader": grader},
            regraded_from={"run_id": man["run_id"], "path": str(src.resolve()), "grader": man["config"].get("grader")},
            attribution=None,  # it depends on the grade: a regrade drops it (its records' fields too, _KEPT)
            scorers=[s.spec() for s in scorer_list],
        )
        tiers = [t["name"] for t in man["config"]["tiers"]]
        if mode == "dry":
            manifest = replace(manifest, dry_validity=validity.dry_validity(bench.root, tiers))
        write_manifest(dest, manifest)
        store = RecordStore(dest)
        status, error = "started", None
        try:
            for tier_name in tiers:
                mine = [r for r in records if r["tier"] == tier_name]
                if mine:
                    _regrade_tier(bench, tier_name, qset, mine, src_mode, mode, grader, scorer_list, dest.name, store)
            status = "complete"
        except BaseException as e:
            status, error = "error", f"{type(e).__name__}: {e}"
            raise
        finally:
            manifest = replace(
                manifest,
                status=status,
                error=error,
                finished_at=now(),
                n_records=len(store.done),
                model_cache=cache_note((judge, reader)),
            )
            write_manifest(dest, manifest)
            store.close()
    return dest


class _NoReader:
    """Stands in where no reader was given and none is needed (every record holds an answer)."""

    def identity(self) -> dict:
        return {"role": "reader", "model": None, "prompt": None, "note": "stored answers reused"}

    def answer(self, q, memories):
        raise StateError("no reader: every record was checked to hold an answer")


def _regrade_tier(bench, tier_name, qset, recs, src_mode, mode, grader, scorer_list, run_id, store) -> None:
    tier = bench.tier(tier_name)
    root = Path(bench.root)
    questions = {q.id: q for q in read_questions(root / tier.questions_path(qset))}
    haystacks = haystacks_of(read_turns(root / tier.turns_file))
    corpora: dict = {}
    for r in recs:
        q = questions.get(r["qid"])
        if q is None:
            raise InputError(
                root / tier.questions_path(qset),
                None,
                r["qid"],
                f"question of the source run's tier {tier_name!r} is not in the bench",
            )
        new = {k: r.get(k) for k in _KEPT} | {"run_id": run_id, "mode": mode, "grader": grader}
        if r.get("error") is None:
            if q.haystack not in corpora:
                corpora[q.haystack] = retrieval.Corpus.of(
                    (t for s in haystacks.get(q.haystack, []) for t in s.turns), memory_text
                )
            turns = r.get("retrieved_turns")
            response = scorers.Response(
                system_answer(r, src_mode),
                record_memory_objects(r),
                None if turns is None else tuple(turns),
                corpora[q.haystack],
                str(root),
            )
            new.update(scorers.run_scorers(scorer_list, q, response))
        store.append(new)
