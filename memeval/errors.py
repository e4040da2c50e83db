"""Errors a user can act on: each renders as one line naming file, record and field."""

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
    "input_error_from",
]


class MemevalError(Exception):
    """Base class: the CLI prints str(err) on one line and exits non-zero."""

    exit_code = 1


class InputError(MemevalError):
    """Bad input file: names the file, the line or record, and the field at fault."""

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
    """A call to the system failed for good (after retries); becomes an error record with this reason."""


class SystemContractError(MemorySystemError):
    """A system that breaks the protocol it declares (``systems.base``): a misspelled or mistyped
    capability, a privileged method it may not have. Raised before anything is asked."""

    exit_code = 2


class SchemaError(MemevalError):
    """A record, manifest or config built with a field its type does not have (a misspelled ``scroe``):
    a writer's bug, refused before anything is written rather than dropped."""
