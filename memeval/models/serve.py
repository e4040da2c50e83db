"""``memeval models serve``: the local models behind an OpenAI-compatible API on loopback.

- chat (``--chat``): llama.cpp's own server (``llama_cpp.server``, FastAPI) over the SmolLM2 GGUF,
  ``n_threads`` threads (1 in tests), a 4,096-token context, logits for the sampled token only (no
  ``logprobs``: the server's default computes all 49,152 of them for every prompt token, ~10% of a call),
  a prompt cache (:data:`PROMPT_CACHE_BYTES`: a reader or judge prompt reuses the state of the last one
  sharing its start, even with other calls between), a host copy of one row of logits (not 512), a
  JSON grammar applied only to a greedy token it refuses (:func:`_grammar_after_greedy`);
- embeddings (``--embed``): ``POST /v1/embeddings`` over :class:`~.embedder.OnnxEmbedder`, one vector
  per input (at most :data:`MAX_INPUTS` inputs and :data:`MAX_BODY` bytes a request).

Both on one port when both are asked for. The socket is bound before the URL is printed, so
``--port 0`` works; SIGINT/SIGTERM stop the server cleanly (uvicorn's shutdown).
"""

from __future__ import annotations

import json
import socket
import sys
from typing import Any, Callable

from ..errors import UsageError
from .catalog import CHAT, EMBEDDER, model_file
from .embedder import OnnxEmbedder

__all__ = ["make_app", "serve", "MAX_INPUTS", "MAX_BODY", "CHAT_CONTEXT", "PROMPT_CACHE_BYTES"]

MAX_INPUTS = 2048
MAX_BODY = 8 * 1024 * 1024
CHAT_CONTEXT = 4096
#: RAM for the chat model's prompt cache: its states after recent calls (~23 KB a token), the least
#: recently used dropped first; a prompt that starts like an earlier one reads only the rest.
PROMPT_CACHE_BYTES = 256 * 1024 * 1024


def _prompt_cache(capacity: int) -> Any:
    """llama-cpp-python's RAM cache of model states keyed by token prefix, keeping one row of each
    state's logits: with ``logits_all=False`` sampling reads none, and the full rows (196 KB a token,
    outside the cache's byte count) would hold ~60 MB per cached call."""
    import numpy as np
    from llama_cpp import LlamaRAMCache  # on use: the optional extra

    class PromptCache(LlamaRAMCache):
        def __setitem__(self, key: Any, value: Any) -> None:
            value.scores = np.array(value.scores[-1:], copy=True)  # (1, vocab): load_state broadcasts it
            super().__setitem__(key, value)

    return PromptCache(capacity)


def _one_row_of_logits(llm: Any) -> None:
    """Shrink llama-cpp-python's host copy of the logits to one row. With ``logits_all=False`` it is
    ``n_batch`` (512) rows of the 49,152-entry vocabulary (100 MB) that nothing writes (sampling reads
    llama.cpp's own logits) and only ``save_state``/``load_state`` touch: every call's prompt-cache save
    copied up to 100 MB and every cache hit rewrote it (0.05-0.5 CPU-s a call, by size and page faults).
    A stopping criterion reads row 0 (one sampled token an evaluation), which stays."""
    import numpy as np

    if not llm._logits_all:
        llm.scores = np.zeros((1, llm.n_vocab()), dtype=np.single)


def _grammar_after_greedy(llm: Any) -> None:
    """At temperature 0 with a grammar (``response_format`` JSON), take the greedy token when the grammar
    accepts it and apply the grammar to every candidate only when it does not, as llama.cpp's own
    ``common_sampler`` does. llama-cpp-python's chain (penalties, grammar, greedy) runs the grammar over all
    49,152 candidates at every token: ~12 ms a token here, ~40% of a generated token. The tokens are the
    same: the first candidate of highest logit after the penalties, if the grammar allows it, is also the
    first of highest logit among the tokens it allows. Counts of both paths: ``llm._init_sampler.taken``."""
    import ctypes

    import llama_cpp  # on use: the optional extra
    import numpy as np
    from llama_cpp._internals import LlamaSampler

    n_vocab = llm.n_vocab()
    dtype = np.dtype([("id", np.int32), ("logit", np.float32), ("p", np.float32)])
    assert dtype.itemsize == ctypes.sizeof(llama_cpp.llama_token_data)
    ids = np.arange(n_vocab, dtype=np.int32)
    chain = llm._init_sampler  # the class's: every other sampling setting
    taken = {"greedy": 0, "grammar": 0}

    def view(data: Any) -> Any:
        return llama_cpp.llama_token_data_array(data.ctypes.data_as(llama_cpp.llama_token_data_p), len(data), -1, False)

    class GreedyThenGrammar:
        def __init__(self, kw: dict) -> None:
            self.plain = chain(**{**kw, "grammar": None})  # the penalties, then greedy
            self.grammar = LlamaSampler()
            self.grammar.add_grammar(llm._model, kw["grammar"])
            self.data = np.zeros(n_vocab, dtype)
            self.one = np.zeros(1, dtype)

        def sample(self, ctx: Any, idx: int = -1) -> int:
            d = self.data
            d["id"] = ids
            d["logit"] = np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(ctx.ctx, idx), shape=(n_vocab,))
            d["p"] = 0
            cur = view(d)
            llama_cpp.llama_sampler_apply(self.plain.sampler, ctypes.byref(cur))  # no accept yet
            self.one[0] = d[cur.selected]
            one = view(self.one)
            llama_cpp.llama_sampler_apply(self.grammar.sampler, ctypes.byref(one))
            if np.isfinite(self.one["logit"][0]):
                token = int(self.one["id"][0])
                taken["greedy"] += 1
            else:  # refused: the grammar over every candidate (already penalised), then greedy (first highest)
                cur = view(d)
                llama_cpp.llama_sampler_apply(self.grammar.sampler, ctypes.byref(cur))
                token = int(d["id"][int(np.argmax(d["logit"]))])
                taken["grammar"] += 1
            llama_cpp.llama_sampler_accept(self.plain.sampler, token)
            llama_cpp.llama_sampler_accept(self.grammar.sampler, token)
            return token

    def init_sampler(**kw: Any) -> Any:
        if kw.get("grammar") is None or kw.get("temp") != 0.0 or kw.get("logits_processor") is not None:
            return chain(**kw)
        return GreedyThenGrammar(kw)

    init_sampler.taken = taken  # type: ignore[attr-defined]
    llm._init_sampler = init_sampler


def _embeddings_route(embedder) -> Any:
    from starlette.concurrency import run_in_threadpool
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    def bad(msg: str, status: int = 400) -> JSONResponse:
        return JSONResponse({"error": {"message": msg, "type": "invalid_request_error"}}, status_code=status)

    async def embeddings(request: Request) -> JSONResponse:
        raw = await request.body()
        if len(raw) > MAX_BODY:
            return bad(f"request body above {MAX_BODY} bytes", 413)
        try:
            body = json.loads(raw)
        except ValueError:
            return bad("body is not JSON")
        inputs = body.get("input") if isinstance(body, dict) else None
        if isinstance(inputs, str):
            inputs = [inputs]
        if not isinstance(inputs, list) or not inputs or not all(isinstance(t, str) for t in inputs):
            return bad("input must be a string or a non-empty list of strings")
        if len(inputs) > MAX_INPUTS:
            return bad(f"at most {MAX_INPUTS} inputs a request")
        before = embedder.tokens
        vecs = await run_in_threadpool(embedder.encode, inputs)
        used = embedder.tokens - before
        data = [{"object": "embedding", "index": i, "embedding": v.tolist()} for i, v in enumerate(vecs)]
        usage = {"prompt_tokens": used, "total_tokens": used}
        return JSONResponse({"object": "list", "data": data, "model": EMBEDDER.id, "usage": usage})

    return Route("/v1/embeddings", embeddings, methods=["POST"])


def make_app(chat: bool, embed: bool, threads: int = 1) -> tuple[Any, list[str]]:
    """The ASGI app and the model ids it serves."""
    if not (chat or embed):
        raise UsageError("models serve: ask for --chat, --embed or both")
    routes, ids = [], []
    if embed:
        routes.append(_embeddings_route(OnnxEmbedder(threads=threads)))
        ids.append(EMBEDDER.id)
    if chat:
        path = model_file(CHAT)
        from llama_cpp.server.app import create_app  # on use: the optional extra
        from llama_cpp.server.settings import ModelSettings, ServerSettings  # on use: the optional extra

        app = create_app(
            server_settings=ServerSettings(host="127.0.0.1", port=0),
            model_settings=[
                ModelSettings(
                    model=str(path),
                    model_alias=CHAT.id,
                    n_threads=threads,
                    n_threads_batch=threads,
                    n_ctx=CHAT_CONTEXT,
                    logits_all=False,  # the server's default (True) computes every prompt token's logits, for logprobs
                    verbose=False,
                )
            ],
        )
        from llama_cpp.server import app as server_app  # the model create_app loaded (llama-cpp-python is pinned)

        llm = server_app._llama_proxy._current_model  # type: ignore[union-attr]
        _one_row_of_logits(llm)
        _grammar_after_greedy(llm)
        llm.set_cache(_prompt_cache(PROMPT_CACHE_BYTES))
        app.router.routes[:0] = routes  # ours before llama.cpp's /v1/embeddings (which needs embedding=True)
        return app, [CHAT.id, *ids]
    from starlette.applications import Starlette
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    async def models(request) -> JSONResponse:
        return JSONResponse({"object": "list", "data": [{"id": i, "object": "model"} for i in ids]})

    return Starlette(routes=[*routes, Route("/v1/models", models)]), ids


def serve(
    chat: bool,
    embed: bool,
    host: str = "127.0.0.1",
    port: int = 0,
    threads: int = 1,
    on_ready: Callable[[str, list[str]], None] | None = None,
) -> None:
    """Serve until SIGINT/SIGTERM; ``on_ready(url, model ids)`` once the socket listens."""
    import uvicorn

    if host not in ("127.0.0.1", "localhost", "::1"):
        print(f"models serve: listening on {host}: the models have no authentication", file=sys.stderr)
    app, ids = make_app(chat, embed, threads)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(64)
    bound = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{bound}/v1"
    if on_ready is not None:
        on_ready(url, ids)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=5))
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()
