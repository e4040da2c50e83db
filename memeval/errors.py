"""Errors a user can act on: each renders as one line naming file, record and field.

One tree, rooted at :class:`MemevalError` (the command line prints any of them on one line and exits
non-zero; a notebook can catch them all with one ``except``)::

    MemevalError
    ├── InputError           a bad input file (names file, record, field)        exit 2
    ├── UsageError           a bad command-line argument or unreachable target   exit 2
    │   └── ArgumentError    a bad argument to a library call (also a ValueError)
    ├── UnknownName          a tier, check, agent or case that is not there (also a KeyError)
    ├── BenchContractError   a bench or preset that breaks its own contract (also a ValueError)
    ├── MemorySystemError    the system under test
    │   ├── SystemCallError      a call failed for good (an error record, or a stop)
    │   ├── SystemContractError  a misdeclared capability, a privileged method
    │   └── ProtocolError        a reply outside the HTTP protocol's schema (also a ValueError)
    ├── EndpointError        a model endpoint (judge, reader, embeddings, agents)
    ├── SchemaError          a record or manifest field the type does not have
    └── StateError           a call the object cannot serve now (also a RuntimeError)

Where an error also derives from a builtin (``ValueError``, ``KeyError``, ``RuntimeError``), it is so
that code written against the builtin keeps working.

>>> issubclass(ArgumentError, ValueError) and issubclass(ArgumentError, MemevalError)
True
>>> str(UnknownName("bench 'x' has no tier 'big'"))
"bench 'x' has no tier 'big'"
"""

from __future__ import annotations

from typing import overload

__all__ = [
    "MemevalError",
    "InputError",
    "UsageError",
    "MemorySystemError",
    "SystemCallError",
    "SystemContractError",
    "SchemaError",
    "ArgumentError",
    "UnknownName",
    "BenchContractError",
    "ProtocolError",
    "EndpointError",
    "StateError",
    "input_error_from",
]


class MemevalError(Exception):
    """Base class: the CLI prints str(err) on one line and exits non-zero.

    >>> try:
    ...     memeval_call = InputError("bench/turns.jsonl", 3, "date", "not a date")
    ...     raise memeval_call
    ... except MemevalError as e:
    ...     print(e, "| exit", e.exit_code)
    bench/turns.jsonl:3: field 'date': not a date | exit 2
    """

    exit_code = 1


class InputError(MemevalError):
    """Bad input file: names the file, the line or record, and the field at fault.

    >>> str(InputError("questions.jsonl", "Q7", "axis", "unknown axis 'X'"))
    "questions.jsonl record Q7: field 'axis': unknown axis 'X'"
    """

    exit_code = 2

    def __init__(self, path, record=None, field=None, message: str = "invalid"):
        self.path, self.record, self.field, self.message = str(path), record, field, message
        where = self.path
        if record is not None:
            where += f":{record}" if isinstance(record, int) else f" record {record}"
        if field is not None:
            where += f": field '{field}'"
        super().__init__(" ".join(f"{where}: {message}".splitlines()))  # one line, whatever the data held


@overload
def input_error_from(exc: UnicodeDecodeError | RecursionError, path, record=None, field=None) -> InputError: ...
@overload
def input_error_from(exc: BaseException, path, record=None, field=None) -> InputError | None: ...
def input_error_from(exc: BaseException, path, record=None, field=None) -> InputError | None:
    """The :class:`InputError` for an exception that a malformed file raises while it is decoded or
    parsed (bad UTF-8, nesting too deep for the parser, an integer too long to convert), or ``None``
    for any other exception, which is then a bug and must propagate.

    >>> str(input_error_from(RecursionError(), "x.json", 3))
    'x.json:3: nested too deeply'
    >>> input_error_from(KeyError("k"), "x.json") is None
    True
    """
    if isinstance(exc, UnicodeDecodeError):
        bad = exc.object[exc.start : exc.start + 1].hex() if isinstance(exc.object, (bytes, bytearray)) else "?"
        return InputError(path, record, field, f"not UTF-8 text (byte 0x{bad}: {exc.reason})")
    if isinstance(exc, RecursionError):
        return InputError(path, record, field, "nested too deeply")
    if isinstance(exc, ValueError) and "integer string conversion" in str(exc):
        return InputError(path, record, field, "integer too long (over 4,300 digits)")
    return None


class UsageError(MemevalError):
    """A bad argument or an unreachable target named on the command line: one line, exit 2."""

    exit_code = 2


class MemorySystemError(MemevalError):
    """Something about the memory system under test (its calls or its declarations)."""


class SystemCallError(MemorySystemError):
    """A call to the system failed for good (after retries); becomes an error record with this reason
    (raised by a system's ``query``), or stops the run, resumably (from ``reset`` or ``ingest``).

    ``connection``: the system could not be reached at all (refused, dropped, timed out), which the
    runner's circuit breaker counts; an HTTP error status or a malformed reply is not.

    >>> isinstance(SystemCallError("POST /query: HTTP 503"), MemorySystemError)
    True
    """

    def __init__(self, message: str, connection: bool = False) -> None:
        super().__init__(message)
        self.connection = connection


class SystemContractError(MemorySystemError):
    """A system that breaks the protocol it declares (``systems.base``): a misspelled or mistyped
    capability, a privileged method it may not have, a parameter its constructor does not declare (or
    of the wrong type), a ``query`` that returns something other than ``Recall``. One line, exit 2."""

    exit_code = 2


class SchemaError(MemevalError):
    """A record, manifest or config built with a field its type does not have (a misspelled ``scroe``):
    a writer's bug, refused before anything is written rather than dropped."""


class ArgumentError(UsageError, ValueError):
    """A bad argument to a library call (a notebook's or a script's), e.g. an unknown ``by=``."""


class UnknownName(MemevalError, KeyError):
    """A name that is not there (a tier, an audit check, a scripted agent, a suite case)."""

    def __str__(self) -> str:  # the message itself, not KeyError's repr of it
        return Exception.__str__(self)


class BenchContractError(MemevalError, ValueError):
    """A bench, or a generator preset, that breaks its own contract (a preset too small for what it
    must hold, a question in a shape the bench format does not allow)."""


class ProtocolError(MemorySystemError, ValueError):
    """A system's reply (or a memory in it) outside the HTTP protocol's schema (memory-api.md)."""


class EndpointError(MemevalError):
    """A model endpoint (judge, reader, embeddings, a multi-turn agent) failed for good or replied
    outside its contract."""


class StateError(MemevalError, RuntimeError):
    """A call the object cannot serve in its present state (the reference server did not start; a
    blocking call on the HTTP adapter's own event loop)."""
