"""URLs as memeval may write them: user-info (``http://user:pass@host``) is a credential, sent and
never written (manifests, records, logs, reports)."""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

__all__ = ["public_url"]


def public_url(spec: str) -> str:
    """``spec`` with any user-info removed from an http(s) URL: what may be written anywhere.

    >>> public_url("http://user:pass@127.0.0.1:8080/v1")
    'http://127.0.0.1:8080/v1'
    >>> public_url("bm25:k=3")
    'bm25:k=3'
    """
    if not spec.startswith(("http://", "https://")):
        return spec
    try:
        parts = urlsplit(spec)
    except ValueError:  # unparseable: keep only what follows the last '@'
        return spec.split("://", 1)[0] + "://" + spec.rpartition("@")[2] if "@" in spec else spec
    return urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))
