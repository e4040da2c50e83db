"""The audit's loading: a tier's turns and questions read and validated line by line (ids, dates,
images, the manifest's counts and hash), into haystacks for the checks (``structural``, ``scored``)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..bench.io import MANIFEST, confined, hash_files, is_file, iter_jsonl, no_gc, question_from_dict, turn_from_dict
from ..bench.images import image_ref_kind
from ..bench.model import Question, Tier, Turn, make_turn
from ..bench.stream import iter_objects
from ..errors import InputError
from .haystack import Haystack
from .report import short
from .state import AuditState

__all__ = ["TierData", "Loading", "image_ref_kind", "turn_key"]

_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def _image_problem(root: Path, rel: str) -> str | None:
    """None for a readable image file under ``root``, else what is wrong with it. A path leaving the
    folder is refused before the file system is asked, so the audit never tells whether it exists."""
    try:
        path = confined(root, rel, "")
    except InputError:
        return "leaves the bench folder (absolute paths and '..' are refused)"
    if not is_file(path):
        return "not found in the bench folder"
    from PIL import Image, UnidentifiedImageError  # heavy: only when a bench has image files

    try:
        with Image.open(path) as im:
            im.verify()
    except (OSError, UnidentifiedImageError, SyntaxError, ValueError) as e:
        return f"is not a readable image ({type(e).__name__})"
    return None


_PLAIN_TURN = frozenset({"turn_id", "session_id", "speaker", "text", "date"})
_PLAIN_HAY_TURN = _PLAIN_TURN | {"haystack"}


def _turn(obj: dict, path, n: int) -> Turn:
    """``turn_from_dict`` with a fast path for the common, well-formed plain turn (with or without a
    haystack)."""
    keys = obj.keys()
    if keys == _PLAIN_TURN or keys == _PLAIN_HAY_TURN:
        tid, sid = obj["turn_id"], obj["session_id"]
        sp, text, date, hay = obj["speaker"], obj["text"], obj["date"], obj.get("haystack")
        if (
            type(tid) is int
            and type(sid) in (int, str)
            and type(sp) is str
            and type(text) is str
            and type(date) is str
            and (hay is None or type(hay) is str)
        ):
            return make_turn(tid, sid, sp, text, date, haystack=hay)
    return turn_from_dict(obj, path, n)


def _prune(h: Haystack, ids: set[int]) -> None:
    """Keep only the turns of ``h`` whose ids are in ``ids`` (its look-ups rebuilt for them)."""
    h.turns = [t for t in h.turns if t.turn_id in ids]
    h.pos = {t.turn_id: p for p, t in enumerate(h.turns)}


def turn_key(t: Turn) -> tuple:
    return (t.text, t.speaker, t.date, t.image)


@dataclass(frozen=True)
class TierData:
    """One tier as read: its haystacks (turns and look-ups) and its questions; ``turns`` in file order,
    and ``ids_unique`` when no turn id or question id repeats (then ``turns`` and the question lists
    are what ``bench.io.read_turns`` and ``read_questions`` return: a dry run asks from them). Read
    ``streamed`` (the validity gate), ``turns`` is empty and each haystack holds its evidence turns only."""

    tier: Tier
    haystacks: dict[Any, Haystack]
    questions: list[Question]
    n_turns: int
    n_sessions: int
    sets: dict[str, list[Question]] = field(default_factory=dict)  # named question sets
    turns: list[Turn] = field(default_factory=list)
    ids_unique: bool = False


class Loading(AuditState):
    """Loading and the manifest checks, mixed into the audit run (``memeval.audit._Audit``)."""

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
                self.fail(
                    "manifest-hash",
                    None,
                    None,
                    f"content_hash {b.content_hash} in {MANIFEST} does not match the files ({actual})",
                )
        owners: dict[str, str] = {}
        for t in b.tiers:  # a named set's file may be shared by tiers (glasshouse: one probe file)
            for f in (t.turns_file, t.questions_file):
                if f in owners and owners[f] != t.name:
                    self.fail(
                        "manifest-consistent",
                        t.name,
                        None,
                        f"file {f!r} is also named by tier {owners[f]}: a file belongs to one tier",
                    )
                owners.setdefault(f, t.name)

    def load_tier(self, tier: Tier, streamed: bool = False) -> TierData:
        """The tier read and validated. ``streamed``: each haystack keeps only the turns some question
        cites as evidence once its lines end (what the ``bounds`` check reads), so memory is bounded by
        the largest haystack, not the tier; ``TierData.turns`` is then empty."""
        with no_gc():  # as bench.io's readers: 100,000s of new objects, no cycles
            return self._load_tier(tier, streamed)

    def _load_tier(self, tier: Tier, streamed: bool = False) -> TierData:
        path = self.root / tier.turns_file
        keep: dict[Any, set[int]] = {}  # streamed: the evidence turn ids each haystack keeps
        if streamed:
            questions = self.load_questions(tier, "main")
            sets = {name: self.load_questions(tier, name) for name in tier.question_sets}
            self.qset = "main"
            for q in (*questions, *(q for qs in sets.values() for q in qs)):
                keep.setdefault(q.haystack, set()).update(q.evidence_turns)
        cur: Haystack | None = None
        hays: dict[Any, Haystack] = {}
        last_date: dict[Any, tuple[str, int]] = {}
        bad_dates: list[tuple[int, str]] = []
        n_turns = n_sessions = 0
        prev_sess = object()
        img_seen: dict[str, bool] = {}
        repeats = self.failures["ids-unique"]
        turns: list[Turn] = []
        for n, obj in iter_objects(path):  # iter_jsonl's objects and errors, faster
            t = _turn(obj, path, n)
            n_turns += 1
            h = hays.get(t.haystack)
            if h is None:
                h = hays[t.haystack] = Haystack(t.haystack)
            if not streamed:
                turns.append(t)
            elif h is not cur:  # the previous haystack's lines ended: keep its evidence turns only
                if cur is not None:
                    _prune(cur, keep.get(cur.hid, set()) | keep.get(None, set()))
                cur = h
            sess = (t.haystack, t.session_id)
            if sess != prev_sess:
                n_sessions += 1
                prev_sess = sess
            if t.turn_id in h.pos:
                self.fail(
                    "ids-unique",
                    tier.name,
                    None,
                    f"{tier.turns_file}:{n}: turn_id {t.turn_id} repeats"
                    + (f" in haystack {t.haystack!r}" if t.haystack is not None else ""),
                )
            else:
                h.pos[t.turn_id] = len(h.turns)
            h.turns.append(t)
            h.sessions.add(str(t.session_key(self.session_field)))
            if not _ISO_DATE.match(t.date):
                bad_dates.append((n, t.date))
            else:
                prev = last_date.get(t.haystack)
                if prev is not None and t.date < prev[0]:
                    self.fail(
                        "dates-chronological",
                        tier.name,
                        None,
                        f"{tier.turns_file}:{n}: turn {t.turn_id} dated {t.date} comes after a turn "
                        f"dated {prev[0]} (line {prev[1]})",
                    )
                last_date[t.haystack] = (t.date, n)
            kind = None if t.image is None else image_ref_kind(t.image)
            if kind == "remote":
                self.add("images-resolve", "remote_images_not_checked")  # LoCoMo: URLs, never fetched
            elif kind == "data":
                self.add("images-resolve", "data_url_images_not_checked")  # inline base64 (LoCoMo)
            elif kind == "escapes":
                self.add("images-resolve", "paths_outside_bench")
                self.fail(
                    "images-resolve",
                    tier.name,
                    None,
                    f"{tier.turns_file}:{n}: image {short(t.image or '')} is outside the bench folder "
                    "(absolute or '..'); not read",
                )
            elif t.image is not None:
                if t.image not in img_seen:
                    problem = _image_problem(self.root, t.image)
                    img_seen[t.image] = problem is None
                    if problem:
                        self.fail(
                            "images-resolve", tier.name, None, f"{tier.turns_file}:{n}: image {t.image!r} {problem}"
                        )
                self.add("images-resolve", "image_turns")
        if cur is not None:
            _prune(cur, keep.get(cur.hid, set()) | keep.get(None, set()))
        if bad_dates:
            n, d = bad_dates[0]
            self.fail(
                "dates-chronological",
                tier.name,
                None,
                f"{len(bad_dates)} turn date(s) not ISO (YYYY-MM-DD…), cannot be ordered; "
                f"first at {tier.turns_file}:{n}: {d!r}",
            )
        self.add("dates-chronological", "turns", n_turns)

        if not streamed:
            questions = self.load_questions(tier, "main")
            sets = {name: self.load_questions(tier, name) for name in tier.question_sets}
            self.qset = "main"
        self.add("ids-unique", "turns", n_turns)

        for key, actual in (("n_turns", n_turns), ("n_sessions", n_sessions), ("n_questions", len(questions))):
            stated = getattr(tier, key)
            if stated and stated != actual:
                self.fail(
                    "manifest-consistent", tier.name, None, f"{MANIFEST} says {key}={stated}, the files hold {actual}"
                )
        unique = self.failures["ids-unique"] == repeats
        return TierData(tier, hays, questions, n_turns, n_sessions, sets, turns, unique)

    def load_questions(self, tier: Tier, qset: str) -> list[Question]:
        self.qset = qset
        fname = tier.questions_path(qset)
        qpath = self.root / fname
        questions: list[Question] = []
        seen: dict[str, int] = {}
        for n, obj in iter_jsonl(qpath):
            q = question_from_dict(obj, qpath, n)
            if q.id in seen:
                self.fail(
                    "ids-unique", tier.name, q.id, f"{fname}:{n}: question id repeats (first at line {seen[q.id]})"
                )
                continue
            seen[q.id] = n
            questions.append(q)
        self.add("ids-unique", "questions" if qset == "main" else f"questions/{qset}", len(questions))
        return questions

    def haystack_of(self, data: TierData, q: Question) -> Haystack | None:
        h = data.haystacks.get(q.haystack)
        if h is None and q.haystack is None and len(data.haystacks) == 1:
            h = next(iter(data.haystacks.values()))
        return h
