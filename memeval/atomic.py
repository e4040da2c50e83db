"""Write files so that a reader never sees half of one: temp file in the same folder, then rename.

Files that are written in place (an append-only JSONL file, a writer lock) are opened with
``O_NOFOLLOW``: a symbolic link where one of them should be is refused (:class:`LinkRefused`, one
line), never written through. A rename replaces a link rather than writing its target.
"""

from __future__ import annotations

import errno
import json
import os
import tempfile
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, Iterable, Iterator

import orjson

from .errors import MemevalError

__all__ = [
    "atomic_open",
    "write_text",
    "write_jsonl",
    "write_lines",
    "dumps_line",
    "repair_tail",
    "JsonlAppender",
    "LinkRefused",
    "open_nofollow",
    "WriterLock",
]


class LinkRefused(MemevalError, OSError):
    """A file memeval writes in place is a symbolic link: refused, never followed."""

    def __str__(self) -> str:
        return str(self.strerror)


class LockHeld(MemevalError, BlockingIOError):
    """Another writer holds the lock (``WriterLock.acquire``); also a :class:`BlockingIOError`."""


def open_nofollow(path: str | os.PathLike, flags: int, mode: int = 0o666) -> int:
    """``os.open`` with ``O_NOFOLLOW``; a symbolic link at ``path`` is :class:`LinkRefused`.

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp()); (d / "link").symlink_to(d / "elsewhere")
    >>> open_nofollow(d / "link", os.O_WRONLY | os.O_CREAT)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    memeval.atomic.LinkRefused: ...link: is a symbolic link; memeval never writes through one (remove it)
    """
    try:
        return os.open(path, flags | os.O_NOFOLLOW | os.O_CLOEXEC, mode)
    except OSError as e:
        if e.errno == errno.ELOOP or (e.errno == errno.EEXIST and os.path.islink(path)):
            raise LinkRefused(
                errno.ELOOP, f"{path}: is a symbolic link; memeval never writes through one (remove it)"
            ) from None
        raise


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


def _finite(obj) -> bool:
    """No NaN or infinity among the floats of a record: its fields and the values of its dict fields
    (e.g. ``retrieval_metrics``).

    >>> _finite({"a": 1.0, "m": {"x": 0.5}}), _finite({"m": {"x": float("nan")}})
    (True, False)
    """
    if not isinstance(obj, dict):
        return True
    for v in obj.values():
        t = type(v)
        if t is float:
            if v - v != 0.0:  # NaN or +-inf
                return False
        elif t is dict:
            for x in v.values():
                if type(x) is float and x - x != 0.0:
                    return False
    return True


def dumps_fast(obj) -> str:
    """One JSON line by orjson (~5x faster; compact separators), for lines whose bytes no hash reads
    (run records); whatever orjson cannot encode goes through :func:`dumps_line`.

    >>> dumps_fast({"a": [1, 2.5], "b": "é"})
    '{"a":[1,2.5],"b":"é"}'
    """
    if not _finite(obj):  # orjson writes NaN/inf as null: json's NaN keeps them visible to readers' checks
        return dumps_line(obj)
    try:
        return orjson.dumps(obj, option=orjson.OPT_SERIALIZE_NUMPY).decode("utf-8")
    except TypeError:  # orjson.JSONEncodeError: an int beyond 64 bits, a non-str key, an unknown type
        return dumps_line(obj)


_PRETTY = (
    orjson.OPT_INDENT_2
    | orjson.OPT_PASSTHROUGH_DATACLASS  # what json refuses, orjson must refuse too (then json says why)
    | orjson.OPT_PASSTHROUGH_DATETIME
    | orjson.OPT_PASSTHROUGH_SUBCLASS
)


def dumps_pretty(obj) -> str:
    """``json.dumps(obj, indent=2, ensure_ascii=False)``'s document, by orjson (the same layout and
    values; a float may be spelled differently, e.g. ``1e-5``); a non-finite float, or anything orjson
    will not encode as json would, goes through json itself.

    >>> print(dumps_pretty({"a": [1, 2.5], "b": {}, "c": "é"}))
    {
      "a": [
        1,
        2.5
      ],
      "b": {},
      "c": "é"
    }
    >>> dumps_pretty({"x": float("nan")}) == json.dumps({"x": float("nan")}, indent=2)
    True
    """
    if _finite_deep(obj):
        try:
            return orjson.dumps(obj, option=_PRETTY).decode("utf-8")
        except TypeError:  # orjson.JSONEncodeError
            pass
    return json.dumps(obj, indent=2, ensure_ascii=False)


def _finite_deep(obj) -> bool:
    """No NaN or infinity anywhere in ``obj`` (dicts, lists and tuples walked)."""
    stack = [obj]
    while stack:
        o = stack.pop()
        for v in o.values() if type(o) is dict else o if type(o) in (list, tuple) else ():
            t = type(v)
            if t is float:
                if v - v != 0.0:
                    return False
            elif t is dict or t is list or t is tuple:
                stack.append(v)
    return True


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
    try:
        fd = open_nofollow(path, os.O_RDWR)
    except FileNotFoundError:
        return 0
    with os.fdopen(fd, "rb+") as fh:
        if os.fstat(fd).st_size == 0:
            return 0
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

    def __init__(self, path: str | os.PathLike, *, fast: bool = False):
        """``fast``: lines encoded by :func:`dumps_fast` (run records), else :func:`dumps_line`."""
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        repair_tail(self.path)
        fd = open_nofollow(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        self._fh = os.fdopen(fd, "a", encoding="utf-8")
        self._lock = threading.Lock()
        self._dumps = dumps_fast if fast else dumps_line

    def write(self, obj) -> None:
        line = self._dumps(obj) + "\n"
        with self._lock:
            self._fh.write(line)
            self._fh.flush()

    def write_lines(self, lines: list[str]) -> None:
        """Append already-encoded lines (each without its newline) in one write, then flush."""
        text = "\n".join(lines) + "\n"
        with self._lock:
            self._fh.write(text)
            self._fh.flush()

    def close(self) -> None:
        self._fh.close()

    def __enter__(self) -> "JsonlAppender":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class WriterLock:
    """One writer per file or folder: an exclusive ``flock`` on the lock file ``path`` holding the
    writer's pid (never through a symbolic link).

    The kernel drops the lock when its holder dies (even by SIGKILL); a holder that exits normally
    empties the file, so a pid found in a lock file that could be taken belonged to a writer that died
    (``stale_pid``). ``held_by`` is the pid of the writer holding it when :meth:`acquire` raises
    :class:`LockHeld` (a ``BlockingIOError``).

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / ".lock"
    >>> with WriterLock(p) as lock:
    ...     lock.stale_pid is None and p.read_text().strip() == str(os.getpid())
    True
    >>> p.read_text()
    ''
    """

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = Path(path)
        self._fd: int | None = None
        self.stale_pid: str | None = None
        self.held_by = "unknown"

    def acquire(self) -> "WriterLock":
        import fcntl

        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = open_nofollow(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        before = os.read(fd, 64).decode("ascii", "replace").strip()
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            self.held_by = before or "unknown"
            raise LockHeld(errno.EWOULDBLOCK, f"{self.path}: held by pid {self.held_by}") from None
        self.stale_pid = before or None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._fd = fd
        return self

    def release(self) -> None:
        if self._fd is not None:
            os.ftruncate(self._fd, 0)  # a clean exit leaves no pid behind (a pid left means a dead writer)
            os.close(self._fd)  # closing the descriptor drops the flock
            self._fd = None

    def __enter__(self) -> "WriterLock":
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()
