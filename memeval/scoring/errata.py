"""Versioned gold corrections (errata), applied when a question is graded.

An errata file is YAML: a list of corrections under ``corrections``, each naming a question ``id``, a
``reason`` and a ``source`` (where the correction comes from: a URL, an issue, a cleaned release), and
either a corrected ``gold`` (with optional ``gold_alts``) or ``drop: true`` (the question is not
graded: its gold cannot be fixed). ``bench`` (optional) names the bench it is for. The file's version
is the sha256 of its bytes (what ``sha256sum`` prints); a run records it in its grader (manifest and
every record), and each record keeps ``score_raw``, the score against the gold as published, beside
``score``, the score against the corrected gold (None for a dropped question, with the reason).

>>> e = errata_from_text('''
... bench: locomo
... corrections:
...   - {id: q1, gold: "7 May 2023", reason: "the session is dated 8 May; 'yesterday'", source: "issue 12"}
...   - {id: q2, drop: true, reason: "evidence names another person", source: "cleaned release"}
... ''', "errata.yaml")
>>> e.apply(Question(id="q1", axis="BASIC", question_en="When?", gold_answer="8 May 2023")).gold_answer
'7 May 2023'
>>> e.apply(Question(id="q2", axis="BASIC", question_en="Who?", gold_answer="Mel")) is None
True
>>> e.identity()["corrections"], len(e.identity()["sha256"])
(2, 64)
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Mapping

import yaml

from ..bench.model import Question
from ..errors import InputError

__all__ = ["Correction", "Errata", "load_errata", "errata_from_text", "ErrataScorer"]


@dataclass(frozen=True)
class Correction:
    """One question's correction: a new gold (and alternatives), or drop."""

    qid: str
    reason: str
    source: str
    gold: str | None = None
    gold_alts: tuple[str, ...] = ()
    drop: bool = False


@dataclass(frozen=True)
class Errata:
    """The corrections of one errata file, by question id, and the file's version (sha256 of its bytes)."""

    file: str
    sha256: str
    corrections: Mapping[str, Correction]
    bench: str | None = None

    def identity(self) -> dict:
        """What a run records of the errata it used."""
        return {
            "file": self.file,
            "sha256": self.sha256,
            "hash": self.sha256[:12],
            "corrections": len(self.corrections),
        }

    def apply(self, q: Question) -> Question | None:
        """``q`` with its corrected gold, ``q`` itself when uncorrected, None when dropped."""
        c = self.corrections.get(q.id)
        if c is None:
            return q
        if c.drop:
            return None
        assert c.gold is not None
        return replace(q, gold_answer=c.gold, gold_alts=c.gold_alts)


def _text(obj: Mapping[str, Any], key: str, path, n: int, required: bool = True) -> str | None:
    v = obj.get(key)
    if v is None and not required:
        return None
    if not isinstance(v, (str, int, float)) or isinstance(v, bool) or not str(v).strip():
        raise InputError(path, n, key, "expected a non-empty text")
    return str(v)


def errata_from_text(text: str, path: str | Path = "<errata>") -> Errata:
    """Parse an errata file's text (``path`` names it in errors); see the module docstring."""
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise InputError(path, None, None, f"not YAML: {' '.join(str(e).split())[:200]}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("corrections"), list):
        raise InputError(path, None, "corrections", "expected a mapping with a list of corrections")
    out: dict[str, Correction] = {}
    for n, obj in enumerate(doc["corrections"], 1):
        if not isinstance(obj, dict):
            raise InputError(path, n, None, "a correction is a mapping")
        unknown = set(obj) - {"id", "gold", "gold_alts", "drop", "reason", "source"}
        if unknown:
            raise InputError(path, n, sorted(unknown)[0], "unknown field")
        qid = _text(obj, "id", path, n)
        assert qid is not None
        if qid in out:
            raise InputError(path, n, "id", f"question {qid!r} corrected twice")
        drop = obj.get("drop", False)
        if not isinstance(drop, bool):
            raise InputError(path, n, "drop", "expected true or false")
        gold = _text(obj, "gold", path, n, required=False)
        if drop == (gold is not None):
            raise InputError(path, n, "gold", "give exactly one of a corrected gold or drop: true")
        alts = obj.get("gold_alts") or []
        if drop and alts or not isinstance(alts, list) or not all(isinstance(a, str) and a.strip() for a in alts):
            raise InputError(path, n, "gold_alts", "expected a list of texts, beside a corrected gold")
        out[qid] = Correction(
            qid, str(_text(obj, "reason", path, n)), str(_text(obj, "source", path, n)), gold, tuple(alts), drop
        )
    bench = doc.get("bench")
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return Errata(Path(path).name, digest, out, str(bench) if bench is not None else None)


def load_errata(path) -> Errata:
    """Read an errata file; its version is the sha256 of the file's bytes."""
    p = Path(path)
    try:
        raw = p.read_bytes()
    except OSError as e:
        raise InputError(p, None, None, f"cannot read: {e.strerror or e}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(p, None, None, "not UTF-8 text") from None
    errata = errata_from_text(text, p)
    assert errata.sha256 == hashlib.sha256(raw).hexdigest()
    return errata


class ErrataScorer:
    """A grading scorer (dry rules or a judge) applied with the errata: writes the corrected grade and,
    in ``score_raw``, the grade against the gold as published. A dropped question is ungraded, with the
    reason. The wrapped scorer grades a corrected question a second time (on the answer it already
    read: a reader is never asked twice)."""

    def __init__(self, inner, errata: Errata):
        self.inner, self.errata = inner, errata
        self.writes = (*inner.writes, "score_raw")

    def grader(self) -> dict:
        return {**self.inner.grader(), "errata": self.errata.identity()}

    def spec(self) -> dict:
        return {**self.inner.spec(), "errata": self.errata.identity(), "writes": list(self.writes)}

    def score(self, q: Question, r, so_far: Mapping[str, Any]) -> dict:
        raw = self.inner.score(q, r, so_far)
        c = self.errata.corrections.get(q.id)
        if c is None:
            return raw | {"score_raw": raw.get("score")}
        tag = f"errata {self.errata.sha256[:12]}"
        if c.drop:
            why = f"dropped by {tag}: {c.reason} ({c.source})"
            cleared = {k: None for k in ("verdict", "rule", "judge_evidence") if k in raw}
            return raw | cleared | {"score": None, "ungraded_reason": why, "score_raw": raw.get("score")}
        again = r
        if getattr(self.inner, "kind", None) == "answer" and r.answer is None and raw.get("answer") is not None:
            again = replace(r, answer=raw["answer"])  # the reader's answer, graded again
        fixed = self.errata.apply(q)
        assert fixed is not None
        kept = {k: raw[k] for k in ("images_sent", "images_note") if k in raw}
        return self.inner.score(fixed, again, so_far) | kept | {"score_raw": raw.get("score")}
