"""``mem0``: the open-source ``mem0ai`` ``Memory`` as a memory system (``pip install memeval[mem0]``).

``mem0:llm_url=URL,llm_model=M,embed_model=E[,embed_url=URL][,dims=N][,k=10][,key_env=OPENAI_API_KEY]``

mem0 is configured with an OpenAI-compatible LLM and embedder (any ``/v1`` base URL: vLLM, Ollama,
llama.cpp server, a hosted API, or the loopback stub in tests) and a local Qdrant store in a private
temporary folder; its telemetry is switched off (``MEM0_TELEMETRY=False`` before import) and nothing
is downloaded: the optional spaCy and fastembed helpers mem0 would fetch models for stay unused.
Each session is one ``Memory.add`` for one user (mem0 extracts facts with its LLM); each question is
one ``Memory.search`` (top ``k``). mem0's own model calls go through a counting HTTP client: per
question in the record (``system_calls``, ``system_prompt_tokens``, ``system_completion_tokens``) and
in total, ingest included, in the run manifest (``system_usage``). The API key is read from the
environment variable ``key_env`` and only sent in headers; it is never among the parameters.

The base install never imports ``mem0ai``: this module imports it when a ``Mem0`` is built.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import tempfile
import threading
from typing import Any

import httpx

from ..bench.model import Session
from ..errors import MemevalError
from ..errors import SystemCallError
from .base import BaseMemorySystem, Capabilities, Memory, Recall
from ..text.urls import public_url

__all__ = ["Mem0", "USER_ID"]

#: the one user every session of a haystack belongs to (a bench is one person's history)
USER_ID = "memeval-user"
_USAGE_KEYS = ("llm_calls", "embedding_calls", "prompt_tokens", "completion_tokens")


class _Usage:
    """Counts the model calls made through one ``httpx.Client`` (an event hook reads each reply's
    ``usage``); thread-safe."""

    def __init__(self):
        self._lock = threading.Lock()
        self.total = dict.fromkeys(_USAGE_KEYS, 0)

    def hook(self, response: httpx.Response) -> None:
        path = response.request.url.path
        kind = "llm_calls" if path.endswith("/chat/completions") else "embedding_calls"
        if not path.endswith(("/chat/completions", "/embeddings")):
            return
        response.read()
        try:
            usage = response.json().get("usage") or {}
        except (ValueError, AttributeError):
            usage = {}
        with self._lock:
            self.total[kind] += 1
            for k in ("prompt_tokens", "completion_tokens"):
                v = usage.get(k) if isinstance(usage, dict) else None
                if isinstance(v, int) and not isinstance(v, bool):
                    self.total[k] += v

    def snapshot(self) -> dict[str, int]:
        with self._lock:
            return dict(self.total)


def _import_mem0():
    os.environ["MEM0_TELEMETRY"] = "False"  # before import: mem0 reads it once
    os.environ.setdefault("MEM0_DIR", os.path.join(tempfile.gettempdir(), "memeval-mem0"))  # not ~/.mem0
    try:
        from mem0 import Memory as Mem0Memory  # on use: the optional extra
        from mem0.utils import spacy_models  # on use: the optional extra
    except ImportError as e:
        raise MemevalError(f"system 'mem0' needs the optional extra: pip install 'memeval[mem0]' ({e})") from None
    if importlib.util.find_spec("en_core_web_sm") is None:  # mem0 would download it when spaCy is present
        spacy_models._load_failed_full = spacy_models._load_failed_lemma = True
    return Mem0Memory


def _no_downloads(store) -> None:
    """mem0's Qdrant store loads a fastembed BM25 model (a download) when fastembed is installed:
    mark it as tried and unavailable, so search stays on the run's embedder."""
    if hasattr(store, "_bm25_encoder"):
        store._bm25_encoder = False


class Mem0(BaseMemorySystem):
    """mem0's ``Memory`` behind memeval's in-process protocol (see the module docstring)."""

    capabilities = Capabilities()  # usage() and close() are its own

    def __init__(
        self,
        llm_url: str | None = None,
        llm_model: str | None = None,
        embed_model: str | None = None,
        embed_url: str | None = None,
        dims: int | None = None,
        k: int = 10,
        key_env: str = "OPENAI_API_KEY",
        threshold: float = 0.0,
        timeout: float = 120.0,
    ):
        if not llm_url or not llm_model or not embed_model:
            raise MemevalError("system 'mem0' needs llm_url, llm_model and embed_model (mem0:llm_url=...,...)")
        if k < 1:
            raise MemevalError("system 'mem0': k must be at least 1")
        Mem0Memory = _import_mem0()
        embed_url = embed_url or llm_url
        key = (os.environ.get(key_env) if key_env else None) or "unused"  # OpenAI's client insists on one
        self._usage = _Usage()
        self._http = httpx.Client(timeout=timeout, event_hooks={"response": [self._usage.hook]})
        self._key, self._llm_url, self._embed_url = key, llm_url.rstrip("/"), embed_url.rstrip("/")
        self.k, self.threshold = int(k), float(threshold)
        if dims is None:
            dims = self._probe_dims(embed_model)
        self.name = "mem0"
        from importlib.metadata import version  # on use: the optional extra's version

        self.version = f"mem0ai-{version('mem0ai')}"
        self.params: dict[str, Any] = {
            "llm_url": public_url(self._llm_url),
            "llm_model": llm_model,
            "embed_url": public_url(self._embed_url),
            "embed_model": embed_model,
            "dims": int(dims),
            "k": self.k,
            "threshold": self.threshold,
            "user": USER_ID,
            "vector_store": "qdrant (local, temporary folder)",
        }
        self._dir = tempfile.mkdtemp(prefix="memeval-mem0-")
        config: dict[str, Any] = {
            "llm": {"provider": "openai", "config": {"model": llm_model, "openai_base_url": self._llm_url}},
            "embedder": {"provider": "openai", "config": {"model": embed_model, "openai_base_url": self._embed_url}},
            "vector_store": {
                "provider": "qdrant",
                "config": {
                    "collection_name": "memeval",
                    "path": os.path.join(self._dir, "qdrant"),
                    "embedding_model_dims": int(dims),
                    "on_disk": True,
                },
            },
            "history_db_path": os.path.join(self._dir, "history.db"),
        }
        for part in ("llm", "embedder"):
            config[part]["config"]["api_key"] = key
        try:
            self._m = Mem0Memory.from_config(config)
        except Exception as e:
            shutil.rmtree(self._dir, ignore_errors=True)
            raise MemevalError(f"system 'mem0': cannot build mem0's Memory ({type(e).__name__}: {e})") from None
        self._route_through_counter()

    def _probe_dims(self, model: str) -> int:
        """The embedder's vector size, from one embedding of a fixed text (counted as a call)."""
        try:
            r = self._http.post(
                f"{self._embed_url}/embeddings",
                json={"model": model, "input": ["dimension probe"]},
                headers={"authorization": f"Bearer {self._key}"},
            )
            r.raise_for_status()
            return len(r.json()["data"][0]["embedding"])
        except (httpx.HTTPError, ValueError, KeyError, IndexError, TypeError) as e:
            raise MemevalError(
                f"system 'mem0': cannot read the embedding size from {public_url(self._embed_url)} ({e}); give dims=N"
            ) from None

    def _route_through_counter(self) -> None:
        """Hand mem0's LLM and embedder OpenAI clients that speak through the counting HTTP client (and
        to the run's base URLs, whatever OPENAI_BASE_URL or OPENROUTER_API_KEY say)."""
        from openai import OpenAI  # on use: installed with the optional extra

        # openai's hints name httpx2.Client only; at run time it takes an httpx.Client as well
        self._m.llm.client = OpenAI(
            api_key=self._key,
            base_url=self._llm_url,
            http_client=self._http,  # type: ignore[arg-type]  # an httpx.Client (see above)
        )
        self._m.embedding_model.client = OpenAI(
            api_key=self._key,
            base_url=self._embed_url,
            http_client=self._http,  # type: ignore[arg-type]  # an httpx.Client (see above)
        )
        _no_downloads(self._m.vector_store)

    # -- protocol -------------------------------------------------------------------------------
    def reset(self) -> None:
        try:
            self._m.reset()
        except Exception as e:  # mem0 raises its own types: the run stops with the reason (resumable)
            raise SystemCallError(f"mem0 reset failed ({type(e).__name__}: {e})") from None
        _no_downloads(self._m.vector_store)

    def ingest(self, session: Session) -> None:
        messages = []
        for t in session.turns:
            role = "assistant" if t.speaker.lower() == "assistant" else "user"
            msg = {"role": role, "content": t.text}
            if t.speaker.lower() not in ("user", "assistant"):
                msg["name"] = t.speaker
            messages.append(msg)
        if messages:
            meta = {"session_id": str(session.session_id), "date": session.date}
            when = f"These messages were exchanged on {session.date}; date what you extract by it."
            try:
                self._m.add(messages, user_id=USER_ID, metadata=meta, prompt=when)
            except Exception as e:  # an LLM or embedder down after the OpenAI client's retries
                raise SystemCallError(
                    f"mem0 add of session {session.session_id} failed ({type(e).__name__}: {e})"
                ) from None

    def query(self, question: str, asked_at: str | None) -> Recall:
        before = self._usage.snapshot()
        try:
            found = self._m.search(question, filters={"user_id": USER_ID}, top_k=self.k, threshold=self.threshold)
        except Exception as e:  # an error record with the reason
            raise SystemCallError(f"mem0 search failed ({type(e).__name__}: {e})") from None
        after = self._usage.snapshot()
        out = []
        for r in found.get("results", []) if isinstance(found, dict) else found:
            meta = r.get("metadata") or {}
            out.append(Memory(str(r.get("memory", "")), meta.get("date")))
        used = {k: after[k] - before[k] for k in _USAGE_KEYS}
        return Recall(tuple(out), usage=used)

    def usage(self) -> dict[str, Any]:
        """Every model call mem0 made so far (ingest and queries)."""
        return self._usage.snapshot()

    def close(self) -> None:
        try:
            self._m.close()
        finally:
            self._http.close()
            shutil.rmtree(self._dir, ignore_errors=True)
