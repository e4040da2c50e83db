"""The write path of a run: what ingest cost per haystack, and when an asynchronous system's memory
became searchable; and the causal guard (a retrieved memory dated after its question).

Time to searchable: a system declaring ``Capabilities(indexing="async")`` (a hosted API that indexes
in the background) is probed after each haystack's ingest with a query built from the newest
session's text (:func:`probe_query`), polled with growing pauses until a returned memory is from that
session (:func:`probe_hit`) or the bounded wait (``--searchable-timeout``) runs out. The time is from
the end of the last ingest call to the return of the first probe that found it, so it includes one
query's round trip. A haystack that never becomes searchable is failed: its questions are error
records with the reason, never answers from a memory still indexing.

Causal guard: a memory whose timestamp is after the question's ``asked_at`` (:func:`future_count`)
is a leak from the future (a bug in the system or the harness); each record counts them
(``future_memories``) and the manifest sums them per run (:func:`causal_summary`).

>>> from memeval.bench.model import Session, Turn
>>> s = Session(7, "2026-05-20", (Turn(11, 7, "user", "The gym now costs 52 dollars a month.", "2026-05-20"),))
>>> probe_query(s)
'The gym now costs 52 dollars a month.'
>>> from memeval.systems.base import Memory, Recall
>>> probe_hit(Recall(memories=(Memory("User's gym costs 52 dollars a month", "2026-05-20"),)), s)
True
>>> probe_hit(Recall(memories=(Memory("User's gym costs 45 dollars a month", "2026-03-01"),)), s)
False
>>> future_count([Memory("x", "2026-06-02"), Memory("y", "2026-05-30"), "plain"], "2026-06-01")
1
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Callable, Iterable, Mapping

from ..bench.model import Session
from ..errors import MemevalError
from ..systems.base import Recall
from ..text.when import is_after, parse_when

__all__ = [
    "PROBE_WORDS",
    "DEFAULT_SEARCHABLE_TIMEOUT",
    "Searchable",
    "probe_query",
    "probe_hit",
    "wait_searchable",
    "future_count",
    "causal_summary",
    "usage_delta",
]

#: the most words of the newest session a probe query carries
PROBE_WORDS = 40
#: the longest wait for an asynchronously indexing system's newest session (``--searchable-timeout``)
DEFAULT_SEARCHABLE_TIMEOUT = 120.0
#: share of a returned memory's words that must be words of the newest session for it to count as that
#: session's (a hosted system rewrites what it stores: an extracted fact, not the turn verbatim)
PROBE_OVERLAP = 0.6
_WORD = re.compile(r"\w+", re.UNICODE)


def _words(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower()) if len(w) > 2]


def probe_query(session: Session) -> str:
    """The probe for ``session``: its turn with the most distinct words (the first of equals), cut to
    :data:`PROBE_WORDS` words; a session of empty turns probes with its whole text."""
    best = max(session.turns, key=lambda t: len(set(_words(t.text))), default=None)
    text = best.text if best is not None and _words(best.text) else session.text
    return " ".join(text.split()[:PROBE_WORDS])


def probe_hit(recall: Recall, session: Session) -> bool:
    """Whether ``recall`` returned something of ``session``: one of its turn ids, or a memory most of
    whose words are the session's and whose date (where it has one) is the session's day."""
    ids = {t.turn_id for t in session.turns}
    if recall.turn_ids is not None and ids & set(recall.turn_ids):
        return True
    vocab = set(_words(session.text))
    day = parse_when(session.date)
    for m in recall.memories:
        words = set(_words(getattr(m, "content", str(m))))
        if len(words) < 2 or len(words & vocab) < PROBE_OVERLAP * len(words):
            continue
        when = parse_when(getattr(m, "timestamp", None))
        if when is None or day is None or when[0].date() == day[0].date():
            return True
    return False


@dataclass(frozen=True)
class Searchable:
    """One haystack's probe: ``ms`` from the end of ingest to the first probe that found the newest
    session (None: never, within the wait), how many probes were sent, and why it failed."""

    ms: float | None
    probes: int
    problem: str | None = None


def wait_searchable(
    query: Callable[[str, str | None], Recall],
    session: Session,
    timeout_s: float,
    *,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
    first_pause: float = 0.05,
    max_pause: float = 2.0,
) -> Searchable:
    """Poll ``query(probe, None)`` until the newest ``session`` comes back, at most ``timeout_s``
    seconds after the call (pauses grow from ``first_pause`` by half each time up to ``max_pause``).
    A probe that raises is counted and polled again; the last such error is part of the reason.

    >>> from memeval.bench.model import Turn
    >>> s = Session(1, "2026-01-05", (Turn(1, 1, "user", "My dentist is Dr Okafor", "2026-01-05"),))
    >>> replies = iter([Recall(), Recall(turn_ids=(1,))])
    >>> r = wait_searchable(lambda q, a: next(replies), s, 5.0, sleep=lambda _: None)
    >>> r.probes, r.ms is not None, r.problem
    (2, True, None)
    >>> wait_searchable(lambda q, a: Recall(), s, 0.0, sleep=lambda _: None).problem
    'not searchable 0s after ingest: 1 probe never returned the newest session (1)'
    """
    probe = probe_query(session)
    start, pause, probes, last_error = clock(), first_pause, 0, None
    while True:
        probes += 1
        try:
            recall = query(probe, None)
        except MemevalError as e:  # a failed probe: the wait goes on, the reason is kept
            last_error, recall = str(e), None
        except Exception as e:  # noqa: BLE001 -- a crashing system's probe is a failed probe too
            last_error, recall = f"{type(e).__name__}: {e}", None
        if isinstance(recall, Recall) and probe_hit(recall, session):
            return Searchable(round((clock() - start) * 1000, 3), probes)
        left = timeout_s - (clock() - start)
        if left <= 0:
            why = f"; last probe error: {last_error}" if last_error else ""
            n = f"{probes} probe{'s' if probes != 1 else ''}"
            return Searchable(
                None,
                probes,
                f"not searchable {timeout_s:g}s after ingest: {n} never returned the newest session "
                f"({session.session_id}){why}",
            )
        sleep(min(pause, left))
        pause = min(pause * 1.5, max_pause)


def future_count(memories: Iterable[Any], asked_at: str | None) -> int | None:
    """How many of ``memories`` are dated after ``asked_at`` (None: the question has no date)."""
    if parse_when(asked_at) is None:
        return None
    n = 0
    for m in memories:
        ts = getattr(m, "timestamp", None)
        if isinstance(ts, str) and _is_after(ts, asked_at):  # not a string: never a date (``parse_when``)
            n += 1
    return n


@lru_cache(maxsize=8192)
def _is_after(timestamp: str, asked_at: str) -> bool | None:
    """``is_after``, remembered: a run asks it for every memory of every question, and a bench's
    timestamps are a few hundred session dates against one or a few ``asked_at``."""
    return is_after(timestamp, asked_at)


def causal_summary(records: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The causal guard over a run's records: questions checked (answered, dated), those that
    retrieved a memory dated after the question, and how many such memories.

    >>> causal_summary([{"future_memories": 0}, {"future_memories": 2}, {"future_memories": None}])
    {'checked': 2, 'questions_flagged': 1, 'memories_flagged': 2, 'note': '1 of 2 dated questions retrieved a memory dated after the question (2 memories): a leak from the future'}
    """
    counts = [r.get("future_memories") for r in records if r.get("error") is None]
    checked = [c for c in counts if isinstance(c, int)]
    flagged = [c for c in checked if c > 0]
    if flagged:
        note = (
            f"{len(flagged)} of {len(checked)} dated questions retrieved a memory dated after the question "
            f"({sum(flagged)} memories): a leak from the future"
        )
    else:
        note = f"no memory dated after its question in {len(checked)} dated questions"
    return {"checked": len(checked), "questions_flagged": len(flagged), "memories_flagged": sum(flagged), "note": note}


def usage_delta(before: Mapping[str, int] | None, after: Mapping[str, int] | None) -> dict[str, int] | None:
    """What a system's ``usage()`` counted between two readings (None: it does not count).

    >>> usage_delta({"llm_calls": 2, "prompt_tokens": 10}, {"llm_calls": 5, "prompt_tokens": 70})
    {'llm_calls': 3, 'prompt_tokens': 60}
    """
    if after is None:
        return None
    before = before or {}
    return {k: int(v) - int(before.get(k, 0)) for k, v in after.items() if isinstance(v, int)}
