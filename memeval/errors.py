"""Errors a user can act on: each renders as one line naming file, record and field."""

from __future__ import annotations

__all__ = ["MemevalError", "InputError"]


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
        super().__init__(f"{where}: {message}")


class UsageError(MemevalError):
    """A bad argument or an unreachable target named on the command line: one line, exit 2."""

    exit_code = 2
