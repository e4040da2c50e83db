"""A small client for OpenAI-compatible chat-completion endpoints (OpenAI, OpenRouter, vLLM, Ollama,
llama.cpp server). Used by the reader, the judges and the multi-turn agent.

The API key is read from an environment variable named by the caller and sent only in the
``Authorization`` header; ``identity()`` (what records store) never contains it.

Every call is bounded (:data:`ROLE_LIMITS`, per role, overridable per client): ``max_tokens`` on every
request, a per-attempt timeout, and a bounded retry. A timed-out or dropped attempt closes its
connection and backs off before the next one (a server such as llama.cpp's keeps generating an
abandoned request, and the next one would queue behind it: ``max_tokens`` bounds that work). Tools go
with ``tool_choice`` (``"auto"`` unless told), which servers such as vLLM and llama-cpp-python need
before they consider tools at all.

Structured output: ``chat(..., schema=S)`` asks for a JSON object matching ``S`` the way the server
accepts — OpenAI's ``{"type": "json_schema", ...}`` first (OpenAI, vLLM, Ollama), then
``{"type": "json_object", "schema": S}`` (llama-cpp-python's server), then the prompt alone (the
caller's prose request). A server that rejects a form is not asked in it again (per client);
``ChatResult.form`` says which form answered.

Cache (``cache=``, a :class:`~memeval.callcache.ModelCache`; the commands' ``--cache DIR``): a request
already answered is served from disk, byte for byte, and not sent (``ChatResult.cached``). The key is
the whole request body, the endpoint's public URL and the request's sample index, its count of
complete replies to identical requests before it on this client (``callcache.request_key``). Only a
complete reply is stored: HTTP 200, a readable completion, not cut at ``max_tokens`` (``finish_reason``
"length" or "content_filter"), not empty, and a JSON object where one was asked for
(``schema``/``response_format``): a reply its caller may ask again is asked again.
A structured call looks up every form the server has not refused, so a warm run makes no call even
where the first form is refused.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator

import httpx
from .callcache import ModelCache, request_key
from .errors import ArgumentError, EndpointError, MemevalError
from .retry import Retryable, RetryPolicy, post_attempt
from .text.urls import public_url

__all__ = [
    "ChatClient",
    "RoleLimits",
    "ROLE_LIMITS",
    "FORMS",
    "ChatResult",
    "ChatError",
    "CallUsage",
    "metered",
    "usage_entries",
    "prompt_hash",
    "parse_json_object",
    "user_message",
]


class ChatError(EndpointError):
    """The endpoint failed after the allowed attempts (the caller records the question as ungraded)."""


@dataclass(frozen=True)
class RoleLimits:
    """What one call of a role may take: ``max_tokens`` generated, ``timeout`` seconds per attempt."""

    max_tokens: int
    timeout: float


#: Defaults per role; a client's ``max_tokens=``/``timeout=`` (the commands' ``--<role>-max-tokens`` and
#: ``--<role>-timeout``) override them. A verdict is a short JSON object; an agent's turn may be longer.
ROLE_LIMITS: dict[str, RoleLimits] = {
    "reader": RoleLimits(256, 120.0),
    "judge": RoleLimits(256, 120.0),
    "agent": RoleLimits(384, 180.0),
    "extractor": RoleLimits(256, 120.0),
    "chat": RoleLimits(512, 120.0),
}

#: Structured-output forms, most exact first; "prose" is the prompt's own request alone.
FORMS = ("json_schema", "json_object", "prose")


@dataclass(frozen=True)
class ChatResult:
    text: str
    tool_calls: tuple[dict, ...] = ()
    raw: dict = field(default_factory=dict, repr=False)
    usage: "CallUsage | None" = None
    form: str | None = None  # the structured-output form that answered (None: none asked)
    finish_reason: str | None = None  # "length": cut at max_tokens
    cached: bool = False  # served from the model-call cache (no request sent)


@dataclass(frozen=True)
class CallUsage:
    """One completed chat call: the client that made it, the model it asked for (the name a price table
    uses) and the tokens the endpoint's ``usage`` reported (``None`` where it reported none)."""

    client: Any = field(compare=False, repr=False)
    model: str = ""
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    role: str = "chat"
    cached: bool = False  # the reply came from the cache: these tokens were not spent again


_METER: ContextVar[list | None] = ContextVar("memeval_usage_meter", default=None)


@contextmanager
def metered() -> Iterator[list[CallUsage]]:
    """Collect the :class:`CallUsage` of every chat call made in this thread inside the block.

    >>> with metered() as calls:
    ...     pass
    >>> calls
    []
    """
    calls: list[CallUsage] = []
    token = _METER.set(calls)
    try:
        yield calls
    finally:
        _METER.reset(token)


def _usage_of(client, data: dict, cached: bool = False) -> CallUsage:
    u = data.get("usage") if isinstance(data.get("usage"), dict) else {}

    def count(k):
        v = u.get(k)
        return v if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else None

    return CallUsage(client, client.model, count("prompt_tokens"), count("completion_tokens"), client.role, cached)


def usage_entries(calls: Iterable[CallUsage], role_of=None) -> list[dict]:
    """``llm.CallUsage`` items summed per (role, model): ``role_of(call)`` names the role; token counts are
    None for a role and model where any call reported none. Without ``role_of``, each call's own role.

    >>> usage_entries([CallUsage(None, "m", 10, 2, "judge"), CallUsage(None, "m", 5, 1, "judge")])
    [{'role': 'judge', 'model': 'm', 'calls': 2, 'prompt_tokens': 15, 'completion_tokens': 3}]
    """
    out: dict[tuple[str, str], dict] = {}
    for c in calls:
        role = role_of(c) if role_of is not None else c.role
        e = out.setdefault(
            (role, c.model), {"role": role, "model": c.model, "calls": 0, "prompt_tokens": 0, "completion_tokens": 0}
        )
        e["calls"] += 1
        for k in ("prompt_tokens", "completion_tokens"):
            v = getattr(c, k)
            e[k] = None if v is None or e[k] is None else e[k] + v
    return list(out.values())


def prompt_hash(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


class ChatClient:
    """``ChatClient(base_url, model, api_key_env="OPENAI_API_KEY", role="judge")``; ``chat(messages) -> ChatResult``.

    ``max_tokens`` and ``timeout`` default to the role's :data:`ROLE_LIMITS`; ``cache``: the model-call
    cache (see the module docstring), None for none.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key_env: str | None = "OPENAI_API_KEY",
        temperature: float = 0.0,
        timeout: float | None = None,
        max_attempts: int = 3,
        backoff: float = 2.0,
        seed: int | None = None,
        transport: httpx.BaseTransport | None = None,
        role: str = "chat",
        max_tokens: int | None = None,
        cache: ModelCache | None = None,
    ):
        limits = ROLE_LIMITS.get(role, ROLE_LIMITS["chat"])
        self.base_url, self.model, self.temperature = base_url.rstrip("/"), model, temperature
        self.api_key_env, self.max_attempts, self.backoff, self.seed = api_key_env, max_attempts, backoff, seed
        self.role = role
        self.max_tokens = int(max_tokens if max_tokens is not None else limits.max_tokens)
        self.timeout = float(timeout if timeout is not None else limits.timeout)
        if self.max_tokens <= 0 or self.timeout <= 0:
            raise ArgumentError(f"{role}: max_tokens and timeout must be positive")
        self._headers = {"content-type": "application/json"}
        key = os.environ.get(api_key_env) if api_key_env else None
        if key:
            self._headers["authorization"] = f"Bearer {key}"
        bounds = httpx.Timeout(self.timeout, connect=min(10.0, self.timeout))
        self._http = httpx.Client(base_url=self.base_url, headers=self._headers, timeout=bounds, transport=transport)
        self.base_url = public_url(self.base_url)
        self.forms = list(FORMS)  # the structured-output forms this server has not refused yet
        self.cache = cache
        self._asked: dict[str, int] = {}  # request (key without a sample index) -> complete replies got
        self._asked_lock = threading.Lock()

    def identity(self) -> dict[str, Any]:
        """What a record stores about this client: never the key."""
        return {"base_url": self.base_url, "model": self.model, "temperature": self.temperature}

    def chat(
        self,
        messages: list[dict],
        tools: list[dict] | None = None,
        response_format: dict | None = None,
        seed: int | None = None,
        schema: dict | None = None,
        schema_name: str = "reply",
        tool_choice: str | dict | None = None,
        max_tokens: int | None = None,
    ) -> ChatResult:
        """One completion. ``schema``: ask for a JSON object matching it (see the module docstring);
        ``response_format`` is sent as given instead (no fallback). ``max_tokens``: this call's cap in
        place of the client's."""
        body: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "temperature": self.temperature,
            "max_tokens": int(max_tokens) if max_tokens else self.max_tokens,
        }
        if tools:
            body["tools"] = tools
            body["tool_choice"] = tool_choice or "auto"
        if (seed if seed is not None else self.seed) is not None:
            body["seed"] = seed if seed is not None else self.seed
        sample = self._sample(body | ({"response_format": response_format} if response_format else {}))
        if response_format:
            body["response_format"] = response_format
            return self._cached([(body, None)], sample) or self._complete(body, None, sample, True)
        if schema is None:
            return self._cached([(body, None)], sample) or self._complete(body, None, sample)
        bodies = {
            f: body | ({"response_format": fmt} if (fmt := structured_format(f, schema, schema_name)) else {})
            for f in FORMS
        }
        hit = self._cached([(bodies[f], f) for f in self.forms], sample)
        if hit is not None:
            return hit
        while True:
            form = self.forms[0]
            try:
                return self._complete(bodies[form], form, sample, True)
            except _Refused:
                self.forms.remove(form)  # never the last ("prose" sends no response_format)

    # the model-call cache ----------------------------------------------------------------------
    def _sample(self, body: dict) -> tuple[str, int] | None:
        """The request (its key without a sample index) and its sample index: how many complete replies
        this client got for identical requests before it (so an epoch that repeats a request gets a
        reply of its own, and a rerun the same replies in the same order; a parse retry after an
        incomplete reply asks the same sample again). None without a cache."""
        if self.cache is None:
            return None
        k = request_key("chat", self.base_url + "/chat/completions", body)
        with self._asked_lock:
            return k, self._asked.get(k, 0)

    def _answered(self, sample: tuple[str, int] | None) -> None:
        """One more complete reply for the request of ``sample`` (the next identical request is the next sample)."""
        if sample is not None:
            with self._asked_lock:
                self._asked[sample[0]] = self._asked.get(sample[0], 0) + 1

    def _key(self, body: dict, sample: tuple[str, int] | None) -> str:
        return request_key("chat", self.base_url + "/chat/completions", body, None if sample is None else sample[1])

    def _cached(self, candidates: list[tuple[dict, str | None]], sample: tuple[str, int] | None) -> ChatResult | None:
        """The cached reply of the first of ``candidates`` (request body, form) that has one (one hit
        or one miss counted)."""
        if self.cache is None:
            return None
        keys = [self._key(b, sample) for b, _ in candidates]
        found = self.cache.lookup(keys, self.role)
        if found is None:
            return None
        self._answered(sample)
        return self._read(found[1], candidates[keys.index(found[0])][1], cached=True)

    def _complete(
        self, body: dict, form: str | None, sample: tuple[str, int] | None = None, json_wanted: bool = False
    ) -> ChatResult:
        try:
            resp = RetryPolicy(self.max_attempts, self.backoff).call(
                lambda _n: self._post(body, form is not None and form != "prose"), sleep=time.sleep
            )
        except Retryable as e:
            raise ChatError(f"{self.base_url}: gave up after {self.max_attempts} attempts ({e.reason})") from None
        if resp.status_code >= 400:
            if form not in (None, "prose") and _names_response_format(resp):
                raise _Refused(form)
            raise ChatError(f"HTTP {resp.status_code} from {self.base_url}: {resp.text[:200]}")
        content = resp.content
        result = self._read(content, form)
        if self.cache is not None:
            if resp.status_code == 200 and _complete_reply(result, json_wanted):
                self.cache.put(self._key(body, sample), content, self.role, self.model)
                self._answered(sample)
            else:
                self.cache.not_stored(self.role)
        return result

    def _read(self, content: bytes, form: str | None, cached: bool = False) -> ChatResult:
        """The :class:`ChatResult` of a reply's body (as sent, or as the cache kept it: the same bytes
        give the same result); its usage is metered."""
        try:
            data = json.loads(content)
            choice = data["choices"][0]
            msg = choice["message"]
        except (ValueError, KeyError, IndexError, TypeError):
            raise ChatError(f"malformed chat completion from {self.base_url}") from None
        if not isinstance(msg, dict):
            raise ChatError(f"malformed chat completion from {self.base_url}")
        calls = tuple(c for c in (msg.get("tool_calls") or ()) if isinstance(c, dict))
        usage = _usage_of(self, data, cached)
        meter = _METER.get()
        if meter is not None:
            meter.append(usage)
        text = msg.get("content")
        finish = choice.get("finish_reason") if isinstance(choice, dict) else None
        return ChatResult(
            text=text if isinstance(text, str) else "",
            tool_calls=calls,
            raw=data,
            usage=usage,
            form=form,
            finish_reason=finish if isinstance(finish, str) else None,
            cached=cached,
        )

    def _post(self, body: dict, structured: bool) -> httpx.Response:
        """One attempt (the shared retry policy, ``memeval.retry``, repeats it): 429/5xx and transport
        errors may be retried, any other reply is returned; so is a refusal of the structured-output
        form, whatever its status (llama-cpp-python answers one with HTTP 500). A timed-out attempt's
        connection is closed by httpx (a half-read response is never reused), so the server sees the
        client leave and the retry, after its backoff, comes on a new connection."""
        return post_attempt(self._http, "/chat/completions", body, keep=_names_response_format if structured else None)

    def close(self) -> None:
        self._http.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


#: finish reasons of a reply that stopped before it was done (never cached)
_INCOMPLETE = frozenset({"length", "content_filter"})


def _complete_reply(r: ChatResult, json_wanted: bool) -> bool:
    """Whether a reply may be cached: complete (not cut, not filtered), not empty, and holding a JSON
    object where one was asked for (else its caller may ask again, and must reach the endpoint)."""
    if r.finish_reason in _INCOMPLETE:
        return False
    if r.tool_calls:
        return True
    if not r.text.strip():
        return False
    return not json_wanted or parse_json_object(r.text) is not None


class _Refused(MemevalError):
    """The server refused a structured-output form (the client tries the next one)."""


def _names_response_format(resp: httpx.Response) -> bool:
    """Whether an error reply is about ``response_format`` (a form the server does not accept)."""
    return resp.status_code in (400, 422, 500, 501) and "response_format" in resp.text[:4000]


def structured_format(form: str, schema: dict, name: str = "reply") -> dict | None:
    """The ``response_format`` of one structured-output form (None for "prose").

    >>> structured_format("json_schema", {"type": "object"})["json_schema"]["name"]
    'reply'
    >>> structured_format("json_object", {"type": "object"})
    {'type': 'json_object', 'schema': {'type': 'object'}}
    """
    if form == "json_schema":
        return {"type": "json_schema", "json_schema": {"name": name, "schema": schema}}
    if form == "json_object":
        return {"type": "json_object", "schema": schema}
    return None


def user_message(text: str, image_urls=()) -> dict:
    """A user message: plain text, or with images the OpenAI content parts (the text, then each image
    labelled ``[image N]`` as an ``image_url`` part).

    >>> user_message("hi")
    {'role': 'user', 'content': 'hi'}
    >>> [p["type"] for p in user_message("hi", ["data:image/png;base64,AA=="])["content"]]
    ['text', 'text', 'image_url']
    """
    if not image_urls:
        return {"role": "user", "content": text}
    parts: list[dict] = [{"type": "text", "text": text}]
    for i, url in enumerate(image_urls, 1):
        parts += [{"type": "text", "text": f"[image {i}]"}, {"type": "image_url", "image_url": {"url": url}}]
    return {"role": "user", "content": parts}


def parse_json_object(text: str) -> dict | None:
    r"""The first JSON object in a model's reply, read tolerantly: inside a fenced block or in prose,
    with raw newlines or tabs inside its strings, braces inside strings not counted.

    >>> parse_json_object('Sure:\n```json\n{"verdict": "wrong", "evidence": "line one\nline two {x"}\n```')
    {'verdict': 'wrong', 'evidence': 'line one\nline two {x'}
    >>> parse_json_object("no json here") is None
    True
    """
    start = text.find("{")
    while start != -1:
        end = _object_end(text, start)
        if end is not None:
            try:
                obj = json.loads(text[start:end], strict=False)  # strict=False: control characters in strings
            except json.JSONDecodeError:
                obj = None
            if isinstance(obj, dict):
                return obj
        start = text.find("{", start + 1)
    return None


def _object_end(text: str, start: int) -> int | None:
    """The index after the ``}`` closing the object opened at ``start`` (strings and escapes skipped)."""
    depth, in_str, esc = 0, False, False
    for i in range(start, len(text)):
        ch = text[i]
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return i + 1
    return None
