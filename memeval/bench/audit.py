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
  (``audit_bounds.py``); reports what the ceiling cannot reach.

Every check that validates questions (ids, evidence, golds, nesting of questions across tiers,
reconcile, contradict) runs on the main questions file and on every named question set of a tier
(``Tier.question_sets``, e.g. ``probes``); a finding on a named set says ``set=<name>``.

Value look-ups over whole tiers (reconcile, contradict) go through ``haystack_index.Haystack``: an
index narrows the turns to a superset of those the scorer's ``contains`` accepts, and ``contains``
confirms each candidate, so a check costs a look-up, not a pass over every turn.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

from ..errors import InputError
from .audit_bounds import check_bounds
from .axes import ANSWERABLE_AXES, AXIS_WEIGHTS
from .io import MANIFEST, confined, hash_files, is_file, iter_jsonl, load_bench, question_from_dict, turn_from_dict
from .haystack_index import Haystack, turn_text
from .model import SESSION_FIELD_KEY, Bench, Question, Tier, Turn

__all__ = ["CHECKS", "IDK_ANSWERS", "IDK_FLOOR_MAX", "CEILING_MIN", "Finding", "CheckResult",
           "AuditReport", "audit", "image_ref_kind"]

CHECKS: tuple[str, ...] = (
    "manifest-hash", "manifest-consistent", "ids-unique", "dates-chronological", "evidence-resolves",
    "images-resolve", "evidence-contains-gold", "tiers-nested", "story-identical",
    "reconcile-not-in-one-turn", "contradict-unresolved", "idk-floor", "evidence-ceiling", "bounds",
)
IDK_FLOOR_MAX = 0.20
CEILING_MIN = 0.90

#: The "I don't know" answer put to every question, by query language (English for others).
IDK_ANSWERS: Mapping[str, str] = {
    "en": "I don't know; that was never mentioned in our conversations.",
    "es": "No lo sé; eso nunca se mencionó en nuestras conversaciones.",
    "fr": "Je ne sais pas ; cela n'a jamais été mentionné dans nos conversations.",
    "de": "Ich weiß es nicht; das wurde in unseren Gesprächen nie erwähnt.",
    "pt": "Não sei; isso nunca foi mencionado nas nossas conversas.",
    "it": "Non lo so; non è mai stato menzionato nelle nostre conversazioni.",
    "zh": "我不知道，我们的对话中从未提到过这件事。",
    "ja": "わかりません。その話は私たちの会話で一度も出てきませんでした。",
    "ko": "모르겠습니다. 우리 대화에서 한 번도 언급된 적이 없습니다.",
    "ru": "Не знаю: об этом в наших разговорах никогда не упоминалось.",
    "ar": "لا أعرف، لم يُذكر ذلك أبدًا في محادثاتنا.",
}

_EXEMPT_GOLD = frozenset({"ABSTAIN", "FALSE_MEMORY"})
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


# ----------------------------------------------------------------------------------------------
# Report data


@dataclass(frozen=True)
class Finding:
    """One failure: which check, in which tier, for which question, and why."""

    check: str
    tier: str | None
    qid: str | None
    reason: str
    qset: str | None = None  # a named question set (None: the tier's main questions file)

    def line(self) -> str:
        where = self.check
        if self.tier is not None:
            where += f" tier={self.tier}"
        if self.qset is not None:
            where += f" set={self.qset}"
        if self.qid is not None:
            where += f" {self.qid}"
        return f"FAIL {where}: {self.reason}"


@dataclass(frozen=True)
class CheckResult:
    """A check's outcome: ``status`` is ``pass``, ``fail`` or ``skip``; ``failures`` counts all
    findings, including any left out of the report by the per-tier cap."""

    name: str
    status: str
    failures: int = 0
    numbers: Mapping[str, Any] = field(default_factory=dict)
    note: str = ""

    @property
    def passed(self) -> bool:
        return self.status != "fail"


@dataclass(frozen=True)
class AuditReport:
    bench: str
    root: str
    tiers: tuple[str, ...]
    checks: tuple[CheckResult, ...]
    findings: tuple[Finding, ...]
    elapsed_s: float = 0.0

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.checks)

    @property
    def failed_checks(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.checks if not c.passed)

    def check(self, name: str) -> CheckResult:
        for c in self.checks:
            if c.name == name:
                return c
        raise KeyError(name)

    def lines(self) -> list[str]:
        """The readable summary: one line per check, one per finding, then the verdict."""
        out = [f"audit {self.bench} ({self.root}) tiers: {', '.join(self.tiers)}"]
        for c in self.checks:
            detail = _fmt_numbers(c.numbers)
            tail = f"  {detail}" if detail else ""
            if c.note:
                tail += f"  ({c.note})"
            out.append(f"  {c.status.upper():4} {c.name}{tail}")
        shown = Counter(f.check for f in self.findings)
        out.extend(f.line() for f in self.findings)
        for c in self.checks:
            if c.failures > shown[c.name]:
                out.append(f"FAIL {c.name}: ... and {c.failures - shown[c.name]} more not shown")
        n_ok = sum(c.passed for c in self.checks)
        verdict = "PASS" if self.passed else "FAIL"
        out.append(f"audit {verdict}: {n_ok}/{len(self.checks)} checks passed in {self.elapsed_s:.2f} s")
        return out

    def summary(self) -> str:
        return "\n".join(self.lines())

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["passed"] = self.passed
        return d


def _fmt_numbers(numbers: Mapping[str, Any]) -> str:
    return " ".join(f"{k}={_fmt_value(v)}" for k, v in numbers.items())


def _fmt_value(v) -> str:
    if isinstance(v, float):
        return f"{v:.3f}"
    if isinstance(v, Mapping):
        return "{" + ", ".join(f"{k}: {_fmt_value(x)}" for k, x in v.items()) + "}"
    return str(v)


def _short(s: str, n: int = 60) -> str:
    return repr(s if len(s) <= n else s[: n - 1] + "…")


_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def image_ref_kind(ref: str) -> str:
    """What an ``image`` field holds: ``data`` (a ``data:`` URL), ``remote`` (any other URL scheme),
    ``escapes`` (an absolute path or one climbing out of the bench folder) or ``file``.

    >>> [image_ref_kind(x) for x in ("data:image/png;base64,iVBOR", "https://x/y.png", "/etc/p.png",
    ...                              "../p.png", "img/img01.png")]
    ['data', 'remote', 'escapes', 'escapes', 'file']
    """
    if ref[:5].lower() == "data:":
        return "data"
    if _SCHEME.match(ref) and not re.match(r"^[a-zA-Z]:[\\/]", ref):  # not a Windows drive
        return "remote"
    p = ref.replace("\\", "/")
    if p.startswith("/") or re.match(r"^[a-zA-Z]:/", p) or ".." in p.split("/"):
        return "escapes"
    return "file"


def _image_problem(root: Path, rel: str) -> str | None:
    """None for a readable image file under ``root``, else what is wrong with it. A path leaving the
    folder is refused before the file system is asked, so the audit never tells whether it exists."""
    try:
        path = confined(root, rel, "")
    except InputError:
        return "leaves the bench folder (absolute paths and '..' are refused)"
    if not is_file(path):
        return "not found in the bench folder"
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(path) as im:
            im.verify()
    except (OSError, UnidentifiedImageError, SyntaxError, ValueError) as e:
        return f"is not a readable image ({type(e).__name__})"
    return None


_PLAIN_TURN = frozenset({"turn_id", "session_id", "speaker", "text", "date"})


def _turn(obj: dict, path, n: int) -> Turn:
    """``turn_from_dict`` with a fast path for the common, well-formed plain turn."""
    if obj.keys() == _PLAIN_TURN:
        tid, sid = obj["turn_id"], obj["session_id"]
        sp, text, date = obj["speaker"], obj["text"], obj["date"]
        if (type(tid) is int and type(sid) in (int, str) and type(sp) is str and type(text) is str
                and type(date) is str):
            return Turn(tid, sid, sp, text, date)
    return turn_from_dict(obj, path, n)


def _turn_key(t: Turn) -> tuple:
    return (t.text, t.speaker, t.date, t.image)


# ----------------------------------------------------------------------------------------------
# Loading a tier (validated, streamed line by line)


@dataclass(frozen=True)
class _TierData:
    """One tier as read: its haystacks (turns and look-ups) and its questions."""

    tier: Tier
    haystacks: dict[Any, Haystack]
    questions: list[Question]
    n_turns: int
    n_sessions: int
    sets: dict[str, list[Question]] = field(default_factory=dict)  # named question sets


class _Audit:
    def __init__(self, bench: Bench, max_findings: int):
        self.bench = bench
        self.root = Path(bench.root)
        self.max_findings = max_findings
        self.findings: list[Finding] = []
        self.failures: Counter = Counter()
        self._shown: Counter = Counter()
        self.numbers: dict[str, dict[str, Any]] = {c: {} for c in CHECKS}
        self.qset = "main"  # the question set being checked (findings name it)
        self.skipped: dict[str, str] = {}
        self.notes: dict[str, str] = {}
        self.first_seen: dict[str, tuple[str, tuple[str, ...] | None, str, str]] = {}
        from ..scoring.dry import latest_value, score_answer
        from ..scoring.idk import is_idk
        from ..scoring.matching import contains

        self.contains, self.score_answer, self.is_idk = contains, score_answer, is_idk
        self.latest_value = latest_value
        #: the turn field evidence_sessions refer to (glasshouse: core_session), as bench.yaml declares
        self.session_field = str(bench.extra.get(SESSION_FIELD_KEY) or "session_id")

    # -- bookkeeping
    def fail(self, check: str, tier: str | None, qid: str | None, reason: str) -> None:
        self.failures[check] += 1
        key = (check, tier)
        self._shown[key] += 1
        if self._shown[key] <= self.max_findings:
            qset = None if self.qset == "main" else self.qset
            self.findings.append(Finding(check, tier, qid, reason, qset))

    def add(self, check: str, key: str, n: int | float = 1) -> None:
        nums = self.numbers[check]
        nums[key] = nums.get(key, 0) + n

    # -- manifest
    def check_manifest(self) -> None:
        b = self.bench
        files = [f for t in b.tiers for f in t.files]
        if not b.content_hash:
            self.skipped["manifest-hash"] = "manifest has no content_hash"
        else:
            actual = hash_files(self.root, dict.fromkeys(files))
            self.numbers["manifest-hash"]["files"] = len(dict.fromkeys(files))
            if actual != b.content_hash:
                self.fail("manifest-hash", None, None,
                          f"content_hash {b.content_hash} in {MANIFEST} does not match the files ({actual})")
        owners: dict[str, str] = {}
        for t in b.tiers:  # a named set's file may be shared by tiers (glasshouse: one probe file)
            for f in (t.turns_file, t.questions_file):
                if f in owners and owners[f] != t.name:
                    self.fail("manifest-consistent", t.name, None,
                              f"file {f!r} is also named by tier {owners[f]}: a file belongs to one tier")
                owners.setdefault(f, t.name)

    # -- one tier
    def load_tier(self, tier: Tier) -> _TierData:
        path = self.root / tier.turns_file
        hays: dict[Any, Haystack] = {}
        last_date: dict[Any, tuple[str, int]] = {}
        bad_dates: list[tuple[int, str]] = []
        n_turns = n_sessions = 0
        prev_sess = object()
        img_seen: dict[str, bool] = {}
        for n, obj in iter_jsonl(path):
            t = _turn(obj, path, n)
            n_turns += 1
            h = hays.get(t.haystack)
            if h is None:
                h = hays[t.haystack] = Haystack(t.haystack)
            sess = (t.haystack, t.session_id)
            if sess != prev_sess:
                n_sessions += 1
                prev_sess = sess
            if t.turn_id in h.pos:
                self.fail("ids-unique", tier.name, None,
                          f"{tier.turns_file}:{n}: turn_id {t.turn_id} repeats"
                          + (f" in haystack {t.haystack!r}" if t.haystack is not None else ""))
            else:
                h.pos[t.turn_id] = len(h.turns)
            h.turns.append(t)
            h.sessions.add(str(t.session_key(self.session_field)))
            if not _ISO_DATE.match(t.date):
                bad_dates.append((n, t.date))
            else:
                prev = last_date.get(t.haystack)
                if prev is not None and t.date < prev[0]:
                    self.fail("dates-chronological", tier.name, None,
                              f"{tier.turns_file}:{n}: turn {t.turn_id} dated {t.date} comes after a turn "
                              f"dated {prev[0]} (line {prev[1]})")
                last_date[t.haystack] = (t.date, n)
            kind = None if t.image is None else image_ref_kind(t.image)
            if kind == "remote":
                self.add("images-resolve", "remote_images_not_checked")  # LoCoMo: URLs, never fetched
            elif kind == "data":
                self.add("images-resolve", "data_url_images_not_checked")  # inline base64 (LoCoMo)
            elif kind == "escapes":
                self.add("images-resolve", "paths_outside_bench")
                self.fail("images-resolve", tier.name, None,
                          f"{tier.turns_file}:{n}: image {_short(t.image)} is outside the bench folder "
                          "(absolute or '..'); not read")
            elif t.image is not None:
                if t.image not in img_seen:
                    problem = _image_problem(self.root, t.image)
                    img_seen[t.image] = problem is None
                    if problem:
                        self.fail("images-resolve", tier.name, None,
                                  f"{tier.turns_file}:{n}: image {t.image!r} {problem}")
                self.add("images-resolve", "image_turns")
        if bad_dates:
            n, d = bad_dates[0]
            self.fail("dates-chronological", tier.name, None,
                      f"{len(bad_dates)} turn date(s) not ISO (YYYY-MM-DD…), cannot be ordered; "
                      f"first at {tier.turns_file}:{n}: {d!r}")
        self.add("dates-chronological", "turns", n_turns)

        questions = self.load_questions(tier, "main")
        sets = {name: self.load_questions(tier, name) for name in tier.question_sets}
        self.qset = "main"
        self.add("ids-unique", "turns", n_turns)

        for key, actual in (("n_turns", n_turns), ("n_sessions", n_sessions), ("n_questions", len(questions))):
            stated = getattr(tier, key)
            if stated and stated != actual:
                self.fail("manifest-consistent", tier.name, None,
                          f"{MANIFEST} says {key}={stated}, the files hold {actual}")
        return _TierData(tier, hays, questions, n_turns, n_sessions, sets)

    def load_questions(self, tier: Tier, qset: str) -> list[Question]:
        self.qset = qset
        fname = tier.questions_path(qset)
        qpath = self.root / fname
        questions, seen = [], {}
        for n, obj in iter_jsonl(qpath):
            q = question_from_dict(obj, qpath, n)
            if q.id in seen:
                self.fail("ids-unique", tier.name, q.id,
                          f"{fname}:{n}: question id repeats (first at line {seen[q.id]})")
                continue
            seen[q.id] = n
            questions.append(q)
        self.add("ids-unique", "questions" if qset == "main" else f"questions/{qset}", len(questions))
        return questions

    def haystack_of(self, data: _TierData, q: Question) -> Haystack | None:
        h = data.haystacks.get(q.haystack)
        if h is None and q.haystack is None and len(data.haystacks) == 1:
            h = next(iter(data.haystacks.values()))
        return h

    def check_tier(self, data: _TierData) -> None:
        self.check_questions(data, "main", data.questions)
        for qset, questions in data.sets.items():
            self.check_questions(data, qset, questions)
        self.qset = "main"

    def check_questions(self, data: _TierData, qset: str, questions: list[Question]) -> None:
        """Every question check on one question set of a tier; the bars (IDK floor, ceiling) apply to
        the main set only, a named set's figures are reported under ``<tier>/<set>``."""
        self.qset = qset
        name = data.tier.name
        label = name if qset == "main" else f"{name}/{qset}"
        floor_num = floor_den = floor_n = 0.0
        ceil_num = ceil_den = 0.0
        ceil_scores: list[float] = []
        ceil_low: list[tuple[float, str]] = []
        ceil_axes: dict[str, list[float]] = {}
        idk_ok: dict[str, bool] = {}
        idk_by_axis: Counter = Counter()
        for q in questions:
            h = self.haystack_of(data, q)
            ev = self.resolve(name, data, q, h)
            no_memory = q.expect == "no_memory" or q.axis in _EXEMPT_GOLD
            if ev is not None:
                self.check_gold(name, q, ev)
            if h is not None and ev:
                if q.axis == "RECONCILE" and q.side_a and q.side_b:
                    self.check_reconcile(name, q, h)
                if q.axis == "CONTRADICT" and (q.clash_a or q.clash_b):
                    self.check_contradict(name, q, h, ev)
            self.story_identical(name, q, ev, qset)

            # idk-floor
            lang = q.lang if q.lang in IDK_ANSWERS else "en"
            idk = IDK_ANSWERS[lang]
            if lang not in idk_ok:
                idk_ok[lang] = bool(self.is_idk(idk))
                if not idk_ok[lang]:
                    self.fail("idk-floor", name, None, f"the scorer does not recognise {idk!r} ({lang}) as IDK")
            w = AXIS_WEIGHTS[q.axis]
            s = float(self.score_answer(q, idk).score)
            idk_by_axis[q.axis] += w * s
            floor_num += w * s
            floor_den += w
            floor_n += s

            # evidence-ceiling
            if q.axis in ANSWERABLE_AXES and not no_memory:
                if not ev:  # missing or unresolved evidence: a failure of evidence-resolves
                    self.add("evidence-ceiling", "no_evidence_excluded")
                    continue
                if self.image_only(q, ev):
                    self.add("evidence-ceiling", "image_only_excluded")
                    continue
                # as returned memories (a list): content only, an IDK phrase quoted in a turn is not IDK
                s = float(self.score_answer(q, [turn_text(t) for t in ev]).score)
                ceil_num += w * s
                ceil_den += w
                ceil_scores.append(s)
                ceil_axes.setdefault(q.axis, []).append(s)
                if s < 1:
                    ceil_low.append((s, q.id))
        nq = len(questions)
        if nq:
            weighted, unweighted = floor_num / floor_den, floor_n / nq
            self.numbers["idk-floor"][label] = {"weighted": weighted, "unweighted": unweighted, "n": nq}
            if weighted > IDK_FLOOR_MAX and qset == "main":
                top = ", ".join(f"{a} {v / floor_den:.1%}" for a, v in idk_by_axis.most_common(3) if v)
                self.fail("idk-floor", name, None,
                          f"answering IDK to all {nq} questions scores {weighted:.1%} weighted "
                          f"({unweighted:.1%} unweighted), above {IDK_FLOOR_MAX:.0%}; from {top}")
        if ceil_scores:
            weighted, unweighted = ceil_num / ceil_den, sum(ceil_scores) / len(ceil_scores)
            self.numbers["evidence-ceiling"][label] = {"weighted": weighted, "unweighted": unweighted,
                                                       "n": len(ceil_scores)}
            if min(weighted, unweighted) < CEILING_MIN and qset == "main":
                ceil_low.sort()
                worst = ", ".join(f"{qid} ({s:g})" for s, qid in ceil_low[:8])
                by_axis = ", ".join(f"{a} {sum(v) / len(v):.2f}" for a, v in sorted(ceil_axes.items())
                                    if sum(v) < len(v))
                self.fail("evidence-ceiling", name, None,
                          f"evidence turns as the answer score {weighted:.3f} weighted, {unweighted:.3f} "
                          f"unweighted, below {CEILING_MIN}; weak axes: {by_axis}; lowest: {worst}")

    def resolve(self, tier: str, data: _TierData, q: Question, h: Haystack | None) -> list[Turn] | None:
        """The evidence turns (empty if none are given), or None when they do not resolve."""
        check = "evidence-resolves"
        if h is None:
            if q.haystack is not None:
                self.fail(check, tier, q.id, f"haystack {q.haystack!r} has no turns in this tier")
            else:
                self.fail(check, tier, q.id, f"question has no haystack id but the tier has "
                          f"{len(data.haystacks)} haystacks")
            return None
        self.add(check, "evidence_turns", len(q.evidence_turns))
        missing = [i for i in q.evidence_turns if i not in h.pos]
        if missing:
            self.fail(check, tier, q.id, f"evidence turns {missing} not in the tier's turns"
                      + (f" (haystack {h.hid!r})" if h.hid is not None else "")
                      + (f", which end at turn {h.turns[-1].turn_id}" if h.turns else ""))
        missing_s = [s for s in q.evidence_sessions if str(s) not in h.sessions]
        if missing_s:
            self.fail(check, tier, q.id, f"evidence sessions {missing_s} not in the tier's turns")
        if q.evidence_sessions:
            cited = {str(s) for s in q.evidence_sessions}
            for tid in q.evidence_turns:
                if tid in h.pos:
                    key = h.turns[h.pos[tid]].session_key(self.session_field)
                    if str(key) not in cited:
                        self.fail(check, tier, q.id, f"evidence turn {tid} is in {self.session_field} {key}, "
                                  f"not in evidence_sessions {list(q.evidence_sessions)}")
                        break
        answerable = q.expect != "no_memory" and q.axis not in _EXEMPT_GOLD
        if answerable and not q.evidence_turns and q.extra.get("has_gold") is False:
            # the book suite's cases without gold facts: expected, not a fault of the import
            self.add(check, "no_gold_expected")
            self.notes[check] = (f"{self.numbers[check]['no_gold_expected']} cases without gold facts have no "
                                 "evidence turns: expected for this suite (the chapter ships gold facts for only "
                                 "some cases; they are graded by the judge, not by keyword recall)")
        elif answerable and not q.evidence_turns:
            self.fail(check, tier, q.id, f"{q.axis} question has no evidence turns")
        return h.evidence(q.evidence_turns)

    @staticmethod
    def image_only(q: Question, ev: list[Turn]) -> bool:
        return q.axis == "IMAGE" and any(t.image and not t.caption for t in ev)

    def check_gold(self, tier: str, q: Question, ev: list[Turn]) -> None:
        check = "evidence-contains-gold"
        if q.expect == "no_memory" or q.axis in _EXEMPT_GOLD:
            self.add(check, "exempt")
            return
        if not ev:
            return  # no evidence given: reported by evidence-resolves
        text = "\n".join(turn_text(t) for t in ev)
        ids = list(q.evidence_turns)
        c = self.contains
        golds = [g for g in (q.gold_answer, *q.gold_alts) if g.strip()]
        if q.axis == "CONTRADICT":
            clashes = [v for v in (q.clash_a, q.clash_b) if v]
            missing = [v for v in clashes if not c(text, v)]
            self.add(check, "checked")
            if missing:
                self.fail(check, tier, q.id, f"clash value {_short(missing[0])} not in evidence turns {ids}")
            return
        self.add(check, "checked")
        if q.axis == "GATHER" and q.gold_parts:
            missing = [p for p in q.gold_parts if not c(text, p)]
            if missing:
                self.fail(check, tier, q.id, f"gold part {_short(missing[0])} not in evidence turns {ids}")
            return
        if any(c(text, g) for g in golds):
            return
        if q.axis == "RECONCILE" and q.side_a and q.side_b and c(text, q.side_a) and c(text, q.side_b):
            return
        if q.axis == "CONFLICT" and any(c(text, self.latest_value(g)) for g in golds):
            return  # "No, <current>": the evidence holds the current value
        if self.image_only(q, ev):
            self.add(check, "image_only")
            return
        if not golds:
            self.fail(check, tier, q.id, "question has no gold answer")
        else:
            self.fail(check, tier, q.id, f"gold {_short(q.gold_answer or golds[0])} not in evidence turns {ids}")

    def check_reconcile(self, tier: str, q: Question, h: Haystack) -> None:
        check = "reconcile-not-in-one-turn"
        self.add(check, "pairs")
        cand_a = set(h.candidates(q.side_a))
        both = [p for p in h.candidates(q.side_b) if p in cand_a]
        for p in both:
            t = h.turns[p]
            txt = turn_text(t)
            if self.contains(txt, q.side_a) and self.contains(txt, q.side_b):
                self.fail(check, tier, q.id, f"turn {t.turn_id} holds both sides {_short(q.side_a, 40)} "
                          f"and {_short(q.side_b, 40)}")

    def check_contradict(self, tier: str, q: Question, h: Haystack, ev: list[Turn]) -> None:
        check = "contradict-unresolved"
        self.add(check, "pairs")
        after = max(h.pos[t.turn_id] for t in ev) + 1
        later = h.turns[after - 1].turn_id
        hits: dict[int, str] = {}
        for v in (q.clash_a, q.clash_b):
            if not v:
                continue
            for p in h.candidates(v, after):
                if p >= after and p not in hits and self.contains(turn_text(h.turns[p]), v):
                    hits[p] = v
        for p in sorted(hits):
            self.fail(check, tier, q.id, f"turn {h.turns[p].turn_id} mentions clash value {_short(hits[p], 40)} "
                      f"after the later clash turn {later}")

    def story_identical(self, tier: str, q: Question, ev: list[Turn] | None, qset: str = "main") -> None:
        check = "story-identical"
        texts = tuple(t.text for t in ev) if ev is not None else None
        key = qset + "\x00" + (q.haystack or "") + "\x00" + q.id
        first = self.first_seen.get(key)
        if first is None:
            self.first_seen[key] = (tier, texts, q.axis, q.gold_answer)
            return
        self.add(check, "shared_questions")
        t0, texts0, axis0, gold0 = first
        if axis0 != q.axis or gold0 != q.gold_answer:
            self.fail(check, tier, q.id, f"axis/gold {q.axis} {_short(q.gold_answer, 40)} differ from tier {t0} "
                      f"({axis0} {_short(gold0, 40)})")
        elif texts is not None and texts0 is not None and texts != texts0:
            diff = next((i for i, (a, b) in enumerate(zip(texts, texts0)) if a != b), min(len(texts), len(texts0)))
            which = f"turn {q.evidence_turns[diff]}" if diff < len(q.evidence_turns) else "the evidence list"
            self.fail(check, tier, q.id, f"evidence {which} text differs from tier {t0}")

    # -- two tiers
    def check_nested(self, lower: _TierData, upper: _TierData) -> None:
        check = "tiers-nested"
        lo, up = lower.tier.name, upper.tier.name
        self.numbers[check].setdefault("pairs", []).append(f"{lo}<{up}")
        for hid, lh in lower.haystacks.items():
            uh = upper.haystacks.get(hid)
            if uh is None:
                if hid is None:
                    self.fail(check, up, None, f"tier {lo}'s turns are not in {up} (it has no tier-wide haystack)")
                continue  # a per-question haystack only in the lower tier: nothing to compare
            self.add(check, "turns_compared", len(lh.turns))
            hay = f" haystack {hid!r}" if hid is not None else ""
            ukeys = set(map(_turn_key, uh.turns))
            present = []
            for t in lh.turns:
                if _turn_key(t) in ukeys:
                    present.append(t)
                else:
                    self.fail(check, up, None, f"{lo}{hay} turn {t.turn_id} (session {t.session_id}, {t.date}) "
                              f"has no turn with the same text, speaker and date in {up}")
            j, uturns = 0, uh.turns
            for t in present:
                k = _turn_key(t)
                while j < len(uturns) and _turn_key(uturns[j]) != k:
                    j += 1
                if j == len(uturns):
                    self.fail(check, up, None, f"{lo}{hay} turns from turn {t.turn_id} on are not in the same "
                              f"order in {up}")
                    break
                j += 1

    def result(self, elapsed: float, tiers: tuple[str, ...]) -> AuditReport:
        checks = []
        for c in CHECKS:
            if c in self.skipped:
                checks.append(CheckResult(c, "skip", 0, self.numbers[c], self.skipped[c]))
            else:
                status = "fail" if self.failures[c] else "pass"
                checks.append(CheckResult(c, status, self.failures[c], self.numbers[c], self.notes.get(c, "")))
        return AuditReport(self.bench.name, str(self.root), tiers, tuple(checks), tuple(self.findings), elapsed)


def audit(bench_dir, tiers: Iterable[str] | None = None, *, max_findings: int = 100) -> AuditReport:
    """Audit the bench folder ``bench_dir`` (all tiers, or the named ones in manifest order).

    Raises :class:`InputError` on malformed input (a bad line names file, line and field).
    ``max_findings`` caps the findings kept per check and tier; counts are always complete.
    """
    t0 = time.perf_counter()
    bench = load_bench(bench_dir)
    if tiers is not None:
        wanted = list(dict.fromkeys(tiers))
        unknown = [t for t in wanted if t not in bench.tier_names]
        if unknown:
            raise InputError(Path(bench_dir) / MANIFEST, None, "tiers",
                             f"no tier {unknown[0]!r} (tiers: {', '.join(bench.tier_names)})")
        selected = tuple(t for t in bench.tiers if t.name in wanted)
    else:
        selected = bench.tiers
    run = _Audit(bench, max_findings)
    run.check_manifest()
    prev: _TierData | None = None
    for tier in selected:
        data = run.load_tier(tier)
        run.check_tier(data)
        check_bounds(run, data)  # floor <= always-IDK <= ceiling (audit_bounds.py)
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
