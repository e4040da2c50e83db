"""One question's response, after the system answered: its speed, what the reader reads (the memories
cut to the reading budget), the scorers' fields, and the tokens and cost of every model call.

Usage is metered per thread (``llm.metered``): calls made inside the system's ``query`` count as
``system``, calls by the reader's client as ``reader``, every other call while scoring as ``judge``
(memeval's judge and the bench's official judge).
"""

from __future__ import annotations

from typing import Any

from ..llm import metered, usage_entries
from ..scoring import lme_v2, scorers, speed
from ..systems.base import Recall
from ..systems.context import fit_memories
from .cost import Prices, usage_fields

__all__ = ["Answering", "speed_fields", "context_fields"]


def speed_fields(recall: Recall, wall_ms: float, target_ms: float, floor_ms: float | None, concurrency: int) -> dict:
    """The record's latency fields: in process, the runner's own timing; over HTTP, the system's minus
    the network floor measured before the run."""
    if recall.latency_ms is None:  # in-process: no network between us
        return {
            "latency_ms": round(wall_ms, 3),
            "network_ms": None,
            "latency_minus_rtt_ms": round(wall_ms, 3),
            "speed_points": speed.speed_points(wall_ms, target_ms),
            "speed_status": "in_process",
            "speed_reason": "in-process system: no network round trip",
        }
    net = floor_ms or 0.0
    lat = recall.latency_ms
    lmr = speed.latency_minus_rtt(lat, net)
    status, reason = speed.speed_status(lat, net)
    if status == "measured" and concurrency > 1:
        status, reason = "unmeasurable", f"concurrency {concurrency}: latency includes queueing"
    return {
        "latency_ms": round(lat, 3),
        "network_ms": net,
        "latency_minus_rtt_ms": round(lmr, 3),
        "speed_points": speed.speed_points(lmr, target_ms) if status == "measured" else None,
        "speed_status": status,
        "speed_reason": reason,
    }


def context_fields(recall: Recall, memories: list, max_tokens: int | None, keep: str) -> tuple[tuple, dict]:
    """The memories the reader reads (cut to ``max_tokens``, None = no cap) and the record's context
    fields; a system's own window (``WindowRecall``, e.g. ``context:tokens=N``) counts as a cut too.

    >>> mems, f = context_fields(Recall(("a b c d",)), ["a b c d"], 2, "first")
    >>> mems, f["context_tokens"], f["context_dropped_tokens"], f["context_truncated"], f["context_limit"]
    (('a b',), 2, 2, True, 2)
    """
    fit = fit_memories(memories, max_tokens, keep)
    window = getattr(recall, "window_tokens", None)
    dropped = fit.dropped + getattr(recall, "dropped_tokens", 0)
    limits = [x for x in (window, max_tokens) if x is not None]
    return fit.memories, {
        "context_tokens": fit.tokens,
        "context_dropped_tokens": dropped,
        "context_truncated": dropped > 0,
        "context_limit": min(limits) if limits else None,
    }


class Answering:
    """Scores one response and meters its model calls (see the module docstring)."""

    def __init__(self, mode: str, scorer_list: list, reader=None, context_max_tokens: int | None = None, prices=None):
        self.mode, self.scorers, self.reader = mode, scorer_list, reader
        self.context_max_tokens = context_max_tokens
        self.prices: Prices | None = prices
        self._reader_client = getattr(reader, "client", None)

    def _role(self, call) -> str:
        return "reader" if self._reader_client is not None and call.client is self._reader_client else "judge"

    def fields(
        self,
        q,
        recall: Recall,
        memories: list,
        corpus,
        system_calls: list,
        keep: str = "first",
        root: str | None = None,
    ) -> dict:
        out: dict[str, Any] = {}
        context = None
        reads = self.mode == "answer" and recall.answer is None
        cap = self.context_max_tokens
        if lme_v2.is_lme_v2(q):  # the leaderboard's reader: whole memories, 200k tokens unless told
            keep, cap = "prefix", cap if cap is not None else lme_v2.CONTEXT_MAX_TOKENS
        if reads or getattr(recall, "window_tokens", None) is not None:
            context, ctx = context_fields(recall, memories, cap if reads else None, keep)
            out.update(ctx)
        response = scorers.Response(
            recall.answer, tuple(memories), recall.turn_ids, corpus, root, context=context if reads else None
        )
        with metered() as calls:
            out.update(scorers.run_scorers(self.scorers, q, response))
        entries = usage_entries(system_calls, lambda c: "system") + usage_entries(calls, self._role)
        out.update(usage_fields(entries, self.prices))
        return out
