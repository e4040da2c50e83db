"""The in-process memory-system protocol (memory-api.md) and what a query returns."""

from __future__ import annotations

import difflib
from abc import ABC, abstractmethod
from dataclasses import asdict, dataclass, fields
from types import MappingProxyType
from typing import (
    Any,
    Callable,
    Literal,
    Mapping,
    Protocol,
    Self,
    Sequence,
    get_args,
    get_type_hints,
    runtime_checkable,
)

from ..bench.model import Question, Session, Turn
from ..errors import ProtocolError, SystemContractError

__all__ = [
    "Recall",
    "IngestCheck",
    "MemorySystem",
    "BaseMemorySystem",
    "Capabilities",
    "Declared",
    "declared",
    "CAPABILITY_METHODS",
    "NeedsQuestion",
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
            raise ProtocolError("a memory object needs a string 'text'")
        ts, sp, img = x.get("timestamp"), x.get("speaker"), x.get("image")
        if img is not None and not isinstance(img, str):
            raise ProtocolError("a memory's 'image' must be a string (a bench path or a data: URL)")
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

    >>> r = Recall(memories=(Memory("My dentist is Dr Okafor.", "2026-01-05", "user"),), turn_ids=(1,))
    >>> str(r.memories[0]), r.answer
    ('[2026-01-05] user: My dentist is Dr Okafor.', None)
    """

    memories: tuple[str, ...] = ()  # plain strings or ``Memory`` (content + timestamp + speaker)
    turn_ids: tuple[int, ...] | None = None
    answer: str | None = None
    latency_ms: float | None = None
    response_bytes: int | None = None
    attempts: int = 1
    usage: Mapping[str, int] | None = None


@runtime_checkable
class MemorySystem(Protocol):
    """What memeval runs in-process: ``reset`` before each haystack, ``ingest`` its sessions in order,
    then ``query`` each question (a system that answers itself sets ``Recall.answer``).

    These six members are all a system must have; what it may offer beyond them (closing, cancelling,
    usage, concurrency, ...) is declared on :class:`BaseMemorySystem`, with its default.

    ``ingest`` gets each turn's ``image`` as the bench gives it (a path relative to the bench folder);
    a system declaring ``Capabilities(image_input="inline")`` gets the bytes instead, as a ``data:`` URL
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


ImageInput = Literal["path", "inline"]
ContextKeep = Literal["first", "last", "prefix"]
Indexing = Literal["sync", "async"]


@dataclass(frozen=True, kw_only=True)
class Capabilities:
    """What a system declares about itself beyond the required members, each with the default a system
    gets by declaring nothing. Built by keyword, so a misspelled name fails where it is written.

    - ``concurrent_queries``: ``query`` may be called from several threads at once (``--concurrency N``
      uses them; otherwise questions are asked one at a time)
    - ``idempotent_ingest``: ``ingest(session, idempotency_key=...)`` takes a key per session, and a
      repeated key stores nothing twice (the HTTP protocol's ``Idempotency-Key``)
    - ``image_input``: a turn's image reaches ``ingest`` as its bench ``"path"`` or ``"inline"`` bytes
      (a ``data:`` URL)
    - ``context_keep``: which end of the returned memories a reading budget keeps (``"prefix"``: whole memories from the start, none cut): ``"first"`` (a
      ranked list, best first) or ``"last"`` (a history, newest last)
    - ``indexing``: ``"sync"``, what was ingested is searchable when ``ingest`` returns; ``"async"``, it
      becomes searchable later (a hosted API indexing in the background): after each haystack's ingest
      the runner polls a probe query until the newest session comes back, bounded by
      ``--searchable-timeout``, and records the time to searchable (``run.writepath``)

    >>> Capabilities(concurrent_queries=True).image_input
    'path'
    >>> Capabilities(concurent_queries=True)
    Traceback (most recent call last):
    ...
    TypeError: Capabilities.__init__() got an unexpected keyword argument 'concurent_queries'
    """

    concurrent_queries: bool = False
    idempotent_ingest: bool = False
    image_input: ImageInput = "path"
    context_keep: ContextKeep = "first"
    indexing: Indexing = "sync"

    def __post_init__(self) -> None:
        for f in fields(self):
            v, allowed = getattr(self, f.name), _FLAG_VALUES[f.name]
            if allowed is None and not isinstance(v, bool):
                raise SystemContractError(f"capability {f.name!r} must be True or False, got {v!r}")
            if allowed is not None and v not in allowed:
                raise SystemContractError(f"capability {f.name!r} must be one of {allowed}, got {v!r}")

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


#: each capability flag's allowed values (None: True or False)
_FLAG_VALUES: dict[str, tuple[str, ...] | None] = {
    n: get_args(t) or None for n, t in get_type_hints(Capabilities, globals()).items()
}


@dataclass(frozen=True)
class IngestCheck:
    """What a system was found to hold after a haystack's ingest (the ``verify_ingest`` capability; the
    HTTP adapter's compares the server's session count and digest for the fenced generation).

    ``fenced``: the memory is fenced against late requests (memory-api.md: the server returned a
    generation); ``checked``: ``"count+digest"``, ``"count"`` or ``"none"`` (nothing could be checked);
    ``problem``: one line when what it holds is not what was sent, else None; ``retried_reset``: the
    reset needed more than one attempt.

    >>> IngestCheck(True, "count+digest").problem is None
    True
    """

    fenced: bool
    checked: str
    problem: str | None = None
    retried_reset: bool = False


class BaseMemorySystem(ABC):
    """A memory system with every optional capability declared, each with its default (subclass it and
    override what your system offers; httpx's ``BaseTransport`` is the model).

    Required: ``name``, ``version``, ``params``, ``reset``, ``ingest``, ``query`` (:class:`MemorySystem`).
    Optional, with their defaults:

    - ``capabilities``: a :class:`Capabilities` (default: all off)
    - ``close()``: release what the system holds (called once, after the run); default: nothing
    - ``cancel()``: abort calls in flight and refuse new ones (Ctrl-C during a concurrent run); default:
      nothing
    - ``usage()``: the system's own model calls so far, ingest included (``llm_calls``,
      ``embedding_calls``, ``prompt_tokens``, ``completion_tokens``) for the manifest; default: None
      (not counted)
    - ``warm()`` and ``network_floor_ms()``: for a system across a network, open the connection and
      return the median no-op round trip, subtracted from each latency; default: nothing and None
      (in process: no network)
    - ``memories(haystack)``: everything stored for the haystack ingested since the last reset, for
      inspection; default: unsupported (:class:`SystemContractError`)
    - ``verify_ingest()``: after a haystack's ingest, what the system was found to hold against what
      it was sent (:class:`IngestCheck`), checked before the first question; default: None (it cannot
      say)

    A system need not subclass this: :func:`declared` reads the same names from any object, with the
    same defaults, and refuses a name that looks like a misspelled capability.

    >>> class Recorder(BaseMemorySystem):
    ...     name, version = "recorder", "1"
    ...     capabilities = Capabilities(concurrent_queries=True)
    ...     def reset(self): self.turns = []
    ...     def ingest(self, session): self.turns += session.turns
    ...     def query(self, question, asked_at): return Recall(tuple(t.text for t in self.turns))
    >>> r = Recorder(); r.close(); r.usage() is None, r.network_floor_ms(), declared(r).capabilities.concurrent_queries
    (True, None, True)
    """

    name: str
    version: str
    params: Mapping[str, Any] = MappingProxyType({})
    capabilities: Capabilities = Capabilities()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        _check_names(cls.__name__, [n for n in vars(cls)])

    @abstractmethod
    def reset(self) -> None: ...

    @abstractmethod
    def ingest(self, session: Session) -> None: ...

    @abstractmethod
    def query(self, question: str, asked_at: str | None) -> Recall: ...

    def close(self) -> None:
        """Release what the system holds; called once, after the run."""

    def cancel(self) -> None:
        """Abort the calls in flight and refuse new ones (Ctrl-C)."""

    def usage(self) -> Mapping[str, int] | None:
        """The system's own model calls so far (ingest included); None: not counted."""
        return None

    def warm(self) -> None:
        """Open connections and get past slow start before anything is timed."""

    def network_floor_ms(self) -> float | None:
        """The median no-op round trip to the system in ms; None: in process, no network."""
        return None

    def memories(self, haystack: str) -> Sequence[str]:
        """Everything stored for ``haystack`` (ingested since the last reset); default: unsupported."""
        raise SystemContractError(f"system {self.name!r} does not list its stored memories")

    def verify_ingest(self) -> IngestCheck | None:
        """What the system holds since the last reset, against what it was sent; None: it cannot say."""
        return None


#: the optional methods a system may define (their defaults are :class:`BaseMemorySystem`'s)
CAPABILITY_METHODS: tuple[str, ...] = (
    "close",
    "cancel",
    "usage",
    "warm",
    "network_floor_ms",
    "memories",
    "verify_ingest",
)
_CAPABILITY_FLAGS: tuple[str, ...] = tuple(f.name for f in fields(Capabilities))
_REQUIRED = ("name", "version", "params", "reset", "ingest", "query")
_KNOWN = frozenset((*_REQUIRED, *CAPABILITY_METHODS, "capabilities", "prepare"))
#: classes whose instances may see the whole bench question (gold included) before ``query``: the
#: built-in oracle only (a ceiling and a scorer check, never ranked as a system)
_SEES_QUESTION: set[type] = set()


def _sees_question(cls: type) -> type:
    """Grant ``prepare(question)`` to a built-in class (``baselines.Oracle``); nothing else may have it."""
    _SEES_QUESTION.add(cls)
    return cls


def _check_names(who: str, names: Sequence[str]) -> None:
    """Refuse a name that declares a capability the old flat way, or looks like a misspelled one."""
    for n in names:
        if n.startswith("_") or n in _KNOWN:
            continue
        if n in _CAPABILITY_FLAGS or n == "accepts_idempotency_key":
            flag = "idempotent_ingest" if n == "accepts_idempotency_key" else n
            raise SystemContractError(
                f"system {who}: {n!r} is declared as an attribute; declare it as "
                f"capabilities = Capabilities({flag}=...) (memeval.systems.base)"
            )
        near = difflib.get_close_matches(n, [*_KNOWN, *_CAPABILITY_FLAGS], 1, 0.8)
        if near and n != "a" + near[0]:  # ``aquery``, ``anetwork_floor_ms``: an async twin, not a typo
            raise SystemContractError(
                f"system {who}: {n!r} is not a capability; did you mean {near[0]!r}? (known: "
                f"{', '.join(CAPABILITY_METHODS)}, capabilities; rename or prefix with _ a name that is not one)"
            )


class NeedsQuestion(Protocol):
    """Privileged: a system that sees the whole bench question before ``query``. Only the built-in
    ``oracle`` may (:func:`declared` refuses any other system that defines ``prepare``)."""

    def prepare(self, question: Question) -> None: ...


def _none() -> None:
    return None


def _unsupported(system: Any) -> Callable[[str], Sequence[str]]:
    def memories(haystack: str) -> Sequence[str]:
        raise SystemContractError(f"system {getattr(system, 'name', system)!r} does not list its stored memories")

    return memories


@dataclass(frozen=True)
class Declared:
    """A system with its declarations read once (:func:`declared`): what the runner calls, so it never
    probes a system's attribute names. ``prepare`` is None except for the built-in oracle;
    ``lists_memories`` says whether ``memories`` is the system's own (else it raises)."""

    system: MemorySystem
    capabilities: Capabilities
    close: Callable[[], None]
    cancel: Callable[[], None]
    usage: Callable[[], Mapping[str, int] | None]
    warm: Callable[[], None]
    network_floor_ms: Callable[[], float | None]
    memories: Callable[[str], Sequence[str]]
    lists_memories: bool
    prepare: Callable[[Question], None] | None
    verify_ingest: Callable[[], IngestCheck | None] = lambda: None


def declared(system: Any) -> Declared:
    """The one place a system's optional capabilities are read: a :class:`BaseMemorySystem`'s, or the same
    names on any object with the defaults filled in. A misspelled or mistyped capability, a capability
    declared the old flat way, or a ``prepare`` on anything but the built-in oracle is a
    :class:`SystemContractError` (one line), before anything is asked.

    >>> class Plain:
    ...     name, version, params = "plain", "1", {}
    ...     def reset(self): pass
    ...     def ingest(self, session): pass
    ...     def query(self, question, asked_at): return Recall()
    ...     def clsoe(self): pass
    >>> declared(Plain())
    Traceback (most recent call last):
    ...
    memeval.errors.SystemContractError: system Plain: 'clsoe' is not a capability; did you mean 'close'? ...
    """
    who = type(system).__name__
    if not isinstance(system, BaseMemorySystem):  # a subclass was checked when it was defined
        _check_names(who, [n for n in dir(system) if not n.startswith("__")])
    else:
        _check_names(who, list(vars(system)))  # names set on the instance
    caps = getattr(system, "capabilities", Capabilities())
    if not isinstance(caps, Capabilities):
        raise SystemContractError(
            f"system {who}: capabilities must be a memeval Capabilities, got {type(caps).__name__}"
        )
    own = {n: getattr(system, n) for n in CAPABILITY_METHODS if callable(getattr(system, n, None))}
    for n in CAPABILITY_METHODS:
        if hasattr(system, n) and n not in own:
            raise SystemContractError(f"system {who}: {n!r} must be a method")
    prepare = getattr(system, "prepare", None)
    if prepare is not None and type(system) not in _SEES_QUESTION:
        raise SystemContractError(
            f"system {who} defines prepare(question): only the built-in oracle may see the bench question "
            "(its gold included); a system gets the question text and date through query"
        )
    base_memories = isinstance(system, BaseMemorySystem) and type(system).memories is BaseMemorySystem.memories
    return Declared(
        system=system,
        capabilities=caps,
        close=own.get("close", _none),
        cancel=own.get("cancel", _none),
        usage=own.get("usage", _none),
        warm=own.get("warm", _none),
        network_floor_ms=own.get("network_floor_ms", _none),
        memories=own.get("memories", _unsupported(system)),
        lists_memories="memories" in own and not base_memories,
        prepare=prepare,
        verify_ingest=own.get("verify_ingest", _none),
    )


def memory_text(turn: Turn) -> Memory:
    """A stored turn as a memory: shown dated and attributed, its content the text unchanged, its
    image (if any) carried beside it."""
    return Memory(turn.text, turn.date, turn.speaker, turn.image)
