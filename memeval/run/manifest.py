"""A run folder's ``manifest.json`` as a typed, versioned value (inspect's ``EvalLog`` is the model).

The runner and the regrade build a :class:`Manifest` by keyword, so a misspelled field fails where it
is written; reading checks the fields summaries need (``run.folder.check_manifest``) and migrates a
manifest written by an older memeval to the current version (:func:`migrate`), so every reader sees
one shape. A manifest from a newer memeval (a higher ``manifest_version``) is refused with one line.

Versions: 1, every manifest written before the field existed (no ``manifest_version``); 2, this one:
``manifest_version`` set, ``config.question_set``, ``resumed_at`` and ``network_floor_ms`` always present.
"""

from __future__ import annotations

import difflib
import os
from dataclasses import dataclass, field, fields, replace
from types import MappingProxyType
from typing import Any, Mapping

from ..errors import InputError, SchemaError

__all__ = ["Manifest", "MANIFEST_VERSION", "MANIFEST_FIELDS", "migrate"]

#: the version this memeval writes (and the highest it reads)
MANIFEST_VERSION = 2


@dataclass(frozen=True, kw_only=True)
class Manifest:
    """What a run folder says about its run: its configuration (hashed into ``config_id``), its status
    and what it measured outside the records. Fields left None are not written.

    >>> m = Manifest(run_id="r", config_id="abc", config={"mode": "dry"}, status="complete")
    >>> m.to_json()["manifest_version"], "error" in m.to_json()
    (2, False)
    >>> Manifest.of({"run_id": "r", "config": {}, "stauts": "complete"})
    Traceback (most recent call last):
    ...
    memeval.errors.SchemaError: manifest field 'stauts' does not exist; did you mean 'status'?
    """

    manifest_version: int = MANIFEST_VERSION
    run_id: str
    config_id: str | None = None
    config: dict[str, Any]  # run.setup.config_snapshot: system, bench, tiers, mode, grader, ...
    memeval_version: str | None = None
    host: dict[str, Any] | None = None
    created_at: str | None = None
    resumed_at: list[str] = field(default_factory=list)
    #: started | complete | complete_with_errors | failed (run.status) | cancelled | error (stopped)
    status: str = "started"
    error: str | None = None
    status_reasons: list[str] | None = None  # why a finished run failed (run.status.run_status)
    max_errors: str | None = None  # the error budget the status was judged by (--max-errors)
    finished_at: str | None = None
    n_records: int | None = None
    n_errors: int | None = None  # of the records that count, how many are errors
    #: the median no-op round trip before and after the questions (None in process)
    network_floor_ms: dict[str, float | None] = field(default_factory=lambda: {"before": None, "after": None})
    dry_validity: dict[str, Any] | None = None  # audit.validity: may dry answer scores be read here?
    scorers: list[dict[str, Any]] | None = None  # each scorer's spec: what wrote each graded field
    prices: dict[str, Any] | None = None  # the price table cost_usd was computed from
    system_usage: dict[str, Any] | None = None  # the system's own model calls (e.g. mem0's)
    ingest_usage: dict[str, Any] | None = None  # model calls a system made while ingesting, per haystack
    regraded_from: dict[str, Any] | None = None  # a regrade: the source run
    #: how haystacks were fenced and verified on the system (HTTP: generation, stats), with one line
    memory_state: dict[str, Any] | None = None
    #: a judge-graded run: questions asked, graded, unparseable replies, failed calls (run.grading)
    grading: dict[str, Any] | None = None
    #: the model-call cache of the reader's and judge's calls: folder, hits, misses, replies stored and
    #: not stored (incomplete), overall and per role (``callcache.cache_note``); None: no cache
    model_cache: dict[str, Any] | None = None
    #: the write path per haystack (run.writepath): ingest time, the system's own calls while ingesting,
    #: and for a system that indexes asynchronously the time until the newest session was searchable
    write_path: dict[str, Any] | None = None
    #: the causal guard over the records: questions that retrieved a memory dated after them
    causal: dict[str, Any] | None = None
    #: ``memeval attribute``: where each miss broke (analysis.attribution): conditions, counts and shares
    attribution: dict[str, Any] | None = None
    #: fields a newer memeval wrote that this one does not know: kept and written back unchanged
    extra: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}), compare=False)

    @classmethod
    def of(cls, values: Mapping[str, Any]) -> Manifest:
        """The manifest of ``values``, every key a manifest field (else :class:`SchemaError`)."""
        unknown = [k for k in values if k not in _FIELD_SET or k == "extra"]
        if unknown:
            near = difflib.get_close_matches(str(unknown[0]), MANIFEST_FIELDS, 1, 0.7)
            hint = f"; did you mean {near[0]!r}?" if near else f" (fields: {', '.join(MANIFEST_FIELDS)})"
            raise SchemaError(f"manifest field {unknown[0]!r} does not exist{hint}")
        return cls(**values)

    @classmethod
    def from_json(cls, obj: Mapping[str, Any], path: str | os.PathLike[str] = "manifest.json") -> Manifest:
        """The manifest of a checked JSON object, migrated to the current version; unknown keys go to
        ``extra``."""
        cur = migrate(obj, path)
        known = {k: v for k, v in cur.items() if k in _FIELD_SET and k != "extra"}
        return cls(**known, extra=MappingProxyType({k: v for k, v in cur.items() if k not in _FIELD_SET}))

    def to_json(self) -> dict[str, Any]:
        """The JSON object written to ``manifest.json`` (fields in order; None left out)."""
        out = {k: getattr(self, k) for k in MANIFEST_FIELDS if getattr(self, k) is not None}
        return out | dict(self.extra)

    def derived(self, run_id: str, created_at: str, memeval_version: str, **changes: Any) -> Manifest:
        """A new run's manifest made from this (source) run's, as ``regrade`` and ``attribute`` write it:
        a new identity, started, nothing finished, no model-cache note of the source's calls, and
        ``changes`` on top.

        >>> m = Manifest(run_id="a", config={}, status="complete", finished_at="t1", model_cache={"hits": 3})
        >>> d = m.derived("b", "t2", "9.9", n_records=None)
        >>> (d.run_id, d.status, d.finished_at, d.model_cache, d.created_at)
        ('b', 'started', None, None, 't2')
        """
        return replace(
            self,
            run_id=run_id,
            memeval_version=memeval_version,
            created_at=created_at,
            resumed_at=[],
            status="started",
            error=None,
            finished_at=None,
            model_cache=None,  # the source's calls are not this command's (set when it ends)
            **changes,
        )


#: every field of :class:`Manifest` written to the file, in file order
MANIFEST_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(Manifest) if f.name != "extra")
_FIELD_SET = frozenset((*MANIFEST_FIELDS, "extra"))


def migrate(obj: Mapping[str, Any], path: str | os.PathLike[str] = "manifest.json") -> dict[str, Any]:
    """``obj`` (a manifest as read) in the current version's shape: the one place older run folders
    are brought up to date, so no reader defaults a missing field itself.

    >>> old = {"run_id": "r", "config": {"mode": "dry"}, "status": "complete"}
    >>> new = migrate(old)
    >>> new["manifest_version"], new["config"]["question_set"], new["resumed_at"], new["network_floor_ms"]
    (2, 'main', [], {'before': None, 'after': None})
    >>> migrate({**old, "manifest_version": 9}, "run/manifest.json")
    Traceback (most recent call last):
    ...
    memeval.errors.InputError: run/manifest.json: field 'manifest_version': 9 is newer than this memeval reads (2); upgrade memeval
    """
    version = obj.get("manifest_version", 1)
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise InputError(path, None, "manifest_version", f"expected a whole number from 1, got {version!r}")
    if version > MANIFEST_VERSION:
        raise InputError(
            path,
            None,
            "manifest_version",
            f"{version} is newer than this memeval reads ({MANIFEST_VERSION}); upgrade memeval",
        )
    out = dict(obj)
    if version < 2:  # written before the manifest was versioned: fill what readers used to default
        config = dict(out.get("config") or {})
        config.setdefault("question_set", "main")
        out["config"] = config
        out.setdefault("resumed_at", [])
        if out.get("network_floor_ms") is None:
            out["network_floor_ms"] = {"before": None, "after": None}
    out["manifest_version"] = MANIFEST_VERSION
    return out
