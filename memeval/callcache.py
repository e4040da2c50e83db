"""A request-keyed cache of model calls: a reply is asked once, then served from disk.

The key of a call is the SHA-256 of its whole request in canonical JSON (:func:`request_key`): the
kind of call, the endpoint (its public URL: never user-info) and the request body as sent (model,
messages with any image as its bytes, temperature, max_tokens, seed, tools, response_format...),
and a sample index: the n-th identical request a client makes gets the n-th cached reply (an epoch
that repeats a request has a reply of its own, at any temperature, as inspect's cache keys the
epoch; a rerun gets the same replies). The API key travels in a header and is never part of a key or of the file. The value
is the reply's body, byte for byte: a hit returns exactly the bytes the endpoint sent.

Only a successful, complete reply is stored (``llm.ChatClient`` decides: HTTP 200, a readable
completion, not cut at ``max_tokens``, a JSON object where one was asked for); an error, a timeout or
an unreadable reply is never stored, so asking again asks the endpoint again.

Storage: one SQLite file (``calls.sqlite``) in the cache folder, WAL journal, one transaction per
reply, so any number of threads and processes read and write it at once and a killed writer leaves
every committed reply readable (SQLite rolls the unfinished transaction back). Size: at most
``max_bytes`` of replies (default :data:`DEFAULT_MAX_BYTES`), checked when the cache opens and every
256 stores; beyond it the least recently used are deleted (a hit marks its row used at most once a
day, so a warm run does not write on every hit).

>>> c = ModelCache(tmp / "cache")
>>> k = request_key("chat", "http://127.0.0.1:8080/v1", {"model": "m", "messages": [], "temperature": 0})
>>> c.get(k, "judge") is None
True
>>> c.put(k, b'{"choices": []}', "judge", "m")
>>> c.get(k, "judge")
b'{"choices": []}'
>>> c.counts()["hits"], c.counts()["misses"], c.counts()["stored"]
(1, 1, 1)
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any, Iterable, Mapping

from .errors import UsageError
from .workspace import project_root

__all__ = [
    "ModelCache",
    "request_key",
    "resolve_cache",
    "cache_note",
    "DEFAULT_DIR",
    "ENV",
    "FILENAME",
    "DEFAULT_MAX_BYTES",
    "KEY_VERSION",
]

#: the cache folder under the project root unless ``--cache DIR`` or :data:`ENV` says otherwise
DEFAULT_DIR = ".memeval/cache"
#: environment variable: a cache folder, or ``off`` (the commands' default when neither option is given)
ENV = "MEMEVAL_CACHE"
FILENAME = "calls.sqlite"
DEFAULT_MAX_BYTES = 1 << 30  # 1 GiB of replies (a judge's verdict is ~0.5-1 KB: about a million)
#: part of every key: a change to what a key covers starts a new key space (old rows age out)
KEY_VERSION = 1
_TOUCH_EVERY = 86400.0  # seconds: a hit re-marks its row as used at most this often
_PRUNE_EVERY = 256  # stores between two size checks


def request_key(kind: str, endpoint: str, body: Mapping[str, Any], sample: int | None = None) -> str:
    """The cache key of one request: SHA-256 of its canonical JSON (keys sorted, no spaces, numbers
    as JSON writes them, ``temperature`` as a float so ``0`` and ``0.0`` are one key).

    >>> a = request_key("chat", "http://h/v1", {"model": "m", "temperature": 0, "messages": [{"role": "user", "content": "hi"}]})
    >>> a == request_key("chat", "http://h/v1", {"messages": [{"content": "hi", "role": "user"}], "model": "m", "temperature": 0.0})
    True
    >>> a == request_key("chat", "http://h/v1", {"model": "m", "temperature": 0, "messages": []})
    False
    >>> a == request_key("chat", "http://h/v1", {"model": "m", "temperature": 0, "messages": [{"role": "user", "content": "hi"}]}, sample=1)
    False
    """
    norm = dict(body)
    if isinstance(norm.get("temperature"), (int, float)) and not isinstance(norm.get("temperature"), bool):
        norm["temperature"] = float(norm["temperature"])
    canonical = json.dumps(
        {"v": KEY_VERSION, "kind": kind, "endpoint": endpoint, "body": norm, "sample": sample},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
        allow_nan=False,
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


_COUNTS = ("hits", "misses", "stored", "not_stored")


class ModelCache:
    """Replies on disk keyed by :func:`request_key` (see the module docstring); one instance may be
    shared by every client of a command (its counters are the command's)."""

    def __init__(self, folder: str | os.PathLike[str], max_bytes: int = DEFAULT_MAX_BYTES):
        self.folder = Path(folder)
        if self.folder.is_symlink():
            raise UsageError(f"{self.folder}: the model-call cache folder is a symbolic link; give a real folder")
        self.folder.mkdir(parents=True, exist_ok=True)
        self.path = self.folder / FILENAME
        if self.path.is_symlink():
            raise UsageError(f"{self.path}: is a symbolic link; memeval never writes through one (remove it)")
        self.max_bytes = int(max_bytes)
        self._lock = threading.Lock()
        try:
            self._db = sqlite3.connect(self.path, timeout=60, check_same_thread=False, isolation_level=None)
            self._db.execute("PRAGMA busy_timeout = 60000")
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")  # WAL: a commit survives a killed process
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS reply (key TEXT PRIMARY KEY, role TEXT NOT NULL, model TEXT NOT NULL, "
                "body BLOB NOT NULL, size INTEGER NOT NULL, created REAL NOT NULL, used REAL NOT NULL)"
            )
            self._db.execute("CREATE INDEX IF NOT EXISTS reply_used ON reply (used)")
        except sqlite3.Error as e:
            raise UsageError(
                f"{self.path}: not a model-call cache memeval can open ({e}); remove it, or give another --cache DIR"
            ) from None
        self._counts: dict[str, dict[str, int]] = {}
        self._puts = 0
        on_disk = sum(_bytes_of(self.path.with_name(self.path.name + x)) for x in ("", "-wal"))
        if on_disk > self.max_bytes:  # the files hold at least the replies: below the bound, no scan
            self.prune()  # at open too: a string of short commands must keep to the bound as well

    # counting ---------------------------------------------------------------------------------
    def _count(self, role: str, what: str) -> None:
        row = self._counts.setdefault(role, dict.fromkeys(_COUNTS, 0))
        row[what] += 1

    def not_stored(self, role: str) -> None:
        """Count a reply that was asked for and not stored (an incomplete or unreadable one)."""
        with self._lock:
            self._count(role, "not_stored")

    def counts(self) -> dict[str, Any]:
        """Hits, misses, stored and not-stored replies since this instance opened, overall and per role."""
        with self._lock:
            roles = {r: dict(c) for r, c in sorted(self._counts.items())}
        total = {k: sum(c[k] for c in roles.values()) for k in _COUNTS}
        return {**total, "roles": roles}

    # reading and writing ----------------------------------------------------------------------
    def get(self, key: str, role: str = "chat") -> bytes | None:
        """The stored reply of ``key``, counted as one hit or one miss."""
        found = self.lookup([key], role)
        return None if found is None else found[1]

    def lookup(self, keys: Iterable[str], role: str = "chat") -> tuple[str, bytes] | None:
        """The first of ``keys`` that has a stored reply, and the reply; counted as one hit or one miss."""
        now = time.time()
        with self._lock:
            found = None
            for k in list(keys):
                row = self._db.execute("SELECT body, used FROM reply WHERE key = ?", (k,)).fetchone()
                if row is not None:
                    found = (k, bytes(row[0]), row[1])
                    break
            self._count(role, "hits" if found else "misses")
            if found is None:
                return None
            if now - found[2] > _TOUCH_EVERY:
                self._db.execute("UPDATE reply SET used = ? WHERE key = ?", (now, found[0]))
            return found[0], found[1]

    def put(self, key: str, body: bytes, role: str = "chat", model: str = "") -> None:
        """Store one complete reply (the first one stored under a key stays: a hit is always the same bytes)."""
        now = time.time()
        with self._lock:
            self._db.execute(
                "INSERT OR IGNORE INTO reply (key, role, model, body, size, created, used) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (key, role, model, bytes(body), len(body), now, now),
            )
            self._count(role, "stored")
            self._puts += 1
            if self._puts % _PRUNE_EVERY == 0:
                self._prune()

    def size(self) -> int:
        """Bytes of replies stored (the bound :attr:`max_bytes` applies to this)."""
        with self._lock:
            return int(self._db.execute("SELECT COALESCE(SUM(size), 0) FROM reply").fetchone()[0])

    def prune(self) -> int:
        """Delete the least recently used replies until the rest fit :attr:`max_bytes`; return how many."""
        with self._lock:
            return self._prune()

    def _prune(self) -> int:
        total = int(self._db.execute("SELECT COALESCE(SUM(size), 0) FROM reply").fetchone()[0])
        if total <= self.max_bytes:
            return 0
        goal, gone, dropped = total - int(self.max_bytes * 0.9), 0, 0
        self._db.execute("BEGIN IMMEDIATE")
        try:
            for key, size in self._db.execute("SELECT key, size FROM reply ORDER BY used, created").fetchall():
                if gone >= goal:
                    break
                self._db.execute("DELETE FROM reply WHERE key = ?", (key,))
                gone, dropped = gone + size, dropped + 1
            self._db.execute("COMMIT")
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        return dropped

    def close(self) -> None:
        with self._lock:
            self._db.close()


def _bytes_of(path: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:  # a WAL file another process checkpointed away meanwhile
        return 0


def resolve_cache(folder: str | None = None, off: bool = False) -> ModelCache | None:
    """The cache a command uses: none with ``off`` (``--no-cache``); else ``folder`` (``--cache DIR``),
    else the :data:`ENV` variable's folder (``off`` there: none), else :data:`DEFAULT_DIR` under the
    project root (``workspace.project_root``)."""
    if off:
        return None
    if folder is None:
        env = os.environ.get(ENV, "").strip()
        if env.lower() in ("off", "none", "0", "false"):
            return None
        folder = env or str(project_root() / DEFAULT_DIR)
    return ModelCache(folder)


def cache_note(users: Iterable[Any], previous: Mapping[str, Any] | None = None) -> dict[str, Any] | None:
    """What a manifest says about the model-call cache of a command: the folder and the counts of the
    caches of ``users`` (clients, or judges and readers holding one as ``.client``), added to
    ``previous`` (a resumed run's earlier counts). None when no user had a cache.

    >>> cache_note([None]) is None
    True
    """
    caches: list[ModelCache] = []
    for u in users:
        c = getattr(getattr(u, "client", u), "cache", None)
        if isinstance(c, ModelCache) and all(c is not d for d in caches):
            caches.append(c)
    if not caches:
        return None if previous is None else dict(previous)
    out: dict[str, Any] = {"dir": str(caches[0].folder), **dict.fromkeys(_COUNTS, 0), "roles": {}}
    parts = [c.counts() for c in caches] + ([dict(previous)] if previous else [])
    for p in parts:
        for k in _COUNTS:
            out[k] += int(p.get(k) or 0)
        for role, row in (p.get("roles") or {}).items():
            mine = out["roles"].setdefault(role, dict.fromkeys(_COUNTS, 0))
            for k in _COUNTS:
                mine[k] += int(row.get(k) or 0)
    out["roles"] = dict(sorted(out["roles"].items()))
    return out
