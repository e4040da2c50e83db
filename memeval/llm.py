"""A small client for OpenAI-compatible chat-completion endpoints (OpenAI, OpenRouter, vLLM, Ollama,
llama.cpp server). Used by the reader, the judges and the multi-turn agent.

The API key is read from an environment variable named by the caller and sent only in the
``Authorization`` header; ``identity()`` (what records store) never contains it.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Iterator

import httpx
from .errors import EndpointError
from .retry import Retryable, RetryPolicy, post_attempt
from .text.urls import public_url

__all__ = [
    "ChatClient",
    "ChatResult",
    "ChatError",
    "CallUsage",
    "metered",
    "prompt_hash",
    "parse_json_object",
    "user_message",
]


class ChatError(EndpointError):
    """The endpoint failed after the allowed attempts (the caller records the question as ungraded)."""


@dataclass(frozen=True)
class ChatResult:
    text: str
    tool_calls: tuple[dict, ...] = ()
    raw: dict = field(default_factory=dict, repr=False)
    usage: "CallUsage | None" = None


@dataclass(frozen=True)
class CallUsage:
    """One completed chat call: the client that made it, the model it asked for (the name a price table
    uses) and the tokens the endpoint's ``usage`` reported (``None`` where it reported none)."""

    client: Any = field(compare=False, repr=False)
    model: str = ""
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


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


def _usage_of(client, data: dict) -> CallUsage:
    u = data.get("usage") if isinstance(data.get("usage"), dict) else {}

    def count(k):
        v = u.get(k)
        return v if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else None

    return CallUsage(client, client.model, count("prompt_tokens"), count("completion_tokens"))


def prompt_hash(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


class ChatClient:
    """``ChatClient(base_url, model, api_key_env="OPENAI_API_KEY")``; ``chat(messages) -> ChatResult``."""

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key_env: str | None = "OPENAI_API_KEY",
        temperature: float = 0.0,
        timeout: float = 60.0,
        max_attempts: int = 3,
        backoff: float = 0.5,
        seed: int | None = None,
        transport: httpx.BaseTransport | None = None,
    ):
        self.base_url, self.model, self.temperature = base_url.rstrip("/"), model, temperature
        self.api_key_env, self.max_attempts, self.backoff, self.seed = api_key_env, max_attempts, backoff, seed
        headers = {"content-type": "application/json"}
        key = os.environ.get(api_key_env) if api_key_env else None
        if key:
            headers["authorization"] = f"Bearer {key}"
        self._http = httpx.Client(base_url=self.base_url, headers=headers, timeout=timeout, transport=transport)
        self.base_url = public_url(self.base_url)

    def identity(self) -> dict[str, Any]:
        """What a record stores about this client: never the key."""
        return {"base_url": self.base_url, "model": self.model, "temperature": self.temperature}

    def chat(
        self,
        messages: list[dict],
        tools: list[dict] | None = None,
        response_format: dict | None = None,
        seed: int | None = None,
    ) -> ChatResult:
        body: dict[str, Any] = {"model": self.model, "messages": messages, "temperature": self.temperature}
        if tools:
            body["tools"] = tools
        if response_format:
            body["response_format"] = response_format
        if (seed if seed is not None else self.seed) is not None:
            body["seed"] = seed if seed is not None else self.seed
        try:
            resp = RetryPolicy(self.max_attempts, self.backoff).call(lambda _n: self._post(body), sleep=time.sleep)
        except Retryable as e:
            raise ChatError(f"{self.base_url}: gave up after {self.max_attempts} attempts ({e.reason})") from None
        if resp.status_code >= 400:
            raise ChatError(f"HTTP {resp.status_code} from {self.base_url}: {resp.text[:200]}")
        try:
            data = resp.json()
            msg = data["choices"][0]["message"]
        except (ValueError, KeyError, IndexError, TypeError):
            raise ChatError(f"malformed chat completion from {self.base_url}") from None
        calls = tuple(msg.get("tool_calls") or ())
        usage = _usage_of(self, data)
        meter = _METER.get()
        if meter is not None:
            meter.append(usage)
        return ChatResult(text=msg.get("content") or "", tool_calls=calls, raw=data, usage=usage)

    def _post(self, body: dict) -> httpx.Response:
        """One attempt (the shared retry policy, ``memeval.retry``, repeats it): 429/5xx and transport
        errors may be retried, any other reply is returned."""
        return post_attempt(self._http, "/chat/completions", body)

    def close(self) -> None:
        self._http.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


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
    """The first JSON object in a model's reply (models wrap JSON in prose or code fences)."""
    start = text.find("{")
    while start != -1:
        depth = 0
        for i in range(start, len(text)):
            if text[i] == "{":
                depth += 1
            elif text[i] == "}":
                depth -= 1
                if depth == 0:
                    try:
                        obj = json.loads(text[start : i + 1])
                        return obj if isinstance(obj, dict) else None
                    except json.JSONDecodeError:
                        break
        start = text.find("{", start + 1)
    return None
