"""Scorers: what grades one response, behind one protocol.

A :class:`Scorer` reads a question and a :class:`Response` (what a system returned: its answer, its
memories, its ranking, and the haystack it ranked from), writes a fixed set of record fields
(:attr:`Scorer.writes`) and names itself by a versioned :meth:`Scorer.spec` that goes into the
run manifest. The runner asks the scorers :func:`scorers_for` names for the run's mode, in order;
``memeval regrade`` asks the same scorers about the responses already in a run's records.

Scorers by mode:

- ``dry``: :class:`RetrievalScorer`, :class:`DryScorer` (glasshouse rules, or the book suite's
  keyword recall where a question carries ``required_facts``);
- ``memory``: :class:`RetrievalScorer`, :class:`JudgeScorer` on the memories;
- ``answer``: :class:`RetrievalScorer`, :class:`JudgeScorer` on the answer (a reader writes one
  where the system gave none), :class:`OfficialScorer` (LoCoMo F1, LongMemEval's judge).

>>> [s.spec()["name"] for s in scorers_for("dry")]
['retrieval', 'dry']
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Protocol, Sequence, runtime_checkable

from ..errors import ArgumentError
from ..bench.model import Question
from ..llm import ChatError
from ..bench.images import ImageError, image_data_url
from . import bounds, dry, judge_longmemeval, lme_v2, locomo_f1, retrieval
from .errata import ErrataScorer
from .judge import Judge, Verdict  # a JudgeProtocol[Question, str, Verdict] that also grades memories
from .reader_images import reader_images

__all__ = [
    "Response",
    "Scorer",
    "Judge",
    "DryScorer",
    "RetrievalScorer",
    "JudgeScorer",
    "OfficialScorer",
    "scorers_for",
    "run_scorers",
    "RETRIEVAL_VERSION",
]

RETRIEVAL_VERSION = "retrieval-v2"  # v2: each turn ranked once (repeats dropped and counted)
_EMPTY_CORPUS = retrieval.Corpus((), {}, {})


@dataclass(frozen=True)
class Response:
    """What a system returned for one question, as scorers see it.

    ``memories`` are plain strings or :class:`memeval.systems.base.Memory` (content + timestamp +
    speaker); ``answer`` is the system's own answer (None when it answers nothing itself);
    ``corpus`` the haystack it was asked about (for ranked retrieval metrics); ``root`` the bench
    folder the memories' image paths are read from (answer mode's reader); ``context`` what the
    reader reads where a reading budget cut the memories (None: all of them).
    """

    answer: str | None = None
    memories: tuple[str, ...] = ()
    turn_ids: tuple | None = None
    corpus: retrieval.Corpus = _EMPTY_CORPUS
    root: str | None = None
    context: tuple[str, ...] | None = None


@runtime_checkable
class Scorer(Protocol):
    """Grades one response: reads ``q`` and ``r`` (and what earlier scorers wrote, ``so_far``), returns
    values for the record fields it :attr:`writes`; :meth:`spec` is its versioned identity."""

    writes: tuple[str, ...]

    def spec(self) -> dict: ...

    def score(self, q: Question, r: Response, so_far: Mapping[str, Any]) -> dict: ...


class RetrievalScorer:
    """Whether the evidence came back (``retrieval_hit``) and the ranked metrics of scoring/retrieval.py."""

    writes = ("retrieval_hit", "retrieval_metrics", "retrieval_source", "retrieval_repeats")

    def spec(self) -> dict:
        return {"name": "retrieval", "version": RETRIEVAL_VERSION, "writes": list(self.writes)}

    def score(self, q: Question, r: Response, so_far: Mapping[str, Any]) -> dict:
        memories = list(r.memories)
        if not r.turn_ids and not any(memories):  # nothing ranked: no text to map, no repeat to count
            metrics, source = retrieval.ranking_metrics(q, None, (), r.corpus)
            hit = retrieval.retrieval_hit(q, None, ())
            return {
                "retrieval_hit": hit,
                "retrieval_metrics": metrics,
                "retrieval_source": source,
                "retrieval_repeats": 0,
            }
        metrics, source = retrieval.ranking_metrics(q, r.turn_ids, memories, r.corpus)
        return {
            "retrieval_hit": retrieval.retrieval_hit(q, r.turn_ids, memories),
            "retrieval_metrics": metrics,
            "retrieval_source": source,
            "retrieval_repeats": retrieval.ranking_repeats(r.turn_ids, memories, r.corpus),
        }


class DryScorer:
    """Offline rules: the system's answer, or else its memories' content (``bounds.dry_grade``)."""

    writes = ("answer", "score", "verdict", "rule", "ungraded_reason")

    def spec(self) -> dict:
        return {"name": "dry", "version": dry.GRADER_VERSION, "writes": list(self.writes)}

    def grader(self) -> dict:
        return {"name": "dry", "version": dry.GRADER_VERSION}

    def score(self, q: Question, r: Response, so_far: Mapping[str, Any]) -> dict:
        memories = list(r.memories)
        text = r.answer if r.answer is not None else "\n".join(memories)
        g = bounds.dry_grade(q, r.answer if r.answer is not None else memories)
        return {
            "answer": text,
            "score": g.score,
            "verdict": g.verdict,
            "rule": g.rule,
            "ungraded_reason": g.ungraded_reason,
        }


class JudgeScorer:
    """A judge's verdict on the memories (``kind="memory"``) or on the answer (``kind="answer"``; a
    reader writes the answer from the memories where the system gave none)."""

    writes = ("answer", "score", "verdict", "ungraded_reason", "judge_evidence", "images_sent", "images_note")

    def __init__(self, judge: Judge, kind: str = "answer", reader=None):
        if kind == "answer" and reader is None:
            raise ArgumentError("an answer-mode judge scorer needs a reader")
        self.judge, self.kind, self.reader = judge, kind, reader

    def grader(self) -> dict:
        j = self.judge.identity()
        g = {"name": "judge", "version": j["prompt"], "judge": j}
        if self.kind == "answer":
            g["reader"] = self.reader.identity()
        return g

    def spec(self) -> dict:
        return {**self.grader(), "name": f"judge-{self.kind}", "writes": list(self.writes)}

    def score(self, q: Question, r: Response, so_far: Mapping[str, Any]) -> dict:
        if self.kind == "memory":
            v = self.judge.grade(q, "\n".join(r.memories), kind="memory")
            return {"answer": r.answer, **_verdict(v)}
        answer, seen = r.answer, {}
        if answer is None:
            read = tuple(r.memories) if r.context is None else r.context
            accepts = getattr(self.reader, "images", False)
            v2 = lme_v2.is_lme_v2(q)
            if v2:  # whole memories were kept (a prefix): their images only, as many as the cap let in
                imgs = reader_images(r.memories[: len(read)], r.root, accepts, lme_v2.READER_MAX_IMAGES)
            else:
                imgs = reader_images(r.memories, r.root, accepts)
            seen = {"images_sent": imgs.sent, "images_note": imgs.note} if imgs.sent is not None else {}
            try:
                qimage = _question_image(q, r.root, accepts) if v2 else None
                if qimage is not None:  # a reader that reads LongMemEval-V2's layout (scoring.judge.Reader)
                    answer = self.reader.answer(q, read, imgs, qimage)
                elif imgs.sent is not None:
                    answer = self.reader.answer(q, read, imgs)
                else:
                    answer = self.reader.answer(q, read)
            except ImageError as e:
                return {"answer": None, "score": None, "verdict": None, "ungraded_reason": f"question image: {e}"}
            except ChatError as e:
                return {"answer": None, "score": None, "verdict": None, "ungraded_reason": f"reader failed: {e}"} | seen
        if not answer.strip():
            return {"answer": answer, "score": 0.0, "verdict": "wrong", "ungraded_reason": None} | seen
        return {"answer": answer, **_verdict(self.judge.grade(q, answer, kind="answer"))} | seen


def _question_image(q: Question, root, accepts: bool) -> str | None:
    """A LongMemEval-V2 question's own screenshot as a ``data:`` URL (None: none, or not shown)."""
    ref = q.extra.get("question_image")
    if not accepts or not isinstance(ref, str):
        return None
    return image_data_url(root, ref)


def _verdict(v: Verdict) -> dict:
    return {
        "score": v.score,
        "verdict": v.verdict if v.score is not None else None,
        "ungraded_reason": v.ungraded_reason,
        "judge_evidence": v.evidence,
    }


class OfficialScorer:
    """The bench's own published answer metric beside memeval's verdict: LoCoMo's QA F1, LongMemEval's
    per-type judge; writes nothing for other benches or when no answer was written."""

    writes = ("official_metric", "official_score", "official_detail")

    def __init__(self, client=None):
        self.client = client
        self._lme = None
        self._v2 = None

    def spec(self) -> dict:
        return {
            "name": "official",
            "version": "official-v1",
            "metrics": [locomo_f1.METRIC, judge_longmemeval.METRIC, lme_v2.METRIC],
            "model": getattr(self.client, "model", None),
            "writes": list(self.writes),
        }

    def score(self, q: Question, r: Response, so_far: Mapping[str, Any]) -> dict:
        answer = so_far.get("answer")
        if answer is None:
            return {}
        if lme_v2.is_lme_v2(q):
            return self._score_v2(q, answer)
        f1 = locomo_f1.score_question(q, answer)
        if f1 is not None:
            return {"official_metric": locomo_f1.METRIC, "official_score": f1}
        if judge_longmemeval.prompt_name(q) is None:
            return {}
        if not answer.strip():
            return {"official_metric": judge_longmemeval.METRIC, "official_score": 0.0}
        if self._lme is None:
            self._lme = judge_longmemeval.LongMemEvalJudge(self.client)
        v, ident = self._lme.grade(q, answer)
        return {"official_metric": ident, "official_score": v.score}

    def _score_v2(self, q: Question, answer: str) -> dict:
        """LongMemEval-V2: the question's eval_function on the last boxed answer, or its rubric on the
        whole reply (``scoring.lme_v2``); a rubric without a judge, or an unreadable judge reply, is
        ungraded with its reason in ``official_detail``."""
        if self._v2 is None and self.client is not None:
            self._v2 = lme_v2.LmeV2Judge(self.client)
        o = lme_v2.official_score(q, answer, self._v2)
        ident = self._v2.identity(o.function) if o.function in lme_v2.LLM_FUNCTIONS and self._v2 else lme_v2.METRIC
        detail = {"function": o.function, "extracted": o.extracted[:2000], "unknown": o.unknown}
        if o.reason:
            detail["ungraded_reason"] = o.reason
        if o.judge_reply is not None:
            detail["judge_reply"] = o.judge_reply
        return {"official_metric": ident, "official_score": o.score, "official_detail": detail}


def scorers_for(mode: str, judge: Judge | None = None, reader=None, errata=None) -> list:
    """The scorers of a mode, in the order they run (later ones read what earlier ones wrote).
    ``errata`` (:class:`memeval.scoring.errata.Errata`): the grading scorer applies its corrections
    (the bench's own official metric keeps the published gold)."""
    wrap = (lambda s: ErrataScorer(s, errata)) if errata is not None else (lambda s: s)
    if mode == "dry":
        return [RetrievalScorer(), wrap(DryScorer())]
    if mode in ("memory", "answer") and judge is None:
        raise ArgumentError(f"{mode} mode needs a judge")
    assert judge is not None
    if mode == "memory":
        return [RetrievalScorer(), wrap(JudgeScorer(judge, "memory"))]
    if mode == "answer":
        return [RetrievalScorer(), wrap(JudgeScorer(judge, "answer", reader)), OfficialScorer(judge.client)]
    raise ArgumentError(f"unknown mode {mode!r}")


def run_scorers(scorers: Sequence, q: Question, r: Response) -> dict:
    """Every scorer's fields for one response, in order."""
    out: dict[str, Any] = {}
    for s in scorers:
        out.update(s.score(q, r, out))
    return out
