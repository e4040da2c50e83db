"""``memeval audit``: prove a bench folder is sound before anything is measured on it.

Works on any bench folder (generated or imported, one haystack per tier or one per question).
Files are read tier by tier, keeping only the tier below in memory for the nesting checks.

Checks (``CHECKS``, in report order):

- ``manifest-hash``: the manifest's ``content_hash`` matches the files (skipped when absent).
- ``manifest-consistent``: no turns or main questions file is named by two tiers (a named set's
  file may be shared, as glasshouse's one probe file is); ``n_turns``/``n_sessions``/
  ``n_questions`` (main set) in the manifest (when non-zero) match the files.
- ``ids-unique``: question ids unique per question file; turn ids unique per haystack.
- ``dates-chronological``: ISO dates never decrease within a haystack, in file order.
- ``evidence-resolves``: every evidence turn / evidence session exists in the question's tier and
  haystack, and each evidence turn sits in one of the cited ``evidence_sessions`` (numbered by the
  turn field ``bench.yaml`` declares as ``evidence_session_field``, default ``session_id``;
  glasshouse: ``core_session``); answerable questions have evidence.
- ``images-resolve``: every ``image`` a turn names is a readable image file under the bench folder;
  remote links and ``data:`` URLs are counted, never fetched or opened; an absolute path or one
  with ``..`` is a failure (paths from data never leave the bench folder), never a traceback.
- ``evidence-contains-gold``: the gold (or an alt; every part for GATHER; both sides also accepted
  for RECONCILE; the clash values for CONTRADICT) is contained (dry ``contains``) in the joined text
  of the evidence turns. ABSTAIN, FALSE_MEMORY and ``expect: no_memory`` are exempt; an IMAGE
  question whose evidence is an uncaptioned photo is counted as ``image_only`` (its photo is checked
  by ``images-resolve``).
- ``tiers-nested``: each tier's turns hold the tier below's turns as a subsequence, same order,
  compared on text, speaker, date and image (ids may be renumbered); per haystack id when turns
  carry one.
- ``story-identical``: a question present in several tiers has byte-identical evidence texts (and
  the same axis and gold) in each.
- ``reconcile-not-in-one-turn``: no single turn contains both ``side_a`` and ``side_b``.
- ``contradict-unresolved``: rule: after the later of a CONTRADICT question's evidence turns, no
  turn of the same haystack contains either clash value (dry ``contains``). A resolution has to
  mention a value, so this over-reports rather than misses; a finding names the turn to read.
- ``idk-floor``: answering "I don't know" (a strong phrase, in the question's language) to every
  question of the main set scores at most 20% weighted, and the scorer recognises each phrase used
  as IDK. A named set's IDK score is reported as a number (``<tier>/<set>``), never a failure: a
  set of false-memory probes is built so that IDK is right on every question.
- ``evidence-ceiling``: answering each answerable question (``ANSWERABLE_AXES``, ``expect: answer``)
  with its evidence turns' text joined scores at least 0.9, weighted and unweighted, per tier (main
  set; named sets are reported beside it as ``<tier>/<set>`` when they hold answerable questions).
- ``bounds``: per tier and question set, floor (``no_memory``) <= always-IDK <= ceiling (``oracle``:
  evidence, or an explicit abstention where none is expected), as a dry run grades them
  (``memeval.audit.bounds``); reports what the ceiling cannot reach.

Every check that validates questions (ids, evidence, golds, nesting of questions across tiers,
reconcile, contradict) runs on the main questions file and on every named question set of a tier
(``Tier.question_sets``, e.g. ``probes``); a finding on a named set says ``set=<name>``.

Value look-ups over whole tiers (reconcile, contradict) go through ``memeval.audit.haystack.Haystack``: an
index narrows the turns to a superset of those the scorer's ``contains`` accepts, and ``contains``
confirms each candidate, so a check costs a look-up, not a pass over every turn.

The package sits above ``scoring`` (its scored checks grade with the dry rules): ``report`` (the
checks, findings and report), ``loading`` (a tier read and validated), ``structural`` (the checks on
evidence, golds and tiers), ``scored`` (IDK floor, evidence ceiling), ``bounds`` (floor <= always-IDK
<= ceiling), ``haystack`` (the value look-up) and ``validity`` (the dry-validity gate read off it).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Callable, Iterable

from ..bench.io import MANIFEST, load_bench
from ..bench.model import Question
from ..bench.oracle import IDK_ANSWERS
from ..errors import InputError
from .bounds import check_bounds
from .difficulty import check_difficulty
from .loading import Loading, TierData, image_ref_kind
from .report import CEILING_MIN, CHECKS, IDK_FLOOR_MAX, REPORTS, AuditReport, CheckResult, Finding
from .scored import Bars
from .structural import Structure

__all__ = [
    "CHECKS",
    "IDK_ANSWERS",
    "IDK_FLOOR_MAX",
    "CEILING_MIN",
    "Finding",
    "CheckResult",
    "AuditReport",
    "audit",
    "image_ref_kind",
]


class _Audit(Loading, Structure):
    """One audit run: the order of the checks (bookkeeping in ``AuditState``)."""

    def check_tier(self, data: TierData) -> None:
        self.check_questions(data, "main", data.questions)
        for qset, questions in data.sets.items():
            self.check_questions(data, qset, questions)
        self.qset = "main"

    def check_questions(self, data: TierData, qset: str, questions: list[Question]) -> None:
        """Every question check on one question set of a tier: the structural ones (``structural``),
        then the IDK floor and evidence ceiling (``scored``)."""
        self.qset = qset
        name = data.tier.name
        bars = Bars(self, name, qset)
        for q in questions:
            h = self.haystack_of(data, q)
            ev = self.resolve(name, data, q, h)
            if ev is not None:
                self.check_gold(name, q, ev)
            if h is not None and ev:
                if q.axis == "RECONCILE" and q.side_a and q.side_b:
                    self.check_reconcile(name, q, h)
                if q.axis == "CONTRADICT" and (q.clash_a or q.clash_b):
                    self.check_contradict(name, q, h, ev)
            self.story_identical(name, q, ev, qset)
            bars.add(q, ev)
        bars.finish()

    def result(self, elapsed: float, tiers: tuple[str, ...]) -> AuditReport:
        checks = []
        for c in CHECKS:
            if c in self.skipped:
                checks.append(CheckResult(c, "skip", 0, self.numbers[c], self.skipped[c]))
            else:
                status = "report" if c in REPORTS else "fail" if self.failures[c] else "pass"
                checks.append(CheckResult(c, status, self.failures[c], self.numbers[c], self.notes.get(c, "")))
        return AuditReport(self.bench.name, str(self.root), tiers, tuple(checks), tuple(self.findings), elapsed)


def audit(
    bench_dir,
    tiers: Iterable[str] | None = None,
    *,
    max_findings: int = 100,
    bounds_only: bool = False,
    on_tier: Callable[[TierData], None] | None = None,
) -> AuditReport:
    """Audit the bench folder ``bench_dir`` (all tiers, or the named ones in manifest order).

    ``bounds_only`` runs the ``bounds`` check alone (what a dry run's validity gate reads): every other
    check is reported as skipped. ``on_tier`` is handed each tier as read (a dry run asks its questions
    from it instead of reading the files again).

    Raises :class:`InputError` on malformed input (a bad line names file, line and field).
    ``max_findings`` caps the findings kept per check and tier; counts are always complete.

    >>> report = audit(tiny_bench)
    >>> report.passed, report.failed_checks
    (True, ())
    """
    t0 = time.perf_counter()
    bench = load_bench(bench_dir)
    if tiers is not None:
        wanted = list(dict.fromkeys(tiers))
        unknown = [t for t in wanted if t not in bench.tier_names]
        if unknown:
            raise InputError(
                Path(bench_dir) / MANIFEST,
                None,
                "tiers",
                f"no tier {unknown[0]!r} (tiers: {', '.join(bench.tier_names)})",
            )
        selected = tuple(t for t in bench.tiers if t.name in wanted)
    else:
        selected = bench.tiers
    run = _Audit(bench, max_findings)
    if bounds_only:
        for tier in selected:
            data = run.load_tier(tier, streamed=True)  # bounds read evidence turns only
            if on_tier is not None:
                on_tier(data)
            check_bounds(run, data)
        run.skipped.update({c: "bounds only" for c in CHECKS if c != "bounds"})
        return run.result(time.perf_counter() - t0, tuple(t.name for t in selected))
    run.check_manifest()
    prev: TierData | None = None
    for tier in selected:
        data = run.load_tier(tier)
        if on_tier is not None:
            on_tier(data)
        run.check_tier(data)
        check_bounds(run, data)  # floor <= always-IDK <= ceiling (bounds.py)
        check_difficulty(run, data)  # report only: word overlap, gold in evidence, BM25 probe (difficulty.py)
        if prev is not None:
            run.check_nested(prev, data)
        prev = data
    if len(selected) < 2:
        run.skipped["tiers-nested"] = "one tier"
        run.skipped.setdefault("story-identical", "one tier")
    for c in ("reconcile-not-in-one-turn", "contradict-unresolved"):
        if not run.numbers[c].get("pairs") and not run.failures[c]:
            run.skipped.setdefault(c, "no such questions")
    return run.result(time.perf_counter() - t0, tuple(t.name for t in selected))
