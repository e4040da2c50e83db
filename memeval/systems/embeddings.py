"""Text embeddings from any OpenAI-compatible ``/v1/embeddings`` endpoint (vLLM, Ollama, llama.cpp
server, TEI, hosted APIs), batched, retried by the shared policy (``memeval.retry``), and cached on disk
keyed by (model, text hash) so a tier is embedded once.

The API key is read from an environment variable named by the caller and sent only in the
``Authorization`` header; ``identity()`` (what a run's config stores) never contains it.

``encoder=`` replaces the endpoint with an in-process function (texts -> one row per text): the local
embedder (``memeval.models``, ``vector:model=local``) goes through the same batches and cache.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any, Callable, Sequence

import httpx
import numpy as np

from ..retry import Retryable, RetryPolicy, post_attempt
from ..errors import SystemCallError
from ..text.urls import public_url

__all__ = ["EmbeddingClient", "EmbeddingCache", "text_key", "DEFAULT_CACHE"]

#: Where embeddings are cached unless told otherwise (under the project root; ``data/`` is not committed).
DEFAULT_CACHE = "data/cache/embeddings.sqlite"


def text_key(text: str) -> str:
    """The cache key of one text: its SHA-256 (the model is the other half of the key).

    >>> text_key("hello")[:16]
    '2cf24dba5fb0a30e'
    """
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class EmbeddingCache:
    """Vectors on disk in one SQLite file, keyed by (model, text SHA-256); safe across threads and
    processes (WAL, one writer at a time). A row is written only whole, after its batch came back."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, timeout=60, check_same_thread=False)
        with self._lock, self._db:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS embedding (model TEXT NOT NULL, key TEXT NOT NULL, "
                "dim INTEGER NOT NULL, vec BLOB NOT NULL, PRIMARY KEY (model, key))"
            )

    def get(self, model: str, keys: Sequence[str]) -> dict[str, np.ndarray]:
        """The cached vectors among ``keys`` (missing keys are absent from the result)."""
        out: dict[str, np.ndarray] = {}
        uniq = list(dict.fromkeys(keys))
        with self._lock:
            for i in range(0, len(uniq), 500):
                chunk = uniq[i : i + 500]
                rows = self._db.execute(
                    f"SELECT key, vec FROM embedding WHERE model = ? AND key IN ({','.join('?' * len(chunk))})",
                    (model, *chunk),
                ).fetchall()
                out.update((k, np.frombuffer(v, dtype=np.float32)) for k, v in rows)
        return out

    def put(self, model: str, items: dict[str, np.ndarray]) -> None:
        with self._lock, self._db:
            self._db.executemany(
                "INSERT OR IGNORE INTO embedding (model, key, dim, vec) VALUES (?, ?, ?, ?)",
                [(model, k, int(v.shape[0]), np.asarray(v, np.float32).tobytes()) for k, v in items.items()],
            )

    def close(self) -> None:
        self._db.close()


class EmbeddingClient:
    """``EmbeddingClient(base_url, model).embed(texts) -> float32 array (len(texts), dim)``.

    Texts already in ``cache`` are not sent; the rest go in batches of ``batch`` inputs. ``calls``,
    ``texts_sent`` and ``prompt_tokens`` (from the endpoint's ``usage``, where it reports one) count
    what was sent, ``texts_cached`` the distinct texts of a call served from the cache (its hits).
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key_env: str | None = "OPENAI_API_KEY",
        cache: EmbeddingCache | None = None,
        batch: int = 64,
        timeout: float = 60.0,
        max_attempts: int = 4,
        backoff: float = 0.5,
        transport: httpx.BaseTransport | None = None,
        encoder: Callable[[list[str]], np.ndarray] | None = None,
    ):
        self.model, self.cache, self.batch = model, cache, max(1, int(batch))
        self.encoder = encoder
        self.policy = RetryPolicy(max_attempts, backoff)
        headers = {"content-type": "application/json"}
        key = os.environ.get(api_key_env) if api_key_env else None
        if key:
            headers["authorization"] = f"Bearer {key}"
        self._http = (
            None
            if encoder is not None
            else httpx.Client(base_url=base_url.rstrip("/"), headers=headers, timeout=timeout, transport=transport)
        )
        self.base_url = base_url if encoder is not None else public_url(base_url.rstrip("/"))
        self.calls = self.texts_sent = self.prompt_tokens = self.texts_cached = 0
        self._count = threading.Lock()

    def identity(self) -> dict[str, Any]:
        """What a run's config stores about this client: never the key."""
        return {"base_url": self.base_url, "model": self.model}

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """One row per text, in order (raises :class:`SystemCallError` when the endpoint fails for good)."""
        keys = [text_key(t) for t in texts]
        found = self.cache.get(self.model, keys) if self.cache is not None else {}
        if found:
            with self._count:
                self.texts_cached += len(found)
        todo = list(dict.fromkeys((k, t) for k, t in zip(keys, texts) if k not in found))
        for i in range(0, len(todo), self.batch):
            chunk = todo[i : i + self.batch]
            vecs = self._request([t for _, t in chunk])
            fresh = {k: v for (k, _), v in zip(chunk, vecs)}
            if self.cache is not None:
                self.cache.put(self.model, fresh)
            found.update(fresh)
        if not texts:
            return np.zeros((0, 0), np.float32)
        dims = {found[k].shape[0] for k in keys}
        if len(dims) != 1:
            raise SystemCallError(f"embeddings of model {self.model!r} differ in dimension: {sorted(dims)}")
        return np.stack([found[k] for k in keys]).astype(np.float32, copy=False)

    def _request(self, inputs: list[str]) -> list[np.ndarray]:
        if self.encoder is not None:
            matrix = np.asarray(self.encoder(inputs), dtype=np.float32)
            with self._count:
                self.calls += 1
                self.texts_sent += len(inputs)
            return list(matrix)
        body = {"model": self.model, "input": [t if t.strip() else " " for t in inputs]}  # empty input is refused
        try:
            resp = self.policy.call(lambda _n: self._post(body), sleep=time.sleep)
        except Retryable as e:
            raise SystemCallError(
                f"embeddings at {self.base_url}: gave up after {self.policy.max_attempts} attempts ({e.reason})"
            ) from None
        if resp.status_code >= 400:
            raise SystemCallError(f"embeddings at {self.base_url}: HTTP {resp.status_code}: {resp.text[:200]}")
        try:
            data = resp.json()
            rows = sorted(data["data"], key=lambda d: d["index"])
            vecs = [np.asarray(d["embedding"], dtype=np.float32) for d in rows]
        except (ValueError, KeyError, TypeError):
            raise SystemCallError(f"embeddings at {self.base_url}: malformed reply") from None
        per_token = next((v for v in vecs if v.ndim == 2), None)
        if per_token is not None:
            raise SystemCallError(
                f"embeddings at {self.base_url}: model {self.model!r} returned one vector per token "
                f"({per_token.shape[0]} x {per_token.shape[1]} for one input), not one per text: serve a pooled "
                "embedding (llama.cpp: --pooling mean; or memeval models serve --embed)"
            )
        if len(vecs) != len(inputs):
            raise SystemCallError(f"embeddings at {self.base_url}: {len(vecs)} vectors for {len(inputs)} inputs")
        bad = next((i for i, v in enumerate(vecs) if v.ndim != 1 or v.size == 0), None)
        if bad is not None:
            raise SystemCallError(f"embeddings at {self.base_url}: input {bad}'s embedding is not a list of numbers")
        usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
        with self._count:
            self.calls += 1
            self.texts_sent += len(inputs)
            self.prompt_tokens += int(usage.get("prompt_tokens") or 0)
        return vecs

    def _post(self, body: dict) -> httpx.Response:
        """One attempt: 429/5xx and transport errors may be retried, any other reply is returned."""
        assert self._http is not None
        return post_attempt(self._http, "/embeddings", body)

    def close(self) -> None:
        if self._http is not None:
            self._http.close()
