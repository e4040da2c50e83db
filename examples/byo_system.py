"""Bring your own system: a hosted memory API wrapped in memeval's in-process protocol.

    PYTHONPATH=examples memeval run --bench data/lifelog-demo-s1 --system python:byo_system:HostedMemory:url=https://HOST,k=10
    PYTHONPATH=examples memeval serve --system python:byo_system:HostedMemory:url=https://HOST  # the HTTP protocol

The hosted API here (add / search / delete memories per user, bearer key) stands for any such
service; change the three calls to yours. The key is read from $HOSTED_MEMORY_KEY, sent in a header.
Subclassing ``BaseMemorySystem`` gives every optional capability its default; this one declares that
its queries may run in parallel (``--concurrency N``) and releases its connection pool in ``close``.
"""

import os
import uuid

import httpx

from memeval import BaseMemorySystem, Capabilities, Memory, Recall, SystemCallError


class HostedMemory(BaseMemorySystem):
    name, version = "hosted-memory", "1"
    capabilities = Capabilities(concurrent_queries=True)  # httpx.Client is safe across threads

    def __init__(self, url: str, k: int = 10, key_env: str = "HOSTED_MEMORY_KEY"):
        self.params, self.user = {"k": int(k)}, f"memeval-{uuid.uuid4().hex[:12]}"  # one user per run
        auth = {"authorization": f"Bearer {os.environ.get(key_env, '')}"}
        self.http = httpx.Client(base_url=url, headers=auth, timeout=30)

    def _call(self, method: str, path: str, **kw) -> httpx.Response:
        try:
            r = self.http.request(method, path, **kw)
        except httpx.HTTPError as e:
            raise SystemCallError(f"hosted memory API: {type(e).__name__} on {path}") from None
        if r.is_error:  # a SystemCallError is an error record (query) or a clean stop (reset/ingest)
            raise SystemCallError(f"hosted memory API: HTTP {r.status_code} on {path}")
        return r

    def reset(self) -> None:
        self._call("DELETE", "/v1/memories", params={"user_id": self.user})

    def ingest(self, session) -> None:
        msgs = [{"content": t.text, "created_at": t.date, "metadata": {"turn_id": t.turn_id}} for t in session.turns]
        self._call("POST", "/v1/memories", json={"user_id": self.user, "messages": msgs})

    def query(self, question: str, asked_at: str | None) -> Recall:
        body = {"user_id": self.user, "query": question, "limit": self.params["k"]}
        hits = self._call("POST", "/v1/memories/search", json=body).json()["results"]
        memories = tuple(Memory(h["memory"], h.get("created_at")) for h in hits)
        return Recall(memories, tuple(h["metadata"]["turn_id"] for h in hits))

    def close(self) -> None:
        self.http.close()
