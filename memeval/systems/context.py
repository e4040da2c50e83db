"""Reading budgets: memories cut to a number of tokens, and ``context:tokens=N``, the long-context
baseline that hands the reader the last N tokens of the haystack ("just use a long context").

Tokens are approx-v1 (``bench.tokens``) counted on each memory as the reader sees it
(``"[date] speaker: text"``). A cut falls on a token boundary inside the one memory that crosses the
budget; the memories beyond it are dropped. What was cut is counted, so records can say so.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from ..errors import ArgumentError
from ..bench.model import Session, Turn
from ..bench.tokens import count_tokens, cut_tokens
from .base import BaseMemorySystem, Capabilities, Memory, Recall, memory_text

__all__ = ["Fitted", "fit_memories", "WindowRecall", "LongContext"]


@dataclass(frozen=True)
class Fitted:
    """Memories cut to a budget: what is kept, its tokens, and the tokens dropped."""

    memories: tuple
    tokens: int
    dropped: int


def _cut(m, budget: int, keep: str):
    """``m`` cut to at most ``budget`` tokens (its content, for a :class:`Memory`), or None if nothing fits."""
    if isinstance(m, Memory):
        head = count_tokens(str(Memory("", m.timestamp, m.speaker)))
        room = budget - head
        while room > 0:
            cut = Memory(cut_tokens(m.content, room, "tail" if keep == "last" else "head"), m.timestamp, m.speaker)
            if count_tokens(str(cut)) <= budget:
                return cut if cut.content else None
            room -= 1
        return None
    text = cut_tokens(str(m), budget, "tail" if keep == "last" else "head")
    return text or None


def fit_memories(memories: Sequence, max_tokens: int | None, keep: str = "first") -> Fitted:
    """The memories that fit in ``max_tokens`` (None: all), in their order: whole ones from the start
    (``keep="first"``: a ranked list, best first) or from the end (``keep="last"``: a history, newest
    last), the one crossing the budget cut to fit.

    >>> f = fit_memories(["a b c", "d e f"], 4)
    >>> f.memories, f.tokens, f.dropped
    (('a b c', 'd'), 4, 2)
    >>> fit_memories(["a b c", "d e f"], 4, keep="last").memories
    ('c', 'd e f')

    ``keep="prefix"``: the longest prefix of whole memories that fits, none cut (LongMemEval-V2's
    reader cap):

    >>> fit_memories(["a b c", "d e f"], 4, keep="prefix").memories
    ('a b c',)
    """
    sizes = [count_tokens(str(m)) for m in memories]
    total = sum(sizes)
    if max_tokens is None or total <= max_tokens:
        return Fitted(tuple(memories), total, 0)
    order = range(len(memories)) if keep != "last" else range(len(memories) - 1, -1, -1)
    kept, used = [], 0
    for i in order:
        if used + sizes[i] <= max_tokens:
            kept.append(memories[i])
            used += sizes[i]
            continue
        if keep == "prefix":
            break
        part = _cut(memories[i], max_tokens - used, keep)
        if part is not None:
            kept.append(part)
            used += count_tokens(str(part))
        break
    if keep == "last":
        kept.reverse()
    return Fitted(tuple(kept), used, total - used)


@dataclass(frozen=True)
class WindowRecall(Recall):
    """A recall cut to a window by the system itself: ``window_tokens`` (its limit) and
    ``dropped_tokens`` (what the window left out), so the record can say the context was truncated."""

    window_tokens: int | None = None
    dropped_tokens: int = 0


class LongContext(BaseMemorySystem):
    """The last ``tokens`` tokens of the haystack, oldest first, the oldest turn cut at a token boundary."""

    name, version = "context", "1"
    capabilities = Capabilities(context_keep="last")  # a reading budget keeps the newest end

    def __init__(self, tokens: int = 32000):
        if int(tokens) <= 0:
            raise ArgumentError(f"tokens must be a positive number, got {tokens}")
        self.params = {"tokens": int(tokens)}
        self._turns: list[Turn] = []
        self._sizes: list[int] = []
        self._total = 0

    def reset(self) -> None:
        self._turns, self._sizes, self._total = [], [], 0

    def ingest(self, session: Session) -> None:
        for t in session.turns:
            n = count_tokens(str(memory_text(t)))
            self._turns.append(t)
            self._sizes.append(n)
            self._total += n

    def query(self, question: str, asked_at: str | None) -> WindowRecall:
        budget, used, i = self.params["tokens"], 0, len(self._turns) - 1
        while i >= 0 and used + self._sizes[i] <= budget:
            used += self._sizes[i]
            i -= 1
        kept = [memory_text(t) for t in self._turns[i + 1 :]]
        ids = [t.turn_id for t in self._turns[i + 1 :]]
        if i >= 0 and used < budget:  # the oldest turn in the window, cut to its last tokens
            part = fit_memories([memory_text(self._turns[i])], budget - used, keep="last")
            if part.memories:
                kept.insert(0, part.memories[0])
                ids.insert(0, self._turns[i].turn_id)
                used += part.tokens
        return WindowRecall(tuple(kept), tuple(ids), window_tokens=budget, dropped_tokens=self._total - used)

    def memories(self, haystack: str) -> tuple[str, ...]:
        """Every turn ingested since the last reset (the window is cut at query time, not at ingest)."""
        return tuple(memory_text(t) for t in self._turns)
