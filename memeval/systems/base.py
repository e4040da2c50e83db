"""The in-process memory-system protocol (memory-api.md) and what a query returns."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Protocol, runtime_checkable

from ..bench.model import Question, Session

__all__ = ["Recall", "MemorySystem", "NeedsQuestion", "SystemCallError", "memory_text"]


@dataclass(frozen=True)
class Recall:
    """What a system returns for one question.

    ``latency_ms``/``response_bytes`` are filled by systems that time themselves (the HTTP adapter);
    for in-process systems the runner times the call.
    """

    memories: tuple[str, ...] = ()
    turn_ids: tuple[int, ...] | None = None
    answer: str | None = None
    latency_ms: float | None = None
    response_bytes: int | None = None
    attempts: int = 1


class SystemCallError(Exception):
    """A call to the system failed for good (after retries); becomes an error record with this reason."""


@runtime_checkable
class MemorySystem(Protocol):
    name: str
    version: str
    params: Mapping[str, Any]

    def reset(self) -> None: ...

    def ingest(self, session: Session) -> None: ...

    def query(self, question: str, asked_at: str | None) -> Recall: ...


class NeedsQuestion(Protocol):
    """Optional: a system that must see the bench question before ``query`` (only ``oracle``)."""

    def prepare(self, question: Question) -> None: ...


def memory_text(turn) -> str:
    """How a stored turn is shown as a memory: dated and attributed, text unchanged."""
    return f"[{turn.date}] {turn.speaker}: {turn.text}"
