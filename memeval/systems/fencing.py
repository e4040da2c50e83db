"""Fenced haystacks (memory-api.md): what client and server must compute alike.

``POST /reset`` returns ``{"generation": G}``; every ``/sessions`` and ``/query`` carries ``G`` in the
:data:`GENERATION_HEADER`; a server refuses (409) and never applies a request whose generation is no
longer current. After ingest the harness compares ``GET /stats?generation=G`` →
``{"generation": G, "sessions": n, "digest": D}`` with what it sent: ``n`` sessions stored once each,
``D`` = :func:`haystack_digest` of the SHA-256 of each stored ``POST /sessions`` body, as sent.

A ``/reset`` carries an ``Idempotency-Key`` too (a fresh one per reset, the same on its retries): a
server that keeps it applies a key once, so an attempt that lands after its retry is a no-op
returning the same generation instead of emptying the memory mid-tier.

>>> a, b = session_digest(b'{"session_id": 1}'), session_digest(b'{"session_id": 2}')
>>> haystack_digest([a, b]) == haystack_digest([b, a]) != haystack_digest([a])
True
>>> haystack_digest([])[:7]
'sha256:'
"""

from __future__ import annotations

import hashlib
from typing import Iterable

__all__ = ["GENERATION_HEADER", "session_digest", "haystack_digest"]

#: the request header carrying the generation a ``/sessions`` or ``/query`` belongs to
GENERATION_HEADER = "Memory-Generation"


def session_digest(body: bytes) -> str:
    """The hex SHA-256 of one ``POST /sessions`` body, exactly as sent."""
    return hashlib.sha256(body).hexdigest()


def haystack_digest(session_digests: Iterable[str]) -> str:
    """``sha256:`` + the SHA-256 of the sorted session digests, one per line (order-free: a server may
    store concurrently; the count catches a session stored twice)."""
    return "sha256:" + hashlib.sha256("\n".join(sorted(session_digests)).encode("ascii")).hexdigest()
