"""Shared by the loaders and padding: staged (all-or-nothing) output folders, tier statistics, and
error context for one record of a source file."""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

from ...atomic import DIR_MODE
from ...errors import InputError, MemevalError
from ..model import Tier, Turn
from ..tokens import TokenMemo, count_tokens

#: session texts held for one bulk token count (``TierCounter.add_sessions``), in characters
PENDING_CHARS = 1 << 20

__all__ = ["staged_output", "clean_stale", "TierCounter", "copy_source", "SourceRecord"]


class SourceRecord:
    """One record of a source file, for errors: ``InputError(file, "17 (question_id 'q9')", field, msg)``."""

    def __init__(self, path, index: int, obj: Any, id_key: str):
        rid = obj.get(id_key) if isinstance(obj, dict) else None
        self.path = path
        ok = isinstance(rid, (str, int)) and not isinstance(rid, bool)
        self.label = f"{index} ({id_key} {rid!r})" if ok else f"{index}"

    def err(self, field: str | None, msg: str) -> InputError:
        return InputError(self.path, self.label, field, msg)

    def get(self, obj: dict, key: str, typ, field: str | None = None):
        """``obj[key]``, which must be present and of ``typ`` (bools are not ints); ``field`` names it in errors."""
        field = field or key
        if key not in obj:
            raise self.err(field, "missing")
        v = obj[key]
        if not isinstance(v, typ) or isinstance(v, bool):
            want = typ.__name__ if isinstance(typ, type) else " or ".join(t.__name__ for t in typ)
            raise self.err(field, f"expected {want}, got {type(v).__name__}")
        return v


def _pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return pid < 2**31  # another user's live process (or a pid no process can have)
    return True


def clean_stale(out) -> list[Path]:
    """Remove what killed writers left beside ``out``: ``.OUT.<pid>.*.partial`` staging folders and
    ``.OUT.<pid>.old`` folders whose process is gone (and pid-less ``.OUT.*.partial`` ones written by
    versions that did not record the pid). Folders of a live writer are left alone. Returns the removed."""
    out = Path(out)
    if not out.parent.is_dir():
        return []
    name = re.escape(out.name)
    pat = re.compile(rf"\.{name}\.(?:(\d+)\.)?[A-Za-z0-9_]+\.partial|\.{name}\.(\d+)\.old")
    removed = []
    for p in out.parent.iterdir():
        m = pat.fullmatch(p.name)
        if not m or not p.is_dir() or p.is_symlink():
            continue
        pid = m.group(1) or m.group(2)
        if pid is None or not _pid_alive(int(pid)):
            shutil.rmtree(p, ignore_errors=True)
            removed.append(p)
    return removed


@contextmanager
def staged_output(out, force: bool = False) -> Iterator[Path]:
    """Yield a temporary folder beside ``out``; on success it replaces ``out`` in one rename.

    A failure (any exception) removes the temporary folder, so a bench folder is either complete
    or absent; what a killed (SIGKILL) writer left is removed by the next call for the same ``out``.
    An existing non-empty ``out`` is refused unless ``force``.
    """
    out = Path(out)
    clean_stale(out)
    if out.exists() and not out.is_dir():
        raise MemevalError(f"{out}: exists and is not a folder")
    if out.is_dir() and any(out.iterdir()) and not force:
        raise MemevalError(f"{out}: folder exists and is not empty (use --force to replace it)")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.{os.getpid()}.", suffix=".partial", dir=out.parent))
    os.chmod(tmp, DIR_MODE)  # the bench folder it becomes is an ordinary folder
    try:
        yield tmp
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    old = None
    if out.exists():
        old = out.with_name(f".{out.name}.{os.getpid()}.old")
        os.replace(out, old)
    os.replace(tmp, out)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def copy_source(src, dst) -> None:
    """Copy ``src``'s bytes to ``dst`` (a new file, never a link: editing the bench folder's file must
    not edit the published original, nor the bench a padded bench was made from)."""
    dst = Path(dst)
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, dst)


class TierCounter:
    """Counts turns, sessions (per haystack) and tokens as turns stream past."""

    def __init__(self, memo: TokenMemo | None = None) -> None:
        """``memo``: token counts shared with other counters (tiers that repeat each other's turns)."""
        self.n_turns = self.n_sessions = self.n_tokens = 0
        self._last: tuple | None = None
        self._memo = memo if memo is not None else TokenMemo()
        self._pending: list[str] = []  # session texts whose tokens are not counted yet (add_sessions)
        self._pending_chars = 0

    def add(self, turn: Turn) -> Turn:
        self.n_turns += 1
        self.n_tokens += count_tokens(turn.text)
        key = (turn.haystack, turn.session_id)
        if key != self._last:
            self.n_sessions += 1
            self._last = key
        return turn

    def add_all(self, turns: Iterable[Turn]) -> "TierCounter":
        """Count many turns at once: each distinct text's tokens counted once, in bulk."""
        turns = list(turns)
        self.n_tokens += sum(self._memo.counts([t.text for t in turns]))
        self.n_turns += len(turns)
        last = self._last
        for t in turns:
            key = (t.haystack, t.session_id)
            if key != last:
                self.n_sessions += 1
                last = key
        self._last = last
        return self

    def add_sessions(self, texts: Sequence[str], n_turns: int) -> "TierCounter":
        """Count ``n_turns`` turns in ``len(texts)`` new sessions, each given as one text: its turns'
        texts joined by spaces (a space ends a word run, so the tokens are the sum of its turns').
        Tokens are counted in batches of about a million characters (a session seen before: once)."""
        self.n_turns += n_turns
        self.n_sessions += len(texts)
        self._last = None
        self._pending.extend(texts)
        self._pending_chars += sum(map(len, texts))
        if self._pending_chars >= PENDING_CHARS:
            self._flush()
        return self

    def _flush(self) -> None:
        if self._pending:
            self.n_tokens += sum(self._memo.counts(self._pending))
            self._pending, self._pending_chars = [], 0

    def tier(self, name: str, turns_file: str, questions_file: str, n_questions: int) -> Tier:
        self._flush()
        return Tier(
            name=name,
            turns_file=turns_file,
            questions_file=questions_file,
            n_turns=self.n_turns,
            n_sessions=self.n_sessions,
            n_tokens=self.n_tokens,
            n_questions=n_questions,
        )
