"""Write files so that a reader never sees half of one: temp file in the same folder, then rename."""

from __future__ import annotations

import json
import os
import tempfile
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, Iterable, Iterator

__all__ = ["atomic_open", "write_text", "write_jsonl", "write_lines", "dumps_line", "repair_tail", "JsonlAppender"]


def _read_umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


_UMASK = _read_umask()  # read once at import: os.umask is process-wide, not thread-safe
_FILE_MODE = 0o666 & ~_UMASK
DIR_MODE = 0o777 & ~_UMASK  #: an ordinary folder's mode (mkdtemp makes 0700)


@contextmanager
def atomic_open(path: str | os.PathLike, mode: str = "w") -> Iterator[IO[Any]]:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.chmod(tmp, _FILE_MODE)  # mkstemp makes 0600; the result should be an ordinary file
    try:
        enc = None if "b" in mode else "utf-8"
        with os.fdopen(fd, mode, encoding=enc, newline=None if "b" in mode else "\n") as fh:
            yield fh
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


_LINE_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(", ", ": "))  # stateless: shared by threads


def dumps_line(obj) -> str:
    """One JSON line, UTF-8 kept readable, stable separators (byte-identical output)."""
    return _LINE_ENCODER.encode(obj)


def write_text(path, text: str) -> None:
    with atomic_open(path) as fh:
        fh.write(text)


def write_lines(path, lines: Iterable[str]) -> int:
    """Write ``lines`` (each without its newline) to ``path`` atomically; returns how many."""
    n = 0
    with atomic_open(path) as fh:
        for line in lines:
            fh.write(line + "\n")
            n += 1
    return n


def write_jsonl(path, rows: Iterable[dict]) -> int:
    return write_lines(path, (dumps_line(row) for row in rows))


def repair_tail(path) -> int:
    """Drop a partial last line left by a killed appender (an append-only JSONL file); returns the
    number of bytes dropped. A file ending in a newline, or absent, is left alone."""
    path = Path(path)
    if not path.exists() or path.stat().st_size == 0:
        return 0
    with open(path, "rb+") as fh:
        fh.seek(-1, os.SEEK_END)
        if fh.read(1) == b"\n":
            return 0
        fh.seek(0)
        data = fh.read()
        keep = data.rfind(b"\n") + 1
        fh.truncate(keep)
        return len(data) - keep


class JsonlAppender:
    """An append-only JSONL file: opening it drops a partial last line left by a killed writer
    (:func:`repair_tail`); each :meth:`write` appends one whole line and flushes it, so a rerun
    appends after whole records only. Thread-safe; a context manager.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "r.jsonl"
    >>> _ = p.write_text('{"a": 1}\\n{"a": ')
    >>> with JsonlAppender(p) as out:
    ...     out.write({"a": 2})
    >>> p.read_text()
    '{"a": 1}\\n{"a": 2}\\n'
    """

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        repair_tail(self.path)
        self._fh = open(self.path, "a", encoding="utf-8")
        self._lock = threading.Lock()

    def write(self, obj) -> None:
        line = dumps_line(obj) + "\n"
        with self._lock:
            self._fh.write(line)
            self._fh.flush()

    def close(self) -> None:
        self._fh.close()

    def __enter__(self) -> "JsonlAppender":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
