"""``langmem``: LangChain's open-source LangMem memory store manager over a LangGraph
``InMemoryStore``, in process (``pip install 'memeval[langmem]'``).

``langmem:llm_url=URL,llm_model=M,embed_model=E[,embed_url=URL][,k=10][,query_limit=5]
[,max_tokens=1024][,key_env=OPENAI_API_KEY][,timeout=120]``

- ``reset``: a fresh ``InMemoryStore`` (its vector index over memeval's embeddings client;
  ``embed_model=local`` is the local MiniLM in process) and a fresh ``create_memory_store_manager``
  (unstructured string memories, inserts and updates, namespace ``("memories", "memeval")``);
- ``ingest``: one ``manager.invoke({"messages": ...})`` per session: LangMem searches the store for
  related memories (``query_limit`` of them), asks its LLM (tool calls, via trustcall) what to insert
  or update, and writes the result to the store. LangMem has no notion of when a conversation took
  place, so the session's date is the first line of the conversation it reads ("This conversation
  took place on DATE.") and each memory it writes or rewrites is dated by that session here (the
  store's own ``created_at`` is the wall clock);
- ``query``: ``store.search(namespace, query=question, limit=k)`` (cosine over the store's index; no
  score threshold, so ``threshold`` is recorded as None);
- ``memories(haystack)``: every item of the namespace (``store.search`` without a query, paged).

The LLM is LangChain's OpenAI chat model (``BaseChatOpenAI``: ``ChatOpenAI`` renames ``max_tokens``
to ``max_completion_tokens``, which llama.cpp's server ignores) over any OpenAI-compatible ``/v1`` (``max_tokens`` a call,
``timeout``, ``max_attempts`` retries), speaking through a counting HTTP client: its calls and
tokens are in ``usage()`` (ingest and queries) and per question in the record. LangSmith tracing is
switched off before LangChain is imported. Ingest is synchronous: a memory is searchable when
``invoke`` returns.
"""

from __future__ import annotations

import os
import types
from typing import Any

import httpx

from ...bench.model import Session
from ...errors import MemevalError, SystemCallError
from ...text.urls import public_url
from ..base import BaseMemorySystem, Capabilities, Memory, Recall
from ..mem0 import _Usage  # one counter of the model calls made through an httpx client
from ..vector import embedding_client
from . import needs_extra

__all__ = ["LangMem", "NAMESPACE"]

NAMESPACE = ("memories", "memeval")
_PAGE = 100


def _import_langmem() -> types.SimpleNamespace:
    for var in ("LANGCHAIN_TRACING_V2", "LANGSMITH_TRACING"):  # before import: no traces leave the machine
        os.environ[var] = "false"
    try:
        from langchain_openai.chat_models.base import BaseChatOpenAI  # on use: the optional extra
        from langgraph.store.memory import InMemoryStore  # on use: the optional extra
        from langmem import create_memory_store_manager  # on use: the optional extra
    except ImportError as e:
        raise needs_extra("langmem", "langmem", e) from None
    from importlib.metadata import version  # on use: the optional extra's version

    return types.SimpleNamespace(
        ChatOpenAI=BaseChatOpenAI,
        InMemoryStore=InMemoryStore,
        create_memory_store_manager=create_memory_store_manager,
        version=version("langmem"),
    )


class LangMem(BaseMemorySystem):
    """LangMem's memory store manager behind memeval's in-process protocol (see the module docstring)."""

    capabilities = Capabilities()

    def __init__(
        self,
        llm_url: str | None = None,
        llm_model: str | None = None,
        embed_model: str | None = None,
        embed_url: str | None = None,
        k: int = 10,
        query_limit: int = 5,
        max_tokens: int = 1024,
        key_env: str = "OPENAI_API_KEY",
        timeout: float = 120.0,
        max_attempts: int = 3,
        threads: int = 1,
    ):
        if not llm_url or not llm_model or not embed_model:
            raise MemevalError("system 'langmem' needs llm_url, llm_model and embed_model (langmem:llm_url=...,...)")
        if k < 1 or query_limit < 1 or max_tokens < 1 or timeout <= 0:
            raise MemevalError("system 'langmem': k, query_limit and max_tokens must be at least 1, timeout positive")
        if not llm_url.startswith(("http://", "https://")):
            raise MemevalError(f"system 'langmem': llm_url must be http(s)://..., got {public_url(llm_url)!r}")
        self._lm = _import_langmem()
        self.name, self.version = "langmem", f"langmem-{self._lm.version}"
        self.k, self._query_limit = int(k), int(query_limit)
        self._embed = embedding_client(embed_model, embed_url, key_env, "none", 64, "langmem", threads)
        self._usage = _Usage()
        self._http = httpx.Client(timeout=float(timeout), event_hooks={"response": [self._usage.hook]})
        key = (os.environ.get(key_env) if key_env else None) or "unused"  # OpenAI's client insists on one
        self._llm = self._lm.ChatOpenAI(
            model=llm_model,
            base_url=llm_url.rstrip("/"),
            api_key=key,
            temperature=0.0,
            max_tokens=int(max_tokens),
            timeout=float(timeout),
            max_retries=max(0, int(max_attempts) - 1),
            http_client=self._http,
        )
        self._dims: int | None = None
        self.params: dict[str, Any] = {
            "llm_url": public_url(llm_url.rstrip("/")),
            "llm_model": llm_model,
            "embed_url": self._embed.base_url,
            "embed_model": self._embed.model,
            "k": self.k,
            "threshold": None,  # the store's search takes none
            "search": "InMemoryStore.search (cosine)",
            "query_limit": self._query_limit,
            "max_tokens": int(max_tokens),
            "namespace": "/".join(NAMESPACE),
        }
        self._store: Any = None
        self._manager: Any = None
        self._dated: dict[str, str] = {}  # memory key -> the date of the session that last wrote it

    def _vectors(self, texts: Any) -> list[list[float]]:
        return [[float(x) for x in row] for row in self._embed.embed([str(t) for t in texts])]

    # -- protocol -----------------------------------------------------------------------------
    def reset(self) -> None:
        if self._dims is None:
            self._dims = len(self._vectors(["dimension probe"])[0])
        self._store = self._lm.InMemoryStore(index={"dims": self._dims, "embed": self._vectors})
        self._manager = self._lm.create_memory_store_manager(
            self._llm, namespace=NAMESPACE, store=self._store, query_limit=self._query_limit
        )
        self._dated = {}

    def ingest(self, session: Session) -> None:
        if not session.turns:
            return
        manager = self._need("ingest")
        messages = [{"role": "system", "content": f"This conversation took place on {session.date}."}]
        for t in session.turns:
            messages.append({"role": "assistant" if t.speaker.lower() == "assistant" else "user", "content": t.text})
        try:
            written = manager.invoke({"messages": messages})
        except MemevalError:
            raise
        except Exception as e:  # langchain, openai and trustcall raise their own types: one line
            raise SystemCallError(
                f"langmem ingest of session {session.session_id} failed ({type(e).__name__}: {str(e)[:300]})"
            ) from None
        for put in written or ():
            key = put.get("key") if isinstance(put, dict) else None
            if isinstance(key, str):
                self._dated[key] = session.date

    def query(self, question: str, asked_at: str | None) -> Recall:
        self._need("query")
        store = self._store
        before = self._usage.snapshot()
        embed_before = self._embed.calls
        try:
            items = store.search(NAMESPACE, query=question, limit=self.k)
        except MemevalError:
            raise
        except Exception as e:
            raise SystemCallError(f"langmem search failed ({type(e).__name__}: {str(e)[:300]})") from None
        after = self._usage.snapshot()
        used = {k: after[k] - before[k] for k in after}
        used["embedding_calls"] += self._embed.calls - embed_before
        return Recall(tuple(self._memory(i) for i in items[: self.k]), usage=used)

    def memories(self, haystack: str) -> list[Memory]:
        """Every memory in the namespace, as LangMem keeps it."""
        self._need("memories")
        store = self._store
        out, offset = [], 0
        while True:
            page = store.search(NAMESPACE, limit=_PAGE, offset=offset)
            out += [self._memory(i) for i in page]
            if len(page) < _PAGE:
                return out
            offset += _PAGE

    def usage(self) -> dict[str, int]:
        """LangMem's model calls so far (ingest and queries): chat through the counting client,
        embeddings through memeval's embeddings client."""
        used = self._usage.snapshot()
        used["embedding_calls"] += self._embed.calls
        return used

    def close(self) -> None:
        try:
            self._embed.close()
        finally:
            self._http.close()

    def _need(self, what: str) -> Any:
        if self._manager is None:
            raise SystemCallError(f"langmem {what}: no store (reset was not called)")
        return self._manager

    def _memory(self, item: Any) -> Memory:
        value = item.value if isinstance(item.value, dict) else {}
        content = value.get("content")
        text = content.get("content") if isinstance(content, dict) else content
        return Memory(text if isinstance(text, str) else str(content), self._dated.get(item.key))
