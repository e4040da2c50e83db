"""The in-process memory-system protocol (memory-api.md) and what a query returns."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Protocol, Self, runtime_checkable

from ..bench.model import Question, Session, Turn

__all__ = [
    "Recall",
    "MemorySystem",
    "NeedsQuestion",
    "SystemCallError",
    "memory_text",
    "Memory",
    "memory_content",
    "memory_from_json",
    "memory_to_json",
    "memory_image",
]


class Memory(str):
    """One returned memory: its content with timestamp and speaker as fields.

    It *is* the display string ``"[timestamp] speaker: content"`` (what records, reports and the
    reader show, so older code that treats memories as strings keeps working); dry scoring reads
    ``content`` only (``memory_content``), so a date stamp or a name never matches a gold.

    ``image`` is an image the memory carries (memory-api.md): a path relative to the bench folder, a
    ``data:image/...;base64,`` URL or a remote URL (``bench.images``); it is not part of the display.

    >>> m = Memory("I love hiking.", "2022-04-15", "Joanna")
    >>> str(m), m.content
    ('[2022-04-15] Joanna: I love hiking.', 'I love hiking.')
    """

    __slots__ = ("content", "timestamp", "speaker", "image")
    content: str
    timestamp: str | None
    speaker: str | None
    image: str | None

    def __new__(
        cls, content: str, timestamp: str | None = None, speaker: str | None = None, image: str | None = None
    ) -> Self:
        shown = (f"[{timestamp}] " if timestamp else "") + (f"{speaker}: " if speaker else "") + content
        self = super().__new__(cls, shown)
        self.content, self.timestamp, self.speaker, self.image = content, timestamp, speaker, image
        return self

    def __reduce__(self) -> tuple[type[Memory], tuple[str, str | None, str | None, str | None]]:
        return (Memory, (self.content, self.timestamp, self.speaker, self.image))


def memory_content(m: object) -> str:
    """The content of a returned memory (a plain string is all content)."""
    return m.content if isinstance(m, Memory) else str(m)


def memory_image(m: object) -> str | None:
    """The image reference a returned memory carries (None for a plain string or a memory without one)."""
    return getattr(m, "image", None) if isinstance(m, Memory) else None


def memory_from_json(x: object) -> str:
    """A memory as the HTTP protocol carries it: a string, or ``{"text", "timestamp"?, "speaker"?,
    "image"?}`` (``image``: a path inside the bench folder or a ``data:image/...;base64,`` URL).

    >>> memory_from_json({"text": "my bike", "image": "img/img01.png"}).image
    'img/img01.png'
    """
    if isinstance(x, dict):
        text = x.get("text")
        if not isinstance(text, str):
            raise TypeError("a memory object needs a string 'text'")
        ts, sp, img = x.get("timestamp"), x.get("speaker"), x.get("image")
        if img is not None and not isinstance(img, str):
            raise TypeError("a memory's 'image' must be a string (a bench path or a data: URL)")
        return Memory(text, None if ts is None else str(ts), None if sp is None else str(sp), img or None)
    return str(x)


def memory_to_json(m: object) -> str | dict[str, str]:
    """A memory for the HTTP protocol: an object when it carries fields, else the plain string."""
    if isinstance(m, Memory) and (m.timestamp or m.speaker or m.image):
        return {
            "text": m.content,
            **({"timestamp": m.timestamp} if m.timestamp else {}),
            **({"speaker": m.speaker} if m.speaker else {}),
            **({"image": m.image} if m.image else {}),
        }
    return str(m)


@dataclass(frozen=True)
class Recall:
    """What a system returns for one question.

    ``latency_ms``/``response_bytes`` are filled by systems that time themselves (the HTTP adapter);
    for in-process systems the runner times the call. ``usage``: the system's own model calls for
    this query where it knows them (``llm_calls``, ``embedding_calls``, ``prompt_tokens``,
    ``completion_tokens``).
    """

    memories: tuple[str, ...] = ()  # plain strings or ``Memory`` (content + timestamp + speaker)
    turn_ids: tuple[int, ...] | None = None
    answer: str | None = None
    latency_ms: float | None = None
    response_bytes: int | None = None
    attempts: int = 1
    usage: Mapping[str, int] | None = None


class SystemCallError(Exception):
    """A call to the system failed for good (after retries); becomes an error record with this reason.

    ``connection``: the system could not be reached at all (refused, dropped, timed out), which the
    runner's circuit breaker counts; an HTTP error status or a malformed reply is not.
    """

    def __init__(self, message: str, connection: bool = False) -> None:
        super().__init__(message)
        self.connection = connection


@runtime_checkable
class MemorySystem(Protocol):
    """What memeval runs in-process: ``reset`` before each haystack, ``ingest`` its sessions in order,
    then ``query`` each question (a system that answers itself sets ``Recall.answer``).

    ``ingest`` gets each turn's ``image`` as the bench gives it (a path relative to the bench folder);
    a system with ``image_input = "inline"`` gets the bytes instead, as a ``data:`` URL
    (``bench.images.inline_session``). ``query`` may return :class:`Memory` objects carrying an image.

    >>> class LastTurn:  # remembers only the last turn it was shown
    ...     name, version, params = "last-turn", "1", {}
    ...     def reset(self): self.last = ()
    ...     def ingest(self, session): self.last = (session.turns[-1].text,)
    ...     def query(self, question, asked_at): return Recall(memories=self.last)
    >>> isinstance(LastTurn(), MemorySystem)
    True
    """

    name: str
    version: str

    @property
    def params(self) -> Mapping[str, Any]:
        """The system's settings as written into the run manifest (a plain attribute in practice)."""
        ...

    def reset(self) -> None: ...

    def ingest(self, session: Session) -> None: ...

    def query(self, question: str, asked_at: str | None) -> Recall: ...


class NeedsQuestion(Protocol):
    """Optional: a system that must see the bench question before ``query`` (only ``oracle``)."""

    def prepare(self, question: Question) -> None: ...


def memory_text(turn: Turn) -> Memory:
    """A stored turn as a memory: shown dated and attributed, its content the text unchanged, its
    image (if any) carried beside it."""
    return Memory(turn.text, turn.date, turn.speaker, turn.image)
