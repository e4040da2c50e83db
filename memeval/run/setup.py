"""What a run settles before its first question: the config snapshot and its id, the bench check
(``verify_bench``), and the manifest opened new or resumed."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import platform
from dataclasses import replace
from pathlib import Path

from .._version import __version__
from ..bench.io import MANIFEST, hash_files
from ..errors import InputError, MemevalError
from ..systems.registry import public_spec
from .folder import load_manifest
from .manifest import Manifest

__all__ = ["config_snapshot", "config_id", "verify_bench", "open_manifest", "now"]


def config_snapshot(cfg, bench, system, tiers, grader: dict) -> dict:
    """The run's configuration as the manifest stores it (``config_id`` hashes it)."""
    return {
        "system": {
            "spec": public_spec(cfg.system),
            "name": system.name,
            "version": system.version,
            "params": dict(system.params),
        },
        "bench": {
            "name": bench.name,
            "version": bench.version,
            "content_hash": bench.content_hash,
            "root": str(Path(bench.root).resolve()),
        },
        "tiers": [
            {
                "name": t.name,
                "n_turns": t.n_turns,
                "n_tokens": t.n_tokens,
                "n_sessions": t.n_sessions,
                "n_questions": t.n_questions,
            }
            for t in tiers
        ],
        "question_set": cfg.question_set,
        "mode": cfg.mode,
        "epochs": cfg.epochs,
        "grader": grader,
        "speed": {"target_ms": cfg.target_ms, "budget_ms": cfg.budget_ms},
        "seeds": {"epochs": list(range(cfg.epochs))},
    } | ({"context_max_tokens": cfg.context_max_tokens} if cfg.context_max_tokens is not None else {})


def config_id(snapshot: dict) -> str:
    stable = {k: v for k, v in snapshot.items() if k != "bench"} | {
        "bench": {k: v for k, v in snapshot["bench"].items() if k not in ("root", "files_hash")}
    }
    return hashlib.sha256(json.dumps(stable, sort_keys=True).encode()).hexdigest()[:10]


def now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="milliseconds")


def _host() -> dict:
    import os

    return {
        "node": platform.node(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
    }


def _has_content(path: Path) -> bool:
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 16), b""):
            if chunk.strip():
                return True
    return False


def verify_bench(bench, tiers, question_set: str = "main", verify: bool = True) -> str:
    """Check a bench before anything is asked and return the hash of the files this run reads.

    With ``verify``, the manifest's ``content_hash`` must match the files (the cheap half of
    ``memeval audit``). Always: every chosen tier has a non-empty turns file and questions file.
    """
    root = Path(bench.root)
    if verify and bench.content_hash:
        actual = hash_files(root, dict.fromkeys(f for t in bench.tiers for f in t.files))
        if actual != bench.content_hash:
            raise InputError(
                root / MANIFEST,
                None,
                "content_hash",
                f"{bench.content_hash} does not match the bench files ({actual}): they changed after "
                "the bench was written (see `memeval audit`; --no-verify runs it anyway)",
            )
    read = []
    for t in tiers:
        for name in (t.turns_file, t.questions_path(question_set)):
            if not _has_content(root / name):
                raise InputError(root / name, None, None, f"empty file: tier {t.name!r} needs turns and questions")
            read.append(name)
    return hash_files(root, dict.fromkeys(read))


def open_manifest(run_dir: Path, snapshot: dict, cid: str) -> Manifest:
    """A new manifest, or the existing one when this is the same run (same config, same bench files)."""
    if not (run_dir / "manifest.json").exists():
        return Manifest(
            run_id=run_dir.name,
            config_id=cid,
            config=snapshot,
            memeval_version=__version__,
            host=_host(),
            created_at=now(),
        )
    old = load_manifest(run_dir)
    if old.config_id != cid:
        raise MemevalError(f"{run_dir}: holds a different run (config {old.config_id} != {cid}); use another --out")
    bench = old.config.get("bench")
    was = bench.get("files_hash") if isinstance(bench, dict) else None
    files = snapshot["bench"]["files_hash"]
    if was is not None and was != files:
        raise MemevalError(
            f"{run_dir}: the bench files changed since this run started ({was} != {files}); "
            "its records were scored against the old files: use another --out"
        )
    return replace(old, resumed_at=[*old.resumed_at, now()])
