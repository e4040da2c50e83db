"""A run folder's manifest (``manifest.json``: checked on read, written atomically), its writer lock
(``.lock``) and its identity (what must match before two runs are compared question by question).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

StrPath = str | os.PathLike[str]

from ..atomic import LinkRefused, WriterLock, dumps_pretty, write_text
from ..bench.io import read_json
from ..errors import InputError, MemevalError
from .manifest import Manifest, migrate

__all__ = [
    "check_manifest",
    "read_manifest",
    "load_manifest",
    "write_manifest",
    "RunLock",
    "LOCK_NAME",
    "run_identity",
]


#: manifest fields summaries read: (path, type)
_MANIFEST_TYPES = (
    ("run_id", str),
    ("status", str),
    ("config", dict),
    ("config.system", dict),
    ("config.system.spec", str),
    ("config.mode", str),
    ("config.bench", dict),
    ("config.bench.name", str),
    ("config.bench.version", str),
    ("config.tiers", list),
    ("config.grader", dict),
)


def check_manifest(obj: Any, path: StrPath) -> dict[str, Any]:
    """``obj`` if it has the fields (and types) a summary reads, else :class:`InputError`."""
    if not isinstance(obj, dict):
        raise InputError(path, None, None, f"expected a JSON object, got {type(obj).__name__}")
    for dotted, typ in _MANIFEST_TYPES:
        v: Any = obj
        for k in dotted.split("."):
            v = v.get(k) if isinstance(v, dict) else None
        if not isinstance(v, typ):
            raise InputError(
                path, None, dotted, "missing" if v is None else f"expected {typ.__name__}, got {type(v).__name__}"
            )
    for i, t in enumerate(obj["config"]["tiers"]):
        if not isinstance(t, dict) or not isinstance(t.get("name"), str):
            raise InputError(path, f"config.tiers[{i}]", "name", "missing or not a string")
        for k in ("n_turns", "n_tokens"):
            if t.get(k) is not None and (not isinstance(t[k], int) or isinstance(t[k], bool) or not 0 <= t[k] < 2**62):
                raise InputError(path, f"config.tiers[{i}]", k, "expected a whole number")
    return obj


def read_manifest(run_dir: StrPath) -> dict[str, Any]:
    """A run's manifest as a JSON object, checked and migrated to the current version
    (:func:`~memeval.run.manifest.migrate`); :func:`load_manifest` gives the typed value."""
    path = Path(run_dir) / "manifest.json"
    if not path.is_file():
        raise InputError(path, None, None, "no run manifest here (is this a run folder?)")
    return migrate(check_manifest(read_json(path), path), path)


def load_manifest(run_dir: StrPath) -> Manifest:
    """A run's manifest as a typed :class:`~memeval.run.manifest.Manifest` (checked and migrated)."""
    return Manifest.from_json(read_manifest(run_dir), Path(run_dir) / "manifest.json")


def write_manifest(run_dir: StrPath, manifest: Manifest) -> None:
    """Write ``manifest.json`` atomically."""
    text = dumps_pretty(manifest.to_json())  # json.dumps(indent=2)'s layout, by orjson (a run's write path is long)
    write_text(Path(run_dir) / "manifest.json", text + "\n")


LOCK_NAME = ".lock"


class RunLock(WriterLock):
    """One writer per run folder: an exclusive ``flock`` on ``RUN/.lock`` holding the writer's pid
    (:class:`memeval.atomic.WriterLock`; never through a symbolic link).

    The kernel drops the lock when its holder dies (even by SIGKILL), so a stale lock file never blocks
    (``stale_pid`` names the dead holder). A second writer is refused with one line naming the
    holder's pid.
    """

    def __init__(self, run_dir: StrPath) -> None:
        super().__init__(Path(run_dir) / LOCK_NAME)

    def acquire(self) -> "RunLock":
        try:
            super().acquire()
        except LinkRefused as e:
            raise MemevalError(e.strerror) from None
        except BlockingIOError:
            raise MemevalError(
                f"{self.path.parent}: another memeval process (pid {self.held_by}) is writing this run "
                "folder; wait for it to finish or use another --out"
            ) from None
        except OSError as e:
            raise MemevalError(f"{self.path.parent}: cannot write a run folder here ({e.strerror or e})") from None
        return self

    def __enter__(self) -> "RunLock":
        return self.acquire()


def run_identity(run_dir: StrPath) -> tuple[dict[str, Any], str, str]:
    """``(config, bench content hash, question set)`` of a run: what must match before two runs'
    records can be compared question by question."""
    m = read_manifest(run_dir)
    c = m.get("config") if isinstance(m, dict) else None
    if not isinstance(c, dict) or not isinstance(c.get("bench"), dict):
        raise InputError(f"{run_dir}/manifest.json", None, "config.bench", "not a run manifest")
    return c, str(c["bench"].get("content_hash")), str(c["question_set"])
