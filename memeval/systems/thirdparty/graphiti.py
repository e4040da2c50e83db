"""``graphiti``: Zep's open-source temporal knowledge graph, ``graphiti-core``, on its embedded Kuzu
driver, in process (``pip install 'memeval[graphiti]'``).

``graphiti:llm_url=URL,llm_model=M,embed_model=E[,embed_url=URL][,k=10][,threshold=0.6]
[,schema_form=json_schema|json_object][,max_tokens=1024][,key_env=OPENAI_API_KEY][,timeout=120]``

- ``reset``: a fresh Kuzu database in a private temporary folder (the one before is deleted), its
  full-text indexes built; every episode goes to Graphiti's default group (graphiti-core 0.31's Kuzu
  driver cannot take a named group: ``add_episode`` reads a database name it does not have);
- ``ingest``: one ``add_episode`` per session (``source=message``, the turns as ``speaker: text``
  lines), ``reference_time`` the session's date (a session whose date does not read as one is one
  line, never ingested undated); Graphiti extracts entities and dated facts with its LLM;
- ``query``: ``search_`` with Graphiti's edge recipe ``EDGE_HYBRID_SEARCH_RRF`` (BM25 + cosine,
  reciprocal-rank fusion), ``limit=k`` and the cosine floor ``sim_min_score=threshold`` (Graphiti's
  default 0.6), both recorded in ``params``; each fact is a memory dated by its ``valid_at``
  (bench time, from the episode's reference time), never by ``created_at`` (the wall clock);
- ``memories(haystack)``: every fact (entity edge) of the group, then every episode, oldest first.

Graphiti's model calls go through this module's own clients, not its OpenAI ones: the LLM over any
OpenAI-compatible ``/chat/completions`` (``max_tokens`` a call, ``timeout`` in total, retried on
429/5xx by ``memeval.retry``), asking for each reply as a JSON object of Graphiti's schema
(``schema_form=json_schema``: OpenAI's form; ``json_object``: the ``{"type": "json_object",
"schema"}`` form llama.cpp's server takes); the embedder is memeval's (``embed_model=local`` is the
local MiniLM in process). A reply that is not a JSON object of the asked schema is counted
(``llm_unparseable`` in ``usage``) and Graphiti is given the empty instance of the schema (nothing
extracted), so a weak model stores less rather than stopping the run. The search's cross-encoder
is never called by this recipe; the one given refuses to be. Telemetry is off
(``GRAPHITI_TELEMETRY_ENABLED=false`` before import). Ingest is synchronous: a fact is searchable
when ``add_episode`` returns.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import tempfile
import threading
import types
import typing
from datetime import datetime, timezone
from typing import Any

import httpx

from ...bench.model import Session
from ...errors import MemevalError, SystemCallError
from ...retry import Retryable, RetryPolicy, retry_after
from ...text.urls import public_url
from ..base import BaseMemorySystem, Capabilities, Memory, Recall
from ..vector import embedding_client
from . import iso_datetime, needs_extra

__all__ = ["Graphiti", "GROUP", "empty_instance"]

GROUP = ""  # graphiti's default group on Kuzu (``helpers.get_default_group_id``): one graph per haystack
_USAGE = ("llm_calls", "llm_unparseable", "prompt_tokens", "completion_tokens", "embedding_calls")


def _import_graphiti() -> types.SimpleNamespace:
    os.environ["GRAPHITI_TELEMETRY_ENABLED"] = "false"  # before import: graphiti reads it at start-up
    try:
        import kuzu  # noqa: F401  # on use: the optional extra (graphiti's Kuzu driver needs it)
        from graphiti_core import Graphiti as _Graphiti  # on use: the optional extra
        from graphiti_core.cross_encoder.client import CrossEncoderClient  # on use: the optional extra
        from graphiti_core.driver.kuzu_driver import KuzuDriver  # on use: the optional extra
        from graphiti_core.edges import EntityEdge  # on use: the optional extra
        from graphiti_core.embedder.client import EmbedderClient  # on use: the optional extra
        from graphiti_core.errors import GroupsEdgesNotFoundError  # on use: the optional extra
        from graphiti_core.llm_client.client import LLMClient  # on use: the optional extra
        from graphiti_core.llm_client.config import LLMConfig  # on use: the optional extra
        from graphiti_core.nodes import EpisodeType, EpisodicNode  # on use: the optional extra
        from graphiti_core.search.search_config_recipes import EDGE_HYBRID_SEARCH_RRF  # on use: the optional extra
    except ImportError as e:
        raise needs_extra("graphiti", "graphiti", e) from None
    from importlib.metadata import version  # on use: the optional extra's version

    return types.SimpleNamespace(
        Graphiti=_Graphiti,
        CrossEncoderClient=CrossEncoderClient,
        KuzuDriver=KuzuDriver,
        EntityEdge=EntityEdge,
        EmbedderClient=EmbedderClient,
        GroupsEdgesNotFoundError=GroupsEdgesNotFoundError,
        LLMClient=LLMClient,
        LLMConfig=LLMConfig,
        EpisodeType=EpisodeType,
        EpisodicNode=EpisodicNode,
        EDGE_HYBRID_SEARCH_RRF=EDGE_HYBRID_SEARCH_RRF,
        version=version("graphiti-core"),
    )


def empty_instance(model: Any) -> dict[str, Any]:
    """The smallest valid instance of a pydantic model, as a dict: each required field empty (``[]``,
    ``""``, ``0``, ``False``, ``{}``, None where allowed, a nested model's own empty instance).

    >>> from pydantic import create_model
    >>> Entity = create_model("Entity", name=(str, ...), type_id=(int, ...))
    >>> Extracted = create_model("Extracted", entities=(list[Entity], ...), note=(str | None, None), first=(Entity, ...))
    >>> empty_instance(Extracted)
    {'entities': [], 'first': {'name': '', 'type_id': 0}}
    """
    out: dict[str, Any] = {}
    for name, field in model.model_fields.items():
        if field.is_required():
            out[name] = _empty(field.annotation)
    return out


def _empty(t: Any) -> Any:
    origin, args = typing.get_origin(t), typing.get_args(t)
    if origin in (typing.Union, types.UnionType):
        return None if type(None) in args else _empty(args[0])
    if origin is typing.Literal:
        return args[0]
    if origin in (list, tuple, set, frozenset) or t in (list, tuple, set):
        return []
    if origin is dict or t is dict:
        return {}
    if isinstance(t, type) and hasattr(t, "model_fields"):
        return empty_instance(t)
    return {str: "", int: 0, float: 0.0, bool: False}.get(t)


def _json_object(text: str) -> dict[str, Any] | None:
    """The reply's JSON object (a fenced block allowed), else None."""
    s = text.strip()
    if s.startswith("```"):
        s = s.strip("`").partition("\n")[2] if "\n" in s else s.strip("`")
    try:
        data = json.loads(s)
    except (ValueError, RecursionError):
        start, end = s.find("{"), s.rfind("}")
        if start < 0 or end <= start:
            return None
        try:
            data = json.loads(s[start : end + 1])
        except (ValueError, RecursionError):
            return None
    return data if isinstance(data, dict) else None


class _Counter:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.total = dict.fromkeys(_USAGE, 0)

    def add(self, **kv: int) -> None:
        with self._lock:
            for k, v in kv.items():
                self.total[k] += v

    def snapshot(self) -> dict[str, int]:
        with self._lock:
            return dict(self.total)


class Graphiti(BaseMemorySystem):
    """graphiti-core on Kuzu behind memeval's in-process protocol (see the module docstring)."""

    capabilities = Capabilities()  # one event loop, one question at a time

    def __init__(
        self,
        llm_url: str | None = None,
        llm_model: str | None = None,
        embed_model: str | None = None,
        embed_url: str | None = None,
        k: int = 10,
        threshold: float = 0.6,
        schema_form: str = "json_schema",
        max_tokens: int = 1024,
        key_env: str = "OPENAI_API_KEY",
        timeout: float = 120.0,
        max_attempts: int = 3,
        threads: int = 1,
        coroutines: int | None = None,
    ):
        if not llm_url or not llm_model or not embed_model:
            raise MemevalError("system 'graphiti' needs llm_url, llm_model and embed_model (graphiti:llm_url=...,...)")
        if k < 1 or max_tokens < 1 or timeout <= 0:
            raise MemevalError("system 'graphiti': k and max_tokens must be at least 1, timeout positive")
        if schema_form not in ("json_schema", "json_object"):
            raise MemevalError(
                f"system 'graphiti': schema_form must be json_schema or json_object, got {schema_form!r}"
            )
        if not llm_url.startswith(("http://", "https://")):
            raise MemevalError(f"system 'graphiti': llm_url must be http(s)://..., got {public_url(llm_url)!r}")
        self._g = _import_graphiti()
        self.name, self.version = "graphiti", f"graphiti-core-{self._g.version}"
        self.k, self.threshold = int(k), float(threshold)
        self._usage = _Counter()
        self._embed = embedding_client(embed_model, embed_url, key_env, "none", 64, "graphiti", threads)
        key = os.environ.get(key_env) if key_env else None
        self._llm = _make_llm(self._g, llm_url.rstrip("/"), llm_model, key, schema_form, int(max_tokens),
                              float(timeout), int(max_attempts), self._usage)  # fmt: skip
        self.params: dict[str, Any] = {
            "llm_url": public_url(llm_url.rstrip("/")),
            "llm_model": llm_model,
            "embed_url": self._embed.base_url,
            "embed_model": self._embed.model,
            "k": self.k,
            "threshold": self.threshold,
            "search": "EDGE_HYBRID_SEARCH_RRF (bm25 + cosine, rrf), facts",
            "schema_form": schema_form,
            "max_tokens": int(max_tokens),
            "store": "kuzu (embedded, temporary folder)",
        }
        self._coroutines = coroutines
        self._loop = asyncio.new_event_loop()
        self._lock = threading.Lock()
        self._dir: str | None = None
        self._graph: Any = None

    def _run(self, coro: Any, what: str) -> Any:
        with self._lock:
            try:
                return self._loop.run_until_complete(coro)
            except MemevalError:
                raise
            except Exception as e:  # graphiti and kuzu raise their own types: one line with the reason
                raise SystemCallError(f"graphiti {what} failed ({type(e).__name__}: {str(e)[:300]})") from None

    # -- protocol -----------------------------------------------------------------------------
    def reset(self) -> None:
        self._drop()
        self._dir = folder = tempfile.mkdtemp(prefix="memeval-graphiti-")
        g = self._g

        async def build() -> Any:
            driver = g.KuzuDriver(db=os.path.join(folder, "graph.kuzu"))
            graph = g.Graphiti(
                graph_driver=driver, llm_client=self._llm, embedder=_make_embedder(g, self._embed, self._usage),
                cross_encoder=_make_cross_encoder(g), max_coroutines=self._coroutines,
            )  # fmt: skip
            await driver.graph_ops.build_indices_and_constraints(driver)  # Kuzu's full-text indexes
            return graph

        self._graph = self._run(build(), "reset")

    def ingest(self, session: Session) -> None:
        when = iso_datetime(session.date)
        if when is None:
            raise MemevalError(
                f"system 'graphiti': session {session.session_id}'s date {session.date!r} does not read as a date "
                "(Graphiti dates every episode)"
            )
        ref = datetime.fromisoformat(when)
        ref = ref if ref.tzinfo else ref.replace(tzinfo=timezone.utc)
        body = "\n".join(f"{t.speaker}: {t.text}" for t in session.turns)
        if not body:
            return
        graph = self._need_graph()
        self._run(
            graph.add_episode(
                name=f"session {session.session_id}",
                episode_body=body,
                source_description="a conversation session",
                reference_time=ref,
                source=self._g.EpisodeType.message,
                group_id=None,  # the driver's default group: graphiti-core 0.31's Kuzu driver has no database to name
            ),
            f"add_episode of session {session.session_id}",
        )

    def query(self, question: str, asked_at: str | None) -> Recall:
        graph = self._need_graph()
        config = self._g.EDGE_HYBRID_SEARCH_RRF.model_copy(deep=True)  # never the shared recipe
        config.limit = self.k
        config.edge_config.sim_min_score = self.threshold
        before = self._usage.snapshot()
        found = self._run(graph.search_(question, config=config, group_ids=[GROUP]), "search")
        after = self._usage.snapshot()
        memories = tuple(Memory(e.fact, _day(e.valid_at)) for e in found.edges[: self.k])
        return Recall(memories, usage={k: after[k] - before[k] for k in _USAGE})

    def memories(self, haystack: str) -> list[Memory]:
        """Every fact of the haystack's graph, then every episode (the sessions as stored)."""
        graph = self._need_graph()

        async def dump() -> tuple[list[Any], list[Any]]:
            try:
                edges = await self._g.EntityEdge.get_by_group_ids(graph.driver, [GROUP])
            except self._g.GroupsEdgesNotFoundError:  # graphiti's way of saying: no facts yet
                edges = []
            episodes = await self._g.EpisodicNode.get_by_group_ids(graph.driver, [GROUP])
            return edges, episodes

        edges, episodes = self._run(dump(), "memories")
        out = [Memory(e.fact, _day(e.valid_at)) for e in sorted(edges, key=lambda e: str(e.valid_at))]
        out += [Memory(e.content, _day(e.valid_at)) for e in sorted(episodes, key=lambda e: str(e.valid_at))]
        return out

    def usage(self) -> dict[str, int]:
        """Graphiti's model calls so far (ingest and queries); ``llm_unparseable``: replies not of the schema."""
        return self._usage.snapshot()

    def close(self) -> None:
        try:
            self._drop()
        finally:
            self._embed.close()
            self._llm.http_close()
            self._loop.close()

    def _need_graph(self) -> Any:
        if self._graph is None:
            raise SystemCallError("graphiti: no graph (reset was not called)")
        return self._graph

    def _drop(self) -> None:
        self._graph = None
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None


def _day(v: datetime | None) -> str | None:
    return v.isoformat() if isinstance(v, datetime) else None


def _make_llm(
    g: Any,
    url: str,
    model_id: str,
    key: str | None,
    form: str,
    cap: int,
    timeout: float,
    attempts: int,
    usage: _Counter,
) -> Any:
    """Graphiti's ``LLMClient`` over an OpenAI-compatible endpoint, bounded and counted."""
    headers = {"content-type": "application/json"}
    if key:
        headers["authorization"] = f"Bearer {key}"
    policy = RetryPolicy(attempts, 1.0)
    where = public_url(url)

    class BoundedLLM(g.LLMClient):  # type: ignore[misc,name-defined]
        def __init__(self) -> None:
            super().__init__(
                g.LLMConfig(api_key="unused", model=model_id, small_model=model_id, base_url=url), cache=False
            )
            self._http: httpx.AsyncClient | None = None

        def http_close(self) -> None:
            self._http = None  # its loop is closed with the system; the client holds no thread

        async def _generate_response(
            self, messages, response_model=None, max_tokens=cap, model_size=None, *, model=None
        ):  # type: ignore[no-untyped-def]
            if self._http is None:
                self._http = httpx.AsyncClient(base_url=url, headers=headers, timeout=httpx.Timeout(timeout))
            body: dict[str, Any] = {
                "model": model_id,
                "messages": [{"role": m.role, "content": m.content} for m in messages],
                "temperature": 0.0,
                "max_tokens": min(int(max_tokens or cap), cap),
            }
            if response_model is not None:
                schema = response_model.model_json_schema()
                body["response_format"] = (
                    {"type": "json_schema", "json_schema": {"name": response_model.__name__, "schema": schema}}
                    if form == "json_schema"
                    else {"type": "json_object", "schema": schema}
                )
            http = self._http

            async def attempt(_n: int) -> httpx.Response:
                try:
                    resp = await http.post("/chat/completions", json=body)
                except httpx.TimeoutException as e:
                    raise Retryable(f"timed out ({type(e).__name__})", connection=True) from None
                except httpx.TransportError as e:
                    raise Retryable(f"{type(e).__name__}: {e}", connection=True) from None
                if resp.status_code == 429 or resp.status_code >= 500:
                    raise Retryable(f"HTTP {resp.status_code}", retry_after(resp))
                return resp

            try:
                resp = await policy.acall(attempt)
            except Retryable as e:
                raise SystemCallError(
                    f"graphiti's LLM at {where}: gave up after {attempts} attempts ({e.reason})"
                ) from None
            if resp.status_code >= 400:
                raise SystemCallError(f"graphiti's LLM at {where}: HTTP {resp.status_code}: {resp.text[:200]}")
            try:
                data = resp.json()
                text = data["choices"][0]["message"].get("content") or ""
            except (ValueError, KeyError, IndexError, TypeError, AttributeError):
                raise SystemCallError(f"graphiti's LLM at {where}: a malformed chat completion") from None
            u = data.get("usage") if isinstance(data.get("usage"), dict) else {}
            tokens = {k: v for k in ("prompt_tokens", "completion_tokens") if isinstance(v := u.get(k), int)}
            usage.add(llm_calls=1, **tokens)
            if response_model is None:
                return {"content": text}
            obj = _json_object(text)
            if obj is not None:
                try:
                    return response_model.model_validate(obj).model_dump()
                except Exception:  # pydantic's ValidationError: the reply is not of the schema
                    pass
            usage.add(llm_unparseable=1)
            return empty_instance(response_model)

    return BoundedLLM()


def _make_embedder(g: Any, client: Any, usage: _Counter) -> Any:
    """Graphiti's ``EmbedderClient`` over memeval's embeddings client (an endpoint, or the local model)."""

    class Embedder(g.EmbedderClient):  # type: ignore[misc,name-defined]
        async def create(self, input_data):  # type: ignore[no-untyped-def]
            text = input_data if isinstance(input_data, str) else " ".join(map(str, input_data))
            return (await self.create_batch([text]))[0]

        async def create_batch(self, input_data_list):  # type: ignore[no-untyped-def]
            before = client.calls
            rows = await asyncio.to_thread(client.embed, [str(t) for t in input_data_list])
            usage.add(embedding_calls=client.calls - before)
            return [[float(x) for x in row] for row in rows]

    return Embedder()


def _make_cross_encoder(g: Any) -> Any:
    class NoCrossEncoder(g.CrossEncoderClient):  # type: ignore[misc,name-defined]
        async def rank(self, query, passages):  # type: ignore[no-untyped-def]
            raise SystemCallError("graphiti: this adapter's search recipe uses no cross-encoder")

    return NoCrossEncoder()
